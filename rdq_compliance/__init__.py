"""rdq-compliance: the compliance kit for rdq storage plugins.

The public surface, one path per name (in the style of pluggy's ``__init__``): the
envelope core (model, codec, validator, diff, truncation, ids) and the storage-plugin
interface, re-exported here from their private modules (the interface lazily:
importing the core alone never loads pluggy). Hypothesis strategies live in
:mod:`rdq_compliance.strategies`; the pytest plugin loads itself through the
``pytest11`` entry point.
"""

from typing import TYPE_CHECKING

from ._spec import spec_dir
from ._version import __version__
from .envelope._codec import decode, encode, from_json, to_json
from .envelope._codes import CODE_CLAUSES, ViolationCode
from .envelope._diff import diff
from .envelope._difference import Difference, format_diff
from .envelope._ids import is_canonical_id, new_id
from .envelope._json import json_equal, parse_json
from .envelope._limits import (
    MAX_ENVELOPE_BYTES,
    MESSAGE_LIMIT,
    NAME_MAX_CHARS,
    STACK_LIMIT,
    TRUNCATION_MARKER,
)
from .envelope._model import Attempt, Envelope, ErrorInfo, JSONValue, Outcome, Status
from .envelope._truncate import truncate_message, truncate_stack, truncate_utf8
from .envelope._validate import InvalidEnvelope, Violation, validate

if TYPE_CHECKING:  # the storage interface loads pluggy: only when a name of it is used
    from .storage._protocol import (
        NAMESPACE_PATTERN,
        Adapter,
        Capability,
        ErrorCode,
        OptionSpec,
        Storage,
        StorageError,
        StorageInfo,
        StorageUnavailable,
        require_envelope_version,
    )
    from .storage.hookspecs import hookimpl


def __getattr__(name: str) -> object:
    # PEP 562: ``from rdq_compliance import Envelope`` (the core alone, for SDK authors
    # and tools) must not load pluggy; the storage names load it on first use.
    if name == "hookimpl":
        from .storage import hookspecs

        return hookspecs.hookimpl
    if name in _LAZY:
        from .storage import _protocol

        return getattr(_protocol, name)
    raise AttributeError(f"module 'rdq_compliance' has no attribute {name!r}")


__all__ = [
    "CODE_CLAUSES",
    "MAX_ENVELOPE_BYTES",
    "MESSAGE_LIMIT",
    "NAMESPACE_PATTERN",
    "NAME_MAX_CHARS",
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
