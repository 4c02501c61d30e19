"""Root causes (issue 14 §1): symptoms of failed round trips grouped into causes, shown in
the report (``causes``), the terminal and the Markdown summary; clause ids link to the spec
(issue 14 §7). The real kit on real mutants: tests/mutants/test_causes.py."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from rdq_compliance import Difference
from rdq_compliance.reporting import TestResult, TestStatus, render_markdown, terminal_lines
from rdq_compliance.reporting._causes import SPEC_URL, clause_link, group_causes
from rdq_compliance.reporting._markdown import md_cell, md_clause_links, md_clauses
from rdq_compliance.reporting._symptom import Symptom
from rdq_compliance.testing._symptoms import pointer_pattern, symptom_of

from ._synth import meta, passing, report_for, validate_schema

T = datetime(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC)


@pytest.mark.parametrize(("pointer", "pattern"), [
    ("", ""),
    ("/created_at", "/created_at"),
    ("/x_custom", "/*"),
    ("/x_custom/0/a", "/*/*/*"),
    ("/headers/Content-Type", "/headers/*"),
    ("/attempts", "/attempts"),
    ("/attempts/3/started_at", "/attempts/*/started_at"),
    ("/attempts/12/x_note", "/attempts/*/*"),
    ("/attempts/0/error/detail", "/attempts/*/error/detail"),
    ("/attempts/0/error/detail/k/2", "/attempts/*/error/detail/*/*"),
    ("/attempts/0/error/x_extra", "/attempts/*/error/*"),
])
def test_pointer_pattern_generalises_indexes_and_generated_keys(pointer: str, pattern: str):
    """C3/C8/C10: array indexes and generated names become ``*``; field names stay."""
    assert pointer_pattern(pointer) == pattern


def _sym(pointer: str, kind: str, clause: str, summary: str = "s") -> Symptom:
    return Symptom(pointer, pointer_pattern(pointer), kind, clause, summary, f"  {pointer}: x")


def test_symptom_of_an_instant_says_the_shift_in_milliseconds():
    """RDQ-RT-007 (C3): "instant changed by -117 ms", as the issue's example line."""
    d = Difference("/created_at", "changed", T, T.replace(microsecond=0), "instant changed: …")
    s = symptom_of(d, "C3", ["  line"] * 9)
    assert (s.pattern, s.kind, s.clause) == ("/created_at", "instant changed", "C3")
    assert s.summary == "instant changed by -117 ms"
    assert s.diff.splitlines()[-1] == "  … and 3 more lines"
    late = Difference("/created_at", "changed", T, T + timedelta(microseconds=1500), "n")
    assert symptom_of(late, "C3", []).summary == "instant changed by +1.500 ms"


def test_symptom_kind_drops_the_key_names():
    """C8: 'header 'A' missing' and 'header 'b:c' missing' are one kind."""
    a = symptom_of(Difference("/headers/A", "missing", "x", None, "header 'A' missing"), "C8", [])
    b = symptom_of(Difference("/headers/b:c", "missing", "y", None, "header 'b:c' missing"),
                   "C8", [])
    assert a.kind == b.kind == "header missing"
    assert Symptom.from_json(a.to_json()) == a
    assert Symptom.from_json("{not json") is None
    assert Symptom.from_json('{"pointer": "/x"}') is None


def test_timestamp_fields_are_one_cause_named_after_the_timestamp_requirement():
    """RDQ-RT-007 (C3): one defect seen first at different timestamp fields by tests of many
    requirements is one cause, and it names RDQ-RT-007, not the golden corpus."""
    failures = [
        ("g1", "RDQ-GOLD-001", _sym("/next_attempt_at", "instant changed", "C3")),
        ("g2", "RDQ-GOLD-001", _sym("/created_at", "instant changed", "C3")),
        ("r1", "RDQ-RT-001", _sym("/attempts/0/started_at", "instant changed", "C3")),
        ("t1", "RDQ-RT-007", _sym("/next_attempt_at", "instant changed", "C3")),
        ("u1", "RDQ-UF-001", _sym("/next_attempt_at", "instant changed", "C3")),
    ]
    (cause,) = group_causes(failures)
    assert cause["requirement"] == "RDQ-RT-007" and cause["clause"] == "C3"
    assert cause["failures"] == 5 and cause["pointer"] == "/next_attempt_at"
    assert set(cause["pointers"]) == {"/next_attempt_at", "/created_at", "/attempts/*/started_at"}
    assert cause["requirements"][0] == "RDQ-RT-007"
    assert cause["tests"] == ["g1", "g2", "r1", "t1", "u1"]


def test_unknown_fields_at_two_places_are_two_causes():
    """RDQ-UF-001 / RDQ-UF-002 (C10): generated keys keep their parent object apart."""
    failures = [
        ("a", "RDQ-UF-001", _sym("/x_a", "unknown field missing", "C10 C5")),
        ("b", "RDQ-UF-002", _sym("/attempts/1/x_b", "unknown field missing", "C10 C5")),
    ]
    causes = group_causes(failures)
    assert sorted(c["requirement"] for c in causes) == ["RDQ-UF-001", "RDQ-UF-002"]


def test_a_lost_detail_is_one_c10_cause_even_where_it_held_an_empty_value():
    """RDQ-UF-006 (C10): detail lost to null is C10 where it held a value and C9 where it
    held {} (null vs empty): one cause, its most frequent clause, the detail requirement."""
    failures = [(f"d{i}", "RDQ-UF-006",
                 _sym("/attempts/0/error/detail", "type changed", "C10 C5")) for i in range(3)]
    failures += [("e", "RDQ-RT-010", _sym("/attempts/0/error/detail", "type changed", "C9")),
                 ("f", "RDQ-UF-005", _sym("/attempts/0/error/detail", "type changed", "C10 C5")),
                 ("g", "RDQ-UF-005", _sym("/attempts/0/error/detail", "type changed", "C10 C5"))]
    (cause,) = group_causes(failures)
    assert (cause["clause"], cause["requirement"]) == ("C10 C5", "RDQ-UF-006")


