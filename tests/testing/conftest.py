"""Fixtures of the in-process testing-API tests: the gated fake plugin's world and runtime."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rdq_compliance.testing._runtime import PluginRuntime

from ._fake_runtime import started_runtime
from ._gated_plugin import TIMEOUT, Plugin, World


@pytest.fixture
def world() -> Iterator[World]:
    """The gated plugin's world; its gate opens at the end (every hung call returns)."""
    w = World()
    yield w
    w.gate.set()


@pytest.fixture
def runtime(world: World) -> PluginRuntime:
    """A started runtime of the gated plugin."""
    return started_runtime(Plugin(world), TIMEOUT)
