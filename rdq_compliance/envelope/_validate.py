"""The envelope v1 validator: every rule of wire-envelope.txt and C1-C17 that a
single envelope can break, each reported with a stable code and a JSON pointer.

One pass over the parsed object. A typed model is first checked for its Python
types (what a Python adapter returns), turned into its wire form and then judged
by the same value rules.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ._check_envelope import _Checker
from ._check_model import _ModelChecker
from ._codes import ViolationCode as C
from ._deep import dumps
from ._json import parse_json
from ._limits import MAX_ENVELOPE_BYTES, MAX_KNOWN_INT
from ._model import Envelope
from ._violations import InvalidEnvelope, Violation

# The checkers live beside this module, by concern: the JSON value rules
# (_check_values), the envelope walk (_check_envelope), the model's Python types
# (_check_model). _ModelChecker and _validate_model stay importable from here.
__all__ = ["InvalidEnvelope", "Violation", "validate"]


def validate(
    data: str | bytes | bytearray | Mapping[str, Any] | Envelope,
    *,
    versions: Collection[int] | None = (1,),
    max_bytes: int | None = MAX_ENVELOPE_BYTES,
) -> list[Violation]:
    """Every violation of envelope v1 in ``data``; an empty list means valid.

    ``data`` is JSON text (parsed strictly first), a parsed JSON object, or an
    ``Envelope`` model. ``versions``: the envelope versions accepted (None: any;
    the shape is judged as v1). ``max_bytes``: C2 limit on the compact canonical
    encoding (None: no limit).
    """
    if isinstance(data, Envelope):
        return _validate_model(data, versions, max_bytes)
    if isinstance(data, str | bytes | bytearray):
        try:
            obj = parse_json(data)
        except InvalidEnvelope as exc:
            return list(exc.violations)
        return validate_object(
            obj, versions=versions, max_bytes=max_bytes, parsed=True, size_bound=size_bound(data)
        )
    if isinstance(data, Mapping):
        return validate_object(data, versions=versions, max_bytes=max_bytes, parsed=False)
    raise TypeError(
        f"data={type(data).__name__}: expected JSON text (str/bytes), a JSON object "
        "(Mapping) or an Envelope"
    )


def validate_object(
    obj: Mapping[str, Any],
    *,
    versions: Collection[int] | None = (1,),
    max_bytes: int | None = MAX_ENVELOPE_BYTES,
    parsed: bool = False,
    size_bound: int | None = None,
) -> list[Violation]:
    """Validate a JSON object. ``parsed=True`` promises it came from ``parse_json``
    (plain types, no lone surrogates), which skips those checks. ``size_bound``: an
    upper bound of its compact encoding (see ``size_bound``), which spares encoding
    it when the bound already fits ``max_bytes``."""
    unsupported = _version_check(obj.get("envelope_version"), versions)
    if unsupported is not None:
        return [unsupported]
    checker = _Checker(check_keys=not parsed, check_surrogates=not parsed)
    checker.envelope(obj)
    out = checker.out
    if max_bytes is not None and (
        size_bound is None or size_bound + checker.absent_bytes > max_bytes
    ):
        _size_check(obj, checker.absent_bytes, max_bytes, out)
    return out


def size_bound(text: str | bytes | bytearray) -> int:
    """An upper bound, in bytes, of the compact encoding of what ``text`` parses to.

    Re-encoding never lengthens a string, a key, an integer or a literal (escapes
    only shrink, whitespace goes). Only a float can grow: its token has at least 3
    characters ("1e9", "0.5") and its repr at most 24 ("-2.2250738585072014e-308"),
    so 8 times the text's UTF-8 size (at most 4 bytes per str character) bounds it.
    """
    if isinstance(text, str):
        return 32 * len(text)
    return 8 * len(text)


def _version_check(value: object, versions: Collection[int] | None) -> Violation | None:
    if (
        versions is None
        or type(value) is not int
        or not 0 <= value <= MAX_KNOWN_INT
        or value in versions
    ):
        return None
    accepted = ", ".join(str(v) for v in sorted(versions)) or "none"
    return Violation(
        C.UNSUPPORTED_ENVELOPE_VERSION,
        "/envelope_version",
        f"envelope_version={value!r} is not supported (supported: {accepted}); "
        "the rest of the envelope is not judged",
    )


def _size_check(obj: object, unwritten_bytes: int, max_bytes: int, out: list[Violation]) -> None:
    """C2 on ``obj``'s compact encoding plus ``unwritten_bytes`` that canonical text holds
    beyond it (absent optional members written as null, a payload only counted)."""
    try:
        text = dumps(obj, allow_nan=True)
    except (TypeError, ValueError):
        return  # non-JSON values: already reported as FIELD_TYPE
    # No code point takes more than 4 UTF-8 bytes: skip encoding small envelopes.
    if 4 * len(text) + unwritten_bytes <= max_bytes:
        return
    size = len(text.encode("utf-8", "surrogatepass")) + unwritten_bytes
    if size > max_bytes:
        out.append(_too_large(size, max_bytes))


def _too_large(size: int, max_bytes: int) -> Violation:
    return Violation(
        C.PAYLOAD_TOO_LARGE,
        "",
        f"the compact canonical JSON encoding is {size} bytes; the limit is {max_bytes} bytes (C2)",
    )


# -- the typed model ---------------------------------------------------------------


def _validate_model(
    env: Envelope,
    versions: Collection[int] | None,
    max_bytes: int | None,
    *,
    payload_text: bool = False,
) -> list[Violation]:
    """``payload_text``: build the payload's base64 text into the wire form (the
    general path) instead of only counting its characters (see ``_ModelChecker``)."""
    unsupported = _version_check(env.envelope_version, versions)
    if unsupported is not None:
        return [unsupported]
    model = _ModelChecker(payload_text=payload_text)
    wire = model.envelope(env)
    # One strict UTF-8 encoding of the compact JSON text (needed for C2 anyway)
    # proves that no string or key anywhere holds a lone surrogate, which spares
    # a search in every string. Key types are still checked: json.dumps turns
    # int, float, bool and None keys into strings without complaint.
    encoded = None if model.out else _strict_utf8(wire)
    checker = _Checker(
        check_keys=True, check_surrogates=encoded is None, model_wire=model.exact_datetimes
    )
    checker.envelope(wire)
    out = model.out + checker.out
    if max_bytes is not None and not model.out:
        if encoded is None:
            _size_check(wire, model.payload_chars, max_bytes, out)
        elif len(encoded) + model.payload_chars > max_bytes:
            out.append(_too_large(len(encoded) + model.payload_chars, max_bytes))
    return out


def _strict_utf8(wire: dict[str, Any]) -> bytes | None:
    """The compact JSON text of ``wire`` in strict UTF-8, or None when it has values
    json cannot write or strings with lone surrogates."""
    try:
        return dumps(wire, allow_nan=True).encode("utf-8")
    except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError
        return None
