"""Finding, loading and configuring the storage plugins named with ``--rdq-plugin``.

Only the named plugins are imported: a broken or slow plugin that is installed
but not selected never affects a run. Each selected plugin gets its own pluggy
``PluginManager``, so a hook call reaches that plugin and no other.

Every problem found here is a configuration problem of the person running the
kit, reported as :class:`DiscoveryError` with a one-line message; the pytest
layer turns it into a usage error.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pluggy

from . import hookspecs
from ._protocol import OptionSpec, positive_seconds

__all__ = [
    "ENTRY_POINT_GROUP",
    "MAIN",
    "STDIO",
    "WORKER",
    "DiscoveryError",
    "LoadedPlugin",
    "available_plugin_names",
    "load_plugin",
    "plugin_sources",
    # Defined in _protocol (the bridge reads its timeouts with it and sits on the protocol
    # alone); the kit reads --rdq-timeout and the bridge's timeout option with it from here.
    "positive_seconds",
    "resolve_options",
]

ENTRY_POINT_GROUP = "rdq.storage"
STDIO = "stdio"
WORKER = "{worker}"
"""Replaced, in every option value (given, from the environment or a default), by the
name of the process that opens the store: ``gw0``, ``gw1``… in a pytest-xdist worker,
``main`` otherwise. Under ``-n N`` each worker then has a store of its own
(``--rdq-option path=.rdq/db-{worker}.sqlite``), as pytest-django gives each worker its
own database: workers that share one file wait on its write lock and re-read what the
other wrote."""
MAIN = "main"
"""What :data:`WORKER` becomes outside an xdist worker (a serial run, the xdist controller)."""
_STDIO_MODULE = "rdq_compliance.storage._stdio"


class DiscoveryError(Exception):
    """A plugin cannot be found, loaded or configured as asked (a usage error)."""


@dataclass
class LoadedPlugin:
    """One selected plugin: its label, its own plugin manager and declared options."""

    label: str
    pm: pluggy.PluginManager
    options: tuple[OptionSpec, ...]
    resolved: dict[str, str] = field(default_factory=dict)
    """Every declared option, resolved (filled in by :func:`resolve_options`)."""
    explicit: set[str] = field(default_factory=set)
    """Options set on the command line, in the ini file or through the environment."""
    per_worker: set[str] = field(default_factory=set)
    """Options whose value named :data:`WORKER` (a store per process)."""


def plugin_sources(loaded: LoadedPlugin) -> tuple[str, ...]:
    """The files of the modules that define what ``loaded`` registered (its hooks' code),
    sorted; ``"<name>"`` for a module without a file."""
    found = set()
    for obj in loaded.pm.get_plugins():
        module = inspect.getmodule(obj)
        file = getattr(module, "__file__", None)
        found.add(os.path.realpath(file) if file else f"<{getattr(module, '__name__', obj)}>")
    return tuple(sorted(found))


def available_plugin_names() -> list[str]:
    """Names of the installed ``rdq.storage`` entry points plus ``stdio``, without loading any."""
    names = {ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    names.add(STDIO)
    return sorted(names)


def _new_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    return pm


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _import_module(module_name: str) -> ModuleType:
    """Import ``module_name``; a module not installed but lying in the current folder
    (an unpackaged plugin, tested from its folder) is found there too: the ``pytest``
    script, unlike ``python -m pytest``, does not put that folder on ``sys.path``."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.split(".")[0]
        here = Path.cwd()
        if exc.name != top or not (
            (here / f"{top}.py").is_file() or (here / top / "__init__.py").is_file()
        ):
            raise
    sys.path.append(str(here))  # last: nothing installed is shadowed
    return importlib.import_module(module_name)


def _import_object(spec: str) -> object:
    module_name, _, attr = spec.partition(":")
    if not module_name:
        raise DiscoveryError(
            f"--rdq-plugin={spec!r} is not of the form 'package.module:attr' (or "
            "'module:' when the hooks are the module's own functions)"
        )
    try:
        obj: object = _import_module(module_name)
    except Exception as exc:
        raise DiscoveryError(
            f"--rdq-plugin={spec!r}: cannot import module {module_name!r} ({_describe(exc)}); "
            "check that it is importable from this environment (installed, or a "
            f"{module_name.split('.')[0]}.py in the current folder)"
        ) from None
    if not attr:  # 'module:': the hooks are module-level functions
        return obj
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise DiscoveryError(
                f"--rdq-plugin={spec!r}: module {module_name!r} has no attribute {attr!r}; "
                f"for hooks defined as module-level functions use --rdq-plugin={module_name}:"
            ) from None
    return obj


def load_plugin(name: str) -> LoadedPlugin:
    """Load the plugin called ``name`` into a fresh plugin manager.

    ``stdio`` is the built-in testee bridge; ``package.module:attr`` imports and
    registers that object; anything else is the name of an ``rdq.storage``
    entry point, and only that entry point is loaded.
    """
    pm = _new_manager()
    if name == STDIO:
        try:
            pm.register(importlib.import_module(_STDIO_MODULE), name=STDIO)
        except Exception as exc:
            raise DiscoveryError(
                f"--rdq-plugin={name!r}: the built-in stdio bridge failed to load "
                f"({_describe(exc)})"
            ) from None
    elif ":" in name:
        obj = _import_object(name)
        try:
            pm.register(obj, name=name)
        except Exception as exc:
            raise DiscoveryError(
                f"--rdq-plugin={name!r}: cannot register {_describe(exc)}"
            ) from None
    else:
        try:
            count = pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name=name)
        except Exception as exc:
            raise DiscoveryError(
                f"--rdq-plugin={name!r}: the plugin's entry point failed to load "
                f"({_describe(exc)}); reinstall the plugin or fix its import"
            ) from None
        if count == 0:
            raise DiscoveryError(
                f"--rdq-plugin={name!r} is not an installed rdq storage plugin; found: "
                f"{', '.join(available_plugin_names())} (entry-point group "
                f"{ENTRY_POINT_GROUP!r}; 'package.module:attr' is accepted too)"
            )
    try:
        # Reject hook implementations that match no hookspec (a typo such as
        # rdq_storage_opne would otherwise be silently ignored).
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise DiscoveryError(f"--rdq-plugin={name!r}: invalid hook implementation: {exc}") from None
    if not pm.hook.rdq_storage_open.get_hookimpls():
        raise DiscoveryError(
            f"--rdq-plugin={name!r} implements no rdq_storage_open hook; decorate a function "
            "'rdq_storage_open(options)' with rdq_compliance.hookimpl"
        )
    return LoadedPlugin(name, pm, _declared_options(name, pm))


