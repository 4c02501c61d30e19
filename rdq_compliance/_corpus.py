"""The golden fixture corpus: its loader.

The corpus is plain files (``fixtures/`` in the source tree, shipped in the
wheel as ``rdq_compliance/_fixtures``) so that SDKs in other languages can use
it without Python; ``fixtures/README.md`` documents the layout. This module
reads it for the kit; the tooling that keeps it tidy (formatter, generator) is a
development tool, ``python -m tests.corpus_tool``, not part of the runtime package.

It imports neither pytest, pluggy nor Hypothesis.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rdq_compliance

from .envelope._codec import decode
from .envelope._codes import ViolationCode
from .envelope._json import parse_json
from .envelope._model import Envelope, JSONValue

__all__ = [
    "CorpusError",
    "Fixture",
    "corpus_dir",
    "corpus_hash",
    "invalid_fixtures",
    "load_manifest",
    "valid_fixtures",
]

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 1

# The formatter writes known fields in the codec's canonical order (ENVELOPE_FIELDS,
# ATTEMPT_FIELDS, ERROR_FIELDS: the spec's concrete envelope), then unknown fields sorted.

_ENTRY_KEYS = (
    "id", "file", "envelope_version", "valid", "description", "clauses",
    "expected_code", "expected_pointer", "raw", "canonical", "generated",
)  # fmt: skip


class CorpusError(Exception):
    """The corpus on disk is broken (missing file, bad manifest entry, ...)."""


@dataclass(frozen=True)
class Fixture:
    """One golden fixture: a manifest entry plus the path of its file.

    ``raw`` fixtures are kept byte for byte (the formatter never rewrites them);
    ``canonical`` is false when the file leaves out optional known fields (C9),
    so its JSON differs from the canonical encoding by those ``null`` fields;
    ``generated`` fixtures are written by ``python -m rdq_compliance._corpus
    generate`` and must not be edited by hand.
    """

    id: str
    path: Path
    envelope_version: int
    valid: bool
    description: str
    clauses: tuple[str, ...]
    expected_code: str | None
    expected_pointer: str | None
    raw: bool
    canonical: bool = True
    generated: bool = False

    @property
    def file(self) -> str:
        """The path relative to the corpus directory, with ``/`` separators."""
        return f"v{self.envelope_version}/{'valid' if self.valid else 'invalid'}/{self.path.name}"

    def read_bytes(self) -> bytes:
        """The file's exact bytes."""
        return self.path.read_bytes()

    def text(self) -> str | bytes:
        """The file as text, or as bytes when it is not valid UTF-8 (on purpose)."""
        raw = self.read_bytes()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw

    def data(self) -> JSONValue:
        """The parsed JSON value (strict parser; raises InvalidEnvelope if malformed)."""
        return parse_json(self.read_bytes())

    def envelope(self) -> Envelope:
        """The decoded model of a valid fixture."""
        if not self.valid:
            raise CorpusError(f"fixture {self.id!r} is invalid on purpose; it has no envelope")
        return decode(self.read_bytes(), versions=(self.envelope_version,))


def corpus_dir() -> Path:
    """The corpus directory: the wheel's ``_fixtures`` or the source tree's ``fixtures``."""
    shipped = Path(rdq_compliance.__file__).parent / "_fixtures"
    if shipped.is_dir():
        return shipped
    source = Path(__file__).resolve().parent.parent / "fixtures"
    if source.is_dir():
        return source
    raise CorpusError(
        f"no fixture corpus found: neither {shipped} (installed wheel) nor {source} "
        "(source tree) exists; reinstall rdq-compliance"
    )


def load_manifest(directory: Path | None = None) -> list[Fixture]:
    """Every fixture of the manifest, in manifest order (sorted by id). Cached."""
    return list(_load(directory or corpus_dir()))


def valid_fixtures(version: int | None = None) -> list[Fixture]:
    """The valid fixtures, of one envelope version or of all."""
    return [f for f in load_manifest() if f.valid and version in (None, f.envelope_version)]


def invalid_fixtures(version: int | None = None) -> list[Fixture]:
    """The invalid fixtures, of one envelope version or of all."""
    return [f for f in load_manifest() if not f.valid and version in (None, f.envelope_version)]


def corpus_hash(directory: Path | None = None) -> str:
    """``sha256:<hex>`` over the manifest and every fixture file, in manifest order.

    Each file contributes its path, its length and its bytes, so moving bytes
    from one file to the next changes the hash.
    """
    return _hash(directory or corpus_dir())


