"""One defect reads as one defect (issue 21 §2): what makes failures one root cause.

The key (``reporting._symptom.cause_key``) is the diagnosis table's row, the class of
difference and the nature of the change (``envelope._text_change``): the same string
defect at different places and in different strings is one cause, two defects at the
same place are two; the signature is a hash of the key, the same in any run. The real
kit on the zoo's string mutants: tests/mutants/test_causes.py."""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from rdq_compliance import Attempt, Envelope, ErrorInfo, Outcome, Status
from rdq_compliance.envelope._diff import diff
from rdq_compliance.envelope._text_change import text_change
from rdq_compliance.envelope._violations import Violation, ViolationCode
from rdq_compliance.reporting._causes import cause_line, causes_of, group_causes, short_pointer
from rdq_compliance.reporting._symptom import Symptom, cause_key, cause_signature
from rdq_compliance.testing._symptoms import (
    symptom_of,
    symptom_of_failure,
    symptom_of_semantics,
    symptom_of_violation,
)

T = datetime(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC)


def _env(**changes: Any) -> Envelope:
    fields: dict[str, Any] = dict(
        id="01J2ZK7Q8XW5H3N9G4T6B8RDQ0", queue="q", handler_ref="h", handler_version="v3",
        payload=b"{}", payload_content_type="application/json", headers={"k": "v"},
        status=Status.PENDING, attempt_count=1, next_attempt_at=T, created_at=T,
        attempts=(Attempt(attempt_no=1, started_at=T, finished_at=T,
                          outcome=Outcome.RETRYABLE_FAILURE,
                          error=ErrorInfo(type="E", message="m", detail={"n": "x"},
                                          stack=None)),),
        extra={"x_top": "t"},
    )
    fields.update(changes)
    return Envelope(**fields)


def _error(**changes: Any) -> tuple[Attempt, ...]:
    error = dataclasses.replace(_env().attempts[0].error, **changes)  # type: ignore[type-var]
    return (dataclasses.replace(_env().attempts[0], error=error),)


def _places(text: str) -> list[dict[str, Any]]:
    """Where one string ``text`` can sit: a known field, a header value and key, an
    unknown field, the error message, deep inside detail."""
    return [
        {"handler_version": text},
        {"headers": {"k": text}},
        {"headers": {text: "v"}},
        {"extra": {"x_top": text}},
        {"extra": {"x_top": "t", f"x_{text}": 1}},
        {"attempts": _error(detail={"n": "x", text: 1})},
        {"attempts": _error(message=text)},
        {"attempts": _error(detail={"n": [{"deep": text}]})},
    ]


def _symptom(written: Envelope, read: Envelope) -> Symptom:
    first = diff(written, read)[0]
    return symptom_of(first, "C4", [str(first)], expected=written, actual=read)


def _store(change: Callable[[str], str], changes: dict[str, Any]) -> Envelope:
    """What a store that applies ``change`` to every string reads back of ``changes``
    (keys of a map too)."""
    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return change(v)
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, Attempt):
            return dataclasses.replace(v, error=walk(v.error))
        if isinstance(v, ErrorInfo):
            return dataclasses.replace(v, message=walk(v.message), detail=walk(v.detail))
        if isinstance(v, tuple):
            return tuple(walk(x) for x in v)
        return v

    return _env(**{k: walk(v) for k, v in changes.items()})


STRING_DEFECTS: dict[str, tuple[str, Callable[[str], str]]] = {
    # nature: (a string it changes, what the store does to every string)
    "U+0000 stripped": ("a\x00b\x00", lambda s: s.replace("\x00", "")),
    "trailing spaces trimmed": ("pad  ", lambda s: s.rstrip(" ")),
    "normalised to NFC": ("e\u0301x", lambda s: unicodedata.normalize("NFC", s)),
    "CR LF turned into LF": ("a\r\nb", lambda s: s.replace("\r\n", "\n")),
    "UTF-8 read as Latin-1 (mojibake)": ("caf\u00e9", lambda s: s.encode().decode("latin-1")),
    "astral characters replaced": ("x\U0001f600", lambda s: "".join(
        "?" if ord(c) > 0xFFFF else c for c in s)),
}


