"""Known-failures file: parsing, gating, writing."""

from __future__ import annotations

import pytest

from rdq_compliance.reporting import (
    KnownFailuresError,
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
    assert parse_known_failures(text).entries == {(None, RID), (None, OTHER)}
    g = gate(r, parse_known_failures(text))
    assert g.unlisted == [] and g.stale == []
    two = report_for([meta("a"), meta("b")],
                     passing("a", override={RID: TestStatus.FAILED}) + passing("b"))
    assert parse_known_failures(format_known_failures(two)).entries == {("a", RID)}
    clean = report_for([meta()], passing())
    assert parse_known_failures(format_known_failures(clean)).entries == frozenset()
