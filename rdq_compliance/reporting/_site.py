"""``rdq-compliance site``: a static conformance registry built from many reports.

Pages (all static, relative links, no network):

- ``index.html``: the matrix, requirements x plugins, for the newest version of each
  plugin; each cell links to the requirement's row in that run's HTML report; the
  reports that failed verification, listed as rejected;
- ``plugins/<slug>.html``: one plugin's versions over time, what regressed and what was
  fixed between consecutive versions, its badge with copyable Markdown and HTML;
- ``runs/<id>.html``: the HTML report of every accepted run;
- ``badges/<slug>.svg`` and ``badges/<slug>.json`` (shields.io endpoint);
- ``data/registry.json`` (what the pages show) and ``data/reports/<id>.json`` (the
  verified reports as given).

A report is included only when ``verify_report`` accepts it (schema, digest, verdicts):
a changed report is listed as rejected with the reason, never shown as a result.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._badge import render_badge, render_endpoint
from ._html import environment, render_html
from ._report import ReportError, load_report, verify_report, write_json

__all__ = ["Site", "build_site", "version_key"]

_FAILING = ("failed", "error")


def version_key(version: str | None) -> tuple[Any, ...]:
    """Order versions naturally: ``0.10.0`` after ``0.9.1``; no version first."""
    if not version:
        return ()
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"[.\-+_]", version))


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "plugin"


@dataclass
class Run:
    """One plugin in one accepted report."""

    run_id: str
    report: Mapping[str, Any]
    plugin: Mapping[str, Any]
    source: str

    @property
    def name(self) -> str:
        return str(self.plugin["name"] if self.plugin["name"] is not None
                   else self.plugin["label"])

    @property
    def version(self) -> str:
        return str(self.plugin["version"] or "")

    @property
    def statuses(self) -> dict[str, str]:
        return {r["id"]: r["status"] for r in self.plugin["requirements"]}

    def sort_key(self) -> tuple[Any, ...]:
        return (version_key(self.version), str(self.report["started_at"]))


@dataclass
class Site:
    """What ``build_site`` wrote and why it left reports out."""

    accepted: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    plugins: dict[str, list[Run]] = field(default_factory=dict)


def _changes(older: Run, newer: Run) -> dict[str, list[str]]:
    before, after = older.statuses, newer.statuses
    regressed = sorted(r for r, s in after.items()
                       if s in _FAILING and before.get(r) not in (*_FAILING, None))
    fixed = sorted(r for r, s in after.items() if s == "passed" and before.get(r) in _FAILING)
    return {"regressed": regressed, "fixed": fixed}


def _plugin_report(run: Run) -> dict[str, Any]:
    """The report narrowed to one plugin: what that plugin's badge says."""
    return {**run.report, "plugins": [run.plugin], "verdict": run.plugin["verdict"]}


def build_site(paths: Sequence[str], out: str | Path, *, spec_url: str | None = None,
               base_url: str | None = None) -> Site:
    """Verify every report of ``paths`` and write the registry to the folder ``out``.
    ``base_url``: where the site will be published, for the copyable badge snippets
    (default: links relative to the site)."""
    root = Path(out)
    for sub in ("runs", "plugins", "badges", "data/reports"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    site = Site()
    seen: set[str] = set()
    for path in paths:
        try:
            report = load_report(path)
            digest = verify_report(report)
        except ReportError as e:
            site.rejected.append((str(path), str(e)))
            continue
        run_id = digest.removeprefix("sha256:")[:16]
        if run_id in seen:
            continue  # the same report given twice
        seen.add(run_id)
        site.accepted.append(str(path))
        shutil.copyfile(path, root / "data" / "reports" / f"{run_id}.json")
        (root / "runs" / f"{run_id}.html").write_text(
            render_html(report, spec_url=spec_url, home="../index.html"), encoding="utf-8")
        for p in report["plugins"]:
            run = Run(run_id, report, p, str(path))
            site.plugins.setdefault(run.name, []).append(run)
    for runs in site.plugins.values():
        runs.sort(key=Run.sort_key)
    _write_pages(site, root, base_url)
    return site


def _cell(run: Run, rid: str) -> dict[str, Any] | None:
    for r in run.plugin["requirements"]:
        if r["id"] == rid:
            return {"status": r["status"], "href":
                    f"runs/{run.run_id}.html#req-{_css_id(run.plugin['label'])}-{_css_id(rid)}"}
    return None


def _css_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", str(text))


def _write_pages(site: Site, root: Path, base_url: str | None) -> None:
    env = environment()
    names = sorted(site.plugins, key=str.lower)
    newest = {n: site.plugins[n][-1] for n in names}
    slugs = {n: _slug(n) for n in names}
    if len(set(slugs.values())) != len(slugs):  # two names, one slug: number them
        slugs = {n: f"{_slug(n)}-{i}" for i, n in enumerate(names, 1)}
    requirements: dict[str, dict[str, Any]] = {}
    for run in newest.values():
        for r in run.plugin["requirements"]:
            requirements.setdefault(r["id"], r)
    rids = sorted(requirements)
    prefix = base_url.rstrip("/") + "/" if base_url else ""
    plugins_doc: list[dict[str, Any]] = []
    for n in names:
        runs = site.plugins[n]
        slug = slugs[n]
        (root / "badges" / f"{slug}.svg").write_text(render_badge(_plugin_report(runs[-1])),
                                                     encoding="utf-8")
        write_json(root / "badges" / f"{slug}.json", render_endpoint(_plugin_report(runs[-1])))
        history = []
        for i, run in enumerate(runs):
            history.append({
                "version": run.version, "kit_version": run.report["kit_version"],
                "profile": run.report["profile"], "started_at": run.report["started_at"],
                "verdict": run.plugin["verdict"], "run": f"runs/{run.run_id}.html",
                "report": f"data/reports/{run.run_id}.json", "digest": run.report["digest"],
                **(_changes(runs[i - 1], run) if i else {"regressed": [], "fixed": []}),
            })
        page = f"plugins/{slug}.html"
        badge_svg = f"{prefix}badges/{slug}.svg"
        plugins_doc.append({
            "name": n, "slug": slug, "page": page, "badge": f"badges/{slug}.svg",
            "endpoint": f"badges/{slug}.json", "newest": history[-1], "history": history,
            "markdown": f"[![rdq {n}]({badge_svg})]({prefix}{page})",
            "html": f'<a href="{prefix}{page}"><img alt="rdq {n}" src="{badge_svg}"></a>',
        })
    matrix = [
        {"id": rid, "title": requirements[rid]["title"], "level": requirements[rid]["level"],
         "cells": [_cell(newest[n], rid) for n in names]}
        for rid in rids
    ]
    doc = {
        "plugins": plugins_doc,
        "requirements": [{"id": m["id"], "title": m["title"], "level": m["level"]}
                         for m in matrix],
        "matrix": {n: newest[n].statuses for n in names},
        "rejected": [{"path": p, "reason": r} for p, r in site.rejected],
    }
    write_json(root / "data" / "registry.json", doc)
    (root / "index.html").write_text(
        env.get_template("site_index.html.j2").render(
            plugins=plugins_doc, matrix=matrix, rejected=site.rejected),
        encoding="utf-8")
    for p in plugins_doc:
        (root / p["page"]).write_text(
            env.get_template("site_plugin.html.j2").render(plugin=p), encoding="utf-8")
