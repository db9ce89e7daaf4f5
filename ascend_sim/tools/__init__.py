"""Tools around the simulator: the ascend-sim command line and the headless demo."""
