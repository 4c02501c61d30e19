"""The upgrade corpus (rule C19) and its manifest: what ``--rdq-upgrade-save`` writes
through the previous release (a pure function of the seed and the golden fixtures)
and how ``--rdq-upgrade-check`` reads ``DIR/manifest.json`` back; see ``_upgrade``."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from .. import __version__
from .._corpus import corpus_hash as fixture_corpus_hash
from .._corpus import valid_fixtures
from ..envelope._codec import decode
from ..envelope._model import Envelope
from ..envelope._validate import InvalidEnvelope
from ..testing._builders import base_envelope, random_id
from ..testing._upgrade import DROPPED, KEPT_ROLES, ROLES, Saved

__all__ = [
    "BULK", "CHECKED", "FORMAT", "MANIFEST", "STATE", "Step", "UpgradeError", "build_corpus",
    "corpus_digest", "expected_of", "load_saved", "usage_dir",
]

MANIFEST = "manifest.json"
STATE = "state"
CHECKED = "checked.json"
FORMAT = "rdq-upgrade-corpus/1"
_GENERATED = 48
"""Generated envelopes of the corpus (split over the namespaces)."""
BULK = 1_100
"""Small envelopes of the ``bulk`` namespace: more than a migration's batch of 1,000
rows, so a copy that runs one batch (``LIMIT 1000``, one page) and stops loses some."""

Step = tuple[Literal["write"], str, Envelope] | tuple[Literal["drop"], str, None]


class UpgradeError(Exception):
    """A bad upgrade directory or manifest: a usage error (one line, exit status 4)."""


# -- the corpus ----------------------------------------------------------------------------


def _generated(seed: int, versions: Sequence[int], count: int) -> list[Envelope]:
    """``count`` envelopes drawn from the public strategy under ``seed``, each with its
    own id (Hypothesis may draw equal ids; a corpus must not overwrite by accident)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from ..strategies import envelopes

    drawn: list[Envelope] = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(envelopes(envelope_versions=versions, max_attempts=3, max_payload_size=256))
    def draw(env: Envelope) -> None:
        drawn.append(env)

    draw()
    if len(drawn) < count:  # pragma: no cover - the strategy's space is far larger
        raise UpgradeError(f"Hypothesis drew {len(drawn)} envelopes, the corpus needs {count}")
    rng = random.Random(seed)
    return [dataclasses.replace(env, id=random_id(rng)) for env in drawn[:count]]


def build_corpus(seed: int, versions: Sequence[int]) -> list[Step]:
    """The writes and the drop of the upgrade corpus, in order, for a plugin declaring
    ``versions``: a pure function of ``seed`` (and the kit's fixtures)."""
    fixtures = [f.envelope() for f in valid_fixtures() if f.envelope_version in versions]
    gen = _generated(seed, sorted(versions), _GENERATED + 5)
    steps: list[Step] = []
    # golden: every valid fixture of a declared version, but five kept for the others
    # (generated ones stand in when a declared version has fewer fixtures)
    steps.extend(("write", "golden", env) for env in fixtures[5:])
    head = [*fixtures[:5], *gen[_GENERATED:]][:5]
    steps.extend(("write", "generated", env) for env in gen[:16])
    # bulk: more small envelopes than a migration copies in one batch
    rng = random.Random(f"bulk-{seed}")  # not the ids of _generated's Random(seed)
    steps.extend(("write", "bulk", dataclasses.replace(
        base_envelope(n), id=random_id(rng), envelope_version=min(versions)))
        for n in range(BULK))
    # rewritten: a first version, then another envelope under the same id (last wins);
    # the golden ones are the richest (headers, attempts, unknown fields at every level)
    firsts = [*head[:3], *gen[16:24]]
    seconds = [*gen[24:32], *head[3:5], gen[0]]
    for first, second in zip(firsts, seconds, strict=True):
        steps.append(("write", "rewritten", first))
        steps.append(("write", "rewritten", dataclasses.replace(second, id=first.id)))
    steps.extend(("write", "writable", env) for env in gen[32:40])
    steps.extend(("write", "writable", env) for env in head[:2])
    # dropped: written (some ids also live elsewhere), then the whole namespace dropped
    steps.extend(("write", DROPPED, env) for env in [*gen[40:48], *head[:2], gen[1]])
    steps.append(("drop", DROPPED, None))
    return steps


