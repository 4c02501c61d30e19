"""Session-wide plugins of the kit's own test suite."""

# --- xdist groups and the default selection (issue 25 §5; helper "suite") -------------------
# `--dist loadgroup` keeps each xdist_group on one worker again under pytest >= 9.2;
# slow_ci tests run when RDQ_SLOW_CI=1 (.ci/run) or when -m names them.
pytest_plugins = ["tests._xdist_groups", "tests._selection"]
# --- end of the xdist groups and the default selection -----------------------------------------