def _declared_options(label: str, pm: pluggy.PluginManager) -> tuple[OptionSpec, ...]:
    try:
        specs = pm.hook.rdq_storage_options()
    except Exception as exc:
        raise DiscoveryError(
            f"plugin {label!r}: rdq_storage_options() raised {_describe(exc)}"
        ) from None
    if specs is None:
        return ()
    if isinstance(specs, str | bytes) or not isinstance(specs, Iterable):
        raise DiscoveryError(
            f"plugin {label!r}: rdq_storage_options() returned {specs!r}; "
            "expected a list of rdq_compliance.OptionSpec"
        )
    out: list[OptionSpec] = []
    for spec in specs:
        if not isinstance(spec, OptionSpec):
            raise DiscoveryError(
                f"plugin {label!r}: rdq_storage_options() returned {spec!r}; "
                "expected rdq_compliance.OptionSpec values"
            )
        if any(s.name == spec.name for s in out):
            raise DiscoveryError(f"plugin {label!r} declares option {spec.name!r} twice")
        out.append(spec)
    return tuple(out)


def _declared_names(plugin: LoadedPlugin) -> str:
    return ", ".join(s.name for s in plugin.options) or "none"


def split_option_key(key: str, labels: Sequence[str]) -> tuple[str | None, str]:
    """``PLUGIN.KEY`` -> (PLUGIN, KEY) when PLUGIN is one of ``labels``, else (None, key).
    Longest label first: 'pkg.mod:attr.key' must match the longest plugin label."""
    for label in sorted(labels, key=len, reverse=True):
        if key.startswith(label + "."):
            return label, key[len(label) + 1 :]
    return None, key


