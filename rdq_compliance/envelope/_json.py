# PLACEHOLDER written by the lead so the package imports; H1 replaces this file.
def parse_json(data):
    raise NotImplementedError
def json_equal(a, b):
    raise NotImplementedError
