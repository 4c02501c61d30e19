"""Violation records and the exception carrying them (shared by _json and _validate)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._codes import ViolationCode
from ._deep import SURROGATE as _SURROGATE

__all__ = ["InvalidEnvelope", "Violation", "pointer_key", "pointer_token"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: its stable code, where (RFC 6901 pointer) and why."""

    code: ViolationCode
    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer}: {self.code}: {self.message}"


class InvalidEnvelope(ValueError):
    """Raised when a text or object is not a valid envelope; carries every violation."""

    def __init__(self, violations: Iterable[Violation]) -> None:
        self.violations: tuple[Violation, ...] = tuple(violations)
        super().__init__(self._summary())

    def _summary(self) -> str:
        if not self.violations:
            return "invalid envelope"
        head = "; ".join(str(v) for v in self.violations[:5])
        more = len(self.violations) - 5
        return f"invalid envelope: {head}" + (f"; … and {more} more" if more > 0 else "")


def pointer_token(key: str) -> str:
    """Escape one reference token per RFC 6901 (``~`` -> ``~0``, ``/`` -> ``~1``).

    A lone surrogate cannot be written as UTF-8, so it is shown as ``\\udXXX``
    text: pointers must stay printable even when they point at the bad key.
    """
    if "~" in key or "/" in key:
        key = key.replace("~", "~0").replace("/", "~1")
    if _SURROGATE.search(key):
        key = key.encode("utf-8", "backslashreplace").decode("utf-8")
    return key


def pointer_key(token: str) -> str:
    """The key one reference token names: :func:`pointer_token` undone (a lone surrogate
    shown as text stays text)."""
    return token.replace("~1", "/").replace("~0", "~") if "~" in token else token
