"""Namespace names (C14): every name the pattern allows is a namespace of its own, and
dropping one leaves every other intact, however alike their names (RDQ-ST-008).

Every name written to or dropped here is built on this test's unique name (see
``_names.py``): on a shared server, a plugin that drops by prefix or ``LIKE`` pattern
destroys only this test's data.
"""

from __future__ import annotations

from rdq_compliance import Envelope, new_id
from rdq_compliance.suites._names import claimed_family
from rdq_compliance.testing import Namespace, Rdq, base_envelope, requirement, ulid

_SHARED = 80
"""The id every namespace of a test writes its own envelope under."""


def _own(name: str) -> Envelope:
    """What namespace ``name`` holds under the shared id: it names its namespace."""
    return base_envelope(_SHARED, headers={"x-namespace": name}, extra={"x_namespace": name})


def _only(i: int, name: str) -> Envelope:
    """An envelope under an id that only namespace ``name`` holds."""
    return base_envelope(_SHARED + 1 + i, extra={"x_namespace": name})


@requirement("RDQ-ST-008")
def test_every_name_shape_is_a_namespace_of_its_own(rdq: Rdq) -> None:
    """RDQ-ST-008 (C14): names of every shape the pattern allows — 40 characters, digits,
    ``_`` anywhere after the first character, prefixes of one another (``ab``, ``abc``,
    ``ab_c``), ``LIKE`` look-alikes (``a_c`` / ``abc``, ``__`` / ``ab``), names equal in
    their first 32 characters — are accepted, and what each holds is invisible in all
    the others, even under the same id."""
    names = claimed_family(rdq)
    opened: dict[str, Namespace] = {label: rdq.namespace(name) for label, name in names.items()}
    for i, ns in enumerate(opened.values()):
        ns.write(_own(ns.name))
        ns.write(_only(i, ns.name))
    for label, ns in opened.items():
        ns.expect(ulid(_SHARED), _own(ns.name),
                  why=f"each namespace of this test wrote its own envelope under this id; "
                  f"this is the {label!r} one")
        for j, other in enumerate(opened.values()):
            if other is not ns:
                ns.expect(ulid(_SHARED + 1 + j), None,
                          why=f"it was written in namespace {other.name!r} only")


@requirement("RDQ-ST-008")
def test_dropping_one_name_leaves_alike_names_intact(rdq: Rdq) -> None:
    """RDQ-ST-008 (C14): dropping one namespace of a set of alike names (prefixes of one
    another, ``LIKE`` look-alikes, equal in the first 32 characters) removes its data
    and nothing of the others; each is dropped in turn and written again."""
    names = claimed_family(rdq)
    labels = list(names)
    stored = {label: _only(i, names[label]) for i, label in enumerate(labels)}
    opened: dict[str, Namespace] = {label: rdq.namespace(names[label]) for label in labels}
    for label in labels:
        opened[label].write(stored[label])
    for victim in labels:
        gone = names[victim]
        opened[victim].close()
        rdq.drop(gone)
        opened[victim] = rdq.namespace(gone)
        opened[victim].expect(stored[victim].id, None, why=f"namespace {gone!r} was dropped")
        for label in labels:
            if label != victim:
                opened[label].expect(
                    stored[label].id, stored[label],
                    why=f"only namespace {gone!r} ({victim!r}) was dropped; this one is "
                    f"{label!r}",
                )
        opened[victim].write(stored[victim])


@requirement("RDQ-ST-008")
def test_one_character_name_is_accepted(rdq: Rdq) -> None:
    """RDQ-ST-008 (C14): a one-character name (``a``) is accepted: it opens and reads.

    Safe on a shared store: a one-character name cannot carry this run's unique token,
    so other runs use it too. The kit only opens it and reads an id no one ever wrote
    (a fresh ULID), expecting nothing; it never writes to it. It is dropped like every
    namespace the kit opens, but only while no other kit run on this machine has it
    open (``rdq.shared_namespace``: a store whose adapters do not outlive a drop, a
    schema per namespace, would fail that run's read); when that cannot be known, a
    note of the run names it. Always ``a``, so that at most one such namespace exists
    however many runs share the store. Isolation and drop of short names that are
    prefixes of longer ones are checked on names built on the test's unique name (the
    other tests of RDQ-ST-008)."""
    with rdq.shared_namespace("a") as ns:
        ns.expect(new_id(), None, why="no one writes to namespace 'a'; this id is fresh")
