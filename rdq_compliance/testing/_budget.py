"""One shrink per cause (issue 21 §3): what a failing property may still cost.

One storage defect fails many properties with the same symptom (timestamps cut to the
second fail every property that writes a timestamp). Shrinking each of them again costs
hundreds of plugin calls apiece and shows nothing new. So:

- the first property of a run that fails with a given *signature* (see
  :func:`failure_signature`) is shrunk as usual, to a minimal example, and establishes
  that signature for its plugin in this process (an xdist worker keeps its own);
- a later property whose check fails with an established signature stops at once: the
  check raises :class:`Unshrunk` (a ``BaseException``: Hypothesis' engine treats only
  ``Exception``, ``SystemExit``, ``GeneratorExit`` and pytest's ``Failed`` as failures to
  shrink, everything else ends the run as it is), and the property re-raises the
  original failure, unshrunk, with a note naming the test that established the cause;
- any shrink stops after :data:`SHRINK_CALLS` examples after its first failure (a count,
  not seconds: the same seed stops at the same example on every machine), keeping the
  last failing example with the first failure's signature.

Nothing is loosened: every failing check still fails its test with its own message,
symptom and saved case; only the search for a smaller example is cut short.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from ..reporting._symptom import cause_key
from ._failures import CheckFailed, find_failure
from ._symptoms import symptom_of_exception

__all__ = [
    "SHRINK_CALLS",
    "Established",
    "Unshrunk",
    "established",
    "failure_signature",
]

SHRINK_CALLS = 100
"""Examples one property or state machine may run after its first failure before its
shrink stops (the last failing example found is reported).

Measured on the zoo's one-defect mutants (ci): a shrink of a failing round trip takes
70 to 190 examples at 50-130 ms each (generating and writing whole envelopes); 100 keeps
most shrinks whole and halves the longest. A count, not seconds: the same seed stops at
the same example on every machine."""


class Unshrunk(BaseException):
    """A failing check that will not be shrunk (again); carries the failure.

    A ``BaseException`` on purpose: Hypothesis does not catch it, so the property ends at
    this example. :func:`~rdq_compliance.testing._properties.for_all` turns it back into
    ``failure``; it never reaches pytest."""

    def __init__(self, failure: BaseException, note: str, drawn: dict[str, Any]) -> None:
        super().__init__(note)
        self.failure = failure
        self.note = note
        self.drawn = drawn
        """The failing example's drawn values, for the saved case."""


def failure_signature(exc: BaseException) -> str | None:
    """What makes two failures one cause, as one line; None for no failure of a check
    (Hypothesis' own control exceptions, pytest outcomes): those are never cut short.

    The key the root causes group by (``reporting._symptom.cause_key``) of the failure's
    symptom (``testing._symptoms.symptom_of_exception``): for a round-trip difference the
    table's row, the class and the nature of the change (U+0000 stripped from any
    string is one signature); for a refusal or another exception the operation, type or
    C17 code and masked message. An exception group: its first check failure, else its
    first exception.
    """
    if isinstance(exc, BaseExceptionGroup):
        inner: BaseException | None = find_failure(exc, CheckFailed)
        if inner is None and exc.exceptions:
            inner = exc.exceptions[0]
        return None if inner is None else failure_signature(inner)
    if not isinstance(exc, Exception) or _is_hypothesis_control(exc):
        return None
    row, what, nature = cause_key(symptom_of_exception(exc))
    if not row:  # no row of the table: the kind (what) at its place (nature)
        return f"{what} at {nature or 'a defined field'}"
    return f"{what or 'any'}{f' ({nature})' if nature else ''} by row {row}"


def _is_hypothesis_control(exc: BaseException) -> bool:
    # assume()/reject() and friends steer the search; they are not failures of the check.
    from hypothesis.errors import HypothesisException

    return isinstance(exc, HypothesisException)


@dataclass
class Established:
    """The signatures established in this process for one plugin: signature -> the node
    id of the test whose (shrunk) failure established it."""

    by_signature: dict[str, str] = field(default_factory=dict)

    def first(self, signature: str | None) -> str | None:
        return None if signature is None else self.by_signature.get(signature)

    def establish(self, signature: str | None, nodeid: str) -> None:
        if signature is not None:
            self.by_signature.setdefault(signature, nodeid)


_ESTABLISHED: weakref.WeakKeyDictionary[object, Established] = weakref.WeakKeyDictionary()


def established(runtime: object) -> Established:
    """The causes established for the plugin behind ``runtime`` (one per plugin per
    process; forgotten with the runtime)."""
    found = _ESTABLISHED.get(runtime)
    if found is None:
        found = _ESTABLISHED[runtime] = Established()
    return found
