"""Shared test data for the core tests: the concrete envelope of wire-envelope.txt."""

from __future__ import annotations

import copy
import json
from typing import Any

# Copied verbatim from /work/shared/spec/wire-envelope.txt ("A concrete envelope").
SEED_TEXT = """{
  "envelope_version": 1,
  "id": "01J2ZK7Q8XW5H3N9G4T6B8RDQ0",
  "queue": "payments.charge",
  "handler_ref": "charge-payment",
  "handler_version": "v3",
  "payload": "eyJvcmRlcl9pZCI6IDQyfQ==",
  "payload_content_type": "application/json",
  "headers": {
    "traceparent": "00-4bf9...-01",
    "rdq.source": "kafka://payments/3/42351",
    "rdq.submitted_by": "checkout-service"
  },
  "status": "PENDING",
  "attempt_count": 2,
  "redrive_count": 0,
  "next_attempt_at": "2026-07-20T14:05:22.117Z",
  "lease_expires_at": null,
  "created_at": "2026-07-20T14:03:22.117Z",
  "attempts": [
    {
      "attempt_no": 1,
      "started_at": "2026-07-20T14:03:22.200Z",
      "finished_at": "2026-07-20T14:03:22.950Z",
      "outcome": "RETRYABLE_FAILURE",
      "error": {
        "type": "java.net.SocketTimeoutException",
        "message": "connect timed out after 500ms",
        "detail": null,
        "stack": "java.net.SocketTimeoutException: connect timed out\\n\\tat ..."
      }
    }
  ]
}"""

DELETE: Any = object()
"""Marker for ``mutate``: remove the member instead of setting it."""


def seed() -> dict[str, Any]:
    """A fresh parsed copy of the seed envelope."""
    return json.loads(SEED_TEXT)  # type: ignore[no-any-return]


def mutate(obj: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``obj`` with each ``"/json/pointer": value`` applied (RFC 6901)."""
    out = copy.deepcopy(obj)
    for pointer, value in changes.items():
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
        *parents, last = tokens
        target: Any = out
        for token in parents:
            target = target[int(token)] if isinstance(target, list) else target[token]
        if isinstance(target, list):
            target[int(last)] = value
        elif value is DELETE:
            del target[last]
        else:
            target[last] = value
    return out
