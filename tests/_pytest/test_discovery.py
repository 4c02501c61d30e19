"""storage/_discovery.py: finding, loading and configuring plugins (no pytest run)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from rdq_compliance.storage._discovery import (
    DiscoveryError,
    available_plugin_names,
    load_plugin,
    resolve_options,
)
from tests._pytest._standin import STANDIN, install_fake_dist


@pytest.fixture
def fake_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A sys.path entry holding the stand-in module and fake installed distributions:
    'fake' (the stand-in), 'broken' (an import that explodes) and 'noimpl'."""
    (tmp_path / "standin.py").write_text(STANDIN, encoding="utf-8")
    (tmp_path / "exploding.py").write_text("raise RuntimeError('imported!')\n")
    (tmp_path / "noimpl.py").write_text("x = 1\n")
    (tmp_path / "typo.py").write_text(
        "from rdq_compliance import hookimpl\n"
        "@hookimpl\ndef rdq_storage_opne(options):\n    return None\n"
    )
    install_fake_dist(tmp_path, "fakeplugins", {
        "fake": "standin:plugin", "broken": "exploding", "noimpl": "noimpl", "typo": "typo",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = ("standin", "exploding", "noimpl", "typo")
    for mod in modules:
        monkeypatch.delitem(sys.modules, mod, raising=False)
    yield tmp_path
    # What the test imported goes too (monkeypatch restores only what it removed): a
    # 'standin' left behind would be the one a later pytester run in this process uses.
    for mod in modules:
        sys.modules.pop(mod, None)


def test_names_are_listed_without_loading(fake_site: Path) -> None:
    names = available_plugin_names()
    assert {"fake", "broken", "noimpl", "stdio"} <= set(names)
    assert "exploding" not in sys.modules  # listing imports nothing


def test_only_the_named_entry_point_is_loaded(fake_site: Path) -> None:
    plugin = load_plugin("fake")
    assert plugin.label == "fake"
    assert [s.name for s in plugin.options] == ["fault", "log", "durable", "password"]
    assert "exploding" not in sys.modules  # 'broken' is installed but was not imported


def test_unknown_name_lists_the_plugins_found(fake_site: Path) -> None:
    with pytest.raises(DiscoveryError) as info:
        load_plugin("nope")
    message = str(info.value)
    assert "--rdq-plugin='nope' is not an installed rdq storage plugin" in message
    assert "fake" in message and "broken" in message and "stdio" in message
    assert "\n" not in message


def test_plugin_whose_import_fails_is_a_clear_error(fake_site: Path) -> None:
    with pytest.raises(DiscoveryError,
                       match=r"entry point failed to load .*RuntimeError: imported!"):
        load_plugin("broken")


def test_plugin_without_open_hook(fake_site: Path) -> None:
    with pytest.raises(DiscoveryError, match="implements no rdq_storage_open hook"):
        load_plugin("noimpl")


def test_misspelled_hook_is_rejected(fake_site: Path) -> None:
    with pytest.raises(DiscoveryError, match="rdq_storage_opne"):
        load_plugin("typo")


def test_module_attr_form(fake_site: Path) -> None:
    assert load_plugin("standin:plugin").label == "standin:plugin"
    with pytest.raises(DiscoveryError, match="has no attribute 'nothing'"):
        load_plugin("standin:nothing")
    with pytest.raises(DiscoveryError, match="cannot import module 'no_such_mod'"):
        load_plugin("no_such_mod:x")


def test_option_resolution(fake_site: Path) -> None:
    a, b = load_plugin("fake"), load_plugin("standin:plugin")
    resolve_options([a, b], ["log=/tmp/x", "fake.fault=drop-ms"], environ={})
    assert a.resolved == {"fault": "drop-ms", "log": "/tmp/x", "durable": "no", "password": ""}
    assert b.resolved == {"fault": "none", "log": "/tmp/x", "durable": "no", "password": ""}
    assert a.explicit == {"fault", "log"}


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        (["nokey"], "is not KEY=VALUE or PLUGIN.KEY=VALUE"),
        (["=v"], "is not KEY=VALUE"),
        (["dsn=x"],
         "no selected plugin declares option 'dsn'.*fake: fault, log, durable, password"),
        (["fake.dsn=x"],
         "plugin 'fake' declares no option 'dsn'; declared: fault, log, durable, password"),
        (["fault=explode"], "option fault='explode' .* is not one of none, raise-on-read"),
    ],
)
def test_bad_options(fake_site: Path, settings: list[str], match: str) -> None:
    with pytest.raises(DiscoveryError, match=match):
        resolve_options([load_plugin("fake")], settings, environ={})


