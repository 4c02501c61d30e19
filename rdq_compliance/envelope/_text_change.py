"""What happened to a string a store changed: the nature of the change (issue 21 §2).

One storage defect changes every string it touches the same way: U+0000 stripped,
trailing spaces trimmed, the text normalised to NFC, CR LF turned into LF, UTF-8
re-read as Latin-1. Where the string sits (a header, an unknown field, the error
message) and what it held differ from test to test; the change does not. The root
causes group round trips by it (``reporting._symptom.cause_key``), so one defect reads
as one cause however many fields and strings show it.

Each nature is a transformation of the string written: the first whose result is the
string read names the change. Pure functions of two strings; no pytest, pluggy or
Hypothesis here (the envelope core imports none of them).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping

__all__ = ["CHANGES", "KEY_STYLES", "WIDER_CHANGES", "kept_as_number", "text_change"]

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_NON_ASCII = re.compile("[^\x00-\x7f]")


def _reencoded(e: str, a: str) -> bool:
    """UTF-8 bytes read as Latin-1 or Windows-1252 (which differs in 0x80-0x9f only):
    ``é`` becomes ``Ã©``."""
    data = e.encode("utf-8", "surrogatepass")
    return a in (data.decode("latin-1"), data.decode("cp1252", "replace"))


def _decoded(s: str) -> str:
    """The other way round: Latin-1 text whose bytes were read as UTF-8."""
    try:
        return s.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return s


def _space_padded(e: str, a: str) -> bool:
    """CHAR(n): the string came back with spaces appended."""
    return len(a) > len(e) and a.rstrip(" ") == e.rstrip(" ") and a.startswith(e)


def _snake(s: str) -> str:
    """camelCase to snake_case, as a deep key transform does (Rails' underscore, humps)."""
    return _HUMP.sub("_", s).lower()


def _camel(s: str) -> str:
    """snake_case to camelCase (Node's camelcase-keys, humps' camelize)."""
    return _UNDERSCORED.sub(lambda m: m.group(1).upper(), s)


_HUMP = re.compile("(?<=[a-z0-9])(?=[A-Z])")
_UNDERSCORED = re.compile("_+([A-Za-z0-9])")


def _as_number(s: str) -> str:
    """Text that looks like a number, kept as one and read back as text (SQLite's
    NUMERIC affinity: "007.50" becomes 7.5, "1.0" becomes 1); other text as it is."""
    if not _NUMBER.fullmatch(s):
        return s
    value = float(s)
    return str(int(value)) if value.is_integer() and abs(value) < 2**63 else repr(value)


# Unambiguous (each digit has one place to match): a long run of digits that does not end
# as a number fails in linear time, not by trying every split of the run.
_NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")


def kept_as_number(expected: str, actual: str) -> bool:
    """``actual`` is ``expected`` kept as a number and read back as text ("0000" as "0":
    no cut, though it reads as one)."""
    return expected != actual and _as_number(expected) == actual


def _same(f: Callable[[str], str]) -> Callable[[str, str], bool]:
    return lambda e, a: f(e) == a


CHANGES: tuple[tuple[str, Callable[[str, str], bool]], ...] = (
    # Most telling first: a string with U+0000 and trailing spaces that lost only its
    # U+0000 is named by that, not by what did not happen to it.
    ("U+0000 stripped", _same(lambda s: s.replace("\x00", ""))),
    ("cut at U+0000", _same(lambda s: s.split("\x00", 1)[0])),
    ("astral characters replaced", lambda e, a: bool(_ASTRAL.search(e)) and any(
        _ASTRAL.sub(r, e) == a for r in ("?", "\ufffd", "", "??", "\ufffd\ufffd"))),
    ("CR LF turned into LF", _same(lambda s: s.replace("\r\n", "\n"))),
    ("line ends normalised", _same(lambda s: s.replace("\r\n", "\n").replace("\r", "\n"))),
    ("normalised to NFC", _same(lambda s: unicodedata.normalize("NFC", s))),
    ("normalised to NFD", _same(lambda s: unicodedata.normalize("NFD", s))),
    ("normalised to NFKC", _same(lambda s: unicodedata.normalize("NFKC", s))),
    ("normalised to NFKD", _same(lambda s: unicodedata.normalize("NFKD", s))),
    ("trailing spaces trimmed", _same(lambda s: s.rstrip(" "))),
    ("trailing white space trimmed", _same(str.rstrip)),
    ("white space trimmed", _same(str.strip)),
    ("padded with spaces", _space_padded),
    ("UTF-8 read as Latin-1 (mojibake)", _reencoded),
    ("Latin-1 read as UTF-8", _same(_decoded)),
    ("non-ASCII replaced", lambda e, a: any(
        _NON_ASCII.sub(r, e) == a for r in ("?", "\ufffd", ""))),
    ("lower-cased", _same(str.lower)),
    ("upper-cased", _same(str.upper)),
    ("case-folded", _same(str.casefold)),
    # After the case changes: a key with no hump (or no underscore) is merely re-cased.
    ("snake_cased", _same(_snake)),
    ("camel-cased", _same(_camel)),
    ("JSON-encoded", lambda e, a: a in (json.dumps(e), json.dumps(e, ensure_ascii=False))),
    ("kept as a number", kept_as_number),
    ("cut short", lambda e, a: len(a) < len(e) and e.startswith(a)),
    ("extended", lambda e, a: bool(e) and len(a) > len(e) and a.startswith(e)),
)
"""The natures, in the order they are tried: name -> does it turn written into read."""


KEY_STYLES: Mapping[str, Callable[[str], str]] = {
    "lower-cased": str.lower, "upper-cased": str.upper, "case-folded": str.casefold,
    "snake_cased": _snake, "camel-cased": _camel,
}
"""The natures that change a string's case style, and how: a map that folds the case of
its keys, a transform of every key of a document."""


WIDER_CHANGES: Mapping[str, tuple[str, ...]] = {
    "trailing spaces trimmed": ("trailing white space trimmed",),
    "trailing white space trimmed": ("white space trimmed",),
    "CR LF turned into LF": ("line ends normalised",),
    "normalised to NFC": ("normalised to NFKC",),
    "normalised to NFD": ("normalised to NFKD",),
    "astral characters replaced": ("non-ASCII replaced",),
    "lower-cased": ("case-folded", "snake_cased"),
}
"""Nature -> the wider ones that read as it on some strings: a store that trims all white
space shows only "trailing spaces trimmed" on a string whose only white space is trailing
spaces (tried first, the narrower nature names it); a store that turns keys into
snake_case only lower-cases a key with no hump ("ID"). Where a run finds both, they are
one defect, the wider (``reporting._cause_joins.join_natures``)."""


def text_change(expected: str, actual: str) -> str:
    """The nature of the change from ``expected`` (written) to ``actual`` (read): the
    name of the first :data:`CHANGES` entry that explains it, else ``"changed"``; ``""``
    for equal strings."""
    if expected == actual:
        return ""
    for name, explains in CHANGES:
        try:
            if explains(expected, actual):
                return name
        except (UnicodeError, ValueError):  # lone surrogates: not that nature
            continue
    return "changed"
