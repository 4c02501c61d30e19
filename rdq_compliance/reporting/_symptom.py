"""What one failed kit test found (:class:`Symptom`) and which cause it belongs to
(:func:`cause_key`, issues 14 §1 and 21 §1-2).

A symptom is a difference read back (its pointer generalised to
``/attempts/*/error/detail``, the class of difference, the nature of the change, the
clause), a refusal or exception of the plugin (the operation, the exception or C17 code
with its message's variable parts masked: :func:`mask`, and the classes of value the
envelope held), or any other failure's masked first line (:func:`fallback_symptom`).
Failures whose symptoms have one key are one cause: ``reporting._causes`` groups them,
``reporting._cause_joins`` joins the keys that are one defect by evidence of the run.

Plain values only: the pytest layer builds the symptoms, the reporting groups them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..envelope._diagnosis import DEFECT_RULES, DefectRule, find_rule
from ..envelope._json import JSON_TYPE_NAMES

__all__ = [
    "LOST_TO_NULL",
    "NULL_OMITTED",
    "CauseKey",
    "Symptom",
    "cause_key",
    "cause_signature",
    "fallback_symptom",
    "mask",
    "row_name",
    "rows_by_name",
]


@dataclass(frozen=True, slots=True)
class Symptom:
    """What one failed test found: its first difference, refusal or exception."""

    pointer: str
    """The JSON pointer as found (``/attempts/0/error/detail``); for a refusal or an
    exception, where the envelopes differ from what the store took (else ``/``)."""
    pattern: str
    """The pointer with array indexes and generated key names as ``*``."""
    kind: str
    """What differs, without the field: ``instant changed``, ``header missing``; for a
    refusal ``write refused: StorageError INTERNAL <message, masked>``."""
    clause: str
    """The clause(s) the difference breaks, space-separated (``C3``, ``C10``)."""
    summary: str
    """One line for people: ``instant changed by -117 ms``."""
    diff: str
    """The first lines of the diff (or the message), as the failure shows them."""
    difference: str = ""
    """The class of difference (``DIFFERENCES`` of the table: ``instant``, ``refused``,
    ``raised``, ...); "" for a failure that is neither (a semantics check)."""
    triggers: str = ""
    """Refusals and exceptions: the value classes (``TRIGGERS``) of the envelopes the
    failing call was given, space-separated."""
    change: str = ""
    """The nature of the change, which the root causes group by (:func:`cause_key`): for
    a string (or a key) read back changed, what happened to it (``U+0000 stripped``,
    ``normalised to NFC``: ``envelope._text_change``); for null against an empty value,
    which way (``empty read as null``); for an invalid read, the violation code; ""
    when the class says it all (and in reports written before it was recorded)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Symptom | None:
        """The symptom in ``text``, or None when it is not one (never raises)."""
        try:
            return cls.from_mapping(json.loads(text))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    @classmethod
    def from_mapping(cls, doc: Mapping[str, Any], **given: str) -> Symptom:
        """The symptom a record holds (a test's ``cause`` in a report): each field it
        has, one it lacks or holds as null (a report written before the field was)
        its default, ``given`` over both. Raises TypeError when a field with no
        default is missing."""
        found = {f.name: str(doc[f.name]) for f in fields(cls) if doc.get(f.name) is not None}
        return cls(**{**found, **given})


# -- masking the variable parts of a message ---------------------------------------------

_MASKS = (
    (re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""), "'…'"),  # quoted values
    (re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b"), "<id>"),  # ULIDs
    (re.compile(r"\bt[0-9a-f]{8}\d*w[0-9a-f]+\b"), "<namespace>"),  # the kit's namespaces
    # The JSON type of a value the store got wrong (the kit's own validator, which the
    # plugin may raise: "/id: expected a string, got an array"): the value drawn decides it.
    (re.compile(r"\bgot (?:" + "|".join(JSON_TYPE_NAMES) + r")\b"), "got <a JSON type>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<n>"),
    (re.compile(r"(?<![\w.])[-+]?\d[\d_,.]*(?![\w])"), "<n>"),  # numbers
    (re.compile(r"\(U\+[0-9A-F]{4,6}(?: U\+[0-9A-F]{4,6})*\)"), ""),
)


