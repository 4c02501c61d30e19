"""The report JSON: content, schema, digest and tamper detection."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from rdq_compliance._requirements import REQUIREMENTS
from rdq_compliance.reporting import (
    ReportError,
    TestStatus,
    compute_digest,
    load_report,
    verify_report,
    write_json,
)

from ._synth import GATED, SHOULDS, UNGATED_MUST, meta, passing, report_for, validate_schema


def sample(**kw):
    return report_for([meta("mem", caps=[GATED[0].capability]), meta("b", unavailable="down")],
                      passing("mem", caps=[GATED[0].capability],
                              override={UNGATED_MUST.id: TestStatus.FAILED}, message="E <diff>"),
                      **kw)


def test_report_content_and_schema():
    r = sample(known_failures={("mem", UNGATED_MUST.id): True})
    validate_schema(r)
    assert r["verdict"] == "non-compliant"
    assert r["started_at"] == "2026-07-20T14:03:22.117Z"
    assert r["duration_ms"] == 1500
    mem, b = r["plugins"]
    assert (mem["label"], mem["name"], mem["version"]) == ("mem", "memory", "1.0")
    assert mem["envelope_versions"] == [1] and mem["capabilities"] == [GATED[0].capability]
    assert mem["verdict"] == "non-compliant" and b["verdict"] == "incomplete"
    assert b["unavailable"] == "down" and b["name"] is None
    live = [x for x in REQUIREMENTS if not x.retired]
    assert [x["id"] for x in mem["requirements"]] == [x.id for x in live]
    failed = next(x for x in mem["requirements"] if x["id"] == UNGATED_MUST.id)
    assert failed["status"] == "failed" and failed["first_failure"] == "E <diff>"
    assert failed["known_failure"] is True
    assert failed["clauses"] == list(UNGATED_MUST.clauses)
    assert failed["tests"][0]["status"] == "failed"
    # gated on a capability "mem" does not declare (concurrent): not applicable
    other = [x for x in live if x.capability and x.capability != GATED[0].capability]
    assert mem["counts"]["failed"] == 1
    assert mem["counts"]["passed"] == len(live) - 1 - len(other)
    assert b["counts"]["not-run"] == len(live)
    assert r["counts"]["failed"] == 1 and r["counts"]["not-run"] == len(live)
    assert verify_report(r) == r["digest"]


def test_every_verdict_validates_against_the_schema():
    for tests, verdict in [
        (passing(), "compliant"),
        (passing(override={UNGATED_MUST.id: TestStatus.ERROR}), "non-compliant"),
        (passing(override={UNGATED_MUST.id: None}), "incomplete"),
        (passing(override={SHOULDS[0].id: TestStatus.FAILED}), "compliant"),
        ([], "incomplete"),
    ]:
        r = report_for([meta()], tests, aborted="interrupted" if not tests else None)
        validate_schema(r)
        assert r["verdict"] == verdict


def test_schema_rejects_a_bad_report():
    r = sample()
    bad = copy.deepcopy(r)
    bad["verdict"] = "green"
    with pytest.raises(jsonschema.ValidationError):
        validate_schema(bad)
    bad = copy.deepcopy(r)
    bad["plugins"][0]["requirements"][0]["status"] = "ok"
    with pytest.raises(jsonschema.ValidationError):
        validate_schema(bad)


def test_digest_is_canonical_and_independent_of_key_order():
    r = sample()
    shuffled = dict(reversed(list(r.items())))
    assert compute_digest(shuffled) == r["digest"]
    assert r["digest"].startswith("sha256:") and len(r["digest"]) == 71


@pytest.mark.parametrize("edit", [
    lambda r: r.__setitem__("verdict", "compliant"),
    lambda r: r.__setitem__("seed", 1),
    lambda r: r.__setitem__("kit_version", "9.9.9"),
    lambda r: r.__setitem__("fixture_hash", "sha256:" + "1" * 64),
    lambda r: r["plugins"][0].__setitem__("name", "other"),
    lambda r: r["plugins"][0]["requirements"][0].__setitem__("status", "passed"),
    lambda r: r["plugins"][0]["requirements"][0]["tests"][0].__setitem__("message", "x"),
    lambda r: r.pop("aborted"),
    lambda r: r["notes"].append("x"),
])
def test_any_edit_is_detected(edit):
    r = sample()
    edited = copy.deepcopy(r)
    edit(edited)
    with pytest.raises(ReportError):
        verify_report(edited)


def test_a_consistent_forgery_with_a_recomputed_digest_is_still_caught():
    """The digest is not a signature, but the verdict must follow from the statuses."""
    r = sample()
    r["verdict"] = r["plugins"][0]["verdict"] = "compliant"
    r["digest"] = compute_digest(r)
    with pytest.raises(ReportError, match="does not follow"):
        verify_report(r)


def test_write_and_load_round_trip(tmp_path):
    r = sample()
    path = tmp_path / "r.json"
    write_json(path, r)
    assert load_report(path) == r
    assert verify_report(load_report(path)) == r["digest"]
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_load_errors(tmp_path):
    with pytest.raises(ReportError) as e:
        load_report(tmp_path / "missing.json")
    assert e.value.unreadable
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(ReportError) as e:
        load_report(tmp_path / "bad.json")
    assert e.value.unreadable
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(ReportError) as e:
        load_report(tmp_path / "list.json")
    assert not e.value.unreadable
    (tmp_path / "nan.json").write_text('{"a": NaN}')
    with pytest.raises(ReportError):
        load_report(tmp_path / "nan.json")
    with pytest.raises(ReportError, match="missing"):
        verify_report(json.loads('{"schema_version": 1}'))


def test_a_malformed_report_with_a_recomputed_digest_fails_the_shipped_schema():
    """verify reads a report by the JSON Schema the kit ships, not by a hand-made check:
    a report whose digest was recomputed over a value the schema forbids is refused."""
    r = sample()
    r["plugins"][0]["requirements"][0]["level"] = "MAY"
    r["digest"] = compute_digest(r)
    with pytest.raises(ReportError, match=r"not a valid rdq report at /plugins/0/requirements/0"):
        verify_report(r)
