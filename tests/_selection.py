"""The default selection of the kit's own suite: ``slow_ci`` tests run in CI only.

``bash .ci/test`` (a contributor's loop) leaves out the tests marked ``slow_ci``
(minutes each: fresh virtualenvs with pip installs, many whole kit runs); ``.ci/run``
sets ``RDQ_SLOW_CI=1`` and runs them with everything else. A ``-m`` expression that
names ``slow_ci`` (``-m slow_ci``, ``-m "not slow_ci"``) chooses for itself. The left-out
tests are named in the header (and counted as deselected, without xdist).

A test marked ``quick_twin`` is the quick stand-in of a ``slow_ci`` test that covers all it
checks (the same test at another parameter): it runs by default and is left out when
``RDQ_SLOW_CI=1`` brings the slow one in (unless ``-m`` names ``slow_ci``).
"""

from __future__ import annotations

import os

import pytest

ENV = "RDQ_SLOW_CI"
MARK = "slow_ci"
TWIN = "quick_twin"


def _leave_out(config: pytest.Config) -> bool:
    return os.environ.get(ENV) != "1" and MARK not in (config.getoption("markexpr") or "")


def _leave_out_twins(config: pytest.Config) -> bool:
    return os.environ.get(ENV) == "1" and MARK not in (config.getoption("markexpr") or "")


def pytest_report_header(config: pytest.Config) -> str | None:
    if _leave_out(config):
        return (f"{MARK} tests left out ({ENV}=1, as .ci/run sets, or -m {MARK} runs them)")
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _leave_out(config):
        mark = MARK
    elif _leave_out_twins(config):
        mark = TWIN
    else:
        return
    kept = [item for item in items if item.get_closest_marker(mark) is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
