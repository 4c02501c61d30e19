"""The long values of RDQ-RT-011 (C4: free text has no length limit of its own): the
fields that take them, incompressible text of an exact UTF-8 length, and a round trip
whose failure names the field and the length first ("a header value of 256 bytes was
refused"), so that a column limit reads as one."""

from __future__ import annotations

import functools
import random

from hypothesis import strategies as st

from rdq_compliance import Envelope
from rdq_compliance.strategies import long_texts
from rdq_compliance.testing import (
    C17_CODES,
    CheckFailed,
    Namespace,
    Rdq,
    base_envelope,
    with_attempt,
    with_error,
)

__all__ = ["LONG_FIELDS", "describe", "long_roundtrip", "long_values", "mixed_width_text",
           "with_long"]

LONG_FIELDS = {
    "header-key": "a header key",
    "header-value": "a header value",
    "handler-version": "handler_version",
    "payload-content-type": "payload_content_type",
    "error-type": "error.type",
    "unknown-field": "an unknown field's string value",
    "unknown-field-key": "an unknown field's name",
    # The JSON-valued places below the top: a plugin often keeps each in a column of its
    # own (an attempts table's `extra`, an error's `detail` TEXT), sized for the usual value.
    "detail": "error.detail (a JSON string)",
    "attempt-unknown-field": "an attempt's unknown field's string value",
    "error-unknown-field": "an error's unknown field's string value",
}
# Printable ASCII without the space (a PAD SPACE column is another defect, RDQ-RT-006);
# the 2-, 3- and 4-byte ranges of UTF-8 (astral included) for multi-byte text.
_WIDTH_RANGES = {1: (0x21, 0x7E), 2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}
_POINTS = {w: range(lo, hi + 1) for w, (lo, hi) in _WIDTH_RANGES.items()}
_WIDTHS = (2, 3, 4)


@functools.lru_cache(maxsize=64)
def mixed_width_text(seed: int, nbytes: int, *, multibyte: bool) -> str:
    """Exactly ``nbytes`` UTF-8 bytes picked at random (incompressible: a store that
    compresses cannot squeeze it under a limit), the same on every run: printable ASCII,
    or characters of 2, 3 and 4 bytes picked alike while 4 bytes are left, then ASCII.
    Drawn in batches (a width per character, then the code points of each width): the
    suite writes some 500,000 such characters per run. Cached: every long field gets the
    same text of a size, 16 distinct texts for 160 calls (a tenth of the CPU)."""
    rng = random.Random(seed)
    widths: list[int] = []
    left = nbytes
    while multibyte and left >= 4:
        batch = rng.choices(_WIDTHS, k=left // 4)  # at most 4 bytes each: never past 0
        widths += batch
        left -= sum(batch)
    points = {w: iter(rng.choices(_POINTS[w], k=widths.count(w))) for w in _WIDTHS}
    chars = [chr(_scalar(next(points[w]))) for w in widths]
    chars += map(chr, rng.choices(_POINTS[1], k=left))
    return "".join(chars)


def _scalar(point: int) -> int:
    # A surrogate drawn in the 3-byte range moves 2,048 down, to a 3-byte scalar value.
    return point - 0x800 if 0xD800 <= point <= 0xDFFF else point


def with_long(field: str, text: str, n: int) -> Envelope:
    """The base envelope with ``text`` in ``field`` (a key of LONG_FIELDS)."""
    if field == "header-key":
        return base_envelope(n, headers={text: "v", "k": "v"})
    if field == "header-value":
        return base_envelope(n, headers={"k": text, "traceparent": "00-4bf9-01"})
    if field == "handler-version":
        return base_envelope(n, handler_version=text)
    if field == "payload-content-type":
        return base_envelope(n, payload_content_type=text)
    if field == "error-type":
        return with_error(base_envelope(n), type=text)
    if field == "unknown-field-key":
        return base_envelope(n, extra={text: "v", "x_short": "v"})
    if field == "detail":
        return with_error(base_envelope(n), detail=text)
    if field == "attempt-unknown-field":
        return with_attempt(base_envelope(n), extra={"x_long": text})
    if field == "error-unknown-field":
        return with_error(base_envelope(n), extra={"x_long": text})
    return base_envelope(n, extra={"x_long": text})


def describe(field: str, text: str, shape: str) -> str:
    return f"{LONG_FIELDS[field]} of {len(text.encode('utf-8')):,} bytes ({shape})"


def long_roundtrip(rdq: Rdq, ns: Namespace, env: Envelope, what: str, *,
                   rule: str = "C4: free text has no length limit of its own") -> None:
    """write then read ``env``; a refusal or a difference names ``what`` (the field and
    its length) first, so that a column limit reads as one; a refusal quotes ``rule``."""
    __tracebackhide__ = True
    try:
        refused = ns.write(env, allow=C17_CODES)
    except CheckFailed as exc:  # an exception other than StorageError, a hang's kin
        exc.args = (_named(str(exc), f"{what} was not stored:"),)
        raise
    if refused is not None:
        rdq.fail(
            f"{what} was refused: write(envelope id={env.id!r}) in namespace {ns.name!r} "
            f"raised StorageError(code={str(refused.code)!r}, message={refused.message!r}) "
            f"({rule}; a valid envelope within the C2 limit is never refused, C17)",
            envelopes=(env,),
        )
    ns.expect(env.id, env, why=what)


def _named(message: str, prefix: str) -> str:
    """``message`` (Rdq.message's: requirement line, then "plugin 'x': summary") with
    ``prefix`` in front of the summary."""
    head, _, rest = message.partition("\n")
    label, sep, summary = rest.partition(": ")
    return f"{head}\n{label}{sep}{prefix} {summary}" if sep else f"{prefix} {message}"


@st.composite
def long_values(draw: st.DrawFn) -> tuple[str, str]:
    """(a key of LONG_FIELDS, a long text): what RDQ-RT-011's property writes."""
    return draw(st.sampled_from(list(LONG_FIELDS))), draw(long_texts())
