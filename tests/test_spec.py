"""The spec ships with the kit (issue 14 item 7): docs/spec/ holds every clause the kit
cites, under the anchor its links use, and the wheel carries it.

If a requirement, a violation code or a fixture starts citing a clause the docs do not
define, or a link into the docs points at an anchor that does not exist, these tests
fail: the docs cannot silently fall behind the code.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import rdq_compliance
from rdq_compliance import CODE_CLAUSES, _corpus
from rdq_compliance._requirements import REQUIREMENTS
from rdq_compliance._spec import SPEC_FILES, clause_anchor, clause_target, spec_dir

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "docs" / "spec"
#: Every rule of clarifications.md, numbered as the kit cites them.
ALL_CLAUSES = [f"C{n}" for n in range(1, 21)] + ["C8a", "C13a"]

_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINKED_TEXT = re.compile(r"\[[^\]]*\]\([^)]*\)")
_BARE_CLAUSE = re.compile(r"(?<![\w#/])C(?:1[0-9]|[1-9])[a-z]?(?![\w])")


def anchors(path: Path) -> list[str]:
    return _ANCHOR.findall(path.read_text(encoding="utf-8"))


def cited_clauses() -> dict[str, set[str]]:
    """clause id -> where the kit cites it."""
    cited: dict[str, set[str]] = {}
    for r in REQUIREMENTS:
        for c in r.clauses:
            cited.setdefault(c, set()).add(r.id)
    for code, (clauses, _rule) in CODE_CLAUSES.items():
        for c in clauses:
            cited.setdefault(c, set()).add(f"ViolationCode.{code.value}")
    for fixture in _corpus.load_manifest():
        for c in fixture.clauses:
            cited.setdefault(c, set()).add(f"fixture {fixture.id}")
    return cited


def test_every_clause_the_kit_cites_has_an_anchor() -> None:
    """Requirement registry, CODE_CLAUSES and fixture manifest: each clause id resolves
    to an explicit anchor of the document clause_target() names."""
    missing = []
    for clause, where in sorted(cited_clauses().items()):
        page, _, anchor = clause_target(clause).partition("#")
        if anchor not in anchors(SPEC / page):
            missing.append(f"{clause!r} (cited by {', '.join(sorted(where)[:3])}) has no "
                           f'<a id="{anchor}"></a> in docs/spec/{page}')
    assert missing == [], "\n".join(missing)


def test_clarifications_define_c1_to_c20_in_order_each_once() -> None:
    """C1..C20, C8a and C13a each have exactly one anchor, followed by a heading that
    starts with that clause id (the number a link lands on is the rule it means)."""
    text = (SPEC / "clarifications.md").read_text(encoding="utf-8")
    found = anchors(SPEC / "clarifications.md")
    assert sorted(found) == sorted(clause_anchor(c) for c in ALL_CLAUSES), found
    for clause in ALL_CLAUSES:
        m = re.search(rf'<a id="{clause_anchor(clause)}"></a>\n#+ (\S+) ', text)
        assert m is not None and m.group(1) == clause, (clause, m and m.group(0))
    order = [int(re.match(r"c(\d+)", a).group(1)) for a in found]  # type: ignore[union-attr]
    assert order == sorted(order), f"clauses out of order: {found}"


@pytest.mark.parametrize(
    ("clause", "target"),
    [
        ("C3", "clarifications.md#c3"),
        ("C8a", "clarifications.md#c8a"),
        ("C13a", "clarifications.md#c13a"),
        ("C19", "clarifications.md#c19"),
        ("WE:The attempt record", "envelope.md#we-the-attempt-record"),
        ("WE:Canonical encoding", "envelope.md#we-canonical-encoding"),
    ],
)
def test_clause_target(clause: str, target: str) -> None:
    assert clause_target(clause) == target


@pytest.mark.parametrize("bad", ["", "c3", "C", "C0", "C3A", "WE:", "Field notes"])
def test_clause_anchor_refuses_what_is_not_a_clause_id(bad: str) -> None:
    with pytest.raises(ValueError, match="clause="):
        clause_anchor(bad)


def _links(path: Path) -> list[str]:
    return _LINK.findall(_FENCE.sub("", path.read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    "doc",
    [*(f"docs/spec/{name}" for name in SPEC_FILES), "docs/requirements.md", "README.md"],
)
def test_links_into_the_spec_resolve(doc: str) -> None:
    """Every relative link of the document reaches an existing file, and every
    fragment into docs/spec an explicit anchor (a heading's generated id is not kept
    when the file is read from the wheel or by another renderer)."""
    path = REPO / doc
    broken = []
    for link in _links(path):
        if re.match(r"[a-z]+:", link):
            continue  # https:, mailto:
        target, _, fragment = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.exists():
            broken.append(f"{link}: no file {file}")
        elif (fragment and file.parent == SPEC.resolve()
              and fragment not in anchors(file)):
            broken.append(f'{link}: no <a id="{fragment}"></a> in {file.name}')
    assert broken == [], "\n".join(broken)


def test_the_readme_points_into_the_repository_and_links_its_clause_ids() -> None:
    """No `shared/spec/...` (outside the repository); every clause id in README prose
    (not code) is inside a link to docs/spec."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "shared/spec" not in text
    prose = _CODE_SPAN.sub("", _FENCE.sub("", text))
    bare = []
    for n, line in enumerate(prose.splitlines(), 1):
        rest = _LINKED_TEXT.sub("", line)
        bare += [f"line ~{n}: {m.group()} in {line.strip()[:80]!r}"
                 for m in _BARE_CLAUSE.finditer(rest)]
    assert bare == [], "link each clause id to docs/spec/clarifications.md#cN:\n" + "\n".join(bare)


def test_spec_dir_holds_the_documents() -> None:
    """rdq_compliance.spec_dir() is the public way to find the text (source tree here)."""
    folder = rdq_compliance.spec_dir()
    assert folder == spec_dir()
    for name in SPEC_FILES:
        assert (folder / name).read_text(encoding="utf-8") == (SPEC / name).read_text(
            encoding="utf-8"
        )


def test_the_wheel_ships_the_spec_and_spec_dir_finds_it(tmp_path: Path) -> None:
    """Build the wheel (hatchling, in-process, ~0.2 s), check it holds docs/spec/ and
    docs/requirements.md byte for byte, and that spec_dir() of the unpacked wheel
    resolves inside it."""
    wheel_builder = pytest.importorskip("hatchling.builders.wheel")
    built = list(wheel_builder.WheelBuilder(str(REPO)).build(
        directory=str(tmp_path / "dist"), versions=["standard"]))
    assert len(built) == 1, built
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(built[0]) as wheel:
        for name in SPEC_FILES:
            shipped = wheel.read(f"rdq_compliance/_docs/spec/{name}")
            assert shipped == (SPEC / name).read_bytes(), name
        # The requirement table sits beside spec/ as in the repository, so the links
        # between them (../requirements.md, spec/clarifications.md#c3) hold in the wheel.
        shipped = wheel.read("rdq_compliance/_docs/requirements.md")
        assert shipped == (REPO / "docs" / "requirements.md").read_bytes()
        wheel.extractall(unpacked)
    out = subprocess.run(
        [sys.executable, "-c", "import rdq_compliance; print(rdq_compliance.spec_dir())"],
        env={"PYTHONPATH": str(unpacked), "PATH": ""},
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()
    assert Path(out) == unpacked / "rdq_compliance" / "_docs" / "spec"