def test_the_specific_requirement_may_come_from_another_cause():
    """RDQ-RT-010 (C9): the golden corpus shows {} -> null in attempts; RDQ-RT-010 showed
    it at the top level: both causes name RDQ-RT-010."""
    failures = [("a", "RDQ-RT-010", _sym("/x", "type changed", "C9")),
                ("b", "RDQ-GOLD-001", _sym("/attempts/0/x", "type changed", "C9"))]
    assert [c["requirement"] for c in group_causes(failures)] == ["RDQ-RT-010", "RDQ-RT-010"]
    by_pointer = {c["pointer"]: c for c in group_causes(failures)}
    assert by_pointer["/attempts/*/*"]["requirements"] == ["RDQ-GOLD-001"]


def _report_with_causes() -> dict:
    tests = passing(override={"RDQ-RT-007": TestStatus.FAILED, "RDQ-GOLD-001": TestStatus.FAILED},
                    message="E diff")
    sym = _sym("/created_at", "instant changed", "C3", "instant changed by -117 ms")
    tests = [TestResult(t.nodeid, t.requirement, t.plugin, t.status, t.message, t.duration,
                        cause=sym if t.status is TestStatus.FAILED else None) for t in tests]
    return report_for([meta()], tests)


def test_report_terminal_and_markdown_show_the_causes():
    """RDQ-RT-007 (C3): the cause in all three renderings; the report validates."""
    report = _report_with_causes()
    validate_schema(report)
    (cause,) = report["plugins"][0]["causes"]
    assert cause["failures"] == 2 and cause["requirement"] == "RDQ-RT-007"
    assert report["spec"] == SPEC_URL
    rt007 = next(r for r in report["plugins"][0]["requirements"] if r["id"] == "RDQ-RT-007")
    assert rt007["tests"][0]["cause"]["pattern"] == "/created_at"
    lines = terminal_lines(report)
    assert "  1 cause explains 2 failures:" in lines
    assert ("    1. /created_at instant changed by -117 ms [C3] \u2192 RDQ-RT-007 (2 failed)"
            in lines)
    md = render_markdown(report)
    assert "1 cause explains 2 failures:" in md
    assert ("1. `/created_at` instant changed by -117 ms [C3] \u2192 **RDQ-RT-007** (2 failed)"
            in md)


def test_markdown_links_every_clause_id():
    """Clause links (issue 14 §7): every Cn in the summary is a shortcut reference link
    ``[C3]`` (short in the raw file) with its definition below, under the published spec
    (--rdq-spec-url; without one, no link: tests/reporting/test_html_clauses.py)."""
    published = "https://rdq.example/spec/clarifications.md"
    md = render_markdown({**_report_with_causes(), "spec": published})
    body, _, defs = md.rstrip("\n").partition("\n\n[C1]: ")
    defined = {f"C{m}" for m in re.findall(r"^\[C([0-9]+[a-z]?)\]: ", "[C1]: " + defs, re.M)}
    used = set(re.findall(r"\[(C[0-9]+[a-z]?)\]", body))
    assert used and used <= defined
    outside_code = re.sub(r"```text\n.*?\n```", "", body, flags=re.S)
    bare = re.sub(r"\[C[0-9]+[a-z]?\]", "", outside_code)
    assert not re.search(r"\bC[0-9]+[a-z]?\b", bare), re.findall(r".{20}\bC[0-9]+\b.{5}", bare)
    assert f"[C3]: {published}#c3" in md
    assert clause_link("C8a") == f"{SPEC_URL}#c8a"
    assert md_clauses(["C13a", "WE:payload"]) == "[C13a] WE:payload"
    assert md_clause_links(["C10", "C8a", "C2", "C8"]) == [
        f"[C2]: {SPEC_URL}#c2", f"[C8]: {SPEC_URL}#c8", f"[C8a]: {SPEC_URL}#c8a",
        f"[C10]: {SPEC_URL}#c10"]


def test_markdown_reads_well_raw():
    """CI conventions (issue 14 §6): an intraword underscore stays as it is (it cannot start
    emphasis), every other markup character is still an entity."""
    assert md_cell("unknown_fields") == "unknown_fields"
    assert md_cell("_x_ a_ __init__ *b*") == (
        "&#95;x&#95; a&#95; &#95;&#95;init&#95;&#95; &#42;b&#42;")
    md = render_markdown(report_for([meta()], passing()))
    assert "unknown_fields" in md and "&#95;" not in md


def test_an_invalid_envelope_read_back_is_a_symptom_too():
    """RDQ-RT-004 (C6): a read that returns an invalid envelope (lower-case id, naive
    timestamps) has its first violation as the symptom, so it groups into a cause."""
    from rdq_compliance import Violation, ViolationCode
    from rdq_compliance.testing._symptoms import symptom_of_violation

    v = Violation(ViolationCode.ID_FORMAT, "/id", "'01j…' is not canonical ULID text")
    s = symptom_of_violation(v, "C6", ["  /id: ID_FORMAT [C6]: …"])
    assert (s.pattern, s.kind, s.clause) == ("/id", "invalid: ID_FORMAT", "C6")
    (cause,) = group_causes([("a", "RDQ-GOLD-001", s), ("b", "RDQ-RT-004", s)])
    assert cause["requirement"] == "RDQ-RT-004"