@pytest.mark.parametrize("nature", sorted(STRING_DEFECTS))
def test_one_string_defect_at_many_places_is_one_cause(nature: str) -> None:
    """RDQ-RT-006 (C4): a store that changes every string the same way shows it in known
    fields, header values and keys, unknown fields, the error and deep in detail, in
    different strings: one key, one cause, RDQ-RT-006."""
    text, change = STRING_DEFECTS[nature]
    symptoms = []
    for n, changes in enumerate(_places(text) + _places(f"other {text}")):
        written = _env(**changes)
        symptom = _symptom(written, _store(change, changes))
        assert symptom.change == nature, (n, symptom)
        symptoms.append(symptom)
    assert len({s.pattern for s in symptoms}) >= 5  # many places ...
    assert len({cause_key(s) for s in symptoms}) == 1  # ... one defect
    # tests of many requirements see it (the table's own among them)
    failures = [(f"t{n}", "RDQ-GOLD-001" if n % 2 else "RDQ-RT-006", s)
                for n, s in enumerate(symptoms)]
    (cause,) = group_causes(failures)
    assert cause["requirement"] == "RDQ-RT-006" and cause["failures"] == len(symptoms)


def test_a_narrower_change_beside_the_wider_one_is_one_cause() -> None:
    """RDQ-RT-006 (C4): a store that trims white space at both ends (Go's
    strings.TrimSpace) reads as "trailing spaces trimmed" where a string's only white space
    is trailing spaces, as "trailing white space trimmed" where it also ends in a line
    break: one cause, the wider change's, where the run found it; alone, or beside another
    kind of change, a narrower change stays a cause of its own."""
    trimmed = {"pad  ": "trailing spaces trimmed", "x\n ": "trailing white space trimmed",
               " y\t": "white space trimmed"}
    symptoms = {}
    for text, nature in trimmed.items():
        changes = {"attempts": _error(message=text)}
        symptoms[nature] = _symptom(_env(**changes), _store(str.strip, changes))
        assert symptoms[nature].change == nature
    assert len({cause_key(s) for s in symptoms.values()}) == 3  # three keys ...
    failures = [(f"t{n}", "RDQ-RT-006", s) for n, s in enumerate(symptoms.values())]
    (cause,) = group_causes(failures)  # ... one cause, named by the wider change's failure
    assert cause["failures"] == 3 and cause["requirement"] == "RDQ-RT-006"
    assert cause["summary"] == symptoms["white space trimmed"].summary
    # without the widest, the two narrower are one cause too (the middle one's)
    assert len(group_causes(failures[:2])) == 1
    # a narrower change alone, or beside an unrelated one, stays its own
    nfc = {"attempts": _error(message="e\u0301x")}
    other = _symptom(_env(**nfc), _store(lambda t: unicodedata.normalize("NFC", t), nfc))
    assert len(group_causes([failures[0], ("t9", "RDQ-RT-006", other)])) == 2


def test_namespaces_taken_for_one_another_by_name_alone_are_one_cause() -> None:
    """RDQ-ST-008 (C14): a store that cuts namespace names to 32 characters leaks reads
    and its drops take envelopes, but only for the long names of the names tests (and
    the state machine's): the leak's and the drop's requirements passed their own tests.
    One defect of the names, one cause. Where those requirements failed too (a store that
    ignores the namespace), their classes stay their own causes."""
    leaked = symptom_of_semantics("leaked", "read returned another namespace's envelope", "x")
    taken = symptom_of_semantics("taken-by-drop", "read found nothing", "y")
    by_name = [("n1", "RDQ-ST-008", leaked), ("n2", "RDQ-ST-008", taken),
               ("s1", "RDQ-ST-006", leaked)]
    (cause,) = group_causes(by_name)
    assert (cause["requirement"], cause["failures"]) == ("RDQ-ST-008", 3)
    own = [("a", "RDQ-ST-003", leaked), ("b", "RDQ-ST-004", taken), *by_name]
    assert sorted(c["requirement"] for c in group_causes(own)) == ["RDQ-ST-003", "RDQ-ST-004"]


