"""pytest plugin for zoo runs: test each plugin only on the requirements it is aimed at.

Loaded in the child kit run with ``-p tests.mutants._focus``. ``RDQ_ZOO_FOCUS`` holds
a JSON object {plugin label: [requirement id, ...]}; the kit tests of a listed
plugin whose requirement is not in its list are deselected (the report then says
"not-run" for those requirements, which never turns a failure into a pass: the
verdict stays non-compliant when a focused MUST requirement fails). Plugins not
listed run every test.
"""

from __future__ import annotations

import json
import os

import pytest

ENV = "RDQ_ZOO_FOCUS"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    raw = os.environ.get(ENV)
    if not raw:
        return
    focus: dict[str, list[str]] = json.loads(raw)
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        label = callspec.params.get("rdq_plugin") if callspec is not None else None
        mark = item.get_closest_marker("rdq_requirement")
        wanted = focus.get(label) if isinstance(label, str) else None
        if wanted is None or mark is None or mark.args[0] in wanted:
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        items[:] = keep
        config.hook.pytest_deselected(items=drop)
