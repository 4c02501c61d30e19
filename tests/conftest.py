"""Session-wide plugins of the kit's own test suite."""

# --- xdist groups (issue 25 §5; helper "suite") ------------------------------------------------
# `--dist loadgroup` keeps each xdist_group on one worker again under pytest >= 9.2.
pytest_plugins = ["tests._xdist_groups"]
# --- end of the xdist groups ------------------------------------------------------------------