def test_different_defects_at_one_place_are_different_causes() -> None:
    """The nature tells string defects apart at the same field; the class tells a
    string from an instant; the table's row tells unknown fields lost at the top from
    those lost in attempts (RDQ-UF-001, RDQ-UF-002)."""
    keys = set()
    for text, change in STRING_DEFECTS.values():
        changes = {"handler_version": text}
        keys.add(cause_key(_symptom(_env(**changes), _store(change, changes))))
    assert len(keys) == len(STRING_DEFECTS)
    instant = _symptom(_env(), _env(created_at=T.replace(microsecond=0)))
    assert instant.difference == "instant" and cause_key(instant) not in keys
    top = _symptom(_env(), _env(extra={}))
    attempt = _env(attempts=(dataclasses.replace(_env().attempts[0], extra={"x_a": 1}),))
    lost = _symptom(attempt, _env())
    assert (top.difference, lost.difference) == ("missing", "missing")
    assert cause_key(top) != cause_key(lost)
    assert sorted(c["requirement"] for c in group_causes(
        [("a", "RDQ-UF-001", top), ("b", "RDQ-UF-002", lost)])) == ["RDQ-UF-001", "RDQ-UF-002"]


def test_a_renamed_key_is_the_string_change_of_its_nature() -> None:
    """A header key that lost its U+0000 is no lost header (RDQ-RT-009) but the string
    defect (RDQ-RT-006), of the same nature as the values that lost theirs; a key
    simply gone, or folded to lower case, stays a lost header."""
    renamed = _symptom(_env(headers={"a\x00b": "v"}), _env(headers={"ab": "v"}))
    assert (renamed.difference, renamed.change) == ("text", "U+0000 stripped")
    assert renamed.kind == "header renamed"
    value = _symptom(_env(headers={"k": "a\x00b"}), _env(headers={"k": "ab"}))
    assert cause_key(renamed) == cause_key(value)
    gone = _symptom(_env(headers={"a\x00b": "v"}), _env(headers={}))
    assert (gone.difference, gone.change) == ("missing", "")
    # keys folded to lower case: the map's defect (case-insensitive headers), not a string's
    folded = _symptom(_env(headers={"Trace": "v"}), _env(headers={"trace": "v"}))
    assert (folded.difference, folded.kind) == ("missing", "header missing")
    assert cause_key(folded) == cause_key(gone)
    (cause,) = group_causes([("g", "RDQ-RT-009", gone), ("f", "RDQ-RT-006", folded)])
    assert cause["requirement"] == "RDQ-RT-009"


def test_keys_restyled_at_every_level_are_one_cause() -> None:
    """RDQ-UF-001 (C10): a deep key transform of unknown fields and detail (Rails'
    underscore, Node's camelcase-keys) renames keys at the top, in attempts, in the error
    and in detail, values kept (their own keys restyled too): one cause, RDQ-UF-001's;
    a key with no hump comes back merely lower-cased, the same cause where the run found
    the snake_case ones. A header key lower-cased stays a lost header (the map's defect)."""
    attempt = _env().attempts[0]
    error = attempt.error
    assert error is not None
    cases = [
        ({"extra": {"fooBar": {"innerKey": 1}}}, {"extra": {"foo_bar": {"inner_key": 1}}}),
        ({"attempts": (dataclasses.replace(attempt, extra={"aB": 1}),)},
         {"attempts": (dataclasses.replace(attempt, extra={"a_b": 1}),)}),
        ({"attempts": (dataclasses.replace(attempt, error=dataclasses.replace(
            error, extra={"retryIn": "5s"})),)},
         {"attempts": (dataclasses.replace(attempt, error=dataclasses.replace(
             error, extra={"retry_in": "5s"})),)}),
        ({"attempts": (dataclasses.replace(attempt, error=dataclasses.replace(
            error, detail={"orderId": [1]})),)},
         {"attempts": (dataclasses.replace(attempt, error=dataclasses.replace(
             error, detail={"order_id": [1]})),)}),
        ({"extra": {"ID2": 1}}, {"extra": {"id2": 1}}),  # no hump: lower-cased
    ]
    symptoms = [_symptom(_env(**w), _env(**r)) for w, r in cases]
    assert [(s.difference, s.change) for s in symptoms] == [
        ("key-restyled", "snake_cased")] * 4 + [("key-restyled", "lower-cased")]
    failures = [(f"t{n}", "RDQ-UF-001", s) for n, s in enumerate(symptoms)]
    (cause,) = group_causes(failures)
    assert cause["requirement"] == "RDQ-UF-001" and cause["failures"] == 5
    # a value changed as well as its key: not a key transform
    changed = _symptom(_env(extra={"fooBar": 1}), _env(extra={"foo_bar": 2}))
    assert changed.difference == "missing"
    header = _symptom(_env(headers={"TraceId": "v"}), _env(headers={"trace_id": "v"}))
    assert header.difference == "missing"


