# PLACEHOLDER written by the lead so the package imports; H1 replaces this file.
def new_id():
    raise NotImplementedError
def is_canonical_id(s):
    raise NotImplementedError
