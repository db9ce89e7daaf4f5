"""Course machinery: grading, the checks of each lab, and the named code regions lessons show."""