def test_null_for_an_empty_value_groups_by_which_way() -> None:
    """RDQ-RT-010 (C9): "" read as null in a known field and {} or [] read as null in an
    unknown field are one confusion; null read as "" is another."""
    lost = [
        _symptom(_env(handler_version=""), _env(handler_version=None)),
        _symptom(_env(extra={"x_top": {}}), _env(extra={"x_top": None})),
        _symptom(_env(attempts=_error(detail={"n": []})),
                 _env(attempts=_error(detail={"n": None}))),
        _symptom(_env(attempts=_error(stack="")), _env(attempts=_error(stack=None))),
    ]
    assert {s.difference for s in lost} == {"empty-null"}
    assert len({cause_key(s) for s in lost}) == 1
    made = _symptom(_env(handler_version=None), _env(handler_version=""))
    assert made.difference == "empty-null" and cause_key(made) != cause_key(lost[0])


def test_an_empty_value_lost_with_the_others_is_that_loss() -> None:
    """RDQ-UF-006 (C10): a store that drops detail reads {} back as null as it does
    {"n": "x"}: one cause, the loss, not an empty/null confusion (RDQ-RT-010) beside it;
    where nothing else was lost at that place, the confusion stays its own."""
    lost = _symptom(_env(attempts=_error(detail={"n": "x"})), _env(attempts=_error(detail=None)))
    empty = _symptom(_env(attempts=_error(detail={})), _env(attempts=_error(detail=None)))
    other = _symptom(_env(handler_version=""), _env(handler_version=None))
    assert (lost.difference, empty.difference) == ("type", "empty-null")
    failures = [("a", "RDQ-UF-006", lost), ("b", "RDQ-RT-010", empty),
                ("c", "RDQ-UF-006", lost), ("d", "RDQ-RT-010", other)]
    causes, index = causes_of(failures)
    assert [(c["requirement"], c["failures"]) for c in causes] == [
        ("RDQ-UF-006", 3), ("RDQ-RT-010", 1)]
    assert index == {"a": 0, "b": 0, "c": 0, "d": 1}
    assert causes[0]["tests"] == ["a", "b", "c"]
    (alone,) = group_causes([("b", "RDQ-RT-010", empty)])
    assert alone["requirement"] == "RDQ-RT-010"


def test_invalid_reads_group_by_their_violation_code() -> None:
    """RDQ-RT-004: the same violation at two places is one cause; another is another."""
    def invalid(code: ViolationCode, pointer: str) -> Symptom:
        return symptom_of_violation(Violation(code, pointer, "too long"), "C1", [])

    a = invalid(ViolationCode.MESSAGE_TOO_LONG, "/attempts/0/error/message")
    b = invalid(ViolationCode.MESSAGE_TOO_LONG, "/attempts/3/error/message")
    c = invalid(ViolationCode.STACK_TOO_LONG, "/attempts/0/error/stack")
    assert a.change == "MESSAGE_TOO_LONG"
    assert cause_key(a) == cause_key(b) != cause_key(c)


