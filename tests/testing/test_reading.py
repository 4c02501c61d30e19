"""Reading failures (issue 14): the clause a diff line carries, the typed symptom on
CheckFailed, replay files that never overwrite each other, the hint of an unavailable plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdq_compliance import Difference, StorageUnavailable
from rdq_compliance.envelope._clauses import clauses_for_pointer
from rdq_compliance.reporting._symptom import Symptom
from rdq_compliance.testing import CheckFailed
from rdq_compliance.testing._case import save_case
from rdq_compliance.testing._runtime import _unavailable_message


@pytest.mark.parametrize(("expected", "actual", "clause"), [
    ({"k": 1}, None, "C10"),  # a detail lost to null: C10 (RDQ-UF-006), not C9 (nor C5)
    ("text", None, "C10"),
    ({}, None, "C9"),  # {} became null: the null/empty distinction (RDQ-RT-010)
    (None, [], "C9"),
    ("", None, "C9"),
])
def test_a_lost_detail_is_tagged_with_the_clause_of_detail(expected, actual, clause):
    """RDQ-UF-006 (C10) / RDQ-RT-010 (C9): clause tags on diffs follow the field."""
    d = Difference("/attempts/0/error/detail", "type", expected, actual, "type changed")
    assert clauses_for_pointer(d) == clause


def test_check_failed_carries_a_typed_symptom():
    """The failure data is an attribute of the kit's exception type, not an ad-hoc one."""
    assert CheckFailed("x").symptom is None
    assert CheckFailed.__annotations__["symptom"] in ("Symptom | None", Symptom | None)


def _save(directory: Path, message: str, seed: int = 0) -> Path:
    return save_case(directory, test="test_x", params={"id": "a"}, plugin="p",
                     requirement="RDQ-RT-001", check=None, example=None, envelopes=[],
                     message=message, meta={"seed": seed, "profile": "quick"})


def test_replay_files_of_different_failures_never_overwrite(tmp_path: Path):
    """CI conventions (issue 14 §6): the same case failing differently (another message,
    another seed) gets its own file; the very same failure rewrites its own."""
    a = _save(tmp_path, "RDQ-RT-001 … / plugin 'p': read returned None")
    b = _save(tmp_path, "RDQ-RT-001 … / plugin 'p': write raised OSError")
    c = _save(tmp_path, "RDQ-RT-001 … / plugin 'p': read returned None", seed=1)
    assert len({a, b, c}) == 3 and all(p.exists() for p in (a, b, c))
    assert _save(tmp_path, "RDQ-RT-001 … / plugin 'p': read returned None") == a


def test_stdio_command_hint_names_the_testee_option():
    """Wording (issue 14 §4): the stdio command comes from --rdq-testee."""
    msg = _unavailable_message("stdio", StorageUnavailable("cannot start 'x'", setting="command"))
    assert "--rdq-testee" in msg and "stdio.command" not in msg
    other = _unavailable_message("pg", StorageUnavailable("down", setting="dsn"))
    assert other.endswith("(set it with --rdq-option pg.dsn=VALUE)")
