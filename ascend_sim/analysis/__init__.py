"""Analyses after a launch, each a client of the trace: profile, Chrome export, output verification, diagnosis."""
