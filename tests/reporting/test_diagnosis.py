"""Issue 21 §1, §2, §7: every failure has a cause, the requirement of a cause comes from the
one diagnosis table, requirements failing only by another's cause say so, and the terminal
never points at a report that was not written. The real kit on zoo mutants:
tests/mutants/test_causes.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rdq_compliance import TRUNCATION_MARKER as M
from rdq_compliance import Difference, to_json
from rdq_compliance.envelope._diagnosis import DEFECT_RULES, difference_class, find_rule
from rdq_compliance.envelope._triggers import TRIGGERS, triggers_of
from rdq_compliance.reporting import TestResult, TestStatus, render_markdown, terminal_lines
from rdq_compliance.reporting._causes import group_causes
from rdq_compliance.reporting._symptom import Symptom, mask
from rdq_compliance.testing._symptoms import symptom_of, symptom_of_failure

from ._synth import meta, passing, report_for, validate_schema

T = datetime(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC)


@pytest.mark.parametrize(("pointer", "expected", "actual", "kind", "requirement", "clauses"), [
    # the examples
    ("/attempts/0/error/x_1", {"a": 1}, None, "missing", "RDQ-UF-003", ("C10",)),
    ("/attempts/0/error/detail", {"k": 1}, None, "type", "RDQ-UF-006", ("C10",)),
    ("/x_top", "v", None, "missing", "RDQ-UF-001", ("C10",)),
    ("/attempts/0/x_a", 1, None, "missing", "RDQ-UF-002", ("C10",)),
    ("/handler_version", "", None, "changed", "RDQ-RT-010", ("C9",)),
    ("/attempts/0/error/detail", {}, None, "type", "RDQ-RT-010", ("C9",)),
    ("/created_at", T, T.replace(microsecond=0), "changed", "RDQ-RT-007", ("C3",)),
    ("/x_top/n", 2**60, 2**60 + 1, "changed", "RDQ-UF-005", ("C5",)),
    ("/attempts/0/error/message", "a\x00b", "ab", "changed", "RDQ-RT-006", ("C4",)),
    ("/headers/Key", "1", None, "missing", "RDQ-RT-009", ("C8", "C4")),
    # a header, unknown field or attempt never written: the place's own requirement; one
    # an earlier version held (the "stale" class, a failed read's diagnosis): RDQ-ST-001
    ("/headers/old", None, "1", "unexpected", "RDQ-RT-009", ("C8", "C4")),
    ("/_id", None, {"$oid": "1"}, "unexpected", "RDQ-UF-001", ("C10",)),
    # {} read as [] or the reverse (PHP's json_encode of an empty array), at any level:
    # one of C9's four empty values for another; a non-empty one is its place's
    ("/x_top", {}, [], "type", "RDQ-RT-010", ("C9",)),
    ("/attempts/0/error/detail/k", [], {}, "type", "RDQ-RT-010", ("C9",)),
    ("/attempts/0/x_a", {"0": 1}, [1], "type", "RDQ-UF-002", ("C10",)),
    ("/attempts/1", None, {"attempt_no": 1}, "unexpected", "RDQ-RT-005", ("C12",)),
    ("/payload", b"\xff", b"\xef\xbf\xbd", "changed", "RDQ-RT-008", ("C7",)),
    # a value cut to a column's length (issue 22): RDQ-RT-011, wherever it is ...
    ("/attempts/0/error/type", "E" * 300, "E" * 255, "changed", "RDQ-RT-011", ("C4",)),
    ("/headers/k", "v" * 300, "v" * 255, "changed", "RDQ-RT-011", ("C4",)),
    ("/x_top", "u" * 9000, "u" * 8191, "changed", "RDQ-RT-011", ("C4",)),
    # ... but message and stack have C1's limits: a shorter column is RDQ-TR-001's, cut
    # plainly or re-truncated by C1's algorithm (a prefix and the marker)
    ("/attempts/0/error/message", "m" * 4096, "m" * 4000, "changed", "RDQ-TR-001",
     ("C1", "C4")),
    ("/attempts/0/error/stack", "s" * 65_536, "s" * 65_535, "changed", "RDQ-TR-001",
     ("C1", "C4")),
    ("/attempts/0/error/message", "m" * 4081 + M, "m" * 4080 + M, "changed", "RDQ-TR-001",
     ("C1", "C4")),
    ("/attempts/0/error/message", "\u00e9" * 2048, "\u00e9" * 2040 + M, "changed",
     "RDQ-TR-001", ("C1", "C4")),
    ("/x_top", "u" * 9000 + M, "u" * 8000 + M, "changed", "RDQ-RT-011", ("C4",)),
    # ... but trailing white space or U+0000 trimmed is text mangled (RDQ-RT-006)
    ("/handler_version", "v1  ", "v1", "changed", "RDQ-RT-006", ("C4",)),
    ("/attempts/0/error/type", "T\x00", "T", "changed", "RDQ-RT-006", ("C4",)),
    # a header value whose code points changed is free text; its key lost is a header's
    ("/headers/k", " v ", " v", "changed", "RDQ-RT-006", ("C4",)),
    ("/headers/ k ", " v ", None, "missing", "RDQ-RT-009", ("C8", "C4")),
    # a value that merely ended with the truncation marker lost it (issue 21, zoo)
    ("/attempts/0/error/message", "m\u2026[truncated]", "m", "changed", "RDQ-TR-003",
     ("C1",)),
])
def test_the_table_names_the_requirement_by_the_defect(pointer, expected, actual, kind,
                                                       requirement, clauses):
    d = Difference(pointer, kind, expected, actual, f"{kind}: x")
    s = symptom_of(d, "", [])
    rule = find_rule(s.pattern, s.difference)
    assert rule is not None and (rule.requirement, rule.clauses) == (requirement, clauses)


def test_an_empty_object_read_as_an_empty_array_says_so():
    s = symptom_of(Difference("/x_top", "type", {}, [], "type changed"), "", [])
    assert (s.difference, s.change) == ("empty-null", "{} read as []")


def test_the_table_is_data_with_known_vocabulary():
    from rdq_compliance._requirements import get_requirement
    from rdq_compliance.envelope._diagnosis import DIFFERENCES

    for rule in DEFECT_RULES:
        get_requirement(rule.requirement)  # every id exists
        classes = rule.difference.lstrip("~").split("|")
        assert rule.difference == "*" or set(classes) <= set(DIFFERENCES), rule
        assert rule.trigger == "*" or rule.trigger in TRIGGERS, rule


def test_triggers_of_an_envelope():
    doc = {"envelope_version": 1, "payload": "/w==", "headers": {"": "x" * 300},
           "attempts": [], "x": ["a\x00", "\U0001F600", {"a.b": 2**60}]}
    assert triggers_of(doc) == {"nul", "astral", "dotted-key", "big-int", "non-utf8-payload",
                                "empty-key", "long-header"}
    assert triggers_of({"payload": "", "attempts": [{}] * 11}) == {"empty-payload",
                                                                    "many-attempts",
                                                                    "null-error"}
    assert triggers_of("not json") == frozenset()
    # the long values of RDQ-RT-011: a key, a known free-text field, many headers
    many = {f"k{i}": "v" for i in range(1000)}
    assert triggers_of({"headers": {"k" * 256: "v"}}) == {"long-key"}
    assert triggers_of({"handler_version": "h" * 300}) == {"long-field"}
    assert triggers_of({"attempts": [{"error": {"type": "T" * 256}}]}) == {"long-field"}
    assert triggers_of({"headers": many}) == {"many-headers"}
    assert triggers_of({"handler_version": "h" * 255, "headers": {"k" * 255: "v" * 255}}) == (
        frozenset())
    # a queue or handler_ref past the common index columns (C8a allows 240 characters)
    assert triggers_of({"queue": "q" * 240}) == {"long-name"}
    assert triggers_of({"handler_ref": "h" * 128}) == {"long-name"}
    assert triggers_of({"queue": "q" * 127, "handler_ref": "h" * 127}) == frozenset()
    for trigger in ("long-header", "long-key", "long-field", "many-headers", "long-name"):
        rule = find_rule("/", "refused", [trigger])
        assert rule is not None and rule.requirement == "RDQ-RT-011", trigger


def test_an_attempt_without_an_error_is_a_trigger_named_after_the_others():
    """``null-error``: a reader that dereferences every attempt's error raises on each
    envelope holding an attempt without one (RDQ-RT-010, C9); any rarer class the raising
    envelopes share names the cause first (the table's last trigger row)."""
    assert triggers_of({"attempts": [{"error": None}, {"error": {"type": "T"}}]}) == {
        "null-error"}
    assert triggers_of({"attempts": [{"error": {"type": "T"}}]}) == frozenset()
    rule = find_rule("/", "raised", ["null-error"])
    assert rule is not None and (rule.requirement, rule.clauses) == ("RDQ-RT-010", ("C9",))
    astral = find_rule("/", "raised", ["astral", "null-error"])
    assert astral is not None and astral.requirement == "RDQ-RT-006"


def test_a_raise_is_named_by_the_shared_class_whose_requirement_failed():
    """Every envelope the kit writes holds a dotted header key (``rdq.source``): when the
    raising envelopes also share an attempt without an error and only RDQ-RT-010 failed
    (``-x``: the run stopped at its test), the cause is RDQ-RT-010's, its trigger the
    null error, not the dotted key whose requirement (RDQ-RT-009) passed."""
    msg = ("RDQ-RT-010 [MUST; C9] t\nplugin 'p': read('01J2ZK7Q8X0000000000000001') in "
           "namespace 't1234abcd0w1' raised TypeError: 'NoneType' object is not subscriptable")
    doc = {"headers": {"rdq.source": "k"}, "attempts": [{"error": None}]}
    (cause,) = group_causes([("t1", "RDQ-RT-010", symptom_of_failure(msg, [doc]))])
    assert cause["requirement"] == "RDQ-RT-010"
    assert cause["trigger"] == TRIGGERS["null-error"]


def test_mask_hides_ids_numbers_namespaces_and_quoted_values():
    a = mask("read('01ARZ3NDEKTSV4RRFFQ69G5FAV') in t1a2b3c4d0w1f failed after 12 ms: 'x'")
    b = mask("read('01BX5ZZKBKACTAV9WEVGEMMVRZ') in t9f8e7d6cw2a failed after 7 ms: 'yz'")
    assert a == b and "12" not in a


def test_mask_hides_the_json_type_a_value_came_back_as() -> None:
    """One field read wrong is one cause whatever type the drawn value had (a decoder
    that reads an unknown field 'ID' into id: the plugin's validation says which)."""
    said = [mask(f"read raised InvalidEnvelope: /id: FIELD_TYPE: expected a string, got {t}")
            for t in ("an object", "an array", "an integer", "null", "a boolean")]
    assert len(set(said)) == 1 and said[0].endswith("got <a JSON type>")
    assert mask("expected a string, got nothing") != said[0]


_REFUSED = ("RDQ-RT-004 [MUST; C3] t\nplugin 'p': write(envelope id='{id}') in namespace "
            "'t1234abcd0w{n}' refused a valid envelope within the limits with "
            "StorageError(code=<ErrorCode.INTERNAL: 'INTERNAL'>, message='unsupported Unicode "
            "escape sequence at {n}') (C17: a valid envelope within the limits must never be "
            "rejected)")


def test_refusals_group_by_code_and_masked_message_and_name_their_trigger():
    """A refusal-only plugin (U+0000 refused): one cause, its trigger, RDQ-RT-006."""
    failures = []
    for n, (rid, extra) in enumerate([("RDQ-RT-004", {"x": "\U0001F600"}),
                                      ("RDQ-UF-001", {"y": 1}), ("RDQ-RT-006", {})]):
        doc = {"payload": "", "m": "a\x00", **extra}
        msg = _REFUSED.format(id=f"{n:026d}", n=n)
        failures.append((f"t{n}", rid, symptom_of_failure(msg, [doc])))
    (cause,) = group_causes(failures)
    assert cause["requirement"] == "RDQ-RT-006" and cause["clause"] == "C4"
    assert cause["trigger"] == TRIGGERS["nul"]  # shared by all three; empty payload too,
    assert "INTERNAL" in cause["kind"] and cause["failures"] == 3  # but U+0000 comes first
    assert cause["signature"].startswith("c") and len(cause["signature"]) == 13


def test_a_refusal_named_after_what_was_written_is_one_cause_with_the_others():
    """RDQ-RT-006 (C4): the long-value checks say what they wrote first ("a header key of
    255 bytes was refused: write(…) raised StorageError(…)"); the operation is the call the
    message names, so one store refusing astral characters is one cause, not one per
    field the checks name (mysql_strict_utf8mb3 had seven)."""
    golden = _REFUSED.format(id="0" * 26, n=1)
    long_ones = [
        f"RDQ-RT-011 [MUST; C4] t\nplugin 'p': {what} of 65,536 bytes (multi-byte) was "
        f"refused: write(envelope id='{n:026d}') in namespace 't1234abcd0w{n}' raised "
        "StorageError(code='INTERNAL', message='unsupported Unicode escape sequence at 7') "
        "(C4: free text has no length limit of its own)"
        for n, what in enumerate(["a header key", "an attempt's unknown field",
                                  "error.detail (a JSON string)", "handler_version"])]
    symptoms = [symptom_of_failure(m, [{"m": "a\x00"}]) for m in [golden, *long_ones]]
    assert {s.kind for s in symptoms} == {"write refused: StorageError INTERNAL"}
    (cause,) = group_causes([(f"t{n}", "RDQ-RT-006", s) for n, s in enumerate(symptoms)])
    assert cause["failures"] == 5
    other = symptom_of_failure("RDQ-ST-002 [MUST; C13] t\nplugin 'p': storage.open('ns') "
                               "refused with code 'INTERNAL' (C17)")
    assert other.kind == "storage.open refused: StorageError INTERNAL"
    # A StorageError that surfaced as an exception is the refusal it carries.
    surfaced = symptom_of_failure(
        "RDQ-RT-003 [MUST; C15] t\nplugin 'p': read('01J2ZK7Q8X0000000000000001') in "
        "namespace 't1234abcd0w1' raised StorageError: INTERNAL: unsupported Unicode escape "
        "sequence at 9")
    assert (surfaced.kind, surfaced.difference) == (
        "read refused: StorageError INTERNAL", "refused")


def test_exceptions_group_by_type_and_masked_message():
    msgs = [f"RDQ-RT-008 [MUST; C7] t\nplugin 'p': write(envelope id='{n:026d}') in namespace "
            f"'t1234abcd0w{n}' raised DataError: invalid byte sequence for encoding \"UTF8\": "
            f"0x{n + 0xf0:02x}" for n in range(3)]
    failures = [(f"t{n}", rid, symptom_of_failure(m, [{"payload": "/w=="}]))
                for n, (m, rid) in enumerate(zip(msgs, ["RDQ-GOLD-001", "RDQ-RT-001",
                                                        "RDQ-RT-008"], strict=True))]
    (cause,) = group_causes(failures)
    assert cause["requirement"] == "RDQ-RT-008"
    assert cause["requirements"][0] == "RDQ-RT-008"
    assert cause["kind"].startswith("write raised DataError: invalid byte sequence")


def test_a_protocol_fault_of_the_testee_is_one_cause_whichever_request_met_it():
    """A testee that answers with the wrong seq faults every request in flight, reads
    and writes alike: one cause (an exception of the plugin is one per operation)."""
    def failure(op: str, n: int) -> str:
        return (f"RDQ-CC-001 [MUST; C18] t\nplugin 'p': {op}('{n:026d}') in namespace "
                f"'t1234abcd0w{n}' raised rdq_compliance.storage._stdio._faults.TesteeFault: "
                f"testee answered seq {n}, but no request with seq {n} was awaiting an answer "
                "(never sent, or already answered): '{\"seq\": 8}'\n(seen before request "
                f"{op} (seq {n + 1}) was sent)")

    faults = [(f"t{n}", rid, symptom_of_failure(failure(op, n)))
              for n, (op, rid) in enumerate([("write", "RDQ-CC-001"), ("read", "RDQ-CC-003"),
                                             ("read", "RDQ-CC-001")])]
    (cause,) = group_causes(faults)
    assert cause["kind"].startswith("a request raised "), cause["kind"]
    errors = [(f"t{n}", "RDQ-RT-001", symptom_of_failure(
        f"RDQ-RT-001 [MUST; C3] t\nplugin 'p': {op}('{n:026d}') raised KeyError: 'x'"))
        for n, op in enumerate(["write", "read"])]
    assert len(group_causes(errors)) == 2  # the plugin's own code: one per operation


def test_a_table_requirement_that_did_not_fail_yields_to_the_failing_one():
    """A cache hides the loss of milliseconds from RDQ-RT-007's tests; only the test read
    through a fresh storage (RDQ-RT-003) fails: the cause names RDQ-RT-003."""
    d = Difference("/created_at", "changed", T, T.replace(microsecond=0), "instant changed")
    (cause,) = group_causes([("t", "RDQ-RT-003", symptom_of(d, "C3", []))])
    assert cause["requirement"] == "RDQ-RT-003"
    both = group_causes([("t", "RDQ-RT-003", symptom_of(d, "C3", [])),
                         ("u", "RDQ-RT-007", symptom_of(d, "C3", []))])
    assert both[0]["requirement"] == "RDQ-RT-007"


def _report_with(messages: dict[str, list[str]]) -> dict:
    """Every requirement passing but those in ``messages``: one failed test per message."""
    tests = [t for t in passing() if t.requirement not in messages]
    for rid, ms in messages.items():
        tests += [TestResult(f"suites/test_x.py::test_{rid}_{n}[mem]", rid, "mem",
                             TestStatus.FAILED, m, 0.01) for n, m in enumerate(ms)]
    return report_for([meta()], tests)


def test_every_failure_is_in_a_cause_and_explained_requirements_say_so():
    boom = "plugin 'mem': read('{0}') raised KeyError: 'attempts {0}'"
    report = _report_with({"RDQ-RT-005": [boom.format(1), boom.format(2)],
                           "RDQ-GOLD-001": [boom.format(3)],
                           "RDQ-ST-004": ["plugin 'mem': namespace 'tab12cd34w1' still holds"
                                          " the envelope after the drop"]})
    validate_schema(report)
    p = report["plugins"][0]
    assert p["failures"] == 4 == sum(c["failures"] for c in p["causes"])
    by_id = {r["id"]: r for r in p["requirements"]}
    assert p["causes"][0]["requirement"] == "RDQ-RT-005"
    assert by_id["RDQ-GOLD-001"]["explained_by"] == 1  # only by the cause naming RT-005
    assert by_id["RDQ-RT-005"]["explained_by"] is None
    assert by_id["RDQ-ST-004"]["explained_by"] is None  # a cause of its own
    lines = terminal_lines(report)
    assert "  2 causes explain 4 failures:" in lines
    gold = next(ln for ln in lines if ln.startswith("  FAILED RDQ-GOLD-001"))
    assert gold.endswith("\u2014 explained by cause 1")
    assert "explained by cause" not in next(ln for ln in lines
                                            if ln.startswith("  FAILED RDQ-RT-005"))
    assert "explained by cause 1" in render_markdown(report)


def test_the_terminal_points_at_the_report_only_when_it_was_written():
    messages = {rid: [f"plugin 'mem': check {n} of {rid} failed differently: {'x' * n}"]
                for n, rid in enumerate(["RDQ-RT-005", "RDQ-RT-006", "RDQ-RT-007",
                                         "RDQ-RT-008", "RDQ-RT-009", "RDQ-RT-010",
                                         "RDQ-UF-001"])}
    report = _report_with(messages)
    assert len(report["plugins"][0]["causes"]) == 7
    without = "\n".join(terminal_lines(report))
    assert "... and 2 more causes of 2 failures (run with --rdq-report=FILE" in without
    assert "see \"causes\"" not in without
    written = "\n".join(terminal_lines(report, report_path="out/r.json"))
    assert "(see \"causes\" in out/r.json)" in written


def test_headline_says_how_many_failures_no_cause_explains():
    from rdq_compliance.reporting._causes import causes_headline

    causes = [{"failures": 30}, {"failures": 4}]
    assert causes_headline(causes, 34) == "2 causes explain 34 failures"
    assert causes_headline(causes, 40) == "2 causes explain 34 of 40 failures (6 without a cause)"


def test_old_symptoms_without_the_new_fields_still_load():
    s = Symptom.from_json('{"pointer": "/a", "pattern": "/*", "kind": "k", "clause": "C10", '
                          '"summary": "s", "diff": "d"}')
    assert s is not None and s.difference == "" and s.triggers == ""
    assert Symptom.from_json('{"pointer": "/a"}') is None


@pytest.mark.parametrize(("difference", "requirement"), [
    ("overwritten", "RDQ-RT-002"), ("other-id", "RDQ-RT-002"), ("absent", "RDQ-ST-002"),
    ("leaked", "RDQ-ST-003"), ("survived-drop", "RDQ-ST-004"),
    ("taken-by-drop", "RDQ-ST-004"), ("lost-after-drop", "RDQ-ST-004"),
])
def test_storage_semantics_have_their_rows(difference, requirement):
    """What a read found against what the test did before it (``Namespaces.semantics``)
    names a storage requirement, not the test that happened to read."""
    rule = find_rule("/", difference)
    assert rule is not None and rule.requirement == requirement


def test_difference_classes():
    assert difference_class(Difference("/p", "length", [1, 2], [1], "n")) == "missing"
    assert difference_class(Difference("/p", "type", "", None, "n")) == "empty-null"
    assert difference_class(Difference("/p", "changed", 1, 2, "integer changed")) == "number"


def test_not_applicable_is_counted_as_the_report_counts_it():
    """Issue 21 §7: a requirement gated on a capability the plugin does not declare is
    not-applicable in the report; the terminal's suite lines count its tests the same way,
    not as skips."""
    from ._synth import GATED

    report = report_for([meta()], passing())
    p = report["plugins"][0]
    na = [r for r in p["requirements"] if r["status"] == "not-applicable"]
    assert na and {r["id"] for r in na} == {r.id for r in GATED}
    lines = terminal_lines(report)
    suites = {r["suite"] for r in na}
    for suite in suites:
        n = sum(len(r["tests"]) for r in na if r["suite"] == suite)
        line = next(ln for ln in lines if ln.strip().startswith(suite + " "))
        assert line.endswith(f"0 skipped, 0 error, {n} not applicable"), line


def test_an_ignored_rewrite_is_told_from_a_lossy_store():
    """RDQ-ST-001 (C13): reading back the version written before the rewrite is a rewrite
    ignored, unless all the read lacks is what the rewrite added (a store that drops
    unknown fields reads back the same: that is RDQ-UF-001)."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope

    first = base_envelope(1)
    second = replace(first, attempt_count=first.attempt_count + 1,
                     created_at=first.created_at + timedelta(seconds=1))
    d = diff(second, first)[0]
    s = symptom_of(d, "", [], expected=second, actual=first, earlier=[first])
    assert (s.difference, find_rule(s.pattern, s.difference).requirement) == (
        "stale", "RDQ-ST-001")
    # a rewrite that changed one kind of thing ("" -> null, say) read back as the first
    # version is as likely a store that mangles that kind of thing: no stale symptom
    nulls = replace(second, handler_version=None)
    s = symptom_of(diff(replace(nulls, handler_version=""), nulls)[0], "", [],
                   expected=replace(nulls, handler_version=""), actual=nulls, earlier=[nulls])
    assert s.difference == "empty-null"
    with_unknown = replace(first, extra={"x": 1})
    d = diff(with_unknown, first)[0]
    s = symptom_of(d, "", [], expected=with_unknown, actual=first, earlier=[first])
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-UF-001"


def test_what_earlier_versions_left_beside_a_rewrite_is_the_rewrites_defect():
    """RDQ-ST-001 (C13): header keys, unknown fields or attempts that earlier versions of
    the id held, read back beside the rewrite (HSET without DEL, rows never deleted), are
    the rewrite's defect at every place, one cause with an ignored rewrite; what no
    earlier version held stays an unexpected key of its own."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.reporting._symptom import cause_key
    from rdq_compliance.testing import base_envelope, with_attempt

    first = replace(base_envelope(1), headers={"a/b~": "1"}, extra={"x": [True]})
    second = replace(base_envelope(1), headers={"k": "v"}, extra={"y": 1})
    third = replace(base_envelope(1), headers={})
    # each version's keys kept: the read holds what two earlier versions held; the
    # key with '/' and '~' is escaped in its pointer (/headers/a~1b~0)
    read = replace(third, headers={"a/b~": "1", "k": "v"}, extra={"x": [True], "y": 1})
    found = diff(third, read)
    assert [d.pointer for d in found][:2] == ["/headers/a~1b~0", "/headers/k"]
    s = symptom_of(found[0], "", [], expected=third, actual=read, earlier=[first, second])
    assert (s.difference, s.pattern) == ("stale", "/headers/*")
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-ST-001"
    assert s.summary.startswith("kept from the version written before the rewrite: ")
    ignored = symptom_of(found[0], "", [], expected=third, actual=read, earlier=[first, second],
                         rewrite_ignored=True)
    assert cause_key(s) == cause_key(ignored)
    # attempts of an earlier version past the rewrite's own
    one = with_attempt(base_envelope(2), attempt_no=1)
    longer = replace(one, attempts=(*one.attempts, replace(one.attempts[0], attempt_no=2)))
    kept = replace(one, attempts=longer.attempts)
    d = diff(one, kept)[0]
    assert symptom_of(d, "", [], expected=one, actual=kept, earlier=[longer]).difference == (
        "stale")
    # a value no earlier version held there (True for [True]), a key none held: unexpected
    for wrong in ({"x": True, "y": 1}, {"x": [True], "y": 1, "z": 1}):
        other = replace(read, headers={}, extra=wrong)
        d = diff(third, other)[0]
        assert symptom_of(d, "", [], expected=third, actual=other,
                          earlier=[first, second]).difference == "unexpected", wrong
    # no earlier version at all: unexpected
    s = symptom_of(found[0], "", [], expected=third, actual=read)
    assert s.difference == "unexpected"


def test_reversed_attempts_are_one_reordered_symptom():
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope, with_attempt

    env = with_attempt(base_envelope(2), attempt_no=5)
    env = replace(env, attempts=(*env.attempts, replace(env.attempts[0], attempt_no=9)))
    back = replace(env, attempts=tuple(reversed(env.attempts)))
    s = symptom_of(diff(env, back)[0], "", [], expected=env, actual=back)
    assert (s.pattern, s.difference) == ("/attempts", "reordered")
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-RT-005"


def _history(count: int):
    from dataclasses import replace

    from rdq_compliance.testing import base_envelope

    env = base_envelope(4)
    one = env.attempts[0]
    return replace(env, attempts=tuple(
        replace(one, attempt_no=i % 10 + 1, started_at=T + timedelta(seconds=i))
        for i in range(count)))


@pytest.mark.parametrize("kept", ["first", "last"])
def test_a_history_cut_to_its_first_or_last_attempts_is_attempts_lost(kept):
    """A capped list (LTRIM) keeps one end of the history: attempts lost (RDQ-RT-005),
    not reordered, and the summary says which end came back."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff

    env = _history(200)
    back = replace(env, attempts=env.attempts[:50] if kept == "first" else env.attempts[-50:])
    s = symptom_of(diff(env, back)[0], "", [], expected=env, actual=back)
    assert (s.pattern, s.difference, s.kind) == ("/attempts", "missing", "attempts lost")
    assert s.summary == f"attempts lost: 200 written, only the {kept} 50 came back"
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-RT-005"


def test_attempts_merged_by_attempt_no_are_not_a_cut():
    """One record per attempt_no (a key on it, INSERT OR IGNORE) may leave exactly the
    first records: merged, so reordered, not a cap."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff

    env = _history(30)  # attempt_no 1..10, three times
    back = replace(env, attempts=env.attempts[:10])
    s = symptom_of(diff(env, back)[0], "", [], expected=env, actual=back)
    assert s.difference == "reordered", s


def test_thousands_of_shuffled_attempts_are_matched_in_linear_time(monkeypatch):
    """8,800 attempts read back reversed: one reordered symptom, the matching bucketed by
    attempt_no and started_at (comparing every pair took 49 s on a read of this size):
    a few comparisons per attempt, counted, not timed."""
    from dataclasses import replace

    from rdq_compliance import Attempt
    from rdq_compliance.envelope._diff import diff

    env = _history(8_800)
    back = replace(env, attempts=tuple(reversed(env.attempts)))
    found = diff(env, back)
    compared = []
    equal = Attempt.__eq__

    def counted(self, other):
        compared.append(1)
        return equal(self, other)

    monkeypatch.setattr(Attempt, "__eq__", counted)
    s = symptom_of(found[0], "", [], expected=env, actual=back, found=found)
    assert s.difference == "reordered"
    assert len(compared) <= 4 * 8_800, len(compared)


def test_attempts_that_lost_their_unknown_fields_are_not_reordered():
    """Two attempts equal but for an unknown field, read back without it: the first now
    equals the second, in place. Not a reorder (RDQ-RT-005): the unknown field lost."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope, with_attempt

    env = with_attempt(base_envelope(3), attempt_no=0)
    plain = env.attempts[0]
    env = replace(env, attempts=(replace(plain, extra={"x_a": 1}), plain))
    back = replace(env, attempts=(plain, plain))
    s = symptom_of(diff(env, back)[0], "", [], expected=env, actual=back)
    assert s.difference == "missing", s
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-UF-002"


def test_an_unknown_field_named_like_a_known_one_is_a_trigger():
    """'ID' beside 'id' (a decoder that ignores case takes one for the other): at every
    level; a known name itself, or a name like no known field, is none."""
    assert triggers_of({"id": "x", "ID": {}}) == {"alike-name"}
    assert triggers_of({"attempts": [{"Outcome": 1}]}) == {"alike-name", "null-error"}
    assert triggers_of({"attempts": [{"error": {"MESSAGE": ""}}]}) == {"alike-name"}
    assert triggers_of({"id": "x", "Ident": 1, "attempts": [{"Message": 1}]}) == {
        "null-error"}
    assert triggers_of({"attempts": [{"error": {"Outcome": 1}}]}) == frozenset()
    rule = find_rule("/", "raised", ["alike-name", "astral"])  # the name, not the text
    assert rule is not None and rule.requirement == "RDQ-UF-001"


def test_a_known_field_read_from_an_alike_named_unknown_field_is_that_levels_defect():
    """A Go plugin (encoding/json matches keys ignoring case) reads the unknown field
    'ID' into id, 'Attempt_No' into attempt_no, 'TYPE' into error.type: the unknown
    field's requirement of that level (C10), not the known field's (RDQ-RT-004,
    RDQ-RT-005, RDQ-TR-001)."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope, ulid, with_attempt, with_error

    other = ulid(9)
    top = base_envelope(2, extra={"ID": other})
    cases = [
        (top, replace(top, id=other), "/id", "RDQ-UF-001", "'ID'"),
        (with_attempt(top, extra={"Attempt_No": 7}), None, "/attempts/*/attempt_no",
         "RDQ-UF-002", "'Attempt_No'"),
        (with_error(top, extra={"TYPE": "x.Y"}), None, "/attempts/*/error/type",
         "RDQ-UF-003", "'TYPE'"),
    ]
    for written, read, pattern, requirement, name in cases:
        if read is None:
            if pattern.endswith("attempt_no"):
                read = with_attempt(written, attempt_no=7)
            else:
                read = with_error(written, type="x.Y")
        s = symptom_of(diff(written, read)[0], "", [], expected=written, actual=read)
        assert (s.pattern, s.difference) == (pattern, "alike-name"), s
        assert find_rule(s.pattern, s.difference).requirement == requirement
        assert f"the value of the unknown field {name} beside it" in s.summary
    # the field changed to something else: its own defect, whatever names lie beside it
    s = symptom_of(diff(top, replace(top, id=ulid(10)))[0], "", [], expected=top,
                   actual=replace(top, id=ulid(10)))
    assert s.difference != "alike-name"


def test_keys_merged_by_a_collation_say_which_key_holds_the_value():
    """A side table keyed in a case-insensitive collation keeps one of 'k', 'K', 'k ':
    the lost key's line says which key came back with whose value."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope

    written = base_envelope(3, extra={"k": 1, "K": 2, "k ": 3, "other": 4})
    read = replace(written, extra={"K": 3, "other": 4})
    first = next(d for d in diff(written, read) if d.pointer == "/k")
    s = symptom_of(first, "C10", [], expected=written, actual=read)
    assert s.difference == "missing"
    assert ("'K', written beside it, came back holding the value written to 'k ' (the "
            "names are equal but for case or trailing spaces)") in s.summary
    lost = replace(written, extra={"K": 2, "other": 4})  # 'k' simply lost: nothing to say
    s = symptom_of(next(d for d in diff(written, lost) if d.pointer == "/k"), "C10", [],
                   expected=written, actual=lost)
    assert "written beside it" not in s.summary


def test_header_keys_merged_by_a_pad_space_collation_are_a_lost_key():
    """MySQL's utf8mb4_bin is PAD SPACE: 'k', 'k ' and 'k  ' one row, the last value
    kept under the first key. The key that holds another's value is a key lost
    (RDQ-RT-009), not a header value whose text changed (RDQ-RT-006)."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope

    written = base_envelope(4, headers={"k": "bare", "k ": "one", "k  ": "two"})
    read = replace(written, headers={"k": "two"})
    s = symptom_of(diff(written, read)[0], "C8", [], expected=written, actual=read)
    assert (s.pattern, s.difference) == ("/headers/*", "missing"), s
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-RT-009"
    assert s.summary == ("'k' came back holding the value written to 'k  ' (the names are "
                         "equal but for case or trailing spaces)")


def test_an_invalid_field_holding_an_alike_named_unknown_fields_value_is_that_levels_defect():
    """A testee's wire JSON whose id holds what the unknown field 'ID' held (an object,
    so the bridge finds it invalid): the unknown field's defect (C10), not the model's
    (RDQ-RT-004); an id invalid otherwise stays RDQ-RT-004's."""
    from rdq_compliance.envelope._violations import Violation
    from rdq_compliance.testing import base_envelope
    from rdq_compliance.testing._symptoms import symptom_of_violation

    written = base_envelope(5, extra={"ID": {"a": 1}})
    v = Violation("FIELD_TYPE", "/id", "expected a string, got an object")
    wire = {**to_json(written), "id": {"a": 1}}
    s = symptom_of_violation(v, "C6", [], expected=to_json(written), actual=wire)
    assert s.difference == "alike-name"
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-UF-001"
    assert s.summary == ("came back holding the value of the unknown field 'ID' beside it "
                         "(named like it but for case)")
    other = {**to_json(written), "id": {"b": 2}}
    s = symptom_of_violation(v, "C6", [], expected=to_json(written), actual=other)
    assert s.difference != "alike-name"


def test_keys_made_one_by_a_store_that_trims_every_string_are_its_string_defect():
    """A store that trims trailing spaces from keys and values alike makes 'k', 'k ' and
    'k  ' one key too; the value it holds is trimmed: RDQ-RT-006's defect, the same cause
    as every other trimmed string, not a collation's merge (RDQ-RT-009)."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope

    written = base_envelope(6, headers={"k": "bare ", "k ": "one ", "k  ": "two "})
    read = replace(written, headers={"k": "two"})
    s = symptom_of(diff(written, read)[0], "C8", [], expected=written, actual=read)
    assert (s.difference, s.change) == ("text", "trailing spaces trimmed"), s
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-RT-006"


def test_a_string_a_store_grew_past_a_limit_is_that_stores_string_defect():
    """A store that re-reads UTF-8 as Latin-1 grows a 4,096-byte message past C1's limit
    and the whole envelope past C2's: the invalid read is the mojibake (RDQ-RT-006, the
    cause of every other mangled string), not a model defect of its own (RDQ-RT-004). A
    message changed in no nameable way stays RDQ-RT-004's."""
    from dataclasses import replace

    from rdq_compliance.envelope._violations import Violation
    from rdq_compliance.testing import base_envelope, with_error
    from rdq_compliance.testing._symptoms import symptom_of_violation

    def mojibake(s: str) -> str:
        return s.encode("utf-8").decode("latin-1")

    written = with_error(base_envelope(7), message="\u00e9" * 2048)
    grown = written.attempts[0].error.message
    read = replace(written, attempts=[replace(written.attempts[0], error=replace(
        written.attempts[0].error, message=mojibake(grown)))])
    too_long = Violation("MESSAGE_TOO_LONG", "/attempts/0/error/message", "8192 bytes")
    s = symptom_of_violation(too_long, "C1", [], expected=written, actual=read)
    assert (s.difference, s.change) == ("text", "UTF-8 read as Latin-1 (mojibake)"), s
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-RT-006"
    too_large = Violation("PAYLOAD_TOO_LARGE", "", "2 MB")
    s = symptom_of_violation(too_large, "C2", [], expected=written, actual=read)
    assert (s.pattern, s.difference) == ("/attempts/*/error/message", "text"), s
    garbled = replace(read, attempts=[replace(read.attempts[0], error=replace(
        read.attempts[0].error, message="x" * 5000))])
    s = symptom_of_violation(too_long, "C1", [], expected=written, actual=garbled)
    assert (s.difference, s.change) == ("invalid", "MESSAGE_TOO_LONG"), s
    s = symptom_of_violation(too_large, "C2", [], expected=written, actual=garbled)
    assert (s.pattern, s.difference) == ("/", "invalid"), s
    # a payload kept as text comes back longer: the payload's defect (RDQ-RT-008)
    doubled = replace(written, payload=written.payload.hex().encode())
    s = symptom_of_violation(too_large, "C2", [], expected=written, actual=doubled)
    assert find_rule(s.pattern, s.difference).requirement == "RDQ-RT-008", s
    # an id lower-cased is no longer canonical: a model defect (RDQ-RT-004), though the
    # change has a name; only a size limit broken is read as the store's string defect
    lowered = replace(written, id=written.id.lower())
    bad_id = Violation("ID_FORMAT", "/id", "not canonical ULID text")
    s = symptom_of_violation(bad_id, "C6", [], expected=written, actual=lowered)
    assert (s.difference, s.change) == ("invalid", "ID_FORMAT"), s


