"""The trace of a launch: the record container and the one table reader every analysis and view uses."""
