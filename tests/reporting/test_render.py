"""Badge, endpoint JSON, Markdown and terminal output: content and escaping."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from rdq_compliance.reporting import (
    TestStatus,
    render_badge,
    render_endpoint,
    render_markdown,
    terminal_lines,
    terminal_safe,
)
from rdq_compliance.reporting._badge import text_width
from rdq_compliance.reporting._markdown import md_cell, md_code_block

from ._synth import GATED, UNGATED_MUST, meta, passing, report_for

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = ['<script>alert(1)</script>', '"&\'', "]]><!--", "a\x00b\x1b[31mred\x07",
           "line1\nline2\r\n|x|", "```\n# heading\n```", "\ud800lone", "\u202etxt.exe"]


def texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


@pytest.mark.parametrize(("tests", "caps", "message", "color"), [
    (passing(), (), "compliant", "#4c1"),
    (passing(caps=[GATED[0].capability]), (GATED[0].capability,),
     f"compliant · {GATED[0].capability}", "#4c1"),
    (passing(override={UNGATED_MUST.id: TestStatus.FAILED}), (), "non-compliant", "#e05d44"),
    (passing(override={UNGATED_MUST.id: TestStatus.SKIPPED}), (), "incomplete", "#9f9f9f"),
])
def test_badge_says_the_verdict(tests, caps, message, color):
    # At the default profile (ci) the badge names no profile: tests/reporting/test_badge.py
    r = {**report_for([meta(caps=caps)], tests), "profile": "ci"}
    svg = render_badge(r)
    root = ET.fromstring(svg)
    assert texts(svg) == ["rdq envelope v1"] * 2 + [message] * 2
    fills = [e.get("fill") for e in root.iter(f"{SVG}rect")]
    assert color in fills
    assert root.find(f"{SVG}title").text.startswith(f"rdq envelope v1: {message}")
    assert render_endpoint(r) == {"schemaVersion": 1, "label": "rdq envelope v1",
                                  "message": message,
                                  "color": {"#4c1": "brightgreen", "#e05d44": "red",
                                            "#9f9f9f": "lightgrey"}[color]}


def test_badge_width_follows_the_text():
    narrow = report_for([meta()], passing())
    wide = report_for([meta()], passing(override={UNGATED_MUST.id: TestStatus.FAILED}))
    w = [int(ET.fromstring(render_badge(x)).get("width")) for x in (narrow, wide)]
    assert w[0] < w[1]
    assert text_width("non-compliant") > text_width("compliant")


@pytest.mark.parametrize("hostile", HOSTILE)
def test_badge_escapes_everything(hostile):
    r = report_for([meta(hostile, name=hostile, version=hostile)], passing(hostile))
    svg = render_badge(r)
    root = ET.fromstring(svg)  # well-formed
    assert [e.tag for e in root.iter() if "script" in e.tag.lower()] == []
    assert "<script" not in svg and "\x1b" not in svg and "\x00" not in svg
    title = root.find(f"{SVG}title").text
    assert "memory" not in title and "compliant" in title
    if hostile == '<script>alert(1)</script>':
        assert "<script>alert(1)</script>" in title  # shown as text, not markup


def test_badge_with_no_plugin_and_endpoint_is_plain():
    r = {**report_for([], []), "profile": "ci"}
    assert texts(render_badge(r))[-1] == "incomplete"
    assert render_endpoint(r)["message"] == "incomplete"


@pytest.mark.parametrize("hostile", HOSTILE)
def test_markdown_escapes_plugin_text(hostile):
    tests = passing(hostile, override={UNGATED_MUST.id: TestStatus.FAILED},
                    message=f"E {hostile}\n{hostile}")
    r = report_for([meta(hostile, name=hostile, version=hostile)], tests)
    md = render_markdown(r)
    assert "\x1b" not in md and "\x00" not in md
    # the failure block is closed by its own fence, not by the message
    blocks = re.findall(r"^(`{3,})text\n(.*?)\n\1$", md, flags=re.S | re.M)
    assert len(blocks) == 1
    assert blocks[0][1].startswith("E ")
    # outside the code block (where text is inert) no markup character survives
    outside = re.sub(r"^(`{3,})text\n.*?\n\1$", "", md, flags=re.S | re.M)
    assert "<" not in outside and ">" not in outside and "`" not in outside
    # every table row keeps its column count
    rows = [line for line in outside.splitlines() if line.startswith("|")]
    assert len(rows) > 30
    for line in rows:
        assert line.count("|") in (8, 9), line
        assert line.endswith(" |") or line.endswith("---- |") or line.endswith("--- |")


def test_markdown_content():
    r = report_for([meta()], passing(override={UNGATED_MUST.id: TestStatus.FAILED},
                                     message="E diff"), aborted="stopped early: x")
    md = render_markdown(r)
    assert "rdq envelope v1: **non-compliant**" in md
    assert f"| {UNGATED_MUST.id.replace('-', '-')} | MUST | failed |" in md
    assert "### Failures" in md and "E diff" in md
    assert "stopped early" in md


def test_md_helpers():
    assert md_cell("a|b<c>&`d`\n*e*") == "a&#124;b&lt;c&gt;&amp;&#96;d&#96; &#42;e&#42;"
    block = md_code_block("x ```` y")
    assert block.startswith("`````text\n") and block.endswith("\n`````")


def test_terminal_lines():
    r = report_for([meta("m\x1b[2Jx", name="evil\x1b]0;title\x07", caps=["durable"])],
                   passing("m\x1b[2Jx", override={UNGATED_MUST.id: TestStatus.FAILED}))
    lines = terminal_lines(r)
    assert lines[0] == "verdict: NON-COMPLIANT"
    assert not any(ch in "".join(lines) for ch in "\x1b\x07\n")
    assert any(line.startswith("  FAILED " + UNGATED_MUST.id) and
               " ".join(UNGATED_MUST.clauses) in line for line in lines)
    assert any(re.match(r"  golden\s+0 passed, 1 failed, 0 skipped, 0 error$", ln)
               for ln in lines)


def test_notes_are_shown_sanitized():
    r = report_for([meta()], passing(), notes=["plugin 'm': storage.close() failed: \x1b[1m<x>|"])
    assert "note: plugin 'm': storage.close() failed: [1m<x>|" in terminal_lines(r)
    assert "Note: plugin 'm': storage.close() failed: &#91;1m&lt;x&gt;&#124;" in render_markdown(r)


def test_terminal_lines_explain_incomplete():
    r = report_for([meta()], passing(override={UNGATED_MUST.id: None}))
    assert any(ln.startswith(f"  NOT-RUN {UNGATED_MUST.id}: not collected: the run named other")
               for ln in terminal_lines(r))


def test_terminal_safe():
    assert terminal_safe("a\x1b[31mb\tc\nd\u202e") == "a[31mb c d"
    assert terminal_safe("a\r\nb\x00", one_line=False) == "a\nb"


def test_plugin_that_opened_then_broke_is_not_called_not_opened():
    """Wording (issue 14 §4): not "not opened: the plugin opened but cannot be used"."""
    r = report_for([meta(unavailable="opened, then unusable: plugin 'm': storage.info returned 3")],
                   [])
    line = next(ln for ln in terminal_lines(r) if ln.startswith("plugin mem"))
    assert line == ("plugin mem (opened, then unusable: plugin 'm': storage.info returned 3): "
                    "incomplete")
    assert "not opened" not in render_markdown(r)


def test_not_applicable_tests_are_not_counted_as_skipped():
    """A test skipped as not applicable (rdq.not_applicable) is counted apart: a reader of
    the terminal summary must not take it for a skip that would make the run incomplete."""
    r = report_for([meta()], passing())
    req = r["plugins"][0]["requirements"][0]
    req["tests"] = [dict(req["tests"][0], status="skipped", not_applicable=True)]
    line = next(ln for ln in terminal_lines(r) if ln.startswith(f"  {req['suite']} "))
    assert line.endswith(", 0 skipped, 0 error, 1 not applicable"), line
