"""The static conformance registry (issue 24 §2), from synthetic genuine reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rdq_compliance._cli import main
from rdq_compliance.reporting import write_json
from rdq_compliance.reporting._site import build_site, version_key

from ._pages import release

BROKEN = "RDQ-RT-007"


def _write(tmp_path: Path, name: str, report: dict) -> str:
    path = tmp_path / f"{name}.json"
    write_json(path, report)
    return str(path)


def _releases(tmp_path: Path) -> list[str]:
    return [
        _write(tmp_path, "m1", release("1.9", day=1)),
        _write(tmp_path, "m2", release("1.10", failing=[BROKEN], day=2)),
        _write(tmp_path, "m3", release("1.11", day=3)),
        # Newest by version, not by date: 0.10 ran before 0.9 was re-run.
        _write(tmp_path, "s1", release("0.10", name="sqlite", day=2)),
        _write(tmp_path, "s2", release("0.9", name="sqlite", day=5, failing=[BROKEN])),
    ]


def test_versions_order_naturally():
    assert sorted(["1.10", "1.9", "1.9.1", "2.0rc1", "0.1"], key=version_key) == [
        "0.1", "1.9", "1.9.1", "1.10", "2.0rc1"]


def test_the_site_shows_newest_versions_history_and_badges(tmp_path):
    site_dir = tmp_path / "site"
    site = build_site(_releases(tmp_path), site_dir)
    assert site.rejected == []
    data = json.loads((site_dir / "data" / "registry.json").read_text(encoding="utf-8"))
    plugins = {p["name"]: p for p in data["plugins"]}
    assert set(plugins) == {"memory", "sqlite"}
    memory = plugins["memory"]
    assert [h["version"] for h in memory["history"]] == ["1.9", "1.10", "1.11"]
    assert memory["newest"]["version"] == "1.11"
    assert memory["history"][1]["regressed"] == [BROKEN] and memory["history"][1]["fixed"] == []
    assert memory["history"][2]["fixed"] == [BROKEN] and memory["history"][2]["regressed"] == []
    assert data["matrix"]["memory"][BROKEN] == "passed"  # the newest version's status
    assert plugins["sqlite"]["newest"]["version"] == "0.10"
    assert data["matrix"]["sqlite"][BROKEN] == "passed"
    # Pages, each run's HTML report, badges, data: every file a page links to exists.
    for page in [site_dir / "index.html", *sorted((site_dir / "plugins").glob("*.html"))]:
        for href in re.findall(r'(?:href|src)="([^"#]+)', page.read_text(encoding="utf-8")):
            assert (page.parent / href).resolve().is_file(), (page, href)
    index = (site_dir / "index.html").read_text(encoding="utf-8")
    assert index.count('href="runs/') >= 2 * len(data["requirements"])
    page = (site_dir / "plugins" / "memory.html").read_text(encoding="utf-8")
    assert "[![rdq memory](badges/memory.svg)](plugins/memory.html)" in page
    assert "quick profile" in (site_dir / "badges" / "memory.svg").read_text(encoding="utf-8")
    endpoint = json.loads((site_dir / "badges" / "memory.json").read_text(encoding="utf-8"))
    assert endpoint["message"] == "compliant · quick profile"


def test_a_tampered_report_is_rejected_never_shown(tmp_path):
    paths = _releases(tmp_path)
    forged = release("9.9", name="forged", day=9, failing=[BROKEN])
    forged["plugins"][0]["requirements"] = [
        {**r, "status": "passed"} if r["id"] == BROKEN else r
        for r in forged["plugins"][0]["requirements"]]
    forged["plugins"][0]["verdict"] = forged["verdict"] = "compliant"
    paths.append(_write(tmp_path, "forged", forged))
    site_dir = tmp_path / "site"
    site = build_site(paths, site_dir)
    assert [p for p, _ in site.rejected] == [paths[-1]]
    assert "digest mismatch" in site.rejected[0][1]
    data = json.loads((site_dir / "data" / "registry.json").read_text(encoding="utf-8"))
    assert "forged" not in {p["name"] for p in data["plugins"]}
    assert data["rejected"][0]["path"] == paths[-1]
    assert not (site_dir / "plugins" / "forged.html").exists()
    index = (site_dir / "index.html").read_text(encoding="utf-8")
    assert "forged" in index.split('id="rejected"')[1]  # listed as rejected...
    assert "forged" not in index.split('id="rejected"')[0]  # ...and nowhere else


def test_cli_site(tmp_path, capsys):
    paths = _releases(tmp_path)
    out = tmp_path / "site"
    base = "https://registry.example/rdq"
    assert main(["site", *paths, "-o", str(out), "--base-url", base]) == 0
    assert "5 report(s), 2 plugin(s), 0 rejected" in capsys.readouterr().out
    page = (out / "plugins" / "memory.html").read_text(encoding="utf-8")
    assert f"[![rdq memory]({base}/badges/memory.svg)]({base}/plugins/memory.html)" in page
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["site", str(bad), "-o", str(tmp_path / "s2")]) == 1
    assert "rejected" in capsys.readouterr().err
    assert main(["site", *paths, "-o", str(out), "--base-url", "registry"]) == 2
