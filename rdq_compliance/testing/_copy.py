"""The kit's private copy of an envelope: what ``Namespace.write`` hands to the plugin.

Whatever a plugin does to the object it was given, the kit's expected value stays what
the generator produced. copy.deepcopy would do, at many times the cost on every write.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from ..envelope._deep import copy_json
from ..envelope._model import Attempt, Envelope, ErrorInfo

__all__ = ["private_copy"]


def _copy_json(value: Any) -> Any:
    # Any depth (no recursion); not plain JSON (an invalid model): copy it anyway.
    return copy_json(value, copy.deepcopy)


def _copy_error(error: Any) -> Any:
    if type(error) is not ErrorInfo:
        return copy.deepcopy(error)
    return dataclasses.replace(error, detail=_copy_json(error.detail),
                               extra=_copy_json(error.extra))


def _copy_attempt(attempt: Any) -> Any:
    if type(attempt) is not Attempt:
        return copy.deepcopy(attempt)
    return dataclasses.replace(attempt, error=_copy_error(attempt.error),
                               extra=_copy_json(attempt.extra))


def private_copy(env: Envelope) -> Envelope:
    """A copy of ``env`` that shares nothing mutable with it: new model objects, new
    containers (headers, attempts, ``extra``, ``detail``); the immutable leaves
    (str, bytes, int, datetime, enum members) are shared. What copy.deepcopy gives,
    at a fraction of its cost."""
    if type(env) is not Envelope:
        return copy.deepcopy(env)
    attempts = env.attempts
    return dataclasses.replace(
        env,
        headers=_copy_json(env.headers),
        attempts=(tuple(_copy_attempt(a) for a in attempts)
                  if type(attempts) is tuple else copy.deepcopy(attempts)),
        extra=_copy_json(env.extra),
    )
