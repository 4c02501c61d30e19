"""Strict JSON parsing and C5 JSON equality."""

from __future__ import annotations

import pytest

from rdq_compliance import InvalidEnvelope, ViolationCode, json_equal, parse_json

C = ViolationCode


def _codes(data: str | bytes) -> list[tuple[C, str]]:
    with pytest.raises(InvalidEnvelope) as info:
        parse_json(data)
    return [(v.code, v.pointer) for v in info.value.violations]


def test_parses_plain_object() -> None:
    assert parse_json('{"a": [1, 2.5, "x", null, true, {}]}') == {
        "a": [1, 2.5, "x", None, True, {}]
    }
    assert parse_json(b'{"\xc3\xa9": "\xf0\x9f\x98\x80"}') == {"é": "😀"}
    assert parse_json(bytearray(b"{}")) == {}


def test_large_integers_stay_exact() -> None:
    assert parse_json('{"a": 9223372036854775807, "b": -9223372036854775808}') == {
        "a": 2**63 - 1,
        "b": -(2**63),
    }


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": -Infinity}',
        "",
        "{",
        '{"a": 1} {}',
        "{} x",
        "\ufeff{}",
        '{"a": 01}',
        '{"a": .5}',
        '{"a": "\t"}',
        "{'a': 1}",
    ],
)
def test_syntax(text: str) -> None:
    assert _codes(text) == [(C.JSON_SYNTAX, "")]


def test_syntax_message_has_position() -> None:
    with pytest.raises(InvalidEnvelope) as info:
        parse_json('{"a": 1,\n "b": }')
    (v,) = info.value.violations
    assert "line 2 column 7" in v.message


def test_nan_message() -> None:
    with pytest.raises(InvalidEnvelope, match="NaN is not JSON"):
        parse_json('{"a": NaN}')


def test_bom_bytes() -> None:
    assert _codes(b"\xef\xbb\xbf{}") == [(C.JSON_SYNTAX, "")]


@pytest.mark.parametrize(
    ("data", "offset"),
    [(b'{"a": "\xff"}', 7), (b'{"\xe9": 1}', 2), (b"\xc3", 0), (b'{"a":"\xed\xb0\x80"}', 6)],
)
def test_utf8(data: bytes, offset: int) -> None:
    with pytest.raises(InvalidEnvelope) as info:
        parse_json(data)
    (v,) = info.value.violations
    assert (v.code, v.pointer) == (C.UTF8_INVALID, "")
    assert f"byte offset {offset}" in v.message


def test_duplicate_keys_with_pointers() -> None:
    text = '{"a": 1, "b": [{"x": 1, "x": 2}], "c/~": {"k": 1, "k": 1, "k": 3}, "a": 2}'
    assert sorted(_codes(text)) == sorted(
        [(C.DUPLICATE_KEY, ""), (C.DUPLICATE_KEY, "/b/0"), (C.DUPLICATE_KEY, "/c~1~0")]
    )


def test_duplicate_key_reported_once_per_key() -> None:
    with pytest.raises(InvalidEnvelope) as info:
        parse_json('{"k": 1, "k": 2, "k": 3}')
    (v,) = info.value.violations
    assert "'k'" in v.message


def test_case_sensitive_keys_are_not_duplicates() -> None:
    assert parse_json('{"a": 1, "A": 2, "a ": 3}') == {"a": 1, "A": 2, "a ": 3}


def test_lone_surrogates() -> None:
    text = '{"a": "\\ud800", "b": ["ok", "x\\udfffy"], "\\udc00k": 1, "p": "\\ud83d\\ude00"}'
    assert sorted(_codes(text)) == sorted(
        [(C.LONE_SURROGATE, "/a"), (C.LONE_SURROGATE, "/b/1"), (C.LONE_SURROGATE, "/\\udc00k")]
    )


def test_surrogate_pair_escape_is_a_scalar() -> None:
    assert parse_json('{"p": "\\ud83d\\ude00", "q": "\\\\ud800"}') == {"p": "😀", "q": "\\ud800"}


def test_literal_surrogate_in_str() -> None:
    assert _codes('{"a": "\ud800"}') == [(C.LONE_SURROGATE, "/a")]


@pytest.mark.parametrize("text", ["[]", "1", '"x"', "null", "true"])
def test_top_level_must_be_object(text: str) -> None:
    assert _codes(text) == [(C.FIELD_TYPE, "")]


def test_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="data=dict"):
        parse_json({})  # type: ignore[arg-type]


EQUAL = [
    (1, 1),
    (1, 1.0),
    (1.0, 1),
    (0, -0.0),
    (2**53, float(2**53)),
    (1.5, 1.5),
    ("a", "a"),
    (None, None),
    (True, True),
    ([1, [2.0]], [1.0, [2]]),
    ({"a": 1, "b": 2}, {"b": 2.0, "a": 1}),
    ({}, {}),
    ([], []),
]
UNEQUAL = [
    (True, 1),
    (1, True),
    (False, 0),
    (0.0, False),
    (1, 1.5),
    (2**53 + 1, float(2**53)),  # the double cannot hold it: not exactly equal
    (2**63 - 1, float(2**63)),
    ("1", 1),
    (None, 0),
    (None, ""),
    ("", []),
    ([], {}),
    ({}, None),
    ([1, 2], [2, 1]),
    ([1], [1, 1]),
    ({"a": 1}, {"a": 1, "b": None}),
    ({"a": 1}, {"b": 1}),
    ({"a": None}, {}),
    ([1], (1,)),
    (float("nan"), float("nan")),
    ("A", "a"),
    ("é", "e\u0301"),
]


@pytest.mark.parametrize(("a", "b"), EQUAL)
def test_json_equal(a: object, b: object) -> None:
    assert json_equal(a, b)
    assert json_equal(b, a)


@pytest.mark.parametrize(("a", "b"), UNEQUAL)
def test_json_unequal(a: object, b: object) -> None:
    assert not json_equal(a, b)
    assert not json_equal(b, a)
