"""Links that work where they are read (issue 24 §4): clause links only under a
published spec URL, else the clause's statement; the clause text from the spec."""

from __future__ import annotations

import re

import pytest

from rdq_compliance._spec import spec_dir
from rdq_compliance.reporting import render_markdown
from rdq_compliance.reporting._clauses_text import (
    clause_footer,
    clause_texts,
    is_absolute_url,
    parse_clauses,
    spec_link,
)

from ._pages import failing_report

PUBLISHED = "https://rdq.example/spec/clarifications.md"


def test_every_clause_of_the_spec_is_parsed():
    text = (spec_dir() / "clarifications.md").read_text(encoding="utf-8")
    anchors = re.findall(r'<a id="(c[0-9]+[a-z]?)"></a>', text)
    texts = clause_texts()
    assert sorted(texts) == sorted("C" + a[1:] for a in anchors)
    assert len(texts) >= 21
    assert texts["C3"].title == "Timestamps"
    assert texts["C3"].body.startswith("On the wire a timestamp is exactly")
    assert texts["C8a"].title == "Names"
    assert texts["C13a"].title == "What is stored is what was written"
    assert all(c.title and c.body and not c.body.startswith("#") for c in texts.values())
    # A rule ends at the next anchor or section heading, never runs into it.
    assert all("<a id=" not in c.body and "\n## " not in c.body for c in texts.values())


def test_parse_clauses_reads_title_and_body():
    got = parse_clauses('intro\n<a id="c2"></a>\n### C2 — Size `x` [l](y)\n\nBody.\n\n'
                        '## Next\n\nnot part\n<a id="c3"></a>\n### C3 — T\nB3\n')
    assert {k: (v.title, v.body) for k, v in got.items()} == {
        "C2": ("Size x l", "Body."), "C3": ("T", "B3")}


@pytest.mark.parametrize("base", ["docs/spec/clarifications.md", "", None, "ftp://x/y",
                                  "//host/x", "javascript:alert(1)"])
def test_only_http_addresses_are_links(base):
    assert not is_absolute_url(base)
    assert spec_link(base, "C3") is None


def test_spec_link_under_a_published_base():
    assert spec_link(PUBLISHED, "C8a") == f"{PUBLISHED}#c8a"
    assert clause_footer(["C8a", "C3", "WE:x"], PUBLISHED) == [
        "", f"[C3]: {PUBLISHED}#c3", f"[C8a]: {PUBLISHED}#c8a"]


def test_markdown_without_a_spec_url_has_no_relative_link():
    md = render_markdown(failing_report())
    assert "docs/spec" not in md and "clarifications.md#" not in md
    assert not re.search(r"^\[C[0-9]+[a-z]?\]: ", md, re.M)  # no link definitions
    assert "- **C4** Strings" in md


def test_markdown_with_a_spec_url_links_every_clause():
    md = render_markdown({**failing_report(), "spec": PUBLISHED})
    used = set(re.findall(r"\[(C[0-9]+[a-z]?)\]", md.split("\n\n[C")[0]))
    defined = set(re.findall(rf"^\[(C[0-9]+[a-z]?)\]: {re.escape(PUBLISHED)}#c", md, re.M))
    assert used and used <= defined
