"""Models and data: LeNet-5 on the simulator, its numpy reference, MNIST loading, the shipped weights and subset."""
