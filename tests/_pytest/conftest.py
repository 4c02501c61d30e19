from __future__ import annotations

# Import the kit (and Hypothesis) in this process before any in-process pytester run:
# pytester restores sys.modules after each run, and modules first imported inside a
# run would be re-imported by the next one, mixing two generations of Hypothesis
# classes ("Expected a SearchStrategy but got LazyStrategy").
import hypothesis.stateful  # noqa: F401
import pytest

import rdq_compliance._pytest.kit
import rdq_compliance.strategies
import rdq_compliance.suites._strategies  # noqa: F401
from tests._pytest._standin import STANDIN, install_fake_dist


@pytest.fixture
def kit(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory with the stand-in plugin importable as ``standin:plugin``
    and installed (fake distribution) under the entry-point name ``fake``."""
    pytester.makepyfile(standin=STANDIN)
    install_fake_dist(pytester.path, "fakeplugin", {"fake": "standin:plugin"})
    pytester.syspathinsert()
    return pytester
