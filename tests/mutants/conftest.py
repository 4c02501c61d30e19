from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "zoo: the mutant zoo runs the kit against defective plugins (slow-ish)"
    )
