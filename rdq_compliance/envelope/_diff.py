# PLACEHOLDER written by the lead so the package imports; H1 replaces this file.
class Difference: ...
def diff(expected, actual):
    raise NotImplementedError
def format_diff(diffs, *, limit=20):
    raise NotImplementedError
