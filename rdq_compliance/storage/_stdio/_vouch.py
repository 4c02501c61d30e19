"""Envelopes the bridge itself built from wire JSON it validated (see :func:`vouched_for`)."""

from __future__ import annotations

import threading

from ...envelope._model import Envelope

__all__ = ["VOUCHED_KEEP", "vouch", "vouched_for"]

_VOUCHED: dict[int, Envelope] = {}
VOUCHED_KEEP = 8
_vouched_lock = threading.Lock()
_NOT_VOUCHED = object()


def vouch(env: Envelope) -> Envelope:
    with _vouched_lock:
        _VOUCHED[id(env)] = env  # kept alive, so its id() is not reused meanwhile
        while len(_VOUCHED) > VOUCHED_KEEP:
            del _VOUCHED[next(iter(_VOUCHED))]
    return env


def vouched_for(env: object) -> bool:
    """True when ``env`` is a model the bridge itself just built from wire JSON that
    passed ``validate`` (one of the last few reads): validating the model again
    cannot find anything, so the kit may skip it. Identity, not equality: a model
    altered or rebuilt by anything between the bridge and the kit is not vouched for."""
    with _vouched_lock:
        # a default that is no caller's object: .get(...) -> None would vouch for None
        return _VOUCHED.get(id(env), _NOT_VOUCHED) is env
