"""The storage-plugin interface: protocols, errors and the pluggy hooks."""

from ._protocol import (
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
from .hookspecs import hookimpl

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
    "hookimpl",
    "require_envelope_version",
]
