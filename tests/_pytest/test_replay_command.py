"""The replay command printed under a failure reproduces the same storage: it repeats the
command line's --rdq-option values (shell-quoted, in their order), masks secrets, and
running it replays the case."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rdq_compliance.testing._case import MASKED, mask_secrets, replay_command
from tests._pytest._standin import run

ONE_EXAMPLE = ("-k", "test_timestamp_keeps_milliseconds and leap")


def _replay_lines(result: pytest.RunResult) -> list[str]:
    """The distinct replay commands of the output: under ``CI=true`` pytest's short
    summary repeats the failure's notes in full, so a command may appear twice."""
    found = [ln.strip().split("replay: ", 1)[1] for ln in result.stdout.lines
             if "replay: pytest" in ln]
    return list(dict.fromkeys(found))


def _writes(log: Path) -> list[str]:
    return [ln.split()[2] for ln in log.read_text(encoding="utf-8").splitlines()
            if ln.startswith("write ")]


def test_printed_command_repeats_the_options_and_replays_the_case(
    kit: pytest.Pytester,
) -> None:
    folder = kit.path / "a b"  # a space, so the values need quoting
    folder.mkdir()
    log = folder / "it's.log"
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms",
                 f"--rdq-option=log={log}", "--rdq-timeout=7", "--rdq-failures-dir=my cases",
                 *ONE_EXAMPLE)
    result.assert_outcomes(failed=1)
    (case,) = (kit.path / "my cases").glob("*.json")
    (command,) = _replay_lines(result)
    assert command == (
        f"pytest --rdq-plugin=fake --rdq-option=fault=drop-ms "
        f"--rdq-option={shlex.quote(f'log={log}')} --rdq-timeout=7 "
        f"--rdq-replay {shlex.quote(f'my cases/{case.name}')}"
    )
    written = _writes(log)
    assert written

    argv = shlex.split(command)
    assert argv[0] == "pytest" and f"--rdq-option=log={log}" in argv
    log.unlink()
    again = run(kit, *argv[1:])
    again.assert_outcomes(failed=1)
    assert "deselected" in again.stdout.str()  # the case alone
    assert _writes(log) == written  # the same storage options: the same log, same writes
    again.stdout.fnmatch_lines(["*RDQ-RT-007*", "*instant changed*"])


def test_options_from_the_ini_file_are_left_to_it(kit: pytest.Pytester) -> None:
    kit.makeini("[pytest]\nrdq_options = fault=drop-ms\n")
    result = run(kit, "--rdq-plugin=fake", *ONE_EXAMPLE)
    result.assert_outcomes(failed=1)
    (command,) = _replay_lines(result)
    assert "--rdq-option" not in command
    run(kit, *shlex.split(command)[1:]).assert_outcomes(failed=1)


def test_secret_option_is_masked_with_a_note(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms",
                 "--rdq-option=password=hunter2", *ONE_EXAMPLE)
    result.assert_outcomes(failed=1)
    (command,) = _replay_lines(result)
    assert f"--rdq-option={shlex.quote('password=' + MASKED)} " in command
    result.stdout.fnmatch_lines([
        "*replay note: [*][*][*] stands for the secret in password; put the real value back "
        "before running that command*"
    ])
    assert "hunter2" not in result.stdout.str()


# -- the command itself ------------------------------------------------------------------


def _command(label: str = "fake", **kw: object) -> tuple[list[str], list[str]]:
    kw.setdefault("labels", (label,))
    kw.setdefault("declared", ("fault", "log", "password", "dsn", "command", "timeout"))
    command, masked = replay_command(label, "cases/x.json", **kw)  # type: ignore[arg-type]
    return shlex.split(command), masked


def test_only_the_options_that_reach_the_replayed_plugin_are_repeated() -> None:
    argv, _ = _command(
        labels=("fake", "other"),
        declared=("fault", "log"),
        options=["log=/x", "other.fault=none", "fake.fault=drop-ms", "durable=yes",
                 "fault=none"],
    )
    # 'other.fault' is for the other plugin, 'durable' is declared by it only: a replay
    # selecting 'fake' alone would refuse both. The order is kept (the last 'fault' wins).
    assert argv == ["pytest", "--rdq-plugin=fake", "--rdq-option=log=/x",
                    "--rdq-option=fake.fault=drop-ms", "--rdq-option=fault=none",
                    "--rdq-replay", "cases/x.json"]


def test_awkward_values_survive_the_shell() -> None:
    values = ["/tmp/a b/c.log", "it's", 'say "hi"', "$HOME `id`", "-starts-with-dash", ""]
    argv, masked = _command(options=[f"log={v}" for v in values])
    assert argv[2:-2] == [f"--rdq-option=log={v}" for v in values]
    assert masked == []


def test_ini_options_stay_off_when_the_command_line_replaced_them() -> None:
    # The original run's command line options (all for another plugin) replaced the ini
    # file's: the replay must not fall back to the ini file's either.
    argv, _ = _command(labels=("fake", "other"), options=["other.fault=none"],
                       ini_has_options=True)
    assert argv[2:4] == ["-o", "rdq_options="]
    argv, _ = _command(labels=("fake", "other"), options=["other.fault=none"])
    assert "-o" not in argv


def test_testee_and_timeout() -> None:
    argv, _ = _command("stdio", testee="node my testee.js", timeout="2.5")
    assert argv[2:4] == ["--rdq-testee=node my testee.js", "--rdq-timeout=2.5"]
    argv, _ = _command("fake", testee="node my testee.js")  # refused without stdio
    assert not any(a.startswith("--rdq-testee") for a in argv)


def test_masked_options_are_named() -> None:
    argv, masked = _command(options=["password=hunter2", "dsn=postgresql://u:pw@h/db",
                                     "fake.password=x", "log=/x"])
    assert argv[2:6] == ["--rdq-option=password=***", "--rdq-option=dsn=postgresql://u:***@h/db",
                         "--rdq-option=fake.password=***", "--rdq-option=log=/x"]
    assert masked == ["password", "dsn", "fake.password"]
    argv, masked = _command("stdio", testee="env DSN=postgresql://u:pw@h/db node t.js")
    assert argv[2] == "--rdq-testee=env DSN=postgresql://u:***@h/db node t.js"
    assert masked == ["--rdq-testee"]


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("password", "hunter2", MASKED),
        ("db_passwd", "x", MASKED),
        ("api_token", "x", MASKED),
        ("client_secret", "x", MASKED),
        ("apikey", "x", MASKED),
        ("dsn", "postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("dsn", "postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),
        ("url", "redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("dsn", "host=h password=pw dbname=d", "host=h password=*** dbname=d"),
        ("dsn", "host=h password='p w' dbname=d", "host=h password=*** dbname=d"),
        ("url", "https://h/x?token=abc&y=1", "https://h/x?token=***&y=1"),
        # nothing secret: unchanged
        ("dsn", "postgresql://u@h/db", "postgresql://u@h/db"),
        ("url", "redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("path", "/tmp/rdq.sqlite", "/tmp/rdq.sqlite"),
        ("key_prefix", "rdq:", "rdq:"),
    ],
)
def test_mask_secrets(name: str, value: str, shown: str) -> None:
    assert mask_secrets(name, value) == shown
