"""The interface a Python storage plugin implements.

A plugin hands the kit a :class:`Storage` (one per kit run, built by the
``rdq_storage_open`` hook). A storage opens :class:`Adapter` objects, one per
namespace (C14). Adapters exchange :class:`~rdq_compliance.Envelope` values.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..envelope._model import Envelope

__all__ = [
    "NAMESPACE_PATTERN",
    "Adapter",
    "Capability",
    "ErrorCode",
    "OptionSpec",
    "Storage",
    "StorageError",
    "StorageInfo",
    "StorageUnavailable",
    "require_envelope_version",
]

NAMESPACE_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")
"""C14: every adapter is opened on a namespace matching this pattern (fullmatch)."""


class ErrorCode(enum.StrEnum):
    """The error codes a plugin may answer with (C17)."""

    UNSUPPORTED_ENVELOPE_VERSION = "UNSUPPORTED_ENVELOPE_VERSION"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    INVALID_ENVELOPE = "INVALID_ENVELOPE"
    NOT_SUPPORTED = "NOT_SUPPORTED"
    INTERNAL = "INTERNAL"
    UNAVAILABLE = "UNAVAILABLE"
    """C20: the backing service could not be reached or went away during the call (the
    operation did not happen, or its outcome is unknown). Not a judgement of the plugin:
    the kit counts the test as not run (the verdict is at best incomplete)."""


class Capability(enum.StrEnum):
    """Optional capabilities the kit knows how to verify."""

    DURABLE = "durable"
    """C15: what was written survives closing the storage and opening it again."""
    CONCURRENT = "concurrent"
    """C18: the kit may call the storage and its adapters from several threads at once,
    with several adapters open on one namespace. Each ``write`` is then atomic (a
    concurrent ``read`` of the id sees the whole envelope before or after it, never a
    mix), writes of different ids never lose one another, and a ``read`` that starts
    after a ``write`` returned sees that envelope or a later one."""


class StorageError(Exception):
    """A refusal or failure reported by a storage plugin, with a C17 code."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class StorageInfo:
    """What a plugin declares about itself. Capabilities are declared, never guessed."""

    name: str
    version: str
    envelope_versions: frozenset[int] = frozenset({1})
    capabilities: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "envelope_versions", frozenset(self.envelope_versions))
        object.__setattr__(self, "capabilities", frozenset(self.capabilities))


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """A setting a plugin accepts through ``--rdq-option NAME=VALUE``.

    The value comes from the command line, else from the environment variable
    ``env`` (when set), else ``default``. ``default=None`` makes it required.
    ``{worker}`` in the value becomes ``gw0``, ``gw1``… in an xdist worker, else
    ``main``: a store per process.
    """

    name: str
    default: str | None
    help: str = ""
    env: str | None = None
    choices: tuple[str, ...] = field(default=())


@runtime_checkable
class Adapter(Protocol):
    """Storage opened on one namespace.

    A plugin that declares ``concurrent`` (C18) gets calls on one adapter, and on
    several adapters of one namespace, from several threads at once; one that does
    not is called by one thread at a time.

    A call that cannot reach the backing service, or loses it, raises
    ``StorageError(ErrorCode.UNAVAILABLE, ...)`` (C20): the kit counts that test as not
    run. Connect again on the next call, so that the plugin recovers once the service
    is back. Never answer UNAVAILABLE while the service answers other calls: the kit
    reads another id through the same adapter and tries the call again, and a second
    UNAVAILABLE then is a refusal (C17).
    """

    def write(self, envelope: Envelope) -> None:
        """Create or wholly replace the envelope with ``envelope.id`` (C13).

        Store the value ``envelope`` has at the time of the call (C13a): keep no
        reference to it or to its containers (``headers``, ``extra``, an attempt's
        ``extra``, ``error.detail``, nested values): the caller may change them
        after ``write`` returns, and that must change nothing stored. Serialize it,
        or copy it deeply. Do not change it either. Raise :class:`StorageError` to
        refuse it (C16/C17).
        """

    def read(self, id: str) -> Envelope | None:
        """Return the last envelope written with ``id``, or ``None`` (C13). How many
        envelopes the namespace holds never matters: no eviction (C13a)."""

    def close(self) -> None:
        """Release what the adapter holds. The data stays (C15 for durable plugins)."""


@runtime_checkable
class Storage(Protocol):
    """A configured storage plugin: the factory of adapters."""

    @property
    def info(self) -> StorageInfo:
        """Name, version, envelope versions and capabilities."""

    def open(self, namespace: str) -> Adapter:
        """Open an adapter on ``namespace`` (C14), creating what it needs.

        Every name matching :data:`NAMESPACE_PATTERN` is accepted, from ``a`` to
        40 characters, and is a namespace of its own: ``ab``, ``abc`` and ``ab_c``
        are three namespaces, so are two names equal in their first 32 characters
        (mind identifier and column length limits)."""

    def drop(self, namespace: str) -> None:
        """Remove all data of ``namespace`` and nothing else (C14). Dropping an
        unknown namespace is not an error. Match the name exactly: never by
        prefix (``SCAN ab*``, ``LIKE 'ab%'``) nor as a ``LIKE`` pattern, where
        ``_`` matches any character."""

    def close(self) -> None:
        """Release connections. Called once at the end of the run."""



class StorageUnavailable(Exception):
    """The storage behind a plugin cannot be reached (server down, bad DSN).

    Raised by ``rdq_storage_open``. The kit turns it into one clear message
    instead of a failure per test; ``setting`` names the option to change. Once the
    storage is open, a call that loses its service raises
    ``StorageError(ErrorCode.UNAVAILABLE, ...)`` instead (C20).
    """

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.setting = setting


def positive_seconds(raw: object) -> float | None:
    """An option's text (:class:`OptionSpec` values are text) as a finite number of
    seconds > 0, or None when it is not one; each caller words its own error (a usage
    error, a StorageUnavailable, a fallback). Not exported: the kit's own reading."""
    try:
        value = float(str(raw))
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def require_envelope_version(envelope: Envelope, supported: Collection[int]) -> None:
    """Refuse ``envelope`` unless its ``envelope_version`` is one the plugin stores.

    Raises :class:`StorageError` with ``UNSUPPORTED_ENVELOPE_VERSION``, one of the two
    answers C16 allows (the other: store and return it exactly as written). Call it
    first in ``Adapter.write``. A bool is not a version, although ``True == 1``.
    """
    version = envelope.envelope_version
    if type(version) is not int or version not in supported:
        raise StorageError(
            ErrorCode.UNSUPPORTED_ENVELOPE_VERSION,
            f"envelope_version={version!r} is not supported (supported: {sorted(supported)})",
        )