def test_a_storage_semantics_row_is_one_cause_whatever_it_found() -> None:
    """RDQ-ST-004 (C14): a drop that took every namespace loses what was written before
    and after it: one row of the table, one cause."""
    taken = symptom_of_semantics("taken-by-drop", "read found nothing", "gone")
    after = symptom_of_semantics("lost-after-drop", "read found nothing", "gone")
    leaked = symptom_of_semantics("leaked", "read found another namespace's", "there")
    assert cause_key(taken) == cause_key(after) != cause_key(leaked)
    (cause,) = group_causes([("a", "RDQ-ST-004", taken), ("b", "RDQ-ST-004", after)])
    assert cause["requirement"] == "RDQ-ST-004"


def test_refusals_and_what_no_row_names_keep_kind_and_place() -> None:
    """A refusal's row is the value class every refused envelope shares, known only for
    the group: refusals group by operation, C17 code and masked message, whatever each
    envelope held; a failure no row names by its kind and place."""
    def refusal(n: int) -> Symptom:
        return symptom_of_failure(
            f"RDQ-RT-006 [MUST; C4] t\nplugin 'p': write('x{n}') refused a valid envelope "
            f"with StorageError(code='INTERNAL', message='bad \\\\u0000 at {n}')")

    one, two = refusal(1), dataclasses.replace(refusal(2), triggers="nul large")
    assert one.difference == "refused" and cause_key(one) == cause_key(two)
    assert cause_key(one)[0] == ""  # no row in the key
    other = Symptom("/", "/", "suite assertion failed", "", "s", "d")
    assert cause_key(other) == ("", "suite assertion failed", "")


def test_the_signature_is_a_hash_of_the_key_the_same_in_any_run() -> None:
    """Known-failures files name causes by signature: it must not depend on which tests
    failed first (the pointer, kind or requirement a run shows), only on the defect."""
    text, change = STRING_DEFECTS["U+0000 stripped"]
    symptoms = [_symptom(_env(**c), _store(change, c)) for c in _places(text)]
    runs = [  # a quick run sees some places, a full one others, in other tests
        [("a", "RDQ-RT-006", symptoms[0]), ("b", "RDQ-RT-009", symptoms[1])],
        [(f"t{n}", "RDQ-GOLD-001", s) for n, s in enumerate(reversed(symptoms))],
        [("z", "RDQ-UF-006", symptoms[5])],
    ]
    signatures = {c["signature"] for run in runs for c in group_causes(run)}
    assert signatures == {cause_signature(cause_key(symptoms[0]))}
    (signature,) = signatures
    assert re.fullmatch(r"c[0-9a-f]{12}", signature)
    # a symptom recorded before the nature was (an older report, a worker's): no nature
    old = json.loads(symptoms[0].to_json())
    del old["change"]
    assert Symptom.from_json(json.dumps(old)) == dataclasses.replace(symptoms[0], change="")
    nfc = _symptom(_env(handler_version="e\u0301"), _env(handler_version="\u00e9"))
    assert group_causes([("a", "RDQ-RT-006", nfc)])[0]["signature"] != signature


def test_a_cause_of_many_pointers_shows_a_short_one() -> None:
    """A string defect deep in detail: the cause line cuts the run of ``/*``."""
    deep = "/attempts/*/error/detail" + "/*" * 200
    assert short_pointer(deep) == "/attempts/*/error/detail/*/*/…196 more levels…/*/*"
    assert short_pointer("/headers/*") == "/headers/*"
    symptom = Symptom(deep, deep, "string changed", "C4", "string changed", "d",
                      difference="text", change="U+0000 stripped")
    causes, index = causes_of([("a", "RDQ-RT-006", symptom)])
    assert index == {"a": 0}
    line = cause_line(causes[0])
    assert "more levels" in line and len(line) < 200


