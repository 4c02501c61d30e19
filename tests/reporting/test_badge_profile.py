"""Badges that say what was tested (issue 24 §3): the profile when it is not ci, and
the kit version, corpus hash and date in the title."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from rdq_compliance.reporting import render_badge, render_endpoint

from ._synth import meta, passing, report_for

SVG = "{http://www.w3.org/2000/svg}"


def _report(profile: str) -> dict:
    return {**report_for([meta()], passing()), "profile": profile}


@pytest.mark.parametrize("profile", ["quick", "thorough", ""])
def test_a_non_ci_badge_differs_from_the_ci_badge(profile):
    ci, other = _report("ci"), _report(profile)
    assert render_badge(ci) != render_badge(other)
    assert render_endpoint(ci)["message"] == "compliant"
    expected = f"compliant · {profile or 'no'} profile"
    assert render_endpoint(other)["message"] == expected
    texts = ["".join(t.itertext()) for t in ET.fromstring(render_badge(other)).iter(f"{SVG}text")]
    assert texts[-1] == expected
    assert ET.fromstring(render_badge(other)).get("aria-label") == f"rdq envelope v1: {expected}"


def test_the_title_names_kit_corpus_profile_and_date():
    r = _report("quick")
    title = ET.fromstring(render_badge(r)).find(f"{SVG}title").text
    assert title.endswith(f"; kit 0.1.0, corpus {'sha256:' + '0' * 64}, profile quick, "
                          "2026-07-20")
    assert "mem (memory 1.0): compliant" in title
