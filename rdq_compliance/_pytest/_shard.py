"""``--rdq-shard K/N``: run a deterministic, balanced share of the kit's tests.

The kit's tests are ordered by cost (the state machine, the slow properties, the other
properties, the fixed examples; :func:`cost_rank`) and then by node id, and dealt round
robin: test *i* of that order runs in shard ``i % N + 1``. Every shard of one collection
agrees on the deal, the long tests go one to each shard first, and the shards differ in
size by at most one test per cost class. The user's own tests are not sharded (they run
in every shard).

The other shards' tests are deselected through pytest's ``pytest_deselected`` hook, each
stamped with the shard it belongs to (:data:`OTHER_SHARD`): the shard's report says a
requirement whose tests all run elsewhere is "in other shards" and names them, never
"deselected" (that is for -k, -m and test ids), and the run records ``shard K/N`` in the
report's notes: ``rdq-compliance merge`` checks that note and recombines the shards'
results. A shard
alone is a partial run: its verdict is ``incomplete`` at best and, as for any partial
run, it exits 1 unless ``--rdq-allow-incomplete``; the merged report is the verdict.
"""

from __future__ import annotations

import re

import pytest

from ..reporting._merge import shard_note
from ._options import option
from ._ordering import cost_rank
from ._state import RUN_KEY

__all__ = ["OTHER_SHARD", "ShardPlugin", "configure", "parse_shard"]

OTHER_SHARD = pytest.StashKey[tuple[int, int, int]]()
"""On an item another shard runs: (its shard, this run's shard K, N)."""

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def parse_shard(value: str) -> tuple[int, int]:
    m = _SPEC.fullmatch(value)
    if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise pytest.UsageError(f"--rdq-shard={value!r} is not a shard; expected K/N with "
                                "1 <= K <= N, e.g. 2/3")
    return int(m.group(1)), int(m.group(2))


def configure(config: pytest.Config) -> None:
    value = option(config, "rdq_shard")
    if not value:
        return
    k, n = parse_shard(str(value))
    config.pluginmanager.register(ShardPlugin(config, k, n), "rdq-shard")


def _is_kit_item(item: pytest.Item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    return item.get_closest_marker("rdq_requirement") is not None and "rdq_plugin" in params


class ShardPlugin:
    def __init__(self, config: pytest.Config, k: int, n: int) -> None:
        self.config = config
        self.k, self.n = k, n

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        kit = sorted((i for i in items if _is_kit_item(i)),
                     key=lambda i: (cost_rank(i), i.nodeid))
        others: dict[int, int] = {}
        for n, item in enumerate(kit):
            if n % self.n != self.k - 1:
                others[id(item)] = n % self.n + 1
                item.stash[OTHER_SHARD] = (n % self.n + 1, self.k, self.n)
        if not others:
            return
        dropped = [i for i in items if id(i) in others]
        items[:] = [i for i in items if id(i) not in others]
        config.hook.pytest_deselected(items=dropped)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        run = self.config.stash.get(RUN_KEY, None)
        if run is not None and not hasattr(self.config, "workerinput"):
            run.notes.append(shard_note(self.k, self.n))