def expected_of(steps: Sequence[Step]) -> tuple[dict[str, dict[str, Envelope]], list[str]]:
    """What the store holds after ``steps`` (per kept role: id -> the last write), and
    the ids the dropped namespace held."""
    kept: dict[str, dict[str, Envelope]] = {role: {} for role in KEPT_ROLES}
    dropped: dict[str, None] = {}
    for kind, role, env in steps:
        if kind == "write":
            assert env is not None
            if role == DROPPED:
                dropped[env.id] = None
            else:
                kept[role][env.id] = env
    return kept, list(dropped)


def corpus_digest(expected: Mapping[str, Mapping[str, str]], dropped: Sequence[str]) -> str:
    body = json.dumps({"expected": expected, "dropped": list(dropped)}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


# -- the manifest --------------------------------------------------------------------------


def usage_dir(flag: str, directory: Path, problem: str) -> UpgradeError:
    return UpgradeError(f"{flag}={str(directory)!r}: {problem}")


def load_saved(directory: Path) -> Saved:
    """Read and check ``DIR/manifest.json``; :class:`UpgradeError` says what to do."""
    flag = "--rdq-upgrade-check"
    if not directory.exists():
        raise usage_dir(flag, directory, "no such directory; first run the kit with the "
                         "previous release and --rdq-upgrade-save on that directory")
    if not directory.is_dir():
        raise usage_dir(flag, directory, "is not a directory; expected the directory "
                         "written by --rdq-upgrade-save")
    path = directory / MANIFEST
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise usage_dir(flag, directory, f"holds no {MANIFEST}, so it was not written by "
                         "--rdq-upgrade-save; give the directory of a save run") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise usage_dir(flag, directory, f"{MANIFEST} is unreadable ({exc}); save again "
                         "with --rdq-upgrade-save") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise usage_dir(flag, directory, f"{MANIFEST} has format={found!r}, expected "
                         f"{FORMAT!r}; it was not written by --rdq-upgrade-save of this kit")
    kit_version = raw.get("kit_version")
    if kit_version != __version__:
        raise usage_dir(flag, directory, f"was saved by rdq-compliance {kit_version!r}, this "
                         f"is {__version__!r}; save and check with the same kit version "
                         f"(install rdq-compliance=={kit_version} for the check, or save again "
                         f"with {__version__})")
    if raw.get("fixture_hash") != fixture_corpus_hash():
        raise usage_dir(flag, directory, "was saved with other golden fixtures "
                         f"(fixture_hash={raw.get('fixture_hash')!r}, this kit has "
                         f"{fixture_corpus_hash()!r}); save again with this kit")
    checked = directory / CHECKED
    if checked.exists():
        raise usage_dir(flag, directory, f"was already checked ({CHECKED}); that check "
                         "dropped the corpus from the store: run --rdq-upgrade-save with the "
                         "previous release again")
    try:
        texts: dict[str, dict[str, str]] = raw["expected"]
        dropped = [str(i) for i in raw["dropped_ids"]]
        if corpus_digest(texts, dropped) != raw["corpus_hash"]:
            raise usage_dir(flag, directory, f"{MANIFEST} was changed after the save "
                             "(corpus_hash does not match its envelopes); save again")
        plugin = raw["plugin"]
        namespaces = {str(k): str(v) for k, v in raw["namespaces"].items()}
        if set(namespaces) != set(ROLES) or set(texts) != set(KEPT_ROLES):
            raise KeyError("namespaces")
        expected = {
            role: {id: decode(text, versions=None) for id, text in by_id.items()}
            for role, by_id in texts.items()
        }
        return Saved(
            directory=directory,
            plugin_label=str(plugin["label"]),
            plugin_name=str(plugin["name"]),
            plugin_version=str(plugin["version"]),
            kit_version=str(kit_version),
            seed=int(raw["seed"]),
            saved_at=str(raw["saved_at"]),
            namespaces=namespaces,
            expected=expected,
            dropped_ids=tuple(dropped),
        )
    except (KeyError, TypeError, ValueError, AttributeError, InvalidEnvelope) as exc:
        raise usage_dir(flag, directory, f"{MANIFEST} is malformed ({type(exc).__name__}: "
                         f"{exc}); save again with --rdq-upgrade-save") from None
