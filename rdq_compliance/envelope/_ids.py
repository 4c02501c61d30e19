"""Envelope ids: canonical ULID text (C6)."""

from __future__ import annotations

import re

from ulid import ULID

__all__ = ["id_from_int", "is_canonical_id", "new_id", "parse_id"]

# Crockford base32 upper case (no I, L, O, U); the first character carries only
# 3 bits of the 128-bit value, so it is 0-7.
_CANONICAL = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")


def new_id() -> str:
    """A fresh id, in canonical ULID text."""
    return str(ULID())


def id_from_int(value: int) -> str:
    """The canonical ULID text of the 128-bit ``value`` (python-ulid's Crockford base32):
    the one int -> id encoder of the kit's builders and strategies."""
    return str(ULID.from_int(value))


def is_canonical_id(s: object) -> bool:
    """True when ``s`` is a str of canonical ULID text (26 chars, upper-case Crockford)."""
    return isinstance(s, str) and _CANONICAL.fullmatch(s) is not None


def parse_id(s: str) -> ULID:
    """Parse canonical ULID text; ValueError (naming the value) on anything else."""
    if not is_canonical_id(s):
        raise ValueError(
            f"id={s!r}: expected canonical ULID text: 26 characters of upper-case "
            "Crockford base32 (0-9, A-Z without I, L, O, U), the first one 0-7"
        )
    return ULID.from_str(s)
