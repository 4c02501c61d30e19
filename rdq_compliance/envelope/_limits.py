"""Numeric limits of envelope v1 (C1, C2, C5, C8a)."""

MESSAGE_LIMIT = 4_096
"""C1: error.message, in UTF-8 bytes, marker included."""
STACK_LIMIT = 65_536
"""C1: error.stack, in UTF-8 bytes, marker included."""
TRUNCATION_MARKER = "\u2026[truncated]"
"""C1: 14 bytes in UTF-8."""
MAX_ENVELOPE_BYTES = 1_048_576
"""C2: the default limit on the compact JSON encoding."""
NAME_MAX_CHARS = 240
"""C8a: queue and handler_ref."""
MAX_KNOWN_INT = 2**31 - 1
"""C5: known integer fields fit in 32 bits (signed, so Java's int holds them)."""
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
"""C5: integers in unknown fields and detail."""