def mask(text: str) -> str:
    """``text`` with ids, namespaces, numbers and quoted values masked, on one line:
    two failures of one defect read the same."""
    out = " ".join(text.split())
    for pattern, repl in _MASKS:
        out = pattern.sub(repl, out)
    return " ".join(out.split())


def fallback_symptom(message: str | None) -> Symptom:
    """The symptom of a failure that carries none (a setup error, an assertion of the
    suite, a hang): its masked first line, which the grouping then groups by."""
    lines = [ln for ln in (message or "").splitlines() if ln.strip()]
    # The kit's messages: "RDQ-… [MUST; …] title" then "plugin 'x': what happened".
    body = next((ln for ln in lines if ln.startswith("plugin ")), lines[0] if lines else "")
    body = body.split(": ", 1)[1] if body.startswith("plugin ") and ": " in body else body
    first = body if len(body) <= 160 else body[:159] + "\u2026"
    return Symptom(pointer="/", pattern="/", kind=mask(first)[:200] or "failed",
                   clause="", summary=first or "failed", diff="\n".join(lines[:6]))


# -- the key of a cause ------------------------------------------------------------------


CauseKey = tuple[str, str, str]
"""What makes failures one cause (:func:`cause_key`)."""

LOST_TO_NULL = "read as null"
"""The nature (:attr:`Symptom.change`) of a value that came back null: lost."""

NULL_OMITTED = "null omitted"
"""The nature (:attr:`Symptom.change`) of a field whose value was null that did not come
back (a serializer told to leave nulls out). It joins causes, never splits them
(``_cause_joins.join_omitted_nulls``): a store that loses every unknown field loses the null ones
too, and its cause is one."""


def cause_key(symptom: Symptom) -> CauseKey:
    """What makes failures one cause: one storage defect, wherever and in whatever
    string it shows (issue 21 §2). The root causes group by it, their signature is a
    hash of it (:func:`cause_signature`) and the shrink budget (``testing._budget``)
    cuts by it.

    A difference the table (:data:`DEFECT_RULES`) names: its row, class and the nature
    of the change (:attr:`Symptom.change`): U+0000 stripped from the error message, a
    header value and a header key deep in the envelope is one cause. A row of the storage
    semantics (pointer ``/``) that lists its classes is one defect whatever it found (a
    drop that took every namespace loses both the envelopes before and after it).
    Refusals and exceptions, whose row is the value class all refused envelopes share
    (known only for the group), and what no row names: the kind (operation, type or C17
    code and masked message) and its place (:func:`_place`), as before the table."""
    difference = symptom.difference
    if difference and difference not in ("refused", "raised"):
        rule = find_rule(symptom.pattern, difference)
        if rule is not None:
            row = row_name(rule)
            if rule.pointer == "/" and rule.difference[0] not in "*~":
                return (row, "", "")
            change = "" if symptom.change == NULL_OMITTED else symptom.change
            return (row, difference, change)
    return ("", symptom.kind, _place(symptom.pattern))


def _place(pattern: str) -> str:
    """What tells causes of one clause and kind apart: nothing for a field the envelope
    defines (the timestamps at the top and in attempts are one cause), the object for a
    generated key (unknown fields lost at the top and in attempts are two)."""
    parent, _, leaf = pattern.rpartition("/")
    return parent if leaf == "*" else ""


def cause_signature(key: Sequence[str]) -> str:
    """The stable name of a cause, for known-failures files: ``c`` and 12 hex digits of
    a hash of its key (:func:`cause_key`), the same in every run (any profile, seed or
    shard) that fails by that defect."""
    text = "\x1f".join(" ".join(part.split()) for part in key)
    return "c" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def row_name(rule: DefectRule) -> str:
    """A row of the table as :func:`cause_key` names it."""
    return f"{rule.pointer} {rule.difference} {rule.requirement}"


def rows_by_name() -> dict[str, DefectRule]:
    """Each row of the table by the name :func:`row_name` gives it."""
    return {row_name(rule): rule for rule in DEFECT_RULES}
