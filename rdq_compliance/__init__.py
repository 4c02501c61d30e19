"""rdq-compliance: the compliance kit for rdq storage plugins.

The envelope core (model, codec, validator, diff, truncation, ids) and the
storage-plugin interface are re-exported here (the interface lazily: importing the
core alone never loads pluggy). Hypothesis strategies live in
:mod:`rdq_compliance.strategies`; the pytest plugin loads itself through the
``pytest11`` entry point.
"""

from typing import TYPE_CHECKING

from ._spec import spec_dir
from ._version import __version__
from .envelope import (
    CODE_CLAUSES,
    MAX_ENVELOPE_BYTES,
    MESSAGE_LIMIT,
    STACK_LIMIT,
    TRUNCATION_MARKER,
    Attempt,
    Difference,
    Envelope,
    ErrorInfo,
    InvalidEnvelope,
    JSONValue,
    Outcome,
    Status,
    Violation,
    ViolationCode,
    decode,
    diff,
    encode,
    format_diff,
    from_json,
    is_canonical_id,
    json_equal,
    new_id,
    parse_json,
    to_json,
    truncate_message,
    truncate_stack,
    truncate_utf8,
    validate,
)

if TYPE_CHECKING:  # the storage interface loads pluggy: only when a name of it is used
    from .storage import (
        NAMESPACE_PATTERN,
        Adapter,
        Capability,
        ErrorCode,
        OptionSpec,
        Storage,
        StorageError,
        StorageInfo,
        StorageUnavailable,
        hookimpl,
        require_envelope_version,
    )



def __getattr__(name: str) -> object:
    # PEP 562: ``import rdq_compliance.envelope`` (the core alone, for SDK authors and
    # tools) must not load pluggy; the storage names load it on first use.
    if name in _LAZY:
        from . import storage

        return getattr(storage, name)
    raise AttributeError(f"module 'rdq_compliance' has no attribute {name!r}")


__all__ = [
    "CODE_CLAUSES",
    "MAX_ENVELOPE_BYTES",
    "MESSAGE_LIMIT",
    "NAMESPACE_PATTERN",
    "STACK_LIMIT",
    "TRUNCATION_MARKER",
    "Adapter",
    "Attempt",
    "Capability",
    "Difference",
    "Envelope",
    "ErrorCode",
    "ErrorInfo",
    "InvalidEnvelope",
    "JSONValue",
    "OptionSpec",
    "Outcome",
    "Status",
    "Storage",
    "StorageError",
    "StorageInfo",
    "StorageUnavailable",
    "Violation",
    "ViolationCode",
    "__version__",
    "decode",
    "diff",
    "encode",
    "format_diff",
    "from_json",
    "hookimpl",
    "is_canonical_id",
    "json_equal",
    "new_id",
    "parse_json",
    "require_envelope_version",
    "spec_dir",
    "to_json",
    "truncate_message",
    "truncate_stack",
    "truncate_utf8",
    "validate",
]

# The names of __all__ this module does not bind itself: the storage interface's.
_LAZY = frozenset(__all__) - set(globals())
