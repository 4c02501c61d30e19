"""Envelope v1 core: model, canonical codec, validator, diff, truncation, ids.

This package imports neither pytest, pluggy nor Hypothesis, so SDK authors and
tools can use it alone.
"""

from ._clauses import clauses_for_pointer
from ._codec import decode, encode, from_json, to_json
from ._codes import CODE_CLAUSES, ViolationCode
from ._diff import Difference, diff, format_diff
from ._ids import is_canonical_id, new_id
from ._json import json_equal, parse_json
from ._limits import MAX_ENVELOPE_BYTES, MESSAGE_LIMIT, STACK_LIMIT, TRUNCATION_MARKER
from ._model import Attempt, Envelope, ErrorInfo, JSONValue, Outcome, Status
from ._truncate import truncate_message, truncate_stack, truncate_utf8
from ._validate import InvalidEnvelope, Violation, validate

__all__ = [
    "CODE_CLAUSES",
    "MAX_ENVELOPE_BYTES",
    "MESSAGE_LIMIT",
    "STACK_LIMIT",
    "TRUNCATION_MARKER",
    "Attempt",
    "Difference",
    "Envelope",
    "ErrorInfo",
    "InvalidEnvelope",
    "JSONValue",
    "Outcome",
    "Status",
    "Violation",
    "ViolationCode",
    "clauses_for_pointer",
    "decode",
    "diff",
    "encode",
    "format_diff",
    "from_json",
    "is_canonical_id",
    "json_equal",
    "new_id",
    "parse_json",
    "to_json",
    "truncate_message",
    "truncate_stack",
    "truncate_utf8",
    "validate",
]
