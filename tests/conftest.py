"""Session-wide plugins of the kit's own test suite.

- ``tests._leftovers``: at the end of the session (once, on the xdist controller), the local
  servers hold no schema, table or key of the kit runs the session started (issue 22 §4).
- ``tests._xdist_groups``: ``--dist loadgroup`` keeps each ``xdist_group`` on one worker
  again under pytest >= 9.2.
- ``tests._selection``: ``slow_ci`` tests run when ``RDQ_SLOW_CI=1`` (``.ci/run``) or when
  ``-m`` names them.
"""

pytest_plugins = ["tests._leftovers", "tests._xdist_groups", "tests._selection"]
