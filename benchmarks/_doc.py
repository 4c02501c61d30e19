"""docs/performance.md for ``benchmarks/run.py``: the machine's description, and the
generated block between the ``bench:begin`` / ``bench:end`` markers, written whole or
section by section (``--write-sections``)."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from benchmarks._kitrun import PYTHON, ROOT

DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

# -- the document ----------------------------------------------------------------------


def machine() -> list[str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = subprocess.run(
        [PYTHON, "-c", "import hypothesis, pytest; print(pytest.__version__, "
         "hypothesis.__version__)"], capture_output=True, text=True, check=False,
    ).stdout.split()
    bytecode = ("kit runs read and write Python's bytecode caches (a first run writes them, as "
                "pip install does), whatever `PYTHONDONTWRITEBYTECODE` says; section 6 also "
                "measures without them (`cold`)")
    return [
        f"- date: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {os.cpu_count()} CPUs (`nproc` {len(os.sched_getaffinity(0))}), {cpu}, "
        f"{platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}, pytest {versions[0] if versions else '?'}, "
        f"Hypothesis {versions[1] if len(versions) > 1 else '?'}",
        f"- Python bytecode: {bytecode}",
    ]


def _split_block(text: str) -> tuple[str, str, str]:
    if BEGIN not in text or END not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    return head, block, tail


def write_doc(block: str) -> None:
    text = DOC.read_text("utf-8") if DOC.exists() else f"# Performance\n\n{BEGIN}\n{END}\n"
    head, _, tail = _split_block(text)
    DOC.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}", "utf-8")


_SECTION = re.compile(r"^### (\d+)\. ", re.M)


def replace_sections(block: str, sections: Sequence[list[str]], note: str) -> str:
    """``block`` (the generated part of docs/performance.md) with each of ``sections``
    put in place of the section of its number (from its ``### N.`` heading to the next
    one), or inserted in number order when the block has none; ``note`` goes under each
    replaced heading (when and how it was measured, which differs from the block's)."""
    for rows in sections:
        found = _SECTION.match(rows[0]) if rows else None
        if found is None:
            raise ValueError(f"a section starts with its '### N.' heading, got {rows[:1]!r}")
        number = int(found.group(1))
        text = "\n".join([rows[0], "", note, *rows[1:]]).rstrip() + "\n"
        heads = list(_SECTION.finditer(block))
        mine = [m for m in heads if int(m.group(1)) == number]
        if mine:
            start = mine[0].start()
            later = [m.start() for m in heads if m.start() > start]
            end = later[0] if later else len(block.rstrip()) + 1
            block = block[:start] + text + ("\n" if later else "") + block[end:]
            continue
        after = [m.start() for m in heads if int(m.group(1)) > number]
        at = after[0] if after else len(block.rstrip()) + 1
        block = block[:at].rstrip("\n") + "\n\n" + text + ("\n" if after else "") + block[at:]
    return block.rstrip("\n") + "\n"
