"""Hardware numbers: chip profiles (every capacity, bandwidth and cost, with its source) and Ascend C dtypes."""