def test_required_option_and_environment(fake_site: Path) -> None:
    from rdq_compliance import OptionSpec

    plugin = load_plugin("fake")
    plugin.options = (OptionSpec("dsn", default=None, help="server URL", env="FAKE_DSN"),)
    with pytest.raises(DiscoveryError, match=(
        r"plugin 'fake' requires option 'dsn' \(server URL\); set it with "
        r"--rdq-option fake.dsn=VALUE or environment variable FAKE_DSN"
    )):
        resolve_options([plugin], [], environ={})
    resolve_options([plugin], [], environ={"FAKE_DSN": "pg://x"})
    assert plugin.resolved == {"dsn": "pg://x"}
    resolve_options([plugin], ["dsn=cli"], environ={"FAKE_DSN": "pg://x"})
    assert plugin.resolved == {"dsn": "cli"}  # the command line wins over the environment


def test_worker_in_a_value_names_the_process_from_every_source(fake_site: Path) -> None:
    """``{worker}`` gives each xdist worker a store of its own: it is replaced in a value
    from the command line, the environment and a default alike, and the plugin records
    which options named it (an upgrade run refuses them)."""
    from rdq_compliance import OptionSpec

    plugin = load_plugin("fake")
    plugin.options = (OptionSpec("path", default="db-{worker}.sqlite"),
                      OptionSpec("dsn", default=None, env="FAKE_DSN"),
                      OptionSpec("log", default="x.log"))
    resolve_options([plugin], [], environ={"FAKE_DSN": "pg://h/{worker}"}, worker="gw1")
    assert plugin.resolved == {"path": "db-gw1.sqlite", "dsn": "pg://h/gw1", "log": "x.log"}
    assert plugin.per_worker == {"path", "dsn"}
    resolve_options([plugin], ["log={worker}/{worker}.log", "dsn=pg://h/one"], environ={})
    assert plugin.resolved == {"path": "db-main.sqlite", "dsn": "pg://h/one",
                               "log": "main/main.log"}
    assert plugin.per_worker == {"path", "log"}


def test_testee_needs_stdio(fake_site: Path) -> None:
    with pytest.raises(DiscoveryError, match="only used with --rdq-plugin=stdio"):
        resolve_options([load_plugin("fake")], [], testee="./t", environ={})


MODULE = textwrap.dedent('''
    from rdq_compliance import StorageInfo, hookimpl

    class Storage:
        info = StorageInfo("folder", "1", frozenset({1}), frozenset())
        def open(self, namespace): ...
        def drop(self, namespace): ...
        def close(self): ...

    @hookimpl
    def rdq_storage_open(options):
        return Storage()

    class Plugin:
        rdq_storage_open = staticmethod(rdq_storage_open)

    plugin = Plugin()
''')


def test_unpackaged_plugin_loads_from_its_folder(tmp_path: Path, monkeypatch):
    """`module:attr` (issue 14 §8): a module in the current folder loads although the
    `pytest` script does not put the folder on sys.path; `module:` registers the module
    itself (module-level hooks)."""
    name = f"rdq_folder_plugin_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        assert load_plugin(f"{name}:").pm.hook.rdq_storage_open.get_hookimpls()
        assert load_plugin(f"{name}:plugin").label == f"{name}:plugin"
    finally:
        sys.modules.pop(name, None)
