"""``xdist_group`` that groups again under pytest >= 9.2 (the kit's own suite).

``bash .ci/test`` runs ``pytest -n 2 --dist loadgroup``: tests marked
``xdist_group(name)`` share one worker, so the kit runs they share (the mutant zoo's
batches, the browser tests' reports and site, the scratch PostgreSQL) are made once per
session, not once per worker. pytest-xdist (3.8) marks a grouped test by appending
``@name`` to ``item._nodeid``; since pytest 9.2 a node's id lives in ``item._id`` and
that assignment changes nothing, so every group was spread over both workers and each
worker repeated the shared runs. This hook appends the suffix the way pytest 9.2 reads
it, after xdist's own hook, and does nothing where xdist's suffix took effect.
"""

from __future__ import annotations

import pytest


def _group(item: pytest.Item) -> str | None:
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
             for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) if names else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on xdist workers only
        return
    for item in items:
        group = _group(item)
        if group is None or item.nodeid.endswith(f"@{group}"):
            continue
        from _pytest.nodeid import NodeId  # pytest >= 9.2, where xdist's suffix is lost

        item._id = NodeId.parse(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]
