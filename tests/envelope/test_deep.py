"""Deep values (C10: unknown fields and ``detail`` hold any JSON value; only C2's
1 MiB bounds their nesting). Issue 13 item 4: the parser, validator, codec, diff,
copies and reprs handle them without recursion, in process and through the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdq_compliance import (
    MAX_ENVELOPE_BYTES,
    ViolationCode,
    decode,
    diff,
    encode,
    format_diff,
    json_equal,
    parse_json,
    to_json,
    validate,
)
from rdq_compliance.envelope._deep import (
    _encode,
    _parse,
    copy_json,
    depth,
    dumps,
    loads,
    short_repr,
)

from ._envelopes import seed

DEPTHS = (400, 5_000)


def nested(levels: int, leaf: Any = None, *, kind: str = "array") -> Any:
    """``levels`` containers around ``leaf``: [[...]] or {"k": {"k": ...}}."""
    value: Any = leaf
    if leaf is None:  # the innermost container is empty
        value, levels = ([] if kind == "array" else {}), levels - 1
    for _ in range(levels):
        value = [value] if kind == "array" else {"k": value}
    return value


def deep_text(levels: int, *, where: str = "top", kind: str = "array", leaf: str = "") -> str:
    """The seed envelope with one deep value (written without recursion: json.dumps
    of the value would need it)."""
    env = seed()
    marker = "__DEEP__"
    if where == "top":
        env["deep"] = marker
    elif where == "attempt":
        env["attempts"][0]["deep"] = marker
    elif where == "error":
        env["attempts"][0]["error"]["deep"] = marker
    else:
        env["attempts"][0]["error"]["detail"] = marker
    opener, closer = ("[", "]") if kind == "array" else ('{"k":', "}")
    inner = leaf or ("[]" if kind == "array" else "{}")
    value = opener * (levels - 1) + inner + closer * (levels - 1)
    return json.dumps(env).replace(f'"{marker}"', value)


@pytest.mark.parametrize("levels", DEPTHS)
@pytest.mark.parametrize("where", ["top", "attempt", "error", "detail"])
@pytest.mark.parametrize("kind", ["array", "object"])
def test_deep_values_are_valid_and_round_trip(levels: int, where: str, kind: str) -> None:
    """RDQ-UF-007 / C10: a deep unknown field or ``detail`` is valid, decodes, encodes
    (compact and pretty) back to the same value, equals itself and copies."""
    text = deep_text(levels, where=where, kind=kind)
    assert len(text.encode()) < MAX_ENVELOPE_BYTES
    assert validate(text) == []
    env = decode(text)
    assert validate(env) == []
    compact = encode(env)
    assert json_equal(parse_json(compact), parse_json(text))
    assert decode(compact) == env
    assert decode(encode(env, pretty=True)) == env
    assert diff(env, decode(text)) == []
    assert json_equal(to_json(env), to_json(decode(to_json(env))))  # Mapping input: a deep copy
    assert repr(env).startswith("Envelope(")
    assert str(validate(decode(text))) == "[]"


@pytest.mark.parametrize("levels", DEPTHS)
def test_violations_deep_inside_are_found_with_their_pointer(levels: int) -> None:
    """C5, C11, C4 hold at any depth: the pointer leads to the bad value."""
    inner = "/0" * levels
    too_big = validate(deep_text(levels, leaf="[1e999]"))
    assert [(v.code, v.pointer) for v in too_big] == [(ViolationCode.NUMBER_RANGE, f"/deep{inner}")]
    dup = validate(deep_text(levels, leaf='[{"a":1,"a":2}]'))
    assert [(v.code, v.pointer) for v in dup] == [(ViolationCode.DUPLICATE_KEY, f"/deep{inner}")]
    lone = validate(deep_text(levels, leaf='["\\ud800"]'))
    assert [(v.code, v.pointer) for v in lone] == [(ViolationCode.LONE_SURROGATE, f"/deep{inner}")]
    # The same through a model (no text): the wire form is judged by the same rules.
    env = decode(deep_text(levels))
    bad = dict(env.extra, deep=nested(levels, 2**64))
    model_violations = validate(_replace_extra(env, bad))
    assert [(v.code, v.pointer) for v in model_violations] == [
        (ViolationCode.NUMBER_RANGE, f"/deep{inner}")
    ]


def _replace_extra(env: Any, extra: dict[str, Any]) -> Any:
    import dataclasses

    return dataclasses.replace(env, extra=extra)


@pytest.mark.parametrize("levels", DEPTHS)
def test_diff_reports_a_change_deep_inside(levels: int) -> None:
    """C10: a value changed at the bottom is one difference with its full pointer,
    and the rendering neither recurses nor prints the whole value."""
    expected = decode(deep_text(levels, where="detail", leaf="[1]"))
    actual = decode(deep_text(levels, where="detail", leaf="[2]"))
    (d,) = diff(expected, actual)
    assert d.pointer == "/attempts/0/error/detail" + "/0" * levels
    assert expected != actual
    moved = diff(decode(deep_text(levels, where="top")), decode(deep_text(levels, where="error")))
    assert [(d.pointer, d.kind) for d in moved] == [
        ("/attempts/0/error/deep", "unexpected"),
        ("/deep", "missing"),
    ]
    assert len(format_diff(moved)) < 1_000


def test_depth_near_the_size_limit() -> None:
    """C2 bounds depth: about 500,000 levels of arrays fit in 1 MiB, and they pass."""
    env = seed()
    base = len(json.dumps(env, separators=(",", ":")).encode()) + len(',"deep":')
    levels = (MAX_ENVELOPE_BYTES - base) // 2
    text = deep_text(levels)
    assert len(json.dumps(json.loads(json.dumps(seed()))).encode()) < len(text)
    assert validate(text) == []
    assert depth(decode(text).extra["deep"]) == levels


@pytest.mark.parametrize("levels", DEPTHS)
def test_cli_validate_deep(tmp_path: Path, levels: int) -> None:
    """``rdq-compliance validate`` on deep envelopes: exit 0, or 1 with the violation
    line for a bad value at the bottom; never a traceback."""
    good = tmp_path / "good.json"
    good.write_text(deep_text(levels, where="detail"), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text(deep_text(levels, leaf="[1e999]"), encoding="utf-8")
    lines = tmp_path / "both.jsonl"
    lines.write_text(deep_text(levels) + "\n" + deep_text(levels, kind="object") + "\n")
    cli = [sys.executable, "-m", "rdq_compliance", "validate"]
    ok = subprocess.run([*cli, str(good), str(lines)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "Traceback" not in ok.stderr and "3 envelopes checked, 0 invalid" in ok.stderr
    failed = subprocess.run([*cli, str(bad)], capture_output=True, text=True)
    assert failed.returncode == 1, failed.stderr
    assert "Traceback" not in failed.stderr
    assert "NUMBER_RANGE" in failed.stdout and "/deep" + "/0" * levels in failed.stdout
    stdin = subprocess.run([*cli, "-"], input=lines.read_text(), capture_output=True, text=True)
    assert stdin.returncode == 0 and "2 envelopes checked, 0 invalid" in stdin.stderr


# -- the loops against the stdlib, where the stdlib still works ------------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(_json_values)
@settings(max_examples=300, deadline=None)
def test_fallback_encoder_and_parser_match_the_stdlib(value: Any) -> None:
    """The loops give json.dumps's exact text and json.loads's exact value."""
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    pretty = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
    assert "".join(_encode(value, False, False)) == compact
    assert "".join(_encode(value, True, False)) == pretty
    spaced = json.dumps(value, ensure_ascii=False, sort_keys=True)
    assert "".join(_encode(value, False, False, True, (", ", ": "))) == spaced
    for text in (compact, pretty, json.dumps(value)):
        assert _same(_parse(text, dict, float), json.loads(text))
    assert copy_json(value) == value
    assert short_repr(value, 10**9) == repr(value)


def _same(a: Any, b: Any) -> bool:
    # == plus the type of every number (1 is not 1.0 here) and -0.0's sign.
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "[",
        "]",
        "[1,]",
        "[,1]",
        "{",
        '{"a"}',
        '{"a":}',
        '{"a":1,}',
        "{1:2}",
        "[1 2]",
        "01",
        "1.",
        ".5",
        "-",
        "+1",
        "1e",
        "tru",
        "nul",
        "[1]x",
        '"\x01"',
        '"\\x"',
        "'a'",
        "[NaN]",
        "[-Infinity]",
        '{"a" 1}',
        "[]]",
        "\u00a0[]",
        "[1,2",
        '"abc',
    ],
)
def test_fallback_parser_rejects_what_the_stdlib_rejects(text: str) -> None:
    """Invalid JSON stays invalid on the fallback path (NaN and Infinity go through
    parse_constant, which parse_json makes reject)."""

    def reject(name: str) -> Any:
        raise ValueError(name)

    with pytest.raises(ValueError):
        json.loads(text, parse_constant=reject)
    with pytest.raises(ValueError):
        _parse(text, dict, reject)


def test_loads_and_dumps_take_the_fast_path_when_they_can() -> None:
    assert loads('{"a":[1,2.5,"x",null,true]}') == {"a": [1, 2.5, "x", None, True]}
    assert dumps({"a": "é"}) == '{"a":"é"}'
    deep = nested(50_000)
    assert dumps(deep) == "[" * 50_000 + "]" * 50_000
    assert json_equal(loads(dumps(deep)), deep)
    assert json_equal(copy_json(deep), deep) and not json_equal(deep, nested(50_001))
    assert short_repr(deep, 10) == "[" * 11
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    assert short_repr(cyclic, 100) == repr(cyclic)


# -- through the kit: the rdq fixture, a plugin, the failure report ----------------------

_DEEP_PLUGIN = '''
from rdq_compliance import StorageInfo, encode, from_json, hookimpl, parse_json

class Adapter:
    def __init__(self, data, damage):
        self.data, self.damage = data, damage

    def write(self, envelope):
        self.data[envelope.id] = encode(envelope)

    def read(self, id):
        text = self.data.get(id)
        if text is None:
            return None
        if self.damage:  # the innermost [] of the deep value comes back as [0]
            text = text.replace("[[]]", "[[0]]", 1)
        return from_json(parse_json(text))

    def close(self):
        pass

class Storage:
    info = StorageInfo("deep", "0.1", frozenset({1}), frozenset())

    def __init__(self, damage):
        self.data, self.damage = {}, damage

    def open(self, namespace):
        return Adapter(self.data.setdefault(namespace, {}), self.damage)

    def drop(self, namespace):
        pass

    def close(self):
        pass

class Plugin:
    def __init__(self, damage):
        self.damage = damage

    @hookimpl
    def rdq_storage_open(self, options):
        return Storage(self.damage)

good = Plugin(False)
bad = Plugin(True)
'''


@pytest.mark.parametrize("levels", DEPTHS)
def test_the_kit_handles_deep_envelopes(pytester: pytest.Pytester, levels: int) -> None:
    """Issue 13 item 4 (C10): through the kit's own machinery (private copy, write,
    read, validation, diff, failure report), a 400- or 5,000-level unknown field round-
    trips on a correct plugin and, changed at the bottom, fails with the full pointer:
    never a traceback of the kit."""
    pytester.makepyfile(deepplugin=_DEEP_PLUGIN)
    text = deep_text(levels)
    pytester.makepyfile(
        test_deep_user=f'''
from rdq_compliance import decode
from rdq_compliance.testing import requirement

@requirement("RDQ-UF-007")
def test_roundtrip(rdq):
    """RDQ-UF-007 (C10): a deep unknown field comes back unchanged."""
    rdq.namespace().roundtrip(decode({text!r}))
'''
    )
    pytester.syspathinsert()
    args = ("-p", "no:cacheprovider", "-k", "test_deep_user")
    ok = pytester.runpytest_subprocess(*args, "--rdq-plugin=deepplugin:good")
    ok.assert_outcomes(passed=1)
    bad = pytester.runpytest_subprocess(*args, "--rdq-plugin=deepplugin:bad")
    bad.assert_outcomes(failed=1)
    out = bad.stdout.str()
    assert "/deep" + "/0" * (levels - 1) in out and "RecursionError" not in out
    assert "array length changed" in out and "[C10]" in out


def test_stdio_bridge_messages_at_depth() -> None:
    """The stdio bridge's message helpers take a deep value from a testee without a
    traceback (its responses themselves go through parse_json)."""
    from rdq_compliance.storage._stdio import _faults

    deep = nested(5_000)
    assert _faults.short(deep) == "[" * 80 + "…"
    assert json_equal(_faults.lenient_json(dumps(deep).encode()), deep)
    assert json_equal(parse_json(deep_text(5_000)), loads(deep_text(5_000)))