@pytest.mark.parametrize(("written", "read", "nature"), [
    ("a\x00b", "ab", "U+0000 stripped"),
    ("a\x00b", "a", "cut at U+0000"),
    ("ab  ", "ab", "trailing spaces trimmed"),
    ("ab\t\n", "ab", "trailing white space trimmed"),
    ("  ab ", "ab", "white space trimmed"),
    ("ab", "ab    ", "padded with spaces"),
    ("A\u030a", "\u00c5", "normalised to NFC"),
    ("\u00c5", "A\u030a", "normalised to NFD"),
    ("\ufb01", "fi", "normalised to NFKC"),
    ("a\r\nb", "a\nb", "CR LF turned into LF"),
    ("a\rb\r\n", "a\nb\n", "line ends normalised"),
    ("\u00e9", "\u00c3\u00a9", "UTF-8 read as Latin-1 (mojibake)"),
    ("\u20ac", "\u00e2\u201a\u00ac", "UTF-8 read as Latin-1 (mojibake)"),  # cp1252
    ("\u00c3\u00a9", "\u00e9", "Latin-1 read as UTF-8"),
    ("x\U0001f600", "x?", "astral characters replaced"),
    ("x\U0001f600", "x\ufffd", "astral characters replaced"),
    ("\u00e9t\u00e9", "?t?", "non-ASCII replaced"),
    ("AbC", "abc", "lower-cased"),
    ("abc", "ABC", "upper-cased"),
    ("Stra\u00dfe", "strasse", "case-folded"),
    ("hasOwnProperty", "has_own_property", "snake_cased"),
    ("007.50", "7.5", "kept as a number"),
    ("1.0", "1", "kept as a number"),
    (" 1e3", "1000", "kept as a number"),
    ("0000", "0", "kept as a number"),
    ("1" * 100_000 + "x", "1", "cut short"),  # no number: told in linear time
    ("x_text_2", "xText2", "camel-cased"),
    ("abcdef", "abc", "cut short"),
    ("abc", "abc\u2026", "extended"),
    ("", "x", "changed"),  # anything extends nothing: no nature
    ("a\u00e9", '"a\u00e9"', "JSON-encoded"),
    ("", '""', "JSON-encoded"),
    ("\u00e9", '"\\u00e9"', "JSON-encoded"),
    ("abc", "xyz", "changed"),
    ("abc", "abc", ""),
    ("\ud800x", "\ud801x", "changed"),  # lone surrogates: no encoding explains it
])
def test_the_nature_of_a_string_change(written: str, read: str, nature: str) -> None:
    assert text_change(written, read) == nature


def test_payload_ref_lost_with_the_other_unknown_fields_is_their_cause() -> None:
    """RDQ-UF-001 / RDQ-UF-004 (C10): ``payload_ref`` is an unknown top-level field of v1.
    A store that drops those loses it too: one cause, RDQ-UF-001's (its row is the wider
    one, ``DefectRule.within``). Lost alone, it is RDQ-UF-004's cause."""
    unknown = _symptom(_env(extra={"x_top": "t"}), _env(extra={}))
    ref = {"payload_ref": "s3://b/k"}
    payload_ref = _symptom(_env(extra=ref), _env(extra={}))
    assert (unknown.pattern, payload_ref.pattern) == ("/*", "/payload_ref")
    for first, second in (("t::a", "t::b"), ("t::b", "t::a")):  # either grouped first
        both, _ = causes_of([(first, "RDQ-UF-001", unknown),
                             (second, "RDQ-UF-004", payload_ref)])
        assert [(c["requirement"], c["failures"]) for c in both] == [("RDQ-UF-001", 2)]
    # More payload_ref failures than the others: still named and shown by the wider row.
    many, _ = causes_of([("t::z", "RDQ-UF-001", unknown),
                         *((f"t::{n}", "RDQ-UF-004", payload_ref) for n in "abc")])
    assert [(c["requirement"], c["pointer"], c["failures"]) for c in many] == [
        ("RDQ-UF-001", "/*", 4)]
    alone, _ = causes_of([("t::b", "RDQ-UF-004", payload_ref)])
    assert [(c["requirement"], c["failures"]) for c in alone] == [("RDQ-UF-004", 1)]
    # A different loss at the wider row (a null read back) does not take it.
    nulled = _symptom(_env(extra={"x_top": "t"}), _env(extra={"x_top": None}))
    apart, _ = causes_of([("t::a", "RDQ-UF-001", nulled), ("t::b", "RDQ-UF-004", payload_ref)])
    assert sorted(c["requirement"] for c in apart) == ["RDQ-UF-001", "RDQ-UF-004"]


