"""``--rdq-example-db`` (issue 23 §5): a failing example one run saves is the first example
the next run tries, whatever its seed; bad values are one-line usage errors.

The mutant (the example memory plugin, bent) changes what it reads back of every id that
does not end in ``0`` and logs every id written. Hypothesis runs the minimal failing
example once more at the end of a search, so run 1's last write is the example it saved
(an id not ending in ``0``). Run 2 (another seed) writes that example first with the database, and
something else first without it (its own search starts with the simplest envelope, id
``0…00``, which passes).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._pytest._standin import run
from tests.plugins_example.conftest import local_redis

TEST = "test_generated_envelopes_roundtrip"
LOG_ENV = "RDQ_TEST_WRITES"
MUTANT = f"""
import dataclasses, os
from rdq_compliance import hookimpl
from rdq_plugin_memory import MemoryAdapter, MemoryStorage

class Adapter(MemoryAdapter):
    def write(self, envelope):
        with open(os.environ[{LOG_ENV!r}], "a") as f:
            f.write(envelope.id + "\\n")
        super().write(envelope)

    def read(self, id):
        env = super().read(id)
        if env is not None and not id.endswith("0"):  # a defect only some ids show
            env = dataclasses.replace(env, queue=env.queue + "!")
        return env

class Storage(MemoryStorage):
    def open(self, namespace):
        super().open(namespace)
        return Adapter(self, namespace)

class Plugin:
    @hookimpl
    def rdq_storage_open(self, options):
        return Storage()

plugin = Plugin()
"""


def _writes(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _run(kit: pytest.Pytester, log: Path, seed: int, *db: str) -> pytest.RunResult:
    log.unlink(missing_ok=True)
    return run(kit, "--rdq-plugin=mutant:plugin", f"--rdq-seed={seed}", "-k", TEST,
               "--rdq-allow-incomplete", *db)


def _replayed_first(kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, db: str) -> None:
    kit.makepyfile(mutant=MUTANT)
    log = kit.path / "writes.log"
    monkeypatch.setenv(LOG_ENV, str(log))
    first = _run(kit, log, 1, f"--rdq-example-db={db}")
    first.assert_outcomes(failed=1)
    saved = _writes(log)[-1]  # the minimal failing example, run once more at the end
    assert not saved.endswith("0"), saved
    again = _run(kit, log, 2, f"--rdq-example-db={db}")
    again.assert_outcomes(failed=1)
    assert _writes(log)[0] == saved
    assert any("example database (--rdq-example-db): " in line
               for line in again.stdout.lines), again.stdout.str()[-2000:]
    alone = _run(kit, log, 2)
    alone.assert_outcomes(failed=1)
    assert _writes(log)[0] != saved  # without the database the seed decides


def test_a_directory_database_replays_the_last_runs_failure_first(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = kit.path / "shared-examples"
    _replayed_first(kit, monkeypatch, str(db))
    assert any(db.rglob("*")), "nothing saved in the directory"


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix unique to this test; its keys are deleted afterwards."""
    client = local_redis()
    prefix = f"rdq-kit-test-examples-{secrets.token_hex(6)}:"
    try:
        yield prefix
        assert list(client.scan_iter(match=f"{prefix}*", count=1000)), "nothing saved"
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


def test_a_redis_database_replays_the_last_runs_failure_first(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, redis_prefix: str
) -> None:
    _replayed_first(kit, monkeypatch, f"redis://127.0.0.1:6379/0?prefix={redis_prefix}")


@pytest.mark.parametrize(("value", "message"), [
    ("redis://127.0.0.1:1/0", "--rdq-example-db='redis://127.0.0.1:1/0': cannot reach Redis: "
                              "ConnectionError: *; start it or fix the URL"),
    ("redis://127.0.0.1:6379/0?prefix=", "--rdq-example-db='redis://127.0.0.1:6379/0?prefix=' "
                                         "has an empty prefix; expected e.g. *"),
    ("ftp://host/x", "--rdq-example-db='ftp://host/x': unknown scheme 'ftp://'; expected a "
                     "directory, redis://HOST:PORT/DB[?prefix=KEYPREFIX] or "
                     "github:OWNER/REPO[/ARTIFACT]"),
    ("github:owner", "--rdq-example-db='github:owner' is not a GitHub artifact database; "
                     "expected github:OWNER/REPO or github:OWNER/REPO/ARTIFACT"),
    ("a-file", "--rdq-example-db='*a-file' is a file, not a directory; expected a directory*"),
])
def test_a_bad_value_is_a_one_line_usage_error(
    kit: pytest.Pytester, value: str, message: str
) -> None:
    (kit.path / "a-file").write_text("")
    result = run(kit, "--rdq-plugin=fake", f"--rdq-example-db={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert "Traceback" not in result.stderr.str()


def test_the_ini_twin_and_a_github_database_are_accepted(kit: pytest.Pytester) -> None:
    """github: is read only and fetched lazily (no network at the start); here only the
    form is checked, through the ini file, with --collect-only."""
    kit.makeini("[pytest]\nrdq_example_db = github:octo/widgets/examples\n")
    result = run(kit, "--rdq-plugin=fake", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
