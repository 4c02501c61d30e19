"""The upgrade corpus of --rdq-upgrade-save (C19): deterministic, complete, last write wins."""

from __future__ import annotations

from rdq_compliance import encode, validate
from rdq_compliance._corpus import valid_fixtures
from rdq_compliance._pytest._upgrade import DROPPED, KEPT_ROLES, build_corpus, expected_of
from rdq_compliance._pytest._upgrade_corpus import BULK


def _texts(seed: int) -> list[tuple[str, str, str]]:
    return [(kind, role, "" if env is None else encode(env))
            for kind, role, env in build_corpus(seed, [1])]


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    assert _texts(0) == _texts(0)
    assert _texts(0) != _texts(1)


def test_corpus_holds_every_fixture_rewrites_and_a_dropped_namespace() -> None:
    steps = build_corpus(0, [1])
    kept, dropped = expected_of(steps)
    assert set(kept) == set(KEPT_ROLES)
    stored = {env.id for by_id in kept.values() for env in by_id.values()}
    # two fixtures are written as the second version of other ids (so under those ids)
    assert len({f.envelope().id for f in valid_fixtures(1)} - stored - set(dropped)) == 2
    assert all(validate(env) == [] for by_id in kept.values() for env in by_id.values())
    rewritten = [env for kind, role, env in steps if kind == "write" and role == "rewritten"]
    assert len(rewritten) == 2 * len(kept["rewritten"])  # every id written twice
    for env in rewritten[1::2]:
        assert kept["rewritten"][env.id] is env  # the last write is what must come back
    assert steps[-1] == ("drop", DROPPED, None) and len(dropped) >= 10
    assert len(kept["bulk"]) == BULK > 1_000  # more than one batch of a migration
    assert not set(kept["bulk"]) & {id for role in KEPT_ROLES if role != "bulk"
                                    for id in kept[role]}


def test_a_version_without_fixtures_still_gets_a_full_corpus() -> None:
    kept, dropped = expected_of(build_corpus(0, [2]))
    assert kept["golden"] == {}
    assert len(kept["rewritten"]) == 11 and len(kept["writable"]) == 10 and dropped
    assert {env.envelope_version for by_id in kept.values() for env in by_id.values()} == {2}
