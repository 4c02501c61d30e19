"""The typed model of envelope v1: envelope, attempt record and error object.

The model is the value a Python storage adapter writes and reads. Wire details
(JSON text, base64, timestamp text) live in the codec; here a timestamp is an
aware UTC ``datetime`` at millisecond precision and the payload is ``bytes``.

Each object carries ``extra``: the residual of its unknown fields (C10), plain
JSON values exactly as they were decoded. Equality follows C5, C9 and C11 and is
computed by the structural diff, so ``a == b`` holds exactly when
``diff(a, b)`` is empty.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TypeAlias

from ._deep import short_repr

__all__ = [
    "Attempt",
    "Envelope",
    "ErrorInfo",
    "JSONValue",
    "Outcome",
    "Status",
]

JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None


class Status(enum.StrEnum):
    """Task status. New values are breaking (wire-envelope, Evolution)."""

    PENDING = "PENDING"
    IN_FLIGHT = "IN_FLIGHT"
    SUCCEEDED = "SUCCEEDED"
    DEAD = "DEAD"


class Outcome(enum.StrEnum):
    """Outcome of one attempt. New values are breaking."""

    SUCCESS = "SUCCESS"
    RETRYABLE_FAILURE = "RETRYABLE_FAILURE"
    PERMANENT_FAILURE = "PERMANENT_FAILURE"
    LEASE_EXPIRED = "LEASE_EXPIRED"


# The members by wire value: the validator's membership test and decode's lookup
# (``Status(value)`` finds the same member ten times slower).
STATUS_BY_VALUE: dict[str, Status] = {s.value: s for s in Status}
OUTCOME_BY_VALUE: dict[str, Outcome] = {o.value: o for o in Outcome}


def _coerce_enum(cls: type[enum.StrEnum], value: object, name: str) -> object:
    # Adapters read enum columns back as plain text; accept exactly the member
    # names and leave anything else for the diff/validator to report.
    if isinstance(value, str) and not isinstance(value, cls):
        try:
            return cls(value)
        except ValueError:
            return value
    return value


class _Model:
    """Equality by the structural diff (C5, C9, C11), a repr safe at any depth, and no
    hash (``extra`` holds mutable JSON values): shared by the three model classes."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        return _equal(self, other)

    def __repr__(self) -> str:
        # The dataclass repr, but without recursion into deep unknown fields and detail.
        shown = ", ".join(
            f"{f.name}={short_repr(getattr(self, f.name), sys.maxsize)}"
            for f in fields(self)  # type: ignore[arg-type]
        )
        return f"{type(self).__name__}({shown})"

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ErrorInfo(_Model):
    """The error object of an attempt record."""

    type: str
    message: str
    detail: JSONValue = None
    stack: str | None = None
    extra: Mapping[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Attempt(_Model):
    """One execution of a task (``attempts[i]``)."""

    attempt_no: int
    started_at: datetime
    outcome: Outcome
    finished_at: datetime | None = None
    error: ErrorInfo | None = None
    extra: Mapping[str, JSONValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", _coerce_enum(Outcome, self.outcome, "outcome"))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Envelope(_Model):
    """A task envelope. ``attempts`` is kept as a tuple so the order is fixed (C12)."""

    id: str
    queue: str
    handler_ref: str
    payload: bytes
    payload_content_type: str
    status: Status
    created_at: datetime
    envelope_version: int = 1
    handler_version: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    attempt_count: int = 0
    redrive_count: int = 0
    next_attempt_at: datetime | None = None
    lease_expires_at: datetime | None = None
    attempts: Sequence[Attempt] = ()
    extra: Mapping[str, JSONValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", _coerce_enum(Status, self.status, "status"))
        if isinstance(self.attempts, list):
            object.__setattr__(self, "attempts", tuple(self.attempts))


def _no_difference(a: object, b: object) -> bool:
    raise RuntimeError("rdq_compliance.envelope._diff was not imported")  # pragma: no cover


_equal: Callable[[object, object], bool] = _no_difference
"""``not diff(a, b)``: installed by ``_diff`` (which imports this module), so the model
does not import the diff. Importing any module of the package imports both."""