@functools.cache
def _hash(directory: Path) -> str:
    digest = hashlib.sha256()
    manifest = (directory / MANIFEST_NAME).read_bytes()
    digest.update(len(manifest).to_bytes(8, "big") + manifest)
    for fixture in _load(directory):
        content = fixture.read_bytes()
        name = fixture.file.encode()
        digest.update(len(name).to_bytes(8, "big") + name)
        digest.update(len(content).to_bytes(8, "big") + content)
    return "sha256:" + digest.hexdigest()


@functools.cache
def _load(directory: Path) -> tuple[Fixture, ...]:
    path = directory / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CorpusError(f"cannot read the fixture manifest {path}: {exc}") from exc
    except ValueError as exc:
        raise CorpusError(f"the fixture manifest {path} is not valid JSON: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise CorpusError(
            f"{path}: expected an object with format={MANIFEST_FORMAT!r}, "
            f"got format={manifest.get('format') if isinstance(manifest, dict) else None!r}"
        )
    entries = manifest.get("fixtures")
    if not isinstance(entries, list):
        raise CorpusError(f"{path}: 'fixtures' must be a list, got {type(entries).__name__}")
    fixtures: list[Fixture] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        fixture = _fixture_from_entry(directory, path, index, entry)
        if fixture.id in seen:
            raise CorpusError(f"{path}: fixture id {fixture.id!r} appears twice")
        seen.add(fixture.id)
        fixtures.append(fixture)
    return tuple(fixtures)


def _fixture_from_entry(directory: Path, path: Path, index: int, entry: object) -> Fixture:
    where = f"{path}: fixtures[{index}]"
    if not isinstance(entry, dict):
        raise CorpusError(f"{where}: expected an object, got {type(entry).__name__}")
    missing = [key for key in _ENTRY_KEYS if key not in entry]
    if missing:
        raise CorpusError(f"{where} (id={entry.get('id')!r}): missing keys {missing}")
    types: dict[str, Any] = {
        "id": str, "file": str, "envelope_version": int, "valid": bool, "description": str,
        "clauses": list, "raw": bool, "canonical": bool, "generated": bool,
    }  # fmt: skip
    for key, expected in types.items():
        value = entry[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise CorpusError(
                f"{where} (id={entry['id']!r}): {key}={value!r} should be {expected.__name__}"
            )
    fid, file = entry["id"], entry["file"]
    kind = "valid" if entry["valid"] else "invalid"
    version = entry["envelope_version"]
    stem = file.rsplit("/", 1)[-1].removesuffix(".json")
    if file != f"v{version}/{kind}/{stem}.json" or fid != f"v{version}.{kind}.{stem}":
        raise CorpusError(
            f"{where}: id={fid!r} and file={file!r} do not match; expected "
            f"id 'v{version}.{kind}.<slug>' and file 'v{version}/{kind}/<slug>.json'"
        )
    code, pointer = entry["expected_code"], entry["expected_pointer"]
    if entry["valid"]:
        if code is not None or pointer is not None:
            raise CorpusError(f"{where} (id={fid!r}): a valid fixture has no expected_code/pointer")
    else:
        if code not in set(ViolationCode):
            raise CorpusError(
                f"{where} (id={fid!r}): expected_code={code!r} is not a ViolationCode"
            )
        if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
            raise CorpusError(
                f"{where} (id={fid!r}): expected_pointer={pointer!r} is not a JSON pointer"
            )
    clauses = entry["clauses"]
    if not clauses or not all(isinstance(c, str) and c for c in clauses):
        raise CorpusError(f"{where} (id={fid!r}): clauses={clauses!r} must be non-empty strings")
    fixture_path = directory / file
    if not fixture_path.is_file():
        raise CorpusError(
            f"{where} (id={fid!r}): the manifest references {file!r} but {fixture_path} "
            "does not exist; add the file or remove the entry"
        )
    return Fixture(
        id=fid,
        path=fixture_path,
        envelope_version=version,
        valid=entry["valid"],
        description=entry["description"],
        clauses=tuple(clauses),
        expected_code=code,
        expected_pointer=pointer,
        raw=entry["raw"],
        canonical=entry["canonical"],
        generated=entry["generated"],
    )


# --------------------------------------------------------------------------
# Formatting


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        keys = [key for key, _ in pairs]
        dup = next(key for key in keys if keys.count(key) > 1)
        raise ValueError(f"duplicate key {dup!r} (a fixture with duplicate keys must be raw)")
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (a fixture holding it must be raw)")
