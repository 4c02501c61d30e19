"""Causes that are one defect, joined by what the run found (issue 21 §2).

:func:`~rdq_compliance.reporting._symptom.cause_key` groups failures by the diagnosis
table's row, the class of difference and the nature of the change. Some keys are one
defect only given the rest of the run: an empty value read as null where values of the
same kind were lost to null, a row that is one case of a wider row, nulls left out at
several levels, a narrower change of a string beside a wider one, namespaces that
collide by their names alone. Each join moves the
failures of one key into another's; none splits a cause.
"""

from __future__ import annotations

from ..envelope._diagnosis import requirement_rank, wider_rule
from ..envelope._text_change import WIDER_CHANGES
from ._symptom import LOST_TO_NULL, NULL_OMITTED, CauseKey, Symptom, row_name, rows_by_name

__all__ = [
    "Groups", "join_losses", "join_names", "join_natures", "join_omitted_nulls", "join_wider",
]

Groups = dict[CauseKey, list[tuple[str, str, Symptom]]]
"""Failures ``(node id, requirement id, symptom)`` by the key of their cause."""


def join_losses(groups: Groups) -> None:
    """An empty value read as null where values of the same kind at the same place
    were lost to null (a store that drops ``detail`` loses ``{}`` and ``{"a": 1}``
    alike) is that loss, not an empty/null confusion (RDQ-RT-010): its failures join the
    loss's cause. Where nothing else was lost (``""`` read as null), they stay apart."""
    losses: dict[tuple[str, str], CauseKey] = {}
    for key, members in groups.items():
        for _, _, s in members:
            if s.change == LOST_TO_NULL:
                losses.setdefault((s.pattern, s.kind), key)
    for key in [k for k in groups if k[1] == "empty-null"]:
        kept = []
        for member in groups[key]:
            s = member[2]
            loss = losses.get((s.pattern, s.kind)) if s.change != "null read as empty" else None
            if loss is None:
                kept.append(member)
            else:
                groups[loss].append(member)
                groups[loss].sort(key=lambda m: m[0])  # by node id, as grouped
        if kept:
            groups[key] = kept
        else:
            del groups[key]


def join_wider(groups: Groups) -> set[str]:
    """A defect of a row that is one case of a wider row (``DefectRule.within``: a lost
    ``payload_ref``, one of the unknown top-level fields) joins that row's cause of the
    same class and change where the run found one; alone it stays a cause of its own.
    Returns the node ids of the failures that joined: the cause is named and shown by
    the wider row's own failures, however many joined it."""
    rows = rows_by_name()
    joined: set[str] = set()
    for key in list(groups):
        rule = rows.get(key[0])
        wider = wider_rule(rule, key[1]) if rule is not None else None
        target = None if wider is None else (row_name(wider), key[1], key[2])
        if target is not None and target in groups:
            joined |= _move(groups, key, target)
    return joined


def join_omitted_nulls(groups: Groups) -> set[str]:
    """Where the run lost fields at several rows of the table (the top level, attempts,
    errors) and every field lost at each of them held null, the store leaves nulls out
    (Jackson's ``NON_NULL``, ``omitempty``): one defect, the cause of the outermost row
    (the fewest pointer tokens: the top level's; ties: :func:`requirement_rank`). Returns
    the node ids that joined it. A row where a non-null value was lost too is a loss of
    its own and stays apart."""
    rows = rows_by_name()
    omitted = [key for key, members in groups.items()
               if key[1] == "missing" and key[0] in rows
               and all(s.change == NULL_OMITTED for _, _, s in members)]
    if len(omitted) < 2:
        return set()
    target = min(omitted, key=lambda k: (rows[k[0]].pointer.count("/"),
                                         requirement_rank(rows[k[0]].requirement), k))
    joined: set[str] = set()
    for key in omitted:
        if key != target:
            joined |= _move(groups, key, target)
    return joined


def join_natures(groups: Groups) -> set[str]:
    """A string changed in a narrower way (``trailing spaces trimmed``) where the run found
    a wider change (:data:`WIDER_CHANGES`: ``white space trimmed``) of the same row and
    class is that change: a store that trims every string trims only the trailing spaces
    of a string with no other white space. Its failures join the widest such cause the run
    found; alone it stays a cause of its own. Returns the node ids that joined."""
    joined: set[str] = set()
    for key in list(groups):
        target = None
        wider = list(WIDER_CHANGES.get(key[2], ()))
        while wider:  # nearest first: the last one the run found is the widest
            nature = wider.pop(0)
            if (key[0], key[1], nature) in groups:
                target = (key[0], key[1], nature)
            wider += WIDER_CHANGES.get(nature, ())
        if target is not None:
            joined |= _move(groups, key, target)
    return joined


_ISOLATION = frozenset({"leaked", "survived-drop", "taken-by-drop", "lost-after-drop"})
"""The classes of a namespace seeing or touching another's data (C14)."""


def join_names(groups: Groups) -> set[str]:
    """Namespaces taken for one another by their names alone (cut to 32 characters,
    hashed into 16 databases): where the requirements of reads that leaked and drops that
    took or left envelopes passed their own tests, only the names tests met them (and the
    state machine's, with its own names), and the defect is one: one cause, the largest
    of them, whichever class each read found. Returns the node ids that joined it."""
    rows = rows_by_name()
    failed = {rid for members in groups.values() for _, rid, _ in members}
    found = [key for key in groups
             if (rule := rows.get(key[0])) is not None and rule.requirement not in failed
             and set(rule.difference.split("|")) <= _ISOLATION]
    if len(found) < 2:
        return set()
    target = max(found, key=lambda k: (len(groups[k]), k))
    joined: set[str] = set()
    for key in found:
        if key != target:
            joined |= _move(groups, key, target)
    return joined


def _move(groups: Groups, key: CauseKey,
          target: CauseKey) -> set[str]:
    """The failures of cause ``key`` join cause ``target``; returns their node ids."""
    moved = groups.pop(key)
    groups[target].extend(moved)
    groups[target].sort(key=lambda m: m[0])  # by node id, as grouped
    return {n for n, _, _ in moved}