def test_every_cut_of_a_short_column_is_one_cause():
    """A message column one byte short re-truncates a message ending in an astral
    character before the marker by cutting just that character: that reads as "astral
    characters replaced" too, but it is a cut, the same cause as every other cut of that
    column (RDQ-TR-001), cut at 4,095 bytes or plainly, and as a stack cut alike."""
    from rdq_compliance.reporting._symptom import cause_key

    def key(written: str, read: str, pointer: str = "/attempts/0/error/message") -> object:
        d = Difference(pointer, "changed", written, read, "changed: x")
        s = symptom_of(d, "C1", [])
        assert find_rule(s.pattern, s.difference).requirement == "RDQ-TR-001", s
        return cause_key(s)

    plain = key("r" * 4082 + M, "r" * 4067 + M)
    assert key("r" * 4078 + "\U0001f600" + M, "r" * 4078 + M) == plain
    assert key("\u00e9" * 2048, "\u00e9" * 2040 + M) == plain
    # the stack, cut alike (C1 gives both their limits): the same cause
    assert key("s" * 65_531 + M, "s" * 56_000 + M, "/attempts/1/error/stack") == plain
    # but not the error's type, which C1 does not limit
    d = Difference("/attempts/0/error/type", "changed", "t" * 300, "t" * 255, "changed: x")
    assert find_rule(symptom_of(d, "C1", []).pattern, "cut").requirement == "RDQ-RT-011"


