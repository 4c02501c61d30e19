"""The golden fixture corpus: its loader.

The corpus is plain files (``fixtures/`` in the source tree, shipped in the
wheel as ``rdq_compliance/_fixtures``) so that SDKs in other languages can use
it without Python; ``fixtures/README.md`` documents the layout. This module
reads it for the kit; the tooling that keeps it tidy (formatter, generator) is a
development tool, ``python -m tests.corpus_tool``, not part of the runtime package.

It imports neither pytest, pluggy nor Hypothesis; ``jsonschema`` (the manifest's
shape is ``manifest.schema.json``, shipped beside it) only to check a manifest that has
not passed that check before on this machine (see :func:`_check_schema_once`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rdq_compliance

from ._cache import cache_dir
from .envelope._codec import decode
from .envelope._codes import ViolationCode
from .envelope._deep import short_repr
from .envelope._json import parse_json
from .envelope._model import Envelope, JSONValue

__all__ = [
    "CorpusError",
    "Fixture",
    "corpus_dir",
    "corpus_hash",
    "invalid_fixtures",
    "load_manifest",
    "manifest_schema",
    "valid_fixtures",
]

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA_NAME = "manifest.schema.json"
"""The manifest's JSON Schema, beside it in the corpus (``fixtures/`` and the wheel's
``rdq_compliance/_fixtures``): the reference for the manifest's shape."""
MANIFEST_FORMAT = 1

# The formatter writes known fields in the codec's canonical order (ENVELOPE_FIELDS,
# ATTEMPT_FIELDS, ERROR_FIELDS: the spec's concrete envelope), then unknown fields sorted.

# The order the formatter writes an entry's keys in: the schema's (a test holds them equal).
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
    ``generated`` fixtures are written by ``python -m tests.corpus_tool generate``
    and must not be edited by hand.
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
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CorpusError(f"cannot read the fixture manifest {path}: {exc}") from exc
    try:
        manifest = json.loads(text, object_pairs_hook=functools.partial(_unique_keys, path))
    except ValueError as exc:
        raise CorpusError(f"the fixture manifest {path} is not valid JSON: {exc}") from exc
    _check_schema_once(path, text, manifest)
    # What the schema cannot say: id and file agree with the entry, codes come from the
    # core, files exist, ids are unique.
    fixtures: list[Fixture] = []
    seen: set[str] = set()
    for index, entry in enumerate(manifest["fixtures"]):
        fixture = _fixture_from_entry(directory, path, index, entry)
        if fixture.id in seen:
            raise CorpusError(
                f"{path}: fixtures[{index}] (id={fixture.id!r}): the id appears twice; "
                "give each fixture its own id"
            )
        seen.add(fixture.id)
        fixtures.append(fixture)
    return tuple(fixtures)


def manifest_schema() -> dict[str, Any]:
    """The manifest's JSON Schema, ``manifest.schema.json`` beside the kit's own manifest
    (shipped with the corpus): the reference for the manifest's shape."""
    schema: dict[str, Any] = json.loads(
        (corpus_dir() / MANIFEST_SCHEMA_NAME).read_text(encoding="utf-8")
    )
    return schema


@functools.cache
def _validator() -> Any:
    # Imported on the first manifest load, never by `import rdq_compliance`: about 30 ms
    # of CPU to import and 25 ms to check the 222 entries, once per process.
    import jsonschema

    return jsonschema.Draft202012Validator(manifest_schema())


def _check_schema_once(path: Path, text: str, manifest: object) -> None:
    """:func:`_check_schema`, skipped for the kit's own manifest when, with the same schema,
    it passed before on this machine: a marker named by the digest of both files' bytes, in
    the kit's cache directory. The check (jsonschema's import and the 222 entries) is about a
    seventh of a kit process' start-up, paid by every run and every xdist worker; other
    bytes are a new digest, checked again. Without a writable cache it runs every time."""
    marker = _schema_marker(path, text)
    if marker is not None and marker.is_file():
        return
    _check_schema(path, manifest)
    if marker is not None:
        with contextlib.suppress(OSError):  # a cache that cannot be written costs time only
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()


def _schema_marker(path: Path, text: str) -> Path | None:
    """The marker of the kit's own manifest ``text`` checked against the shipped schema, or
    None for a corpus being written (``tests.corpus_tool --dir``) or a schema that cannot be
    read (the check then says what is wrong)."""
    try:
        shipped = corpus_dir()
        if path.parent.resolve() != shipped.resolve():
            return None
        schema = (shipped / MANIFEST_SCHEMA_NAME).read_bytes()  # the one it checks with
    except (CorpusError, OSError):
        return None
    data = text.encode("utf-8")
    digest = hashlib.sha256(len(schema).to_bytes(8, "big") + schema + data).hexdigest()
    return cache_dir() / "checked-manifests" / digest


