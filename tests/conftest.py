"""Session-wide plugins of the kit's own test suite."""

# --- leftover check (issue 22 §4; helper "rest") -------------------------------------------
# At the end of the session (once, on the xdist controller): the local servers hold no
# schema, table or key of the kit runs the session started. See tests/_leftovers.py.
pytest_plugins = ["tests._leftovers"]
# --- end of the leftover check ----------------------------------------------------------------