def resolve_options(
    plugins: Sequence[LoadedPlugin],
    settings: Sequence[str],
    *,
    testee: str | None = None,
    environ: Mapping[str, str] | None = None,
    worker: str = MAIN,
) -> None:
    """Fill ``plugin.resolved`` for every plugin from ``settings`` (``KEY=VALUE`` or
    ``PLUGIN.KEY=VALUE``), ``testee`` (the stdio command), the environment and defaults;
    :data:`WORKER` in a value becomes ``worker``.

    Raises :class:`DiscoveryError` for malformed settings, settings no selected
    plugin declares, values outside declared choices and missing required options.
    """
    env = os.environ if environ is None else environ
    given: dict[str, dict[str, str]] = {p.label: {} for p in plugins}
    labels = [p.label for p in plugins]
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key:
            raise DiscoveryError(
                f"--rdq-option={setting!r} is not KEY=VALUE or PLUGIN.KEY=VALUE"
            )
        target, opt = split_option_key(key, labels)
        if target is not None:
            plugin = next(p for p in plugins if p.label == target)
            if not any(s.name == opt for s in plugin.options):
                raise DiscoveryError(
                    f"--rdq-option={setting!r}: plugin {target!r} declares no option {opt!r}; "
                    f"declared: {_declared_names(plugin)}"
                )
            given[target][opt] = value
            continue
        takers = [p for p in plugins if any(s.name == key for s in p.options)]
        if not takers:
            declared = "; ".join(f"{p.label}: {_declared_names(p)}" for p in plugins)
            raise DiscoveryError(
                f"--rdq-option={setting!r}: no selected plugin declares option {key!r} "
                f"(declared options — {declared})"
            )
        for p in takers:
            given[p.label][key] = value
    if testee is not None:
        stdio = [p for p in plugins if p.label == STDIO]
        if not stdio:
            raise DiscoveryError(
                f"--rdq-testee={testee!r} is only used with --rdq-plugin=stdio, "
                "which is not selected"
            )
        given[STDIO]["command"] = testee
    for p in plugins:
        resolved: dict[str, str] = {}
        explicit: set[str] = set()
        per_worker: set[str] = set()
        for spec in p.options:
            if spec.name in given[p.label]:
                value, source = given[p.label][spec.name], "--rdq-option"
                explicit.add(spec.name)
            elif spec.env and spec.env in env:
                value, source = env[spec.env], f"environment variable {spec.env}"
                explicit.add(spec.name)
            elif spec.default is not None:
                value, source = spec.default, "default"
            else:
                how = f"--rdq-option {p.label}.{spec.name}=VALUE"
                if p.label == STDIO and spec.name == "command":
                    how = '--rdq-testee "CMD"'
                if spec.env:
                    how += f" or environment variable {spec.env}"
                hint = f" ({spec.help})" if spec.help else ""
                raise DiscoveryError(
                    f"plugin {p.label!r} requires option {spec.name!r}{hint}; set it with {how}"
                )
            if spec.choices and value not in spec.choices:
                raise DiscoveryError(
                    f"plugin {p.label!r}: option {spec.name}={value!r} (from {source}) is not one "
                    f"of {', '.join(spec.choices)}"
                )
            if WORKER in value:
                per_worker.add(spec.name)
                value = value.replace(WORKER, worker)
            resolved[spec.name] = value
        p.resolved = resolved
        p.explicit = explicit
        p.per_worker = per_worker
