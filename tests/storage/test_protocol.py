"""The helpers of the public storage-plugin API."""

from __future__ import annotations

import dataclasses

import pytest

from rdq_compliance import ErrorCode, StorageError, decode, require_envelope_version
from tests.envelope._envelopes import SEED_TEXT


@pytest.mark.parametrize("version", [0, 2, 2**31 - 1, True])
def test_require_envelope_version_refuses_undeclared_versions(version: int) -> None:
    env = dataclasses.replace(decode(SEED_TEXT), envelope_version=version)
    with pytest.raises(StorageError) as info:
        require_envelope_version(env, frozenset({1}))
    assert info.value.code == ErrorCode.UNSUPPORTED_ENVELOPE_VERSION
    assert f"envelope_version={version!r}" in info.value.message


def test_require_envelope_version_accepts_declared_versions() -> None:
    require_envelope_version(decode(SEED_TEXT), frozenset({1}))
    env = dataclasses.replace(decode(SEED_TEXT), envelope_version=2)
    require_envelope_version(env, {1, 2})
