"""One run, one set of namespaces (issue 12 §4): the shape of ``Rdq.new_name``."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rdq_compliance import NAMESPACE_PATTERN
from rdq_compliance._requirements import get_requirement
from rdq_compliance.testing._context import KitSettings
from rdq_compliance.testing._handle import Rdq


def _rdq(token: str, worker: str) -> Rdq:
    item: Any = SimpleNamespace(name="test_x", originalname="test_x")
    settings = KitSettings(("fake",), "quick", 0, 1.0, Path("unused"), None,
                           run_token=token, worker=worker)
    return Rdq(item, get_requirement("RDQ-ST-003"), SimpleNamespace(), settings)  # type: ignore[arg-type]


def test_names_carry_the_run_token_and_never_collide_across_workers() -> None:
    token = "0a1b2c3d"
    names = [_rdq(token, worker).new_name() for worker in ("", "1", "11", "999")
             for _ in range(500)]
    assert len(set(names)) == len(names)
    for name in names:
        # Room for the namespace-shape tests, which append up to 20 characters.
        assert len(name) <= 20 and NAMESPACE_PATTERN.fullmatch(name + "ab_c"), name
        assert re.fullmatch(rf"t{token}[0-9]*w[0-9a-f]+", name), name
