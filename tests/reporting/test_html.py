"""The HTML report (issue 24 §1): one self-contained page rendered from the report."""

from __future__ import annotations

import html.parser
import json
import re

import pytest

from rdq_compliance._cli import main
from rdq_compliance.reporting import build_report, evaluate, write_json
from rdq_compliance.reporting._diffview import diff_lines, segments
from rdq_compliance.reporting._html import render_html, verdict_reasons
from rdq_compliance.reporting._model import MESSAGE_MAX_LINES, clip_message

from ._pages import DIFF, FAILING, REPLAY, failing_report, failing_tests
from ._synth import meta, passing, report_for, run_meta
from .test_render import HOSTILE


class _Page(html.parser.HTMLParser):
    """Every tag with its attributes, the text, and whether the nesting closes."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "col", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, (tag, self.open[-5:])
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    p.close()
    assert p.open == [], p.open
    return p


def test_a_failing_report_shows_verdict_cause_diff_replay_and_clause_text():
    page = render_html(failing_report())
    doc = parse(page)
    text = " ".join(doc.text)
    assert "non-compliant" in text
    assert f"1 applicable MUST requirement(s) failed or errored: {FAILING}" in text
    assert "1 cause explains 1 failure" in text
    # The diff: written vs read back, the look-alike code points spelled out.
    assert "written" in text and "read back" in text
    assert re.search(r'<span class="cp"[^>]*>U\+00C5</span>', page)
    assert re.search(r'<span class="cp"[^>]*>U\+030A</span>', page)
    assert REPLAY in text
    # The clause text itself (C4 Strings), not only a link.
    assert 'id="clause-c4"' in page and "A string is a sequence of Unicode scalar values" in text
    # The causes come before the requirement table.
    assert page.index('class="cause"') < page.index('class="requirements"')


def test_the_page_is_self_contained():
    doc = parse(render_html(failing_report()))
    for tag, attrs in doc.tags:
        assert tag != "link", attrs  # no stylesheet or anything else fetched
        for name in ("src", "href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"^(?:[a-z]+:)?//", value, re.I), (tag, attrs)
        if tag == "script":
            assert "src" not in attrs


def test_without_a_spec_url_no_relative_clause_link():
    page = render_html(failing_report())
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs
    published = "https://rdq.example/spec/clarifications.md"
    linked = render_html(failing_report(), spec_url=published)
    assert f'href="{published}#c4"' in linked


def test_the_report_spec_url_is_used_when_absolute():
    published = "https://rdq.example/spec/clarifications.md"
    page = render_html({**failing_report(), "spec": published})
    assert f'href="{published}#c4"' in page


@pytest.mark.parametrize("hostile", HOSTILE)
def test_plugin_text_is_escaped(hostile):
    r = report_for([meta(hostile, name=hostile, version=hostile)], passing(hostile))
    page = render_html(r)
    parse(page)
    assert "<script>alert(1)</script>" not in page
    assert "\x1b" not in page and "\x00" not in page
    assert page.count("<script>") == 1  # the page's own filter script only


def test_filters_cover_every_requirement_row():
    r = failing_report()
    page = render_html(r)
    rows = re.findall(r'<tr data-status="([a-z-]+)" data-family="([a-z_]+)"', page)
    assert len(rows) == len(r["plugins"][0]["requirements"])
    assert ("failed", "storage") in rows or any(s == "failed" for s, _ in rows)
    families = set(re.findall(r'<option value="([a-z_]+)">', page))
    assert families == {f for _, f in rows}


def test_the_replay_command_survives_a_long_message():
    """The kit adds the replay line last, past the lines a report keeps of a message."""
    long = "E header changed\n" + "\n".join(f"  line {i}" for i in range(40))
    kept = clip_message(f"{long}\nreplay: {REPLAY}\nreplay note: *** is a secret")
    assert kept is not None
    assert kept.endswith(f"(23 more lines)\nreplay: {REPLAY}\nreplay note: *** is a secret")
    assert kept.count("\n") == MESSAGE_MAX_LINES + 2
    r = build_report(run_meta([meta()]), evaluate([meta()], failing_tests(message=kept)))
    assert f'<pre class="replay">{REPLAY}</pre>' in render_html(r)


def test_verdict_reasons():
    compliant = report_for([meta()], passing())["plugins"][0]
    assert verdict_reasons(compliant)[0].startswith("every applicable MUST requirement ran")
    failing = failing_report()["plugins"][0]
    assert verdict_reasons(failing) == [
        f"1 applicable MUST requirement(s) failed or errored: {FAILING}"]
    unopened = report_for([meta(unavailable="boom")], [])["plugins"][0]
    assert verdict_reasons(unopened)[0] == "the plugin could not be opened: boom"


def test_diff_lines_split_written_and_read():
    (line,) = diff_lines(DIFF)
    assert line.pointer == "/headers/x-name"
    assert line.note.startswith("string changed")
    assert [s.text for s in line.written or []] == ["'a", "U+00C5", "b'"]
    assert [s.text for s in line.read or []] == ["'a", "A", "U+030A", "b'"]
    missing, other = diff_lines("  /x: unknown field 'x' missing: expected 2.5  [C10 C5]\n"
                                "  … and 7 more lines")
    assert (missing.pointer, missing.read, [s.text for s in missing.written or []]) == (
        "/x", [], ["2.5"])
    assert (other.pointer, other.written, other.note) == ("", None, "… and 7 more lines")
    # The diff's own code point note is replaced by the marks; a pointer keeps its note.
    (nfd,) = diff_lines("  /handler_version: string changed: x (expected 'e\u0301' "
                        "(U+0065 U+0301), got '\u00e9' (U+00E9))  [C4]")
    assert [s.text for s in nfd.written or []] == ["'", "e", "U+0301", "'"]
    assert [s.text for s in nfd.read or []] == ["'", "U+00E9", "'"]
    (key,) = diff_lines("  /headers/\u00e9 (U+00E9): header '\u00e9' (U+00E9) missing: "
                        "expected 'v'")
    assert key.pointer == "/headers/\u00e9 (U+00E9)" and key.note == "header 'é' (U+00E9) missing"
    # A note that names both sides: each on its own row, the difference marked, the
    # instant's delta kept in the note (not "2026…117Z, got 2026…000Z" written, read absent).
    instant, integer, payload = diff_lines(
        "  /created_at: instant changed: expected 2026-07-20T14:03:22.117Z, got "
        "2026-07-20T14:03:22.000Z (-117.000 ms)  [C3]\n"
        "  /attempt_count: integer changed: expected 7, got 8  [C5]\n"
        "  /payload: bytes changed: expected 3 bytes, got 4 bytes; first difference at "
        "offset 0: expected 0x01, got 0x02  [C7]")
    assert instant.note == "instant changed (-117.000 ms)"
    assert [(s.text, s.differs) for s in instant.written or []] == [
        ("2026-07-20T14:03:22.", False), ("117", True), ("Z", False)]
    assert [(s.text, s.differs) for s in instant.read or []] == [
        ("2026-07-20T14:03:22.", False), ("000", True), ("Z", False)]
    assert ([s.text for s in integer.written or []], [s.text for s in integer.read or []]) == (
        ["7"], ["8"])
    # Two expected/got pairs in one note: no sides rather than wrong ones.
    assert (payload.written, payload.read) == (None, None)
    assert payload.note.startswith("bytes changed: expected 3 bytes, got 4 bytes;")


def test_segments_mark_only_the_difference():
    assert [(s.text, s.differs) for s in segments("abXcd", "abYYcd")] == [
        ("ab", False), ("X", True), ("cd", False)]
    # Nothing where the other side has more: an empty marked segment.
    assert [(s.text, s.differs) for s in segments("ab", "abc")] == [
        ("ab", False), ("", True)]
    assert [s.text for s in segments("a\u00a0b", "a b")] == ["a", "U+00A0", "b"]


def test_cli_html(tmp_path, capsys):
    report = failing_report()
    src = tmp_path / "report.json"
    write_json(src, report)
    out = tmp_path / "report.html"
    assert main(["html", str(src), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == render_html(report)
    assert main(["html", str(src), "-o", str(out), "--spec-url", "docs/x.md"]) == 2
    assert "--spec-url='docs/x.md' is not an http(s) address" in capsys.readouterr().err
    doc = json.loads(src.read_text(encoding="utf-8"))
    doc["verdict"] = "compliant"
    src.write_text(json.dumps(doc), encoding="utf-8")
    out.unlink()
    assert main(["html", str(src), "-o", str(out)]) == 1
    assert not out.exists()
    assert "digest mismatch" in capsys.readouterr().err


def test_the_wheel_ships_the_templates(tmp_path):
    """An installed kit renders the page: templates (package data) and the clause text
    come from the wheel, not from the source tree."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    wheel_builder = pytest.importorskip("hatchling.builders.wheel")
    repo = Path(__file__).resolve().parents[2]
    (built,) = wheel_builder.WheelBuilder(str(repo)).build(
        directory=str(tmp_path / "dist"), versions=["standard"])
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(built) as wheel:
        assert "rdq_compliance/reporting/templates/report.html.j2" in wheel.namelist()
        wheel.extractall(unpacked)
    src = tmp_path / "report.json"
    write_json(src, failing_report())
    subprocess.run([sys.executable, "-c", "import rdq_compliance, sys; "
                    "assert rdq_compliance.__file__.startswith(sys.argv[1]); "
                    "from rdq_compliance._cli import main; "
                    "sys.exit(main(['html', sys.argv[2], '-o', sys.argv[3]]))",
                    str(unpacked), str(src), str(tmp_path / "out.html")],
                   env={"PYTHONPATH": str(unpacked), "PATH": ""}, check=True, cwd=tmp_path)
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert "A string is a sequence of Unicode scalar values" in page


def test_a_pointer_with_spaces_is_parsed_as_a_field():
    """Keys equal but for trailing spaces ('/headers/k  '): the pointer runs to the first
    ': ', so the line shows written and read back like any other missing key."""
    (line,) = diff_lines("  /headers/k  : header 'k  ' missing: expected 'two '  [C8 C4]")
    assert (line.pointer, line.note) == ("/headers/k  ", "header 'k  ' missing")
    assert "".join(s.text for s in line.written or []) == "'two '" and line.read == []
