from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "zoo: the mutant zoo runs the kit against defective plugins (slow-ish)"
    )
    # pytest-xdist registers it too; declared here so that a run without xdist is clean.
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker")
