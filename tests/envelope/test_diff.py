"""The structural diff and its rendering; model equality is "no difference"."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from rdq_compliance import (
    Attempt,
    Difference,
    Envelope,
    ErrorInfo,
    Outcome,
    decode,
    diff,
    format_diff,
)
from rdq_compliance.testing import with_attempt, with_error

from ._envelopes import SEED_TEXT

E0 = "/attempts/0/error"


def _env(**changes: Any) -> Envelope:
    return dataclasses.replace(decode(SEED_TEXT), **changes)


def _summary(diffs: list[Difference]) -> list[tuple[str, str]]:
    return [(d.pointer, d.kind) for d in diffs]


def test_equal_models() -> None:
    a, b = decode(SEED_TEXT), decode(SEED_TEXT)
    assert diff(a, b) == []
    assert a == b
    assert not (a != b)  # noqa: SIM202 -- __ne__ is derived from __eq__: check it too
    assert a.attempts[0] == b.attempts[0]
    assert a.attempts[0].error == b.attempts[0].error
    assert a != _env(queue="other")
    assert (a == "not an envelope") is False


def test_models_are_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(decode(SEED_TEXT))


def test_string_note_for_truncation_difference() -> None:
    base = decode(SEED_TEXT)
    expected = with_error(base, message="x" * 4081 + "😀" + "y" * 11)
    actual = with_error(base, message="x" * 4081 + "…" + "y" * 9)
    (d,) = diff(expected, actual)
    assert (d.pointer, d.kind) == (E0 + "/message", "changed")
    assert d.note == (
        "string changed: expected 4096 bytes, got 4093 bytes; first difference at "
        "code point 4081: expected U+1F600 '😀', got U+2026 '…'"
    )
    line = format_diff([d])
    assert line.startswith(f"{E0}/message: {d.note}")
    # The values are shown around the difference, not from their 4,000-char start.
    assert "'xxxxxxxxxxxxxxxxxxxx😀yyyyyyyyyyy'" in line
    assert len(line) < 400


def test_string_prefix_and_nul() -> None:
    (d,) = diff(_env(handler_version="v3\u0000"), _env(handler_version="v3"))
    assert "expected U+0000, got end of string" in d.note
    assert "expected 3 bytes, got 2 bytes" in d.note
    (d,) = diff(_env(handler_version="e\u0301"), _env(handler_version="é"))
    assert "first difference at code point 0: expected U+0065 'e', got U+00E9 'é'" in d.note


def test_nullable_fields() -> None:
    (d,) = diff(_env(handler_version="v3"), _env(handler_version=None))
    assert (d.pointer, d.kind) == ("/handler_version", "changed")
    assert "expected a value, got null" in d.note
    (d,) = diff(_env(handler_version=None), _env(handler_version=""))
    assert "expected null, got a value" in d.note
    (d,) = diff(_env(), with_attempt(_env(), error=None))
    assert (d.pointer, d.kind) == (E0, "changed")
    assert "expected an error object, got null" in d.note


def test_headers() -> None:
    expected = _env(headers={"a": "1", "gone": "x", "a/b~c": "2"})
    actual = _env(headers={"a": "1 ", "a/b~c": "2", "new": "y", "A": "1"})
    assert _summary(diff(expected, actual)) == [
        ("/headers/a", "changed"),
        ("/headers/gone", "missing"),
        ("/headers/new", "unexpected"),
        ("/headers/A", "unexpected"),
    ]
    (d,) = diff(_env(headers={"a/b~c": "1"}), _env(headers={"a/b~c": 1}))
    assert (d.pointer, d.kind) == ("/headers/a~1b~0c", "type")
    (d,) = diff(_env(), _env(headers=[("a", "b")]))
    assert (d.pointer, d.kind) == ("/headers", "type")


def test_attempts_by_position() -> None:
    base = decode(SEED_TEXT)
    a0 = base.attempts[0]
    a1 = dataclasses.replace(a0, attempt_no=2, outcome=Outcome.SUCCESS, error=None)
    expected = _env(attempts=(a0, a1))
    assert _summary(diff(expected, _env(attempts=(a1, a0)))) == [
        ("/attempts/0/attempt_no", "changed"),
        ("/attempts/0/outcome", "changed"),
        (E0, "changed"),
        ("/attempts/1/attempt_no", "changed"),
        ("/attempts/1/outcome", "changed"),
        ("/attempts/1/error", "changed"),
    ]
    diffs = diff(expected, _env(attempts=(a0,)))
    assert _summary(diffs) == [("/attempts", "length"), ("/attempts/1", "missing")]
    assert diffs[0].note == "attempts length changed: expected 2 attempts, got 1"
    assert _summary(diff(_env(attempts=()), _env(attempts=(a0,)))) == [
        ("/attempts", "length"),
        ("/attempts/0", "unexpected"),
    ]
    assert diff(expected, _env(attempts=[a0, a1])) == []  # a list holds the same attempts
    (d,) = diff(expected, _env(attempts=(a0, {"attempt_no": 2})))
    assert (d.pointer, d.kind) == ("/attempts/1", "type")


def test_unknown_fields_at_their_object() -> None:
    expected = _env(extra={"payload_ref": {"k": [1, 2]}, "gone": 1})
    expected = with_attempt(expected, extra={"x": "a"})
    expected = with_error(expected, extra={"y": None})
    actual = _env(extra={"payload_ref": {"k": [1, 3]}, "new": False})
    actual = with_attempt(actual, extra={"x": "b"})
    actual = with_error(actual, extra={})
    # Reported in wire order: attempts (error first) before the top-level unknowns.
    assert _summary(diff(expected, actual)) == [
        (E0 + "/y", "missing"),
        ("/attempts/0/x", "changed"),
        ("/payload_ref/k/1", "changed"),
        ("/gone", "missing"),
        ("/new", "unexpected"),
    ]


@pytest.mark.parametrize(
    ("expected", "actual", "kind"),
    [
        (1, 1.0, None),
        ({"a": [1.0]}, {"a": [1]}, None),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, None),
        (True, 1, "type"),
        (0, False, "type"),
        (None, "", "type"),
        ([], {}, "type"),
        ("", None, "type"),
        (2**53 + 1, float(2**53), "changed"),
        (1, 2, "changed"),
        ("a", "b", "changed"),
        ([1, 2], [2, 1], "changed"),
        ([1], (1,), "type"),
    ],
)
def test_json_semantics_in_unknown_fields(expected: Any, actual: Any, kind: str | None) -> None:
    diffs = diff(_env(extra={"v": expected}), _env(extra={"v": actual}))
    if kind is None:
        assert diffs == []
    else:
        assert diffs and diffs[0].kind == kind
        assert diffs[0].pointer.startswith("/v")


def test_detail_is_json_compared() -> None:
    base = decode(SEED_TEXT)
    assert diff(with_error(base, detail={"n": 1}), with_error(base, detail={"n": 1.0})) == []
    (d,) = diff(with_error(base, detail={"n": 1}), with_error(base, detail={"n": True}))
    assert (d.pointer, d.kind) == (E0 + "/detail/n", "type")
    assert d.note == "type changed: expected number, got boolean"
    (d,) = diff(with_error(base, detail=None), with_error(base, detail={}))
    assert (d.pointer, d.kind) == (E0 + "/detail", "type")
    d, item = diff(with_error(base, detail=[1, 2]), with_error(base, detail=[1]))
    assert (d.pointer, d.kind, d.note) == (
        E0 + "/detail",
        "length",
        "array length changed: expected 2 items, got 1",
    )
    assert (item.pointer, item.kind, item.expected) == (E0 + "/detail/1", "missing", 2)


def test_big_integer_lost_to_double() -> None:
    (d,) = diff(_env(extra={"n": 2**63 - 1}), _env(extra={"n": float(2**63 - 1)}))
    assert (d.pointer, d.kind) == ("/n", "changed")
    assert "9223372036854775807" in d.note and "C5" in d.note


def test_integers_and_enums() -> None:
    (d,) = diff(_env(), _env(attempt_count=True))
    assert (d.pointer, d.kind) == ("/attempt_count", "type")
    (d,) = diff(_env(), _env(attempt_count=2.0))
    assert (d.pointer, d.kind) == ("/attempt_count", "type")
    (d,) = diff(_env(), _env(redrive_count=1))
    assert (d.pointer, d.kind, d.note) == ("/redrive_count", "changed",
                                           "integer changed: expected 0, got 1")  # fmt: skip
    assert diff(_env(), _env(status="PENDING")) == []  # the model coerces text
    plain = _env()
    object.__setattr__(plain, "status", "PENDING")  # bypass the coercion: still equal
    assert diff(_env(), plain) == []
    (d,) = diff(_env(), _env(status="pending"))
    assert (d.pointer, d.kind) == ("/status", "changed")
    (d,) = diff(_env(), _env(status=0))
    assert (d.pointer, d.kind) == ("/status", "type")


def test_timestamps() -> None:
    t = decode(SEED_TEXT).created_at
    (d,) = diff(_env(), _env(created_at=t + timedelta(milliseconds=1)))
    assert (d.pointer, d.kind) == ("/created_at", "changed")
    assert d.note == (
        "instant changed: expected 2026-07-20T14:03:22.117Z, got 2026-07-20T14:03:22.118Z "
        "(+1.000 ms)"
    )
    (d,) = diff(_env(), _env(created_at=t.replace(tzinfo=None)))
    assert (d.kind, "naive") == ("type", "naive") and "naive" in d.note
    (d,) = diff(_env(), _env(created_at=t.astimezone(timezone(timedelta(hours=2)))))
    assert d.kind == "type" and "offset" in d.note  # same instant, but not UTC
    (d,) = diff(_env(), _env(created_at=t + timedelta(microseconds=1)))
    assert d.kind == "changed" and "+0.001 ms" in d.note
    assert diff(_env(), _env(created_at=t.astimezone(timezone(timedelta(0))))) == []
    (d,) = diff(_env(), _env(created_at="2026-07-20T14:03:22.117Z"))
    assert (d.pointer, d.kind) == ("/created_at", "type")
    (d,) = diff(_env(), _env(next_attempt_at=None))
    assert (d.pointer, d.kind) == ("/next_attempt_at", "changed")


def test_payload_bytes() -> None:
    (d,) = diff(_env(payload=b"abcdef"), _env(payload=b"abcXef"))
    assert d.note == (
        "bytes changed: expected 6 bytes, got 6 bytes; first difference at offset 3: "
        "expected 0x64, got 0x58"
    )
    (d,) = diff(_env(payload=b"ab"), _env(payload=b"abc"))
    assert "offset 2: expected end of bytes, got 0x63" in d.note
    (d,) = diff(_env(payload=b"ab"), _env(payload=bytearray(b"ab")))
    assert (d.pointer, d.kind) == ("/payload", "type")


def test_type_mismatch_of_models() -> None:
    env = decode(SEED_TEXT)
    (d,) = diff(env, env.attempts[0])
    assert (d.pointer, d.kind) == ("", "type")
    assert format_diff([d]).startswith("/: type changed: expected Envelope, got Attempt")
    (d,) = diff(_env(), with_attempt(_env(), error="boom"))
    assert (d.pointer, d.kind) == (E0, "type")


def test_diff_attempt_and_error_directly() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    a = Attempt(attempt_no=1, started_at=t, outcome=Outcome.SUCCESS)
    assert _summary(diff(a, dataclasses.replace(a, attempt_no=2))) == [("/attempt_no", "changed")]
    e = ErrorInfo(type="t", message="m")
    assert _summary(diff(e, dataclasses.replace(e, stack="s"))) == [("/stack", "changed")]


def test_format_diff_limit_and_values() -> None:
    expected = _env(extra={f"k{i}": i for i in range(25)})
    actual = _env(extra={f"k{i}": -i - 1 for i in range(25)})
    diffs = diff(expected, actual)
    assert len(diffs) == 25
    text = format_diff(diffs)
    lines = text.splitlines()
    assert len(lines) == 21
    # issue 14 §4: the values once, not "expected 0, got -1 (expected 0, got -1)"
    assert lines[0] == "/k0: number changed: expected 0, got -1"
    assert lines[-1] == "… and 5 more"
    assert format_diff(diffs, limit=3).splitlines()[-1] == "… and 22 more"
    assert format_diff([]) == ""


def test_format_diff_truncates_long_values() -> None:
    (d,) = diff(_env(extra={"x": "a" * 500}), _env(extra={"x": ["a" * 500]}))
    line = format_diff([d])
    assert line.startswith("/x: type changed: expected string, got array (expected 'aaa")
    assert "…" in line and len(line) < 260
    missing = format_diff(diff(_env(extra={"x": "b" * 500}), _env()))
    assert missing.startswith("/x: unknown field 'x' missing: expected 'bbb") and len(missing) < 160


# -- issue 14 item 3: two different values never print alike ---------------------------

LOOK_ALIKE_KEYS = ("\u00c5", "\u212b", "A\u030a")  # Å precomposed, Ångström sign, A + ring


def test_look_alike_header_keys_print_apart() -> None:
    """C4/C8: header keys that differ only by normalization are distinct keys; each
    line of the diff shows their code points, so no two lines read the same."""
    for written in LOOK_ALIKE_KEYS:
        for returned in LOOK_ALIKE_KEYS:
            if written == returned:
                continue
            diffs = diff(_env(headers={written: "v"}), _env(headers={returned: "v"}))
            lines = format_diff(diffs).splitlines()
            assert len(lines) == 2 and lines[0] != lines[1]
    lines = {
        format_diff(diff(_env(headers={key: "v"}), _env(headers={}))) for key in LOOK_ALIKE_KEYS
    }
    assert len(lines) == 3
    line = format_diff(diff(_env(headers={"\u212b": "v"}), _env(headers={})))
    assert "'\u212b' (U+212B)" in line and "/headers/\u212b (U+212B)" in line
    line = format_diff(diff(_env(headers={"A\u030a": "v"}), _env(headers={})))
    assert "(U+0041 U+030A)" in line


@pytest.mark.parametrize("key", ["k" * 16_384, "\u00e9\U0001f600" * 3_000])
def test_a_long_key_is_cut_in_every_line(key: str) -> None:
    """A header key or unknown field name may be 16 KiB long (C4): a line names it by its
    start and its UTF-8 length, in the pointer and in the note, and stays short."""
    size = f"[{len(key.encode()):,} bytes]"
    for written, returned in (
        (_env(headers={key: "v"}), _env(headers={})),
        (_env(extra={key: 1}), _env()),
        (_env(extra={"x": {key: 1}}), _env(extra={"x": {}})),
    ):
        (line,) = format_diff(diff(written, returned)).splitlines()
        assert len(line) < 600 and line.count(size) == 2, line[:300]
        assert key[:40] in line


def test_look_alike_values_and_unknown_keys_print_apart() -> None:
    """C4/C10: strings and keys inside unknown fields show their code points too."""
    written = _env(extra={"k": {"\u00c5": "\u00c5"}})
    for other in LOOK_ALIKE_KEYS[1:]:
        text = format_diff(diff(written, _env(extra={"k": {other: "\u00c5"}})))
        assert "U+00C5" in text and f"U+{ord(other[0]):04X}" in text
        text = format_diff(diff(written, _env(extra={"k": {"\u00c5": other}})))
        assert "U+00C5" in text and f"U+{ord(other[0]):04X}" in text
    # Invisible characters: a zero-width space is escaped by repr, and named.
    text = format_diff(diff(_env(headers={"a": "x"}), _env(headers={"a\u200b": "x"})))
    assert "U+200B" in text


def test_long_values_keep_byte_length_and_first_difference() -> None:
    """A long string's line keeps its byte lengths and first differing code point and
    lists only a few code points, not thousands."""
    e = "é" * 3_000 + "a"
    a = "é" * 3_000 + "b"
    (d,) = diff(_env(headers={"h": e}), _env(headers={"h": a}))
    line = format_diff([d])
    assert "expected 6001 bytes, got 6001 bytes" in line
    assert "first difference at code point 3000" in line
    assert len(line) < 600


def test_clause_tags_follow_the_field() -> None:
    """Issue 14 item 2: the clause tag of a difference is the field's clause. A lost
    error.detail (value -> null) is C10, not C9; unknown fields are C10 at any level
    (issue 21 §2: not C5, unless a number inside changed)."""
    from rdq_compliance.envelope._clauses import clauses_for_pointer

    base = decode(SEED_TEXT)
    with_detail = with_error(base, detail={"retry": [1, 2]})

    def tags(expected: Envelope, actual: Envelope) -> list[str]:
        return [clauses_for_pointer(d) for d in diff(expected, actual)]

    assert tags(with_detail, with_error(base, detail=None)) == ["C10"]
    assert tags(with_detail, with_error(base, detail={"retry": [1]})) == ["C10", "C10"]
    assert tags(_env(extra={"x": 1}), _env(extra={"x": None})) == ["C10"]
    assert tags(_env(extra={"x": 1}), _env()) == ["C10"]
    assert tags(with_attempt(base, extra={"x": 1}), base) == ["C10"]
    assert tags(with_error(base, extra={"x": [1]}), with_error(base, extra={"x": []})) == [
        "C10",  # the length
        "C10",  # the item
    ]
    assert tags(_env(extra={"x": 1}), _env(extra={"x": 2})) == ["C5"]
    assert tags(_env(handler_version="v3"), _env(handler_version=None)) == ["C4 C9"]
    assert tags(_env(handler_version="v3"), _env(handler_version="v4")) == ["C4"]
    # A key that was never written is a header of its own (C8): only the diagnosis of a
    # failed read can tell one an earlier version left behind (C13, the "stale" class).
    assert tags(_env(headers={"A": "1"}), _env(headers={"a": "1"})) == ["C8 C4", "C8 C4"]
    assert tags(base, with_error(base, stack=None)) == ["C1 C4 C9"]
    assert tags(base, with_attempt(base, error=None)) == ["C9"]
    assert tags(base, _env(attempts=())) == ["C12", "C12"]
    assert tags(base, _env(created_at=base.created_at + timedelta(milliseconds=1))) == ["C3"]


def test_the_model_does_not_import_the_diff() -> None:
    """No import cycle between _model and _diff: equality is installed by _diff."""
    import ast
    import inspect

    from rdq_compliance.envelope import _model

    tree = ast.parse(inspect.getsource(_model))
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "_diff" not in imported
    assert _model._equal(decode(SEED_TEXT), decode(SEED_TEXT))


def test_code_points_of_a_long_value_carry_their_index() -> None:
    """A windowed long value names its odd code points at their index in the value."""
    e = "a" * 100 + "\u00c5"
    a = "a" * 100 + "\u212b"
    line = format_diff(diff(_env(headers={"h": e}), _env(headers={"h": a})))
    assert "U+00C5 at 100" in line and "U+212B at 100" in line
    assert "first difference at code point 100" in line


@pytest.mark.parametrize("key", ["plain", "a/b", "~", "~1", "a~0/~1b", "", "/"])
def test_a_pointer_token_names_its_key_again(key: str) -> None:
    """RFC 6901: ``~`` is ``~0`` and ``/`` is ``~1`` in a token; the diagnosis reads the
    key back from the pointer of a difference (a header key ``a/b`` at ``/headers/a~1b``)."""
    from rdq_compliance.envelope._violations import pointer_key, pointer_token

    assert pointer_key(pointer_token(key)) == key