def test_text_kept_as_a_number_is_no_cut():
    """SQLite's NUMERIC affinity keeps "0000" as 0, read back as "0": a prefix of what was
    written, yet no column limit (RDQ-RT-011) but the string's defect (RDQ-RT-006), the
    same cause as "007.50" read as "7.5"."""
    from rdq_compliance.reporting._symptom import cause_key

    def symptom(written: str, read: str) -> object:
        return symptom_of(Difference("/handler_version", "changed", written, read, "x"), "C4", [])

    zeros, padded = symptom("0" * 255, "0"), symptom("007.50", "7.5")
    assert (zeros.difference, zeros.change) == ("text", "kept as a number"), zeros
    assert find_rule(zeros.pattern, zeros.difference).requirement == "RDQ-RT-006"
    assert cause_key(zeros) == cause_key(padded)
    assert symptom("abcdef", "abc").difference == "cut"


def test_keys_made_one_by_a_store_that_normalises_every_string_are_its_string_defect():
    """Header keys 'Å' written composed and decomposed, read back as one by a store that
    normalises every string to NFC: that store's string defect (RDQ-RT-006, the cause of
    every other normalised string), whichever value survived; not a lost header."""
    from dataclasses import replace

    from rdq_compliance.envelope._diff import diff
    from rdq_compliance.testing import base_envelope

    written = base_envelope(8, headers={"\u00c5": "composed", "A\u030a": "decomposed"})
    for survivor in ("composed", "decomposed"):
        read = replace(written, headers={"\u00c5": survivor})
        s = symptom_of(diff(written, read)[0], "C8", [], expected=written, actual=read)
        assert (s.difference, s.change) == ("text", "normalised to NFC"), s
        assert find_rule(s.pattern, s.difference).requirement == "RDQ-RT-006"


