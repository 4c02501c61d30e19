"""Upgrades across plugin releases (C19): what the previous release wrote, the new one reads
(RDQ-UP-001 … RDQ-UP-003).

These tests read the corpus that ``--rdq-upgrade-save DIR`` stored through the previous
release and recorded in DIR; they run only in a kit run given ``--rdq-upgrade-check DIR``
(otherwise they are not applicable) and only for plugins that declare ``durable``. The
expected envelopes come from the manifest, never from an earlier read of the store. Each
test works in its own namespaces, so that under ``-n N`` they may run in any order.
"""

from __future__ import annotations

import dataclasses
import random

from rdq_compliance.testing import DROPPED, Rdq, Saved, random_id, requirement

_READ_ROLES = ("golden", "generated", "rewritten")


@requirement("RDQ-UP-001")
def test_previous_release_reads_back(rdq_upgrade: Saved, rdq: Rdq) -> None:
    """RDQ-UP-001 (C19, C13): every envelope the previous release wrote (fixtures,
    generated envelopes, rewritten ids: the last write, and a namespace of more envelopes
    than a migration's batch of 1,000) reads back unchanged after the new release opened,
    and migrated, the store."""
    saved = rdq_upgrade
    for role in (*_READ_ROLES, "bulk"):
        name = saved.namespaces[role]
        ns = rdq.namespace(name)
        for id, env in saved.expected[role].items():
            ns.expect(id, env, why=f"release {saved.release} wrote it in namespace {name!r} "
                      "before the upgrade (C19)")


@requirement("RDQ-UP-002")
def test_dropped_namespace_stays_empty(rdq_upgrade: Saved, rdq: Rdq) -> None:
    """RDQ-UP-002 (C19, C14): the namespace the previous release dropped is empty after the
    upgrade: no id it once held comes back."""
    saved = rdq_upgrade
    name = saved.namespaces[DROPPED]
    ns = rdq.namespace(name)
    for id in saved.dropped_ids:
        ns.expect(id, None, why=f"release {saved.release} dropped namespace {name!r} before "
                  "the upgrade; the migration resurrected it (C19, C14)")


@requirement("RDQ-UP-003")
def test_migrated_namespace_takes_writes(rdq_upgrade: Saved, rdq: Rdq) -> None:
    """RDQ-UP-003 (C19, C13, C14): a migrated namespace reads back what it held, takes
    rewrites of its ids (the new version wholly replaces the migrated one) and new ids,
    keeps them through a reopened adapter, and can be dropped."""
    saved = rdq_upgrade
    name = saved.namespaces["writable"]
    old = saved.expected["writable"]
    ns = rdq.namespace(name)
    for id, env in old.items():
        ns.expect(id, env, why=f"release {saved.release} wrote it before the upgrade (C19)")
    # Other corpus envelopes as the new versions: a rich migrated row is replaced by a
    # bare one and the other way round.
    donors = [env for role in _READ_ROLES for env in saved.expected[role].values()]
    rng = random.Random(saved.seed)
    rng.shuffle(donors)
    new = {id: dataclasses.replace(donors[i], id=id) for i, id in enumerate(old)}
    for donor in donors[len(old):len(old) + 8]:
        id = random_id(rng)
        if id not in new:
            new[id] = dataclasses.replace(donor, id=id)
    for env in new.values():
        ns.write(env)
    for id, env in new.items():
        why = ("the rewrite replaces the migrated version (C13)" if id in old
               else "written after the upgrade")
        ns.expect(id, env, why=why)
    ns.close()
    again = rdq.namespace(name)
    for id, env in new.items():
        again.expect(id, env, why="written after the upgrade, read through a new adapter")
    again.close()
    rdq.drop(name)
    emptied = rdq.namespace(name)
    for id in new:
        emptied.expect(id, None, why=f"namespace {name!r} was dropped (C14)")
