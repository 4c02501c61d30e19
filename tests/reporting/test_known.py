"""Known-failures file: parsing, gating, writing."""

from __future__ import annotations

import pytest

from rdq_compliance.reporting import (
    KnownFailuresError,
    TestResult,
    TestStatus,
    format_known_failures,
    gate,
    load_known_failures,
    parse_known_failures,
)

from ._synth import SHOULDS, UNGATED_MUST, meta, passing, report_for

RID = UNGATED_MUST.id
OTHER = SHOULDS[0].id


def test_parse():
    k = parse_known_failures(f"# header\n\n{RID}   # why\n  mem : {OTHER}\npkg.mod:attr:{RID}\n")
    assert k.entries == {(None, RID), ("mem", OTHER), ("pkg.mod:attr", RID)}
    assert k.lists("anything", RID) and k.lists("mem", OTHER) and not k.lists("b", OTHER)


@pytest.mark.parametrize(("text", "match"), [
    ("RDQ-NOPE-001\n", r"<k>:1: unknown requirement id='RDQ-NOPE-001'"),
    (f"# ok\n{RID.lower()}\n", r"<k>:2: .*upper case"),
    (f":{RID}\n", "empty plugin label"),
])
def test_parse_errors(text, match):
    with pytest.raises(KnownFailuresError, match=match):
        parse_known_failures(text, source="<k>")


def test_load_missing_file(tmp_path):
    with pytest.raises(KnownFailuresError, match="cannot read"):
        load_known_failures(tmp_path / "nope.txt")


def test_gate():
    failing = report_for([meta("a"), meta("b")],
                         passing("a", override={RID: TestStatus.FAILED, OTHER: TestStatus.ERROR})
                         + passing("b"))
    g = gate(failing, parse_known_failures(f"{RID}\na:{OTHER}\nzzz:{RID}\n"))
    assert g.listed == [("a", RID), ("a", OTHER)]
    assert g.unlisted == []
    assert g.stale == [("b", RID)]  # listed for every plugin, and b passes it
    assert g.unused_labels == ["zzz"]
    g = gate(failing, parse_known_failures(f"a:{RID}\n"))
    assert g.unlisted == [("a", OTHER)] and g.stale == []
    g = gate(failing, None)
    assert g.unlisted == [("a", RID), ("a", OTHER)]


def test_skipped_listed_requirement_is_not_stale():
    r = report_for([meta()], passing(override={RID: TestStatus.SKIPPED}))
    assert gate(r, parse_known_failures(RID)).stale == []


def test_format_round_trips_through_parse():
    r = report_for([meta("a")], passing("a", override={RID: TestStatus.FAILED,
                                                        OTHER: TestStatus.FAILED}))
    text = format_known_failures(r)
    assert parse_known_failures(text).keys() == {(None, RID), (None, OTHER)}
    g = gate(r, parse_known_failures(text))
    assert g.unlisted == [] and g.stale == []
    two = report_for([meta("a"), meta("b")],
                     passing("a", override={RID: TestStatus.FAILED}) + passing("b"))
    assert parse_known_failures(format_known_failures(two)).keys() == {("a", RID)}
    clean = report_for([meta()], passing())
    assert parse_known_failures(format_known_failures(clean)).keys() == set()


def _attempts_report(*messages: str) -> dict:
    """RDQ-RT-005 failing by the given causes (one test each), everything else passing."""
    rid = "RDQ-RT-005"
    tests = [t for t in passing() if t.requirement != rid]
    tests += [TestResult(f"suites/test_x.py::test_order_{n}[mem]", rid, "mem",
                         TestStatus.FAILED, m, 0.01) for n, m in enumerate(messages)]
    return report_for([meta()], tests)


def test_known_failures_name_the_cause_and_a_second_defect_is_new():
    """Issue 21 §4: `known-failures` writes a signature per cause; a failure of the listed
    requirement by another cause (a second, new defect) fails the gate."""
    one = _attempts_report("plugin 'mem': read('x') raised KeyError: 'attempt 3'")
    text = format_known_failures(one)
    (line,) = [ln for ln in text.splitlines() if ln.startswith("RDQ-RT-005")]
    sig = one["plugins"][0]["causes"][0]["signature"]
    assert line.startswith(f"RDQ-RT-005 cause={sig}  #")
    known = parse_known_failures(text)
    assert known.entries == frozenset() and known.causes == {(None, "RDQ-RT-005", sig)}
    # the same defect again (another id in the message): known
    again = _attempts_report("plugin 'mem': read('y') raised KeyError: 'attempt 7'")
    g = gate(again, known)
    assert g.listed == [("mem", "RDQ-RT-005")] and g.unlisted == []
    # the same defect and a second one in the same requirement: NEW
    two = _attempts_report("plugin 'mem': read('y') raised KeyError: 'attempt 7'",
                           "plugin 'mem': write(envelope id='x') raised OSError: disk full")
    g = gate(two, known)
    assert g.unlisted == [("mem", "RDQ-RT-005")] and g.listed == []
    (new,) = g.new_causes[("mem", "RDQ-RT-005")]
    assert new != sig
    # the requirement without a cause excuses any failure of it (the old form)
    assert gate(two, parse_known_failures("RDQ-RT-005\n")).unlisted == []


def test_not_exercised_is_not_checked_and_only_a_pass_is_stale():
    """Issue 21 §4: a listed requirement this run did not exercise is "not checked",
    never stale; stale means it ran and passed."""
    known = parse_known_failures(f"{RID}\n{OTHER} cause=c0123456789ab\n")
    skipped = report_for([meta()], passing(override={RID: TestStatus.SKIPPED, OTHER: None}))
    g = gate(skipped, known)
    assert g.stale == [] and g.not_checked == [("mem", RID), ("mem", OTHER)]
    ran = report_for([meta()], passing())
    g = gate(ran, known)
    assert g.stale == [("mem", RID), ("mem", OTHER)] and g.not_checked == []


def test_bad_cause_signature_is_a_clear_error():
    with pytest.raises(KnownFailuresError, match=r"<k>:1: cause='xyz' is not a cause signature"):
        parse_known_failures(f"{RID} cause=xyz\n", source="<k>")