def test_a_value_kept_as_its_json_text_is_its_places_defect():
    """error.detail in a TEXT column never parsed back: an object comes back as a string
    and a string as its JSON text ('""' for ""): one cause, the detail's (RDQ-UF-006), as
    for an unknown field; a known string field read back JSON-encoded stays text."""
    from rdq_compliance.reporting._symptom import cause_key

    def symptom(pointer: str, written: object, read: object) -> Symptom:
        kind = "type" if type(written) is not type(read) else "changed"
        return symptom_of(Difference(pointer, kind, written, read, f"{kind}: x"), "C10", [])

    whole = symptom("/attempts/0/error/detail", {"a": 1}, '{"a": 1}')
    text = symptom("/attempts/0/error/detail", "", '""')
    assert cause_key(whole) == cause_key(text), (whole, text)
    assert find_rule(text.pattern, text.difference).requirement == "RDQ-UF-006"
    unknown = symptom("/attempts/0/x_s", "v", '"v"')
    assert find_rule(unknown.pattern, unknown.difference).requirement == "RDQ-UF-002"
    boolean = symptom("/attempts/0/error/detail", True, "true")
    assert cause_key(boolean) == cause_key(whole), (boolean, whole)
    known = symptom("/attempts/0/error/type", "E", '"E"')
    assert (known.difference, known.change) == ("text", "JSON-encoded")


def test_booleans_read_back_as_numbers_are_one_cause_at_every_level():
    """A store that keeps booleans as 0/1 (MySQL's BOOLEAN is TINYINT(1)) changes them in
    detail and in unknown fields at every level alike: one cause, not one per level."""
    from rdq_compliance.reporting._symptom import cause_key

    keys = set()
    for pointer in ("/x_b", "/attempts/0/x_b", "/attempts/0/error/x_b",
                    "/attempts/0/error/detail", "/x_o/deep/0"):
        s = symptom_of(Difference(pointer, "type", True, 1, "type changed: x"), "C10", [])
        assert find_rule(s.pattern, s.difference).requirement == "RDQ-UF-001", s
        keys.add(cause_key(s))
    assert len(keys) == 1, keys
    # another type for a boolean ("False", as str() writes it) is that level's type change
    s = symptom_of(Difference("/attempts/0/x_b", "type", False, "False", "type: x"), "C10", [])
    assert (s.difference, find_rule(s.pattern, s.difference).requirement) == (
        "type", "RDQ-UF-002"), s
