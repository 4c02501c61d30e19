"""Envelope versions (C16): declared versions round-trip, undeclared ones are refused
with exactly UNSUPPORTED_ENVELOPE_VERSION or kept exactly as written.

A case that does not apply to what the plugin declares (the v1 case of a plugin that
does not declare v1, the undeclared-version case of a version it declares) is
reported not applicable, never skipped: a skip would make the verdict incomplete."""

from __future__ import annotations

import dataclasses

import pytest

from rdq_compliance import Envelope, ErrorCode, StorageError
from rdq_compliance.strategies import envelopes, envelopes_of_other_versions
from rdq_compliance.suites._first_looks import first_look
from rdq_compliance.testing import Namespace, Rdq, base_envelope, requirement

#: The envelope versions the kit can generate and check.
KIT_VERSIONS = (1,)
_ALL_CODES = frozenset(c.value for c in ErrorCode)


@requirement("RDQ-VER-001", narrow=True)
def test_version_one_is_kept(rdq: Rdq) -> None:
    """RDQ-VER-001 (C16): a plain v1 envelope comes back as version 1, judged only by
    envelope_version: every envelope holds one, so a reader that stamps its own version
    fails here, before any other test (``_first_looks``)."""
    if 1 not in rdq.info.envelope_versions:
        rdq.not_applicable(f"plugin declares envelope versions "
                           f"{sorted(rdq.info.envelope_versions)}, not 1")
    rdq.namespace().roundtrip(first_look("version"))


@requirement("RDQ-VER-001", kind="property")
@pytest.mark.parametrize("version", KIT_VERSIONS, ids=lambda v: f"v{v}")
def test_declared_version_roundtrips(rdq: Rdq, version: int) -> None:
    """RDQ-VER-001 (C16): envelopes of each declared version round-trip with
    envelope_version preserved."""
    if version not in rdq.info.envelope_versions:
        rdq.not_applicable(f"plugin declares envelope versions "
                           f"{sorted(rdq.info.envelope_versions)}, not {version}")
    ns = rdq.namespace()

    def roundtrip(env: Envelope) -> None:
        ns.roundtrip(env)

    # Whole-envelope variety is RDQ-RT-001's; here the version field is the point.
    rdq.for_all(roundtrip, budget="targeted", env=envelopes(
        envelope_versions=(version,), max_attempts=1, max_payload_size=64))


@requirement("RDQ-VER-001", kind="property")
def test_other_declared_versions_roundtrip(rdq: Rdq) -> None:
    """RDQ-VER-001 (C16): envelopes of each declared version the kit has no schema for
    round-trip exactly, envelope_version included. The kit knows only v1's shape, so
    they are v1-shaped envelopes carrying that version, opaque to the kit (what
    strategies.envelopes_of_other_versions makes): a plugin that declares a version
    must store and return it exactly as written."""
    others = sorted(v for v in rdq.info.envelope_versions if v not in KIT_VERSIONS)
    if not others:
        rdq.not_applicable(f"plugin declares no envelope version beyond {list(KIT_VERSIONS)}")
    ns = rdq.namespace()
    for version in others:  # each declared version at least once, whatever is drawn
        ns.roundtrip(dataclasses.replace(base_envelope(60 + version % 1000),
                                         envelope_version=version))

    def roundtrip(env: Envelope) -> None:
        ns.roundtrip(env)

    rdq.for_all(roundtrip, budget="targeted", env=envelopes(
        envelope_versions=others, max_attempts=1, max_payload_size=64))


def _write_undeclared(rdq: Rdq, ns: Namespace, env: Envelope) -> StorageError | None:
    """Write ``env`` of an undeclared version: None when it was stored and reads back
    exactly, else its refusal, which must be UNSUPPORTED_ENVELOPE_VERSION (C16)."""
    refused = ns.write(env, allow=_ALL_CODES)
    if refused is None:
        ns.expect(env.id, env, why="an undeclared version that was accepted must come back "
                  "exactly as written (C16)")
        return None
    if refused.code != ErrorCode.UNSUPPORTED_ENVELOPE_VERSION:
        rdq.fail(
            f"write of envelope_version={env.envelope_version} (not declared) was refused "
            f"with code {refused.code!r}; C16 allows only UNSUPPORTED_ENVELOPE_VERSION "
            "(or storing it exactly)",
            envelopes=(env,),
        )
    return refused


def _check_undeclared(rdq: Rdq, ns: Namespace, env: Envelope) -> None:
    if _write_undeclared(rdq, ns, env) is None:
        return
    got = ns.read(env.id, expected=env)
    if got is not None and got != env:
        rdq.fail(
            f"write of envelope_version={env.envelope_version} was refused, yet read returns "
            "an altered envelope under its id (C16: never stored altered)",
            envelopes=(env,),
        )


@requirement("RDQ-VER-002")
@pytest.mark.parametrize("version", [0, 2, 3, 2**31 - 1])
def test_undeclared_version(rdq: Rdq, version: int) -> None:
    """RDQ-VER-002 (C16, C17): an envelope of a version the plugin does not declare is
    refused with UNSUPPORTED_ENVELOPE_VERSION or stored and read back exactly."""
    if version in rdq.info.envelope_versions:
        rdq.not_applicable(f"plugin declares envelope version {version}: RDQ-VER-001 checks it")
    env = dataclasses.replace(base_envelope(40 + version % 1000), envelope_version=version)
    _check_undeclared(rdq, rdq.namespace(), env)


@requirement("RDQ-VER-002")
def test_a_refused_rewrite_leaves_the_earlier_version(rdq: Rdq) -> None:
    """RDQ-VER-002 (C16, C13): a rewrite of an id as a version the plugin does not
    declare that is refused stores nothing: the earlier version stays, whole. A store
    that deletes the old row and then fails the INSERT (two statements in autocommit, no
    transaction) has lost it. A rewrite that is stored comes back exactly."""
    declared = rdq.info.envelope_versions
    version = next((v for v in (2, 3, 0, 2**31 - 1) if v not in declared), None)
    if 1 not in declared or version is None:
        rdq.not_applicable(f"needs envelope version 1 declared and one of 2, 3, 0 or "
                           f"2**31 - 1 not; plugin declares {sorted(declared)}")
    ns = rdq.namespace()
    earlier = base_envelope(46)
    ns.write(earlier)
    rewrite = dataclasses.replace(earlier, envelope_version=version, queue="other.queue")
    refused = _write_undeclared(rdq, ns, rewrite)
    if refused is not None:
        ns.expect(earlier.id, earlier, why=f"its rewrite as envelope_version={version} was "
                  f"refused ({refused.code}): a refused write stores nothing (C13, C16)")


@requirement("RDQ-VER-002", kind="property")
def test_generated_undeclared_versions(rdq: Rdq) -> None:
    """RDQ-VER-002 (C16, C17): generated envelopes of undeclared versions."""

    def check(env: Envelope) -> None:
        # A fresh namespace per example: an id accepted under one version earlier
        # must not make a later refusal look like an altered read.
        _check_undeclared(rdq, rdq.namespace(), env)

    rdq.for_all(check, budget="targeted", env=envelopes_of_other_versions(
        exclude=tuple(sorted(rdq.info.envelope_versions))))
