"""The connection budget (issue 22 §3): over a whole kit run, one process never holds more
than ``MAX_OPEN_ADAPTERS`` adapters and one storage open at once, also under ``-n 2``
(per worker), and a ``concurrent`` plugin at most one adapter more per lane.

The witness is ``_budget_plugin``: a correct plugin whose ``open`` raises past the budget,
so a test that holds one adapter too many fails and the verdict is non-compliant.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rdq_compliance.testing._namespace_handle import MAX_OPEN_ADAPTERS
from tests.mutants._harness import run_kit

PLUGIN = "tests.testing._budget_plugin:"
LANES = 4
"""The most lanes a concurrency check runs at once (rdq_compliance/suites/test_concurrency)."""


def _most(log: Path) -> list[tuple[int, int]]:
    """(adapters, storages) at most open at once, per process that opened the plugin."""
    rows = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]
    return [(int(adapters), int(storages)) for _, adapters, storages in rows]


@pytest.mark.parametrize(
    ("concurrent", "workers"),
    [(False, ()), (False, ("-n", "2")), (True, ("-n", "2"))],
    ids=["plain", "plain-n2", "concurrent-n2"],
)
def test_a_whole_kit_run_keeps_within_the_budget(
    tmp_path: Path, concurrent: bool, workers: tuple[str, ...]
) -> None:
    adapters = MAX_OPEN_ADAPTERS + (LANES if concurrent else 0)
    log = tmp_path / "most.log"
    result = run_kit(
        [f"--rdq-plugin={PLUGIN}", "--rdq-option", f"adapters={adapters}",
         "--rdq-option", "storages=1", "--rdq-option", f"concurrent={int(concurrent)}",
         "--rdq-option", f"log={log}"],
        extra=workers,
    )
    assert result.report is not None, result.describe()
    assert result.verdict(PLUGIN) == "compliant", (result.failed(PLUGIN), result.describe())
    assert result.returncode == 0, result.describe()
    most = _most(log)
    # the controller (under -n 2) and every worker, each within the budget
    assert len(most) == (3 if workers else 1), most
    assert all(a <= adapters and s <= 1 for a, s in most), most
    # the kit's busiest test does need the whole budget (the count is live)
    assert max(a for a, _ in most) >= MAX_OPEN_ADAPTERS, most


def test_the_witness_fails_a_test_past_its_budget(tmp_path: Path) -> None:
    """The check can fail: with a budget of 1, the isolation test (two namespaces open at
    once) fails, naming the budget."""
    result = run_kit(
        [f"--rdq-plugin={PLUGIN}", "--rdq-option", "adapters=1"],
        extra=("-k", "RDQ-ST-003", "--rdq-allow-incomplete"),
    )
    assert result.verdict(PLUGIN) == "non-compliant", result.describe()
    assert result.failed(PLUGIN) == {"RDQ-ST-003"}, result.describe()
    assert any("budget exceeded: 2 adapters" in m for m in result.messages(PLUGIN)), (
        result.describe())
