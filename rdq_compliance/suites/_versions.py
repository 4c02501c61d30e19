"""The versions of an id in the concurrency suite (C18), and which one a read returned.

Each id is rewritten by one writer lane only, so its writes are totally ordered
(version 0, 1, 2 …); every version differs from the others in every part (attempts,
headers, unknown fields, sizes), so a read that mixes two matches neither. A read is
matched to a version by its canonical JSON first, then (the same values in another
form) by the kit's diff. Kept apart from the checks so that their tests build the
same versions (``tests/testing/test_concurrency_machinery.py``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from rdq_compliance import Attempt, Envelope, ErrorInfo, Outcome, diff, encode
from rdq_compliance.testing import T0, base_envelope, ulid

__all__ = ["Key", "Op", "version"]


def version(n: int, k: int, tag: str = "") -> Envelope:
    """Version ``k`` of the envelope with id ``ulid(n)``: every part carries ``k`` and the
    sizes differ with it (1-3 attempts, 1-4 headers, unknown fields, payload and pad
    lengths), so a read mixing the parts of two versions equals neither."""
    label = f"{tag}v{k}"
    attempts = tuple(
        Attempt(attempt_no=i + 1, started_at=T0, finished_at=T0,
                outcome=Outcome.RETRYABLE_FAILURE,
                error=ErrorInfo(type="e.Concurrent", message=f"{label} attempt {i + 1}",
                                extra={"x_version": k}),
                extra={"x_version": k})
        for i in range(1 + k % 3)
    )
    return dataclasses.replace(
        base_envelope(n),
        queue=f"q.{label.lower()}",
        payload=f"{label};".encode() * (1 + (k % 7) * 40),
        headers={f"h{j}": label for j in range(1 + k % 4)},
        attempts=attempts,
        attempt_count=len(attempts),
        extra={"x_version": k, "x_tag": tag, "x_pad": "p" * ((k % 5) * 120)},
    )


@dataclass
class Op:
    lane: str
    kind: str
    """"write" or "read"."""
    id: str
    start: int
    end: int
    k: int | None = None
    """The version written, or the version a read matched (None: no version)."""
    got: Envelope | None = None
    """What a read returned."""


@dataclass
class Key:
    """One id of one namespace: its versions, in the order its one writer wrote them."""

    ns: str
    n: int
    tag: str = ""
    writes: list[Op] = field(default_factory=list)
    texts: dict[str, int] = field(default_factory=dict)
    """Canonical JSON of each version -> k (the fast path of matching a read)."""

    @property
    def id(self) -> str:
        return ulid(self.n)

    def make(self, k: int) -> Envelope:
        env = version(self.n, k, self.tag)
        self.texts[encode(env)] = k
        return env

    def mixture(self, got: Envelope) -> str:
        """What a read that matched no version holds (a class of the diagnosis table):
        ``crossed`` when a part carries another namespace's tag, ``torn`` when its
        parts carry two of this id's versions, "" when the parts tell neither."""
        try:
            tags, versions = _labels(got)
        except (AttributeError, TypeError):  # a read of the wrong shape: its check says so
            return ""
        if tags - {self.tag.lower()}:
            return "crossed"
        return "torn" if len(versions) > 1 else ""

    def match(self, got: Envelope | None) -> int | None:
        if got is None:
            return None
        try:
            k = self.texts.get(encode(got))
        except Exception:  # not encodable: it matches nothing
            return None
        if k is not None:
            return k
        # Same values, different form (key order, 1.0 for 1, …): the kit's diff decides,
        # first for the version the envelope names, then (a mix, say) for every version.
        named = got.extra.get("x_version") if isinstance(got.extra, dict) else None
        if type(named) is int and named in self.texts.values() and not diff(
                version(self.n, named, self.tag), got):
            return named
        for k in self.texts.values():
            if not diff(version(self.n, k, self.tag), got):
                return k
        return None


_LABEL = re.compile(r"([a-z]*)v(\d+)")


def _labels(got: Envelope) -> tuple[set[str], set[int]]:
    """The tags (lowercase: the queue holds them so) and the versions ``k`` that the
    parts of ``got`` carry (:func:`version`'s label, ``x_tag``, ``x_version``); parts
    that carry none are left out."""
    texts: list[object] = [got.queue.removeprefix("q."),
                           got.payload.split(b";", 1)[0].decode("utf-8", "replace"),
                           *got.headers.values()]
    texts += [a.error.message.split(" ", 1)[0] for a in got.attempts if a.error is not None]
    tags: set[str] = set()
    versions: set[int] = set()
    for text in texts:
        m = _LABEL.fullmatch(text.lower()) if isinstance(text, str) else None
        if m is not None:
            tags.add(m.group(1))
            versions.add(int(m.group(2)))
    extras = [got.extra, *(a.extra for a in got.attempts)]
    for extra in extras:
        if isinstance(extra, dict) and type(extra.get("x_version")) is int:
            versions.add(extra["x_version"])
    if isinstance(got.extra, dict) and isinstance(got.extra.get("x_tag"), str):
        tags.add(got.extra["x_tag"].lower())
    return tags, versions
