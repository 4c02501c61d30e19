"""The requirement registry: every requirement the kit checks, in one place.

A requirement has a stable id (``RDQ-<FAMILY>-<NNN>``), a level, the clauses of
the spec (``docs/spec/``) it enforces (``C<n>`` for clarifications.md, ``WE:<section>``
for envelope.md; tests/test_spec.py checks each has an anchor), the suite that
checks it and, when it only applies to plugins that declare a capability, that
capability. Which requirement a kind of defect belongs to is the diagnosis table
:data:`DEFECT_RULES` (``envelope/_diagnosis.py``, re-exported here).
``docs/requirements.md`` is generated from both tables
(``python -m rdq_compliance._docgen``).

Ids are never reused or renumbered; a retired requirement keeps its row with
``retired=True``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .envelope._diagnosis import DEFECT_RULES

__all__ = ["DEFECT_RULES", "REQUIREMENTS", "Level", "Requirement", "get_requirement"]


class Level(enum.StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"


@dataclass(frozen=True, slots=True)
class Requirement:
    id: str
    level: Level
    title: str
    clauses: tuple[str, ...]
    suite: str
    capability: str | None = None
    retired: bool = False


def _r(
    id: str,
    level: Level,
    suite: str,
    clauses: tuple[str, ...],
    title: str,
    capability: str | None = None,
) -> Requirement:
    return Requirement(id, level, title, clauses, suite, capability)


MUST, SHOULD = Level.MUST, Level.SHOULD

REQUIREMENTS: tuple[Requirement, ...] = (
    # golden
    _r("RDQ-GOLD-001", MUST, "golden", ("C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C12"),
       "Every valid golden fixture of each declared envelope version round-trips unchanged"),
    # round-trip
    _r("RDQ-RT-001", MUST, "roundtrip", ("C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C12"),
       "read(write(e)) == e for generated valid envelopes"),
    _r("RDQ-RT-002", MUST, "roundtrip", ("C13",),
       "Several envelopes written to one namespace are each read back by their own id"),
    _r("RDQ-RT-003", MUST, "roundtrip", ("C15",),
       "What was written is read back through a freshly opened storage, in the same "
       "process and in a new one (restarted testee)",
       capability="durable"),
    _r("RDQ-RT-004", MUST, "roundtrip", ("C3", "C6", "C7", "C9", "C11"),
       "What a plugin returns is a valid envelope in exact form: model types for Python "
       "adapters, canonical wire JSON for testees"),
    _r("RDQ-RT-005", MUST, "roundtrip", ("C12",),
       "Attempts keep their order, including repeated and decreasing attempt_no, and all "
       "come back: 1,000 of them, and as many as fit in 1 MiB"),
    _r("RDQ-RT-006", MUST, "roundtrip", ("C4",),
       "Free-text strings keep their code points: U+0000, astral characters, no trimming, "
       "no normalization, no case folding"),
    _r("RDQ-RT-007", MUST, "roundtrip", ("C3",),
       "Timestamps keep millisecond precision across the whole valid range, the hour "
       "repeated when clocks fall back included"),
    _r("RDQ-RT-008", MUST, "roundtrip", ("C7",),
       "The payload comes back byte for byte, the empty payload included"),
    _r("RDQ-RT-009", MUST, "roundtrip", ("C8",),
       "Headers: the empty key, keys told apart by case or trailing spaces, dotted and rdq. "
       "keys, the empty map"),
    _r("RDQ-RT-010", MUST, "roundtrip", ("C9",),
       'null, "", {} and [] stay four different values'),
    _r("RDQ-RT-011", MUST, "roundtrip", ("C4", "C8", "C8a", "C2"),
       "Long values: every free-text field (error.detail and unknown fields at every "
       "level included), header key and value and unknown field name at the lengths of "
       "common column limits (255 to 65,536 bytes, ASCII and multi-byte), queue and "
       "handler_ref of 240 characters, and 1,000+ headers, round-trip unchanged"),
    # truncation
    _r("RDQ-TR-001", MUST, "truncation", ("C1",),
       "error.message of exactly 4,096 bytes and error.stack of exactly 65,536 bytes "
       "round-trip unchanged"),
    _r("RDQ-TR-002", MUST, "truncation", ("C1", "C4"),
       "Truncated values with multi-byte characters at the cut round-trip unchanged"),
    _r("RDQ-TR-003", MUST, "truncation", ("C1",),
       "Values under the limit that merely end with the marker are stored unchanged"),
    # unknown fields
    _r("RDQ-UF-001", MUST, "unknown_fields", ("C10",),
       "Unknown top-level fields of every JSON type, 11,000 of them too, come back "
       "unchanged"),
    _r("RDQ-UF-002", MUST, "unknown_fields", ("C10",),
       "Unknown fields in attempt records, 11,000 in one too, come back unchanged"),
    _r("RDQ-UF-003", MUST, "unknown_fields", ("C10",),
       "Unknown fields in the error object, 11,000 of them too, come back unchanged"),
    _r("RDQ-UF-004", MUST, "unknown_fields", ("C10",),
       "payload_ref is preserved like any other unknown field"),
    _r("RDQ-UF-005", MUST, "unknown_fields", ("C5",),
       "Numbers in unknown fields and detail keep their value: every signed 64-bit integer, "
       "every finite double"),
    _r("RDQ-UF-006", MUST, "unknown_fields", ("C10",),
       "error.detail is opaque JSON and comes back unchanged"),
    _r("RDQ-UF-007", MUST, "unknown_fields", ("C10",),
       "Unknown fields and detail nested past common JSON depth limits (64, 100, 128, "
       "a few hundred levels) come back unchanged"),
    # versions
    _r("RDQ-VER-001", MUST, "versions", ("C16",),
       "Each declared envelope version round-trips with envelope_version preserved"),
    _r("RDQ-VER-002", MUST, "versions", ("C16", "C17"),
       "An undeclared envelope version is rejected with UNSUPPORTED_ENVELOPE_VERSION, the "
       "earlier version of its id left whole, or stored and returned exactly as written"),
    # storage semantics
    _r("RDQ-ST-001", MUST, "storage", ("C13",),
       "write replaces: nothing of the earlier version survives a rewrite, and every "
       "adapter open on the namespace reads the rewrite"),
    _r("RDQ-ST-002", MUST, "storage", ("C13",),
       "Reading an id that was never written returns nothing"),
    _r("RDQ-ST-003", MUST, "storage", ("C14",),
       "What is written in one namespace is invisible in every other"),
    _r("RDQ-ST-004", MUST, "storage", ("C14",),
       "Dropping a namespace removes all of its data and nothing else, a namespace of "
       "300 (quick), 1,100 (ci) or 10,000 (thorough) envelopes, over 1 MiB in all, too"),
    _r("RDQ-ST-005", MUST, "storage", ("C2", "C17", "C13"),
       "A valid envelope just under 1 MiB is accepted and round-trips, its bulk in the "
       "payload or in one text (unknown field, error.detail) at any level; a rewrite past "
       "1 MiB that is refused leaves the earlier version whole"),
    _r("RDQ-ST-006", MUST, "storage", ("C13", "C14"),
       "Random sequences of writes, rewrites, reads and drops across two namespaces agree "
       "with a plain model"),
    _r("RDQ-ST-007", SHOULD, "storage", ("C14",),
       "Dropping a namespace that holds nothing succeeds"),
    # concurrency (C18): only for plugins that declare it
    _r("RDQ-CC-001", MUST, "concurrency", ("C18",),
       "Atomic writes: every read overlapping rewrites of its id returns one whole written "
       "version, never a mix", capability="concurrent"),
    _r("RDQ-CC-002", MUST, "concurrency", ("C18",),
       "No lost updates: concurrent writes of different ids in one namespace all survive",
       capability="concurrent"),
    _r("RDQ-CC-003", MUST, "concurrency", ("C18",),
       "Read-after-write: a read that starts after a write returned sees that envelope or a "
       "later one", capability="concurrent"),
    _r("RDQ-CC-004", MUST, "concurrency", ("C14", "C18"),
       "Isolation under concurrency: drops and writes in other namespaces at the same time "
       "never touch this one", capability="concurrent"),
    _r("RDQ-CC-005", MUST, "concurrency", ("C14", "C18"),
       "Drop after concurrent writes: dropping a namespace right after concurrent writes to "
       "it, while another namespace is being written, removes every envelope ever written "
       "there and nothing of the other", capability="concurrent"),
    # namespace names
    _r("RDQ-ST-008", MUST, "namespaces", ("C14",),
       "Every valid namespace name is accepted and is a namespace of its own: 1 to 40 "
       "characters, digits and underscores, prefixes of one another, LIKE look-alikes, names "
       "equal in their first 32 characters; dropping one leaves the others intact"),
    # many envelopes, aliasing
    _r("RDQ-ST-009", MUST, "storage", ("C13", "C13a"),
       "No eviction: the envelopes written (some rewritten) to one namespace, 300 (quick), "
       "1,100 (ci) or 10,000 (thorough), are each read back as last written"),
    _r("RDQ-ST-010", MUST, "storage", ("C13a",),
       "What is stored is what was written: changing the object passed to write afterwards "
       "(headers, unknown fields, detail) changes nothing stored (Python adapters)"),
    # upgrades across plugin releases (two kit runs: --rdq-upgrade-save, --rdq-upgrade-check)
    _r("RDQ-UP-001", MUST, "upgrade", ("C19", "C13"),
       "Every envelope the previous release wrote, 1,100 in one namespace too, reads back "
       "unchanged after the new release opened (and migrated) the store",
       capability="durable"),
    _r("RDQ-UP-002", MUST, "upgrade", ("C19", "C14"),
       "Namespaces the previous release dropped stay empty after the upgrade",
       capability="durable"),
    _r("RDQ-UP-003", MUST, "upgrade", ("C19", "C13", "C14"),
       "Migrated namespaces take new writes and rewrites, and can be dropped",
       capability="durable"),
)

_BY_ID = {r.id: r for r in REQUIREMENTS}
assert len(_BY_ID) == len(REQUIREMENTS), "duplicate requirement id"
# The diagnosis table (kept in the envelope core, whose diff lines carry its clause tags)
# names requirements of this registry only.
assert {rule.requirement for rule in DEFECT_RULES} <= set(_BY_ID), "unknown id in DEFECT_RULES"


def get_requirement(id: str) -> Requirement:
    """Return the requirement ``id``; ``KeyError`` names the known ids when absent."""
    try:
        return _BY_ID[id]
    except KeyError:
        raise KeyError(
            f"unknown requirement id={id!r}; known: {', '.join(sorted(_BY_ID))}"
        ) from None