def _check_schema(path: Path, manifest: object) -> None:
    errors = list(_validator().iter_errors(manifest))
    if not errors:
        return
    import jsonschema

    # The first broken entry (the manifest's own keys before any entry), and of its
    # errors the one jsonschema ranks first.
    first = min(_entry_index(e) for e in errors)
    error = jsonschema.exceptions.best_match(e for e in errors if _entry_index(e) == first)
    raise CorpusError(_schema_message(path, manifest, error))


def _entry_index(error: Any) -> int:
    where = list(error.absolute_path)
    return where[1] if len(where) > 1 and where[0] == "fixtures" else -1


_JSON_TYPES = {"object": "an object", "array": "an array", "string": "a string",
               "integer": "an integer", "boolean": "true or false", "null": "null"}


def _schema_message(path: Path, manifest: Any, error: Any) -> str:
    """One line: the manifest, the entry (index, id), the field, its value, the rule."""
    where, field = f"{path}", list(error.absolute_path)
    index = _entry_index(error)
    if index >= 0:
        entry = manifest["fixtures"][index]
        fid = entry.get("id") if isinstance(entry, dict) else None
        where += f": fixtures[{index}] (id={fid!r})"
        field = field[2:]
    name = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in field).lstrip(".")
    rule, value = error.validator, error.validator_value
    shown = f"{name}={_short(error.instance)}"
    if rule == "required":
        problem = f"missing keys {[key for key in value if key not in error.instance]}"
    elif rule == "additionalProperties":
        known = error.schema.get("properties", {})
        problem = (f"unknown keys {[key for key in error.instance if key not in known]}; "
                   f"the keys are {list(known)}")
    elif not name and rule == "type":
        problem = f"expected {_JSON_TYPES.get(value, value)}, got {type(error.instance).__name__}"
    elif rule == "type":
        types = [value] if isinstance(value, str) else value
        problem = f"{shown} should be {' or '.join(_JSON_TYPES.get(t, t) for t in types)}"
    elif rule == "const":
        problem = f"{shown} should be {value!r}"
    elif rule == "pattern":
        problem = f"{shown} does not match {value!r}"
    elif rule in ("minLength", "minItems"):
        problem = f"{shown} must not be empty"
    elif rule == "minimum":
        problem = f"{shown} should be at least {value!r}"
    else:  # a rule added to the schema later: jsonschema's own words
        problem = f"{shown}: {error.message}"
    # A field's description says what is expected (the manifest's and an entry's own
    # describe the whole, no help for one key).
    hint = error.schema.get("description") if name and isinstance(error.schema, dict) else None
    return f"{where}: {problem}" + (f"; {hint}" if hint else "")


def _short(value: object, limit: int = 80) -> str:
    text = short_repr(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique_keys(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys; a manifest must not hide one.
    dup = _duplicate_key(pairs)
    if dup is not None:
        fid = dict(pairs).get("id")
        within = f" (the object with id={fid!r})" if isinstance(fid, str) else ""
        raise CorpusError(f"{path}: key {dup!r} appears twice in one object{within}; keep one")
    return dict(pairs)


def _duplicate_key(pairs: list[tuple[str, Any]]) -> str | None:
    keys = [key for key, _ in pairs]
    if len(set(keys)) == len(keys):
        return None
    return next(key for key in keys if keys.count(key) > 1)


def _fixture_from_entry(directory: Path, path: Path, index: int, entry: dict[str, Any]) -> Fixture:
    """An entry the schema accepted, checked for what the schema cannot express."""
    fid, file = entry["id"], entry["file"]
    where = f"{path}: fixtures[{index}]"
    kind = "valid" if entry["valid"] else "invalid"
    version = entry["envelope_version"]
    stem = file.rsplit("/", 1)[-1].removesuffix(".json")
    if file != f"v{version}/{kind}/{stem}.json" or fid != f"v{version}.{kind}.{stem}":
        raise CorpusError(
            f"{where}: id={fid!r} and file={file!r} do not match; expected "
            f"id 'v{version}.{kind}.<slug>' and file 'v{version}/{kind}/<slug>.json'"
        )
    code = entry["expected_code"]
    if not entry["valid"] and code not in set(ViolationCode):
        raise CorpusError(
            f"{where} (id={fid!r}): expected_code={code!r} is not a ViolationCode; use one "
            "of rdq_compliance.ViolationCode"
        )
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
        clauses=tuple(entry["clauses"]),
        expected_code=code,
        expected_pointer=entry["expected_pointer"],
        raw=entry["raw"],
        canonical=entry["canonical"],
        generated=entry["generated"],
    )


# --------------------------------------------------------------------------
# Formatting


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    dup = _duplicate_key(pairs)
    if dup is not None:
        raise ValueError(f"duplicate key {dup!r} (a fixture with duplicate keys must be raw)")
    return dict(pairs)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (a fixture holding it must be raw)")
