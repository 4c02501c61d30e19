"""The narrow examples' envelopes (``@requirement(..., narrow=True)``, issue 21 §2).

Some defects damage what every envelope holds: every instant shifted by a time zone,
the version stamped on read, the dotted header key of the base envelope refused, an
unknown field added to every read. No
order of the tests can put their own requirement's test first, since every test writes
those values. A narrow example judges only the differences the diagnosis table gives its
own requirement and runs before all other tests: each such defect then fails its own
narrow example first, and passes the others. :func:`test_first_looks_roundtrip_whole`
(``RDQ-RT-001``, in ``test_roundtrip``) judges the same envelopes whole, so nothing a
narrow example leaves aside goes unjudged.

Plain values only: instants at midnight (exact in seconds and in float days), ASCII
text, no empty value, no unknown field; each holds its own requirement's values only.
"""

from __future__ import annotations

from rdq_compliance import Attempt, Envelope, ErrorInfo, Outcome
from rdq_compliance.testing import T0, base_envelope

__all__ = ["FIRST_LOOKS", "PLAIN_ERROR", "first_look"]

_MIDNIGHT = T0.replace(hour=0, minute=0, second=0, microsecond=0)

PLAIN_ERROR = ErrorInfo(type="e.Plain", message="plain", stack="at plain")
"""An attempt's error that holds no requirement's values: an attempt without an error is
a trigger of its own (``null-error``, RDQ-RT-010), and so is a null stack (a NOT NULL
DEFAULT '' column reads it as "")."""


def _plain(n: int, **changes: object) -> Envelope:
    plain: dict[str, object] = {
        "created_at": _MIDNIGHT, "next_attempt_at": _MIDNIGHT,
        "headers": {"traceparent": "00-4bf9-01"},
        "attempts": (Attempt(attempt_no=1, started_at=_MIDNIGHT, finished_at=_MIDNIGHT,
                             outcome=Outcome.RETRYABLE_FAILURE, error=PLAIN_ERROR),),
    }
    return base_envelope(n, **(plain | changes))


FIRST_LOOKS: dict[str, Envelope] = {
    # RDQ-RT-004: model types and canonical wire form. The payload's base64 holds '+',
    # '/' and padding (a testee writing base64url fails here) and is ASCII (no
    # RDQ-RT-008 trigger).
    "exact-form": _plain(4, payload=b'{"order_id": 42, "note": "??>>~~"}'),
    # RDQ-VER-001: envelope_version 1 kept (a reader stamping its own version fails here).
    "version": _plain(5),
    # RDQ-RT-009: dotted and rdq. header keys (a store refusing dotted keys fails here).
    "dotted-keys": _plain(9, headers={"rdq.source": "kafka://t/0/1", "a.b.c": "d"}),
    # RDQ-UF-001: no unknown field written, none read (a store adding one to every read,
    # MongoDB's _id, fails here).
    "no-unknown-field": _plain(10),
}
"""Name -> the envelope of the narrow example of that name."""


def first_look(name: str) -> Envelope:
    """The envelope of the narrow example ``name`` (KeyError naming the known ones)."""
    try:
        return FIRST_LOOKS[name]
    except KeyError:
        raise KeyError(f"first look name={name!r}: expected one of {sorted(FIRST_LOOKS)}") from None
