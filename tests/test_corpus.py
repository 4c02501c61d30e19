"""The golden fixture corpus: manifest integrity, every fixture against the
validator and the codec, the formatter and generator, and the boundary facts
the corpus promises (checked with plain json/len, not with the core)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rdq_compliance import ViolationCode, _corpus, decode, encode, json_equal, parse_json, validate
from rdq_compliance._corpus import CorpusError, Fixture
from rdq_compliance.envelope._limits import (
    MAX_ENVELOPE_BYTES,
    MESSAGE_LIMIT,
    STACK_LIMIT,
    TRUNCATION_MARKER,
)
from tests import corpus_tool

FIXTURES = _corpus.load_manifest()
VALID = _corpus.valid_fixtures()
INVALID = _corpus.invalid_fixtures()
SPEC = Path("/work/shared/spec/wire-envelope.txt")
REPO = Path(__file__).resolve().parents[1]


def by_id(fixture_id: str) -> Fixture:
    return next(f for f in FIXTURES if f.id == fixture_id)


def ids(fixtures: list[Fixture]) -> list[str]:
    return [f.id for f in fixtures]


# ---------------------------------------------------------------- manifest


def test_corpus_dir_is_the_source_tree_in_an_editable_install() -> None:
    assert _corpus.corpus_dir() == Path(__file__).resolve().parents[1] / "fixtures"


def test_manifest_lists_exactly_the_files_on_disk() -> None:
    root = _corpus.corpus_dir()
    on_disk = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.name not in {"manifest.json", "manifest.schema.json", "README.md"}
    }
    listed = {f.file for f in FIXTURES}
    assert on_disk - listed == set(), "orphan files not in manifest.json"
    assert listed - on_disk == set(), "manifest entries without a file"
    assert all(f.path.is_file() for f in FIXTURES)


def test_ids_are_unique_sorted_and_stable_looking() -> None:
    fixture_ids = ids(FIXTURES)
    assert len(fixture_ids) == len(set(fixture_ids))
    assert fixture_ids == sorted(fixture_ids)
    for f in FIXTURES:
        kind = "valid" if f.valid else "invalid"
        assert re.fullmatch(rf"v{f.envelope_version}\.{kind}\.[a-z0-9]+(-[a-z0-9]+)*", f.id)
        assert f.path.name == f.id.rsplit(".", 1)[1] + ".json"


def test_corpus_is_large_enough() -> None:
    assert len(VALID) >= 45
    assert len(INVALID) >= 45
    assert _corpus.valid_fixtures(1) == VALID
    assert _corpus.valid_fixtures(2) == []
    assert _corpus.invalid_fixtures(1) == INVALID


def test_valid_fixtures_have_distinct_envelope_ids() -> None:
    # So a suite may write every valid fixture into one namespace.
    envelope_ids = [f.envelope().id for f in VALID]
    assert len(envelope_ids) == len(set(envelope_ids))


def test_every_violation_code_has_an_invalid_fixture() -> None:
    covered = {f.expected_code for f in INVALID}
    assert {str(code) for code in ViolationCode} - covered == set()


def test_every_data_clause_is_covered() -> None:
    # C13-C15 are storage semantics, not data; everything else has fixtures.
    clauses = {c for f in FIXTURES for c in f.clauses}
    wanted = {f"C{n}" for n in range(1, 13)} | {"C8a", "C16", "C17"}
    assert wanted - clauses == set()
    sections = {c for c in clauses if c.startswith("WE:")}
    assert {
        "WE:A concrete envelope",
        "WE:Canonical encoding",
        "WE:Field notes",
        "WE:The attempt record",
        "WE:Evolution rules",
    } <= sections


def test_corpus_hash_is_stable_and_prefixed() -> None:
    value = _corpus.corpus_hash()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", value)
    assert _corpus.corpus_hash() == value


# ---------------------------------------------------------------- against the core


@pytest.mark.parametrize("fixture", VALID, ids=ids(VALID))
def test_valid_fixture_validates_and_round_trips(fixture: Fixture) -> None:
    raw = fixture.read_bytes()
    assert [str(v) for v in validate(raw)] == []
    envelope = decode(raw)
    assert envelope.envelope_version == fixture.envelope_version
    written = parse_json(raw)
    encoded = encode(envelope)
    assert validate(encoded) == []
    assert decode(encoded) == envelope
    back = parse_json(encoded)
    # A non-canonical fixture leaves out optional fields; the canonical
    # encoding carries them as null (C9), and nothing else may differ.
    assert json_equal(back, written) is fixture.canonical
    assert json_equal(back, _with_nulls(written))


def _with_nulls(value: object) -> object:
    assert isinstance(value, dict)
    env = dict(value)
    for key in ("handler_version", "next_attempt_at", "lease_expires_at"):
        env.setdefault(key, None)
    attempts = []
    for attempt in env["attempts"]:
        attempt = {"finished_at": None, "error": None, **attempt}
        if attempt["error"] is not None:
            attempt["error"] = {"detail": None, "stack": None, **attempt["error"]}
        attempts.append(attempt)
    env["attempts"] = attempts
    return env


@pytest.mark.parametrize("fixture", INVALID, ids=ids(INVALID))
def test_invalid_fixture_gives_exactly_its_violation(fixture: Fixture) -> None:
    violations = validate(fixture.read_bytes())
    got = [(str(v.code), v.pointer) for v in violations]
    assert got == [(fixture.expected_code, fixture.expected_pointer)], [
        str(v) for v in violations
    ]


def test_seed_example_is_the_spec_text() -> None:
    if not SPEC.is_file():
        pytest.skip(f"{SPEC} is not on this machine")
    match = re.search(r"A concrete envelope\n\n(\{\n.*?\n\})\n", SPEC.read_text("utf-8"), re.S)
    assert match is not None
    seed = by_id("v1.valid.seed-example")
    assert seed.raw
    assert seed.read_bytes() == (match.group(1) + "\n").encode()
    assert json_equal(parse_json(match.group(1)), seed.data())


# ---------------------------------------------------------------- boundaries


def _error(fixture_id: str) -> dict[str, object]:
    data = json.loads(by_id(fixture_id).read_bytes())
    error: dict[str, object] = data["attempts"][0]["error"]
    return error


def _nbytes(value: object) -> int:
    assert isinstance(value, str)
    return len(value.encode("utf-8"))


@pytest.mark.parametrize(
    ("fixture_id", "field", "size", "ends_with_marker", "before_marker"),
    [
        ("v1.valid.message-4096-ascii-truncated", "message", MESSAGE_LIMIT, True, None),
        ("v1.valid.message-4096-multibyte-before-marker", "message", MESSAGE_LIMIT, True, "😀"),
        ("v1.valid.message-multibyte-dropped-at-cut", "message", MESSAGE_LIMIT - 3, True, None),
        ("v1.valid.message-4096-untruncated-multibyte", "message", MESSAGE_LIMIT, False, None),
        ("v1.valid.stack-65536-ascii-truncated", "stack", STACK_LIMIT, True, None),
        ("v1.valid.stack-65536-multibyte-before-marker", "stack", STACK_LIMIT, True, "€"),
        ("v1.invalid.message-4097-bytes", "message", MESSAGE_LIMIT + 1, False, None),
        ("v1.invalid.message-4097-bytes-multibyte", "message", MESSAGE_LIMIT + 1, False, None),
        ("v1.invalid.message-4097-bytes-with-marker", "message", MESSAGE_LIMIT + 1, True, None),
        ("v1.invalid.stack-65537-bytes", "stack", STACK_LIMIT + 1, False, None),
    ],
)
def test_truncation_fixtures_have_their_exact_sizes(
    fixture_id: str, field: str, size: int, ends_with_marker: bool, before_marker: str | None
) -> None:
    value = _error(fixture_id)[field]
    assert isinstance(value, str)
    assert _nbytes(value) == size
    assert value.endswith(TRUNCATION_MARKER) is ends_with_marker
    if before_marker is not None:
        assert value.removesuffix(TRUNCATION_MARKER).endswith(before_marker)


def test_short_value_ending_with_marker_is_short() -> None:
    error = _error("v1.valid.short-values-ending-with-marker")
    assert error["message"] == "timeout" + TRUNCATION_MARKER
    assert error["stack"] == TRUNCATION_MARKER


@pytest.mark.parametrize(
    ("fixture_id", "size"),
    [("v1.valid.size-at-limit", MAX_ENVELOPE_BYTES), ("v1.invalid.size-over-limit",
                                                       MAX_ENVELOPE_BYTES + 1)],
)
def test_size_fixtures_have_their_exact_compact_size(fixture_id: str, size: int) -> None:
    data = json.loads(by_id(fixture_id).read_bytes())
    compact = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    assert len(compact) == size
    assert all(key in data for key in corpus_tool.ENVELOPE_FIELDS)  # nothing added on encode


def test_size_at_limit_is_accepted_by_the_validators_own_measure() -> None:
    envelope = by_id("v1.valid.size-at-limit").envelope()
    assert len(encode(envelope).encode()) == MAX_ENVELOPE_BYTES


def test_long_history_keeps_redriven_attempt_numbers() -> None:
    data = json.loads(by_id("v1.valid.long-history-200-attempts").read_bytes())
    numbers = [a["attempt_no"] for a in data["attempts"]]
    assert len(numbers) == 200
    assert numbers[:12] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2]


def test_payload_all_bytes_decodes_to_every_byte() -> None:
    assert by_id("v1.valid.payload-all-bytes").envelope().payload == bytes(range(256))
    assert by_id("v1.valid.payload-empty").envelope().payload == b""


def test_raw_fixture_text_is_bytes_only_when_not_utf8() -> None:
    assert isinstance(by_id("v1.invalid.utf8-invalid-byte").text(), bytes)
    assert isinstance(by_id("v1.valid.seed-example").text(), str)


def test_envelope_of_an_invalid_fixture_is_refused() -> None:
    with pytest.raises(CorpusError, match="invalid on purpose"):
        by_id("v1.invalid.version-2").envelope()


# ---------------------------------------------------------------- formatter and loader


def test_formatter_and_generator_checks_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert corpus_tool.main(["format", "--check"]) == 0
    assert corpus_tool.main(["generate", "--check"]) == 0
    assert corpus_tool.main(["orphans"]) == 0
    assert capsys.readouterr().err == ""


def _mini_corpus(tmp_path: Path, fixture_ids: list[str]) -> Path:
    root = _corpus.corpus_dir()
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    entries = [e for e in manifest["fixtures"] if e["id"] in fixture_ids]
    for entry in entries:
        (tmp_path / entry["file"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / entry["file"], tmp_path / entry["file"])
    (tmp_path / "manifest.json").write_text(
        json.dumps({"format": 1, "fixtures": entries}, indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return tmp_path


def test_formatter_check_reports_and_format_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _mini_corpus(tmp_path, ["v1.valid.headers-empty-key", "v1.valid.key-order-reversed"])
    target = root / "v1/valid/headers-empty-key.json"
    raw = root / "v1/valid/key-order-reversed.json"
    raw_before = raw.read_bytes()
    target.write_text(json.dumps(json.loads(target.read_text("utf-8"))), encoding="utf-8")
    assert corpus_tool.main(["--dir", str(root), "format", "--check"]) == 1
    assert "v1/valid/headers-empty-key.json: not formatted" in capsys.readouterr().err
    assert corpus_tool.main(["--dir", str(root), "format"]) == 0
    assert corpus_tool.main(["--dir", str(root), "format", "--check"]) == 0
    assert raw.read_bytes() == raw_before  # raw fixtures are never rewritten
    formatted = target.read_text("utf-8")
    assert formatted.startswith('{\n  "envelope_version": 1,\n  "id": ')
    assert formatted.endswith("}\n")


def test_formatter_refuses_a_non_raw_fixture_it_cannot_keep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _mini_corpus(tmp_path, ["v1.valid.headers-empty-key"])
    target = root / "v1/valid/headers-empty-key.json"
    target.write_text('{"a": 1, "a": 2}\n', encoding="utf-8")
    assert corpus_tool.main(["--dir", str(root), "format"]) == 1
    assert "duplicate key 'a'" in capsys.readouterr().err
    assert target.read_text("utf-8") == '{"a": 1, "a": 2}\n'


def test_missing_fixture_file_is_a_clear_error(tmp_path: Path) -> None:
    root = _mini_corpus(tmp_path, ["v1.valid.payload-empty"])
    (root / "v1/valid/payload-empty.json").unlink()
    with pytest.raises(CorpusError, match=r"'v1/valid/payload-empty.json'.*does not exist"):
        _corpus.load_manifest(root)


def test_bad_manifest_entry_is_a_clear_error(tmp_path: Path) -> None:
    root = _mini_corpus(tmp_path, ["v1.invalid.version-2"])
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    manifest["fixtures"][0]["expected_code"] = "NOT_A_CODE"
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(CorpusError, match="expected_code='NOT_A_CODE' is not a ViolationCode"):
        _corpus.load_manifest(root)


def test_corpus_hash_changes_with_one_byte(tmp_path: Path) -> None:
    root = _mini_corpus(tmp_path, ["v1.valid.payload-empty", "v1.valid.headers-empty-map"])
    before = _corpus.corpus_hash(root)
    path = root / "v1/valid/payload-empty.json"
    other = tmp_path / "copy"
    shutil.copytree(root, other)
    (other / "v1/valid/payload-empty.json").write_bytes(path.read_bytes() + b" ")
    after = _corpus.corpus_hash(other)
    assert before.startswith("sha256:") and after.startswith("sha256:")
    assert before != after


def test_unknown_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert corpus_tool.main(["--dir", str(tmp_path), "format", "--check"]) == 2
    assert "holds no manifest.json" in capsys.readouterr().err


# ---------------------------------------------------------------- the manifest's schema


def test_the_manifest_schema_is_a_valid_schema_and_lists_the_formatters_keys() -> None:
    import jsonschema

    schema = _corpus.manifest_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    entry = schema["$defs"]["entry"]
    # One list of keys: the schema's, which the formatter's order (_ENTRY_KEYS) follows.
    assert tuple(entry["required"]) == tuple(entry["properties"]) == _corpus._ENTRY_KEYS


def _edit(index: int | None, key: str | None, value: object) -> object:
    """A change to the mini manifest: set (or with ``...`` delete) ``key`` of entry
    ``index``, or of the manifest itself when ``index`` is None; with ``key`` None,
    replace the entry (or the manifest) by ``value``."""
    return index, key, value


# Mini corpus: fixtures[0] is v1.invalid.version-2, fixtures[1] v1.valid.payload-empty.
SCHEMA_RULES = [
    # (the schema keyword the case rests on, the change, what the one-line error says)
    (("type",), _edit(None, None, []), r"manifest.json: expected an object, got list$"),
    (("$defs", "entry", "type"), _edit(1, None, "x"),
     r"manifest.json: fixtures\[1\] \(id=None\): expected an object, got str$"),
    (("properties", "format", "const"), _edit(None, "format", 2),
     r": format=2 should be 1; the format this schema and this kit read$"),
    (("additionalProperties",), _edit(None, "extra", 1), r": unknown keys \['extra'\]"),
    (("required",), _edit(None, "fixtures", ...), r": missing keys \['fixtures'\]"),
    (("properties", "fixtures", "type"), _edit(None, "fixtures", {}),
     r": fixtures=\{\} should be an array"),
    (("$defs", "entry", "required"), _edit(1, "raw", ...),
     r"fixtures\[1\] \(id='v1.valid.payload-empty'\): missing keys \['raw'\]"),
    (("$defs", "entry", "additionalProperties"), _edit(1, "note", "x"),
     r"fixtures\[1\] \(id='v1.valid.payload-empty'\): unknown keys \['note'\]"),
    (("$defs", "entry", "properties", "id", "pattern"), _edit(1, "id", "v1.valid.Payload_Empty"),
     r"\(id='v1.valid.Payload_Empty'\): id='v1.valid.Payload_Empty' does not match .*; "
     r"expected v<version>"),
    (("$defs", "entry", "properties", "file", "pattern"),
     _edit(1, "file", "v1/valid/payload-empty.txt"),
     r"file='v1/valid/payload-empty.txt' does not match"),
    (("$defs", "entry", "properties", "envelope_version", "type"),
     _edit(1, "envelope_version", "1"), r"envelope_version='1' should be an integer"),
    (("$defs", "entry", "properties", "envelope_version", "minimum"),
     _edit(1, "envelope_version", -1), r"envelope_version=-1 should be at least 0"),
    # (on the invalid entry: a non-boolean `valid` takes the schema's `else` branch)
    (("$defs", "entry", "properties", "valid", "type"), _edit(0, "valid", 0),
     r"valid=0 should be true or false"),
    (("$defs", "entry", "properties", "description", "type"), _edit(1, "description", None),
     r"description=None should be a string"),
    (("$defs", "entry", "properties", "description", "minLength"), _edit(1, "description", ""),
     r"description='' must not be empty"),
    (("$defs", "entry", "properties", "clauses", "type"), _edit(1, "clauses", "C7"),
     r"clauses='C7' should be an array"),
    (("$defs", "entry", "properties", "clauses", "minItems"), _edit(1, "clauses", []),
     r"clauses=\[\] must not be empty"),
    (("$defs", "entry", "properties", "clauses", "items", "type"), _edit(1, "clauses", [7]),
     r"clauses\[0\]=7 should be a string"),
    (("$defs", "entry", "properties", "clauses", "items", "minLength"),
     _edit(1, "clauses", [""]), r"clauses\[0\]='' must not be empty"),
    (("$defs", "entry", "properties", "expected_pointer", "pattern"),
     _edit(0, "expected_pointer", "envelope_version"),
     r"fixtures\[0\] \(id='v1.invalid.version-2'\): expected_pointer='envelope_version' does "
     r"not match .*; expected an RFC 6901 JSON pointer"),
    (("$defs", "entry", "properties", "expected_pointer", "pattern"),
     _edit(0, "expected_pointer", "/a~2b"), r"expected_pointer='/a~2b' does not match"),
    (("$defs", "entry", "then", "properties", "expected_code", "type"),
     _edit(1, "expected_code", "QUEUE_CHARSET"),
     r"expected_code='QUEUE_CHARSET' should be null; a valid fixture has no expected_code"),
    (("$defs", "entry", "then", "properties", "expected_pointer", "type"),
     _edit(1, "expected_pointer", ""),
     r"expected_pointer='' should be null; a valid fixture has no expected_pointer"),
    (("$defs", "entry", "else", "properties", "expected_code", "type"),
     _edit(0, "expected_code", None),
     r"expected_code=None should be a string; an invalid fixture names its one violation code"),
    (("$defs", "entry", "else", "properties", "expected_pointer", "type"),
     _edit(0, "expected_pointer", None), r"expected_pointer=None should be a string; an invalid"),
    *[
        (("$defs", "entry", "properties", key, "type"), _edit(1, key, "yes"),
         rf"{key}='yes' should be true or false")
        for key in ("raw", "canonical", "generated")
    ],
]


def _changed_manifest(root: Path, change: object) -> object:
    index, key, value = change  # type: ignore[misc]
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    if key is None and index is None:
        return value  # type: ignore[return-value]
    if key is None:
        manifest["fixtures"][index] = value
        return manifest  # type: ignore[no-any-return]
    target = manifest if index is None else manifest["fixtures"][index]
    if value is ...:
        del target[key]
    else:
        target[key] = value
    return manifest


@pytest.mark.parametrize(("rule", "change", "message"), SCHEMA_RULES,
                         ids=["/".join(rule[-3:]) + f"-{n}" for n, (rule, _, _) in
                              enumerate(SCHEMA_RULES)])
def test_each_schema_rule_gives_a_one_line_error_and_is_what_catches_it(
    tmp_path: Path, rule: tuple[str, ...], change: object, message: str
) -> None:
    import jsonschema

    root = _mini_corpus(tmp_path, ["v1.invalid.version-2", "v1.valid.payload-empty"])
    manifest = _changed_manifest(root, change)
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(CorpusError) as caught:
        _corpus.load_manifest(root)
    text = str(caught.value)
    assert text.startswith(f"{root / 'manifest.json'}: ") and "\n" not in text, text
    assert re.search(message, text), text
    # Loosened by this one keyword, the schema lets the change through: the case rests
    # on the rule it names (and the rule is not dead).
    loose = _corpus.manifest_schema()
    parent = loose
    for part in rule[:-1]:
        parent = parent[part]
    del parent[rule[-1]]
    assert not jsonschema.Draft202012Validator(_corpus.manifest_schema()).is_valid(manifest)
    assert jsonschema.Draft202012Validator(loose).is_valid(manifest)


def test_a_key_given_twice_in_the_manifest_is_an_error(tmp_path: Path) -> None:
    root = _mini_corpus(tmp_path, ["v1.valid.payload-empty"])
    path = root / "manifest.json"
    text = path.read_text("utf-8")
    path.write_text(text.replace('"raw": false,', '"raw": true, "raw": false,', 1), "utf-8")
    with pytest.raises(CorpusError, match=r"manifest.json: key 'raw' appears twice in one "
                       r"object \(the object with id='v1.valid.payload-empty'\); keep one"):
        _corpus.load_manifest(root)


def test_an_id_given_twice_is_an_error(tmp_path: Path) -> None:
    root = _mini_corpus(tmp_path, ["v1.valid.payload-empty"])
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    manifest["fixtures"].append(manifest["fixtures"][0])
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"manifest.json: fixtures\[1\] \(id='v1.valid.payload-"
                       r"empty'\): the id appears twice; give each fixture its own id"):
        _corpus.load_manifest(root)


@pytest.mark.parametrize(
    ("key", "value"),
    [("id", "v1.valid.payload-other"), ("file", "v1/invalid/payload-empty.json"),
     ("envelope_version", 2), ("valid", False)],
)
def test_id_and_file_must_name_the_entrys_version_kind_and_slug(
    tmp_path: Path, key: str, value: object
) -> None:
    root = _mini_corpus(tmp_path, ["v1.valid.payload-empty"])
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    manifest["fixtures"][0][key] = value
    if key == "valid":  # an invalid fixture's own fields, so that only the kind disagrees
        manifest["fixtures"][0].update(expected_code="ID_FORMAT", expected_pointer="/id")
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"manifest.json: fixtures\[0\]: id='v1.valid.payload-"
                       r"[a-z]+' and file='v1/[a-z]+/payload-empty.json' do not match"):
        _corpus.load_manifest(root)


def test_jsonschema_is_imported_to_check_a_manifest_only_the_first_time(tmp_path: Path) -> None:
    """Not by ``import rdq_compliance``; by the first process that loads the manifest on a
    machine (a fresh cache); not by the next, which finds the manifest's marker."""
    code = (
        "import sys\nimport rdq_compliance, rdq_compliance._corpus as c\n"
        "print('jsonschema' in sys.modules)\nc.load_manifest()\n"
        "print('jsonschema' in sys.modules)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=env).stdout.split() for _ in range(2)]
    assert runs == [["False", "True"], ["False", "False"]]


def test_the_wheel_ships_the_manifest_schema_and_the_loader_finds_it(tmp_path: Path) -> None:
    """Build the wheel (hatchling, in-process): the schema rides with the corpus
    (``fixtures`` -> ``rdq_compliance/_fixtures``) and the unpacked wheel validates its
    manifest with it."""
    wheel_builder = pytest.importorskip("hatchling.builders.wheel")
    built = list(wheel_builder.WheelBuilder(str(REPO)).build(
        directory=str(tmp_path / "dist"), versions=["standard"]))
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(built[0]) as wheel:
        shipped = wheel.read("rdq_compliance/_fixtures/manifest.schema.json")
        wheel.extractall(unpacked)
    assert shipped == (REPO / "fixtures" / "manifest.schema.json").read_bytes()
    code = ("import rdq_compliance._corpus as c\nprint(c.corpus_dir())\n"
            "print(len(c.load_manifest()) == len(c.manifest_schema() and c.load_manifest()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path, env={"PYTHONPATH": str(unpacked), "PATH": ""},
                         ).stdout.split()
    assert out == [str(unpacked / "rdq_compliance" / "_fixtures"), "True"]


def test_a_manifest_that_passed_its_schema_check_is_not_checked_again_but_other_bytes_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema check is skipped only for the very bytes that passed it (a marker named
    by their digest in the kit's cache): one changed byte is checked, and refused."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = _mini_corpus(tmp_path / "corpus", ["v1.valid.payload-empty"])
    shutil.copyfile(REPO / "fixtures" / "manifest.schema.json", root / "manifest.schema.json")
    monkeypatch.setattr(_corpus, "corpus_dir", lambda: root)  # as the kit's own corpus
    checked: list[Path] = []
    real = _corpus._check_schema

    def counting(path: Path, manifest: object) -> None:
        checked.append(path)
        real(path, manifest)

    monkeypatch.setattr(_corpus, "_check_schema", counting)
    _corpus.load_manifest(root)
    markers = list((tmp_path / "cache/rdq-compliance/checked-manifests").iterdir())
    assert len(checked) == 1 and len(markers) == 1
    _corpus._load.cache_clear()  # a new process: the same bytes are trusted
    _corpus.load_manifest(root)
    assert len(checked) == 1
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    manifest["fixtures"][0]["unexpected"] = 1  # the schema allows no other key
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    _corpus._load.cache_clear()
    with pytest.raises(CorpusError, match="unexpected"):
        _corpus.load_manifest(root)
    assert len(checked) == 2


def test_without_a_writable_cache_the_schema_is_checked_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cache").write_text("")  # a file: no cache directory can be made there
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = _mini_corpus(tmp_path / "corpus", ["v1.valid.payload-empty"])
    shutil.copyfile(REPO / "fixtures" / "manifest.schema.json", root / "manifest.schema.json")
    monkeypatch.setattr(_corpus, "corpus_dir", lambda: root)
    checked: list[Path] = []
    monkeypatch.setattr(_corpus, "_check_schema", lambda path, _: checked.append(path))
    for _ in range(2):
        _corpus._load.cache_clear()
        _corpus.load_manifest(root)
    assert len(checked) == 2


def test_a_corpus_other_than_the_kits_own_leaves_no_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A corpus being written (``tests.corpus_tool --dir``, these tests' mini corpora) is
    checked every time and leaves nothing in the cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _corpus.load_manifest(_mini_corpus(tmp_path / "corpus", ["v1.valid.payload-empty"]))
    assert not (tmp_path / "cache").exists()