@pytest.mark.parametrize(("found", "own"), [
    ("torn", "RDQ-CC-001"), ("outdated", "RDQ-CC-003"), ("crossed", "RDQ-CC-004")])
def test_a_concurrent_read_is_the_cause_of_what_it_found(found: str, own: str) -> None:
    """RDQ-CC-001/003/004 (C18): what a read overlapping other lanes found names the
    cause, whichever check saw it (a read cache's stale read fails the isolation check
    too) — where that requirement's own test failed as well; else the check that saw it
    keeps it (a namespace mix-up can make an isolation read stale: without a failed
    read-after-write test that is no read cache)."""
    checks = ["RDQ-CC-001", "RDQ-CC-003", "RDQ-CC-004"]
    other = next(r for r in checks if r != own)
    seen = symptom_of_semantics(found, "read", f"read returned something ({found})")
    causes, _ = causes_of([(f"t::{own}", own, seen), (f"t::{other}", other, seen)])
    assert [(c["requirement"], c["failures"]) for c in causes] == [(own, 2)]
    causes, _ = causes_of([(f"t::{other}", other, seen)])
    assert [c["requirement"] for c in causes] == [other]


def test_nulls_left_out_at_every_level_are_one_cause() -> None:
    """RDQ-UF-001/002/003 (C10): a serializer told to leave nulls out (Jackson's
    ``NON_NULL`` on the residual map) loses the unknown fields that held null at the top,
    in attempts and in errors: one defect, the cause of the outermost level's row. A level
    where a value other than null was lost too is a loss of its own; and a null lost
    groups where any other loss of its row does (it never splits a cause)."""
    attempt = _env().attempts[0]
    top = _symptom(_env(extra={"x_top": None}), _env(extra={}))
    in_attempt = _symptom(_env(attempts=(dataclasses.replace(attempt, extra={"x_a": None}),)),
                          _env())
    in_error = _symptom(_env(attempts=_error(extra={"x_e": None})), _env())
    assert [s.pattern for s in (top, in_attempt, in_error)] == [
        "/*", "/attempts/*/*", "/attempts/*/error/*"]
    causes, index = causes_of([("t::a", "RDQ-UF-002", in_attempt),
                               ("t::e", "RDQ-UF-003", in_error), ("t::t", "RDQ-UF-001", top)])
    assert [(c["requirement"], c["pointer"], c["failures"]) for c in causes] == [
        ("RDQ-UF-001", "/*", 3)]
    assert causes[0]["summary"].endswith("missing (every field lost held null)")
    assert set(index) == {"t::a", "t::e", "t::t"}
    # The attempts also lost a value that was not null: that level's loss is its own.
    lost = _symptom(_env(attempts=(dataclasses.replace(attempt, extra={"x_a": 1}),)), _env())
    apart, _ = causes_of([("t::a", "RDQ-UF-002", in_attempt), ("t::b", "RDQ-UF-002", lost),
                          ("t::t", "RDQ-UF-001", top)])
    assert sorted((c["requirement"], c["failures"]) for c in apart) == [
        ("RDQ-UF-001", 1), ("RDQ-UF-002", 2)]
    mixed = next(c for c in apart if c["requirement"] == "RDQ-UF-002")
    assert "null" not in mixed["summary"]  # one of its losses held 1
    assert cause_key(_symptom(_env(extra={"x_top": 1}), _env(extra={}))) == cause_key(top)
