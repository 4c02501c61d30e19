"""``rdq-compliance validate``: in-process and as a subprocess."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rdq_compliance._cli_validate import register
from tests.envelope._envelopes import SEED_TEXT, mutate, seed

COMPACT = json.dumps(seed())
BAD_QUEUE = json.dumps(mutate(seed(), {"/queue": "Bad"}))


def run(argv: list[str]) -> int:
    """A fresh parser holding only our subcommand, as the kit's CLI builds it."""
    parser = argparse.ArgumentParser(prog="rdq-compliance")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["validate", *argv])
    code: int = args.func(args)
    return code


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "good": tmp_path / "good.json",
        "bad": tmp_path / "bad.json",
        "lines": tmp_path / "many.jsonl",
    }
    paths["good"].write_text(SEED_TEXT, encoding="utf-8")
    paths["bad"].write_text(BAD_QUEUE, encoding="utf-8")
    paths["lines"].write_text(f"{COMPACT}\n\n{BAD_QUEUE}\r\n{{\n", encoding="utf-8")
    return paths


def test_all_valid(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(files["good"])]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "1 envelopes checked, 0 invalid\n"


def test_invalid_file(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(files["good"]), str(files["bad"])]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{files['bad']}: /queue: QUEUE_CHARSET: character 'B' at index 0 is not allowed; "
        "use only a-z 0-9 . _ - (C8a)"
    ]
    assert err == "2 envelopes checked, 1 invalid\n"


def test_jsonl_with_line_numbers(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run([str(files["lines"])]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith(f"{files['lines']}:3: /queue: QUEUE_CHARSET: ")
    assert lines[1].startswith(f"{files['lines']}:4: /: JSON_SYNTAX: ")
    assert len(lines) == 2
    assert err == "3 envelopes checked, 2 invalid\n"


def test_quiet(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--quiet", str(files["bad"])]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == "1 envelopes checked, 1 invalid\n"


def test_version_support(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v2 = tmp_path / "v2.json"
    v2.write_text(json.dumps(mutate(seed(), {"/envelope_version": 2})))
    assert run([str(v2)]) == 1
    assert "UNSUPPORTED_ENVELOPE_VERSION" in capsys.readouterr().out
    assert run(["--version-support", "1", "--version-support", "2", str(v2)]) == 0
    assert run(["--version-support", "2", str(v2)]) == 0


@pytest.mark.parametrize(
    ("stdin", "checked"),
    [
        (SEED_TEXT, 1),  # pretty JSON over many lines: one envelope
        (f"{COMPACT}\n{COMPACT}\n", 2),  # JSON Lines
        (f"\n{COMPACT}\n", 1),
    ],
)
def test_stdin_detection(
    stdin: str, checked: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    assert run(["-"]) == 0
    assert capsys.readouterr().err == f"{checked} envelopes checked, 0 invalid\n"


def test_stdin_label(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"[]")))
    assert run(["-"]) == 1
    assert capsys.readouterr().out.startswith("<stdin>: /: FIELD_TYPE: ")


def test_invalid_utf8_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(SEED_TEXT.replace("v3", "v\xe9").encode("latin-1"))
    assert run([str(path)]) == 1
    assert ": /: UTF8_INVALID: invalid UTF-8 at byte offset " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "no FILE given"),
        (["{missing}"], "does not exist"),
        (["{dir}"], "is a directory"),
        (["{good}", "{missing}"], "does not exist"),
        (["-", "-"], "more than once"),
    ],
)
def test_usage_errors(
    argv: list[str], message: str, files: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    names: dict[str, Any] = {"missing": tmp_path / "nope.json", "dir": tmp_path, **files}
    assert run([a.format(**names) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # nothing validated before the usage error
    assert len(err.splitlines()) == 1
    assert err.startswith("rdq-compliance validate: error: ") and message in err


def test_unreadable_file(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    import os

    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    files["good"].chmod(0)
    assert run([str(files["good"])]) == 2
    assert "cannot be read" in capsys.readouterr().err


def test_bad_version_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(["--version-support", "x", "f.json"])
    assert info.value.code == 2
    assert "N='x'" in capsys.readouterr().err


def test_through_the_kit_cli(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from rdq_compliance._cli import main

    assert main(["validate", str(files["good"])]) == 0
    assert main(["validate", str(files["bad"])]) == 1
    assert capsys.readouterr().err.endswith("1 envelopes checked, 1 invalid\n")


def test_subprocess(files: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rdq_compliance", "validate", str(files["lines"]),
         str(files["good"])],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "4 envelopes checked, 2 invalid"
    assert "Traceback" not in proc.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "rdq_compliance", "validate", str(files["good"]) + ".nope"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr and len(missing.stderr.splitlines()) == 1
