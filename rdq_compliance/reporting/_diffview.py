"""A cause's diff lines as something to look at: written against read back, the
differing stretch marked and its invisible or look-alike code points spelled out.

The report keeps each cause's first diff lines as text (``/headers/k: string changed
... (expected 'a\\u00c5', got 'aA\\u030a')``); this splits them into parts for the
HTML templates (which escape every part: plugin text is hostile).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DiffLine", "Segment", "diff_lines", "segments"]

# A pointer runs to the first ": " (or " (", an annotation): its keys may hold spaces
# ('/headers/k  ', keys a PAD SPACE collation merges), not ": ".
_PTR = r"^(?P<ptr>/(?:(?!: | \()[^\n])*)"
# "<pointer>: <note> (expected <written>, got <read>)", the note that names both sides
# ("instant changed: expected <written>, got <read> (-117.000 ms)", also integers, types,
# JSON values) and the one-sided forms (a note ending "missing", one starting "unexpected").
_BOTH = re.compile(_PTR + r"(?P<ann> \([^)]*\))?: (?P<note>.*?) "
                   r"\(expected (?P<exp>.*), got (?P<got>.*)\)$")
_CHANGED = re.compile(_PTR + r"(?P<ann> \([^)]*\))?: (?P<note>[^:]* changed): "
                      r"expected (?P<exp>(?:(?!: expected).)*?), "
                      r"got (?P<got>(?:(?!: expected).)*?)"
                      r"(?: \((?P<delta>[-+][0-9.]+ ms)\))?$")
_MISSING = re.compile(_PTR + r"(?P<ann> \([^)]*\))?: (?P<note>.* missing): "
                      r"expected (?P<exp>.*)$")
_UNEXPECTED = re.compile(_PTR + r"(?P<ann> \([^)]*\))?: (?P<note>unexpected .*): "
                         r"got (?P<got>.*)$")
_SIMPLE = re.compile(_PTR + r"(?P<ann> \([^)]*\))?: (?P<note>.*)$")
# The diff's own code point note after a quoted value ('é' (U+0065 U+0301)): the page
# spells out the differing code points itself, in place.
_CP_NOTE = re.compile(r"^(?P<value>'.*'|\".*\") \(U\+[0-9A-F]{4,6}(?: U\+[0-9A-F]{4,6})*\)$")
_CLAUSE_TAG = re.compile(r"\s+\[C[0-9]+[a-z]?(?: C[0-9]+[a-z]?)*\]$")  # "  [C10 C5]"


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    differs: bool = False
    """Part of the stretch where written and read back differ."""
    code_point: bool = False
    """``text`` names one code point (``U+00C5``) that would not show as itself."""


@dataclass(frozen=True, slots=True)
class DiffLine:
    pointer: str
    note: str
    written: list[Segment] | None
    read: list[Segment] | None
    raw: str


def _visible(ch: str) -> bool:
    return ch.isascii() and ch.isprintable()


def segments(text: str, other: str | None) -> list[Segment]:
    """``text`` in segments: the stretch that differs from ``other`` (after the common
    prefix, before the common suffix) marked, and in it every character that is not
    printable ASCII given as its code point (U+00A0 looks like a space, U+212B like Å)."""
    if other is None:
        start, end = 0, len(text)
    else:
        start = 0
        while start < min(len(text), len(other)) and text[start] == other[start]:
            start += 1
        tail = 0
        while (tail < min(len(text), len(other)) - start
               and text[len(text) - 1 - tail] == other[len(other) - 1 - tail]):
            tail += 1
        end = len(text) - tail
    out: list[Segment] = []
    if start:
        out.append(Segment(text[:start]))
    run = ""
    for ch in text[start:end]:
        if _visible(ch):
            run += ch
            continue
        if run:
            out.append(Segment(run, differs=True))
            run = ""
        out.append(Segment(f"U+{ord(ch):04X}", differs=True, code_point=True))
    if run:
        out.append(Segment(run, differs=True))
    if start == end and other is not None:
        out.append(Segment("", differs=True))  # nothing here where the other side has more
    if end < len(text):
        out.append(Segment(text[end:]))
    return out


def _value(text: str) -> str:
    m = _CP_NOTE.match(text)
    return m["value"] if m else text


def _line(raw: str) -> DiffLine:
    text = _CLAUSE_TAG.sub("", raw.strip())
    m = _BOTH.match(text)
    if m is not None:
        exp, got = _value(m["exp"]), _value(m["got"])
        return DiffLine(m["ptr"] + (m["ann"] or ""), m["note"], segments(exp, got),
                        segments(got, exp), raw)
    m = _CHANGED.match(text)
    if m is not None:
        exp, got = _value(m["exp"]), _value(m["got"])
        note = m["note"] + (f" ({m['delta']})" if m["delta"] else "")
        return DiffLine(m["ptr"] + (m["ann"] or ""), note, segments(exp, got),
                        segments(got, exp), raw)
    m = _MISSING.match(text)
    if m is not None:
        return DiffLine(m["ptr"] + (m["ann"] or ""), m["note"], segments(_value(m["exp"]), None),
                        [], raw)
    m = _UNEXPECTED.match(text)
    if m is not None:
        return DiffLine(m["ptr"] + (m["ann"] or ""), m["note"], [],
                        segments(_value(m["got"]), None), raw)
    m = _SIMPLE.match(text)
    if m is not None:
        return DiffLine(m["ptr"] + (m["ann"] or ""), m["note"], None, None, raw)
    return DiffLine("", text, None, None, raw)


def diff_lines(example: str | None) -> list[DiffLine]:
    """The lines of a cause's ``example`` diff, each split into its parts."""
    return [_line(line) for line in (example or "").splitlines() if line.strip()]
