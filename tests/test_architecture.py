"""The layers depend one way; checked statically from each module's imports.

- the envelope core imports only the standard library, python-ulid and itself;
- strategies sit on the core (and Hypothesis), the storage interface on the core (and
  pluggy); neither imports pytest;
- reporting reads results: no pytest, no Hypothesis, no suite;
- the pytest11 entry module imports nothing but pytest at start-up;
- example plugins use only the public ``rdq_compliance`` API.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "rdq_compliance"
STDLIB = sys.stdlib_module_names


def imports(path: Path, *, top_level_only: bool = False) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    package = parts[:-1]  # a module's package; for __init__.py the package itself
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module == "__future__":
                continue
            yield node.lineno, module
            if node.level and not node.module:  # `from . import x` imports the module x
                for alias in node.names:
                    yield node.lineno, f"{module}.{alias.name}"


def modules_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "node_modules" not in p.parts)


def offenders(paths: list[Path], allowed: tuple[str, ...]) -> list[str]:
    bad = []
    for path in paths:
        for line, module in imports(path):
            top = module.split(".")[0]
            if top in STDLIB and top != "rdq_compliance":
                continue
            if not any(module == a or module.startswith(a + ".") for a in allowed):
                bad.append(f"{path.relative_to(REPO)}:{line}: imports {module}")
    return bad


def test_envelope_core_imports_only_stdlib_ulid_and_itself() -> None:
    paths = modules_under(PACKAGE / "envelope")
    assert paths
    assert offenders(paths, ("ulid", "rdq_compliance.envelope")) == []


def test_strategies_sit_on_the_core_and_hypothesis() -> None:
    allowed = ("hypothesis", "ulid", "rdq_compliance.envelope", "rdq_compliance.strategies")
    assert offenders(modules_under(PACKAGE / "strategies"), allowed) == []


def test_storage_interface_sits_on_the_core_and_pluggy() -> None:
    allowed = ("pluggy", "rdq_compliance.envelope", "rdq_compliance.storage",
               "rdq_compliance._version")
    assert offenders(modules_under(PACKAGE / "storage"), allowed) == []


def test_reporting_knows_no_suite_pytest_or_hypothesis() -> None:
    allowed = ("rdq_compliance.reporting", "rdq_compliance._requirements",
               "rdq_compliance._version", "rdq_compliance.envelope", "jsonschema",
               "rdq_compliance._spec", "jinja2")
    assert offenders(modules_under(PACKAGE / "reporting"), allowed) == []


def test_all_hookspecs_live_in_one_module() -> None:
    defining = [
        str(p.relative_to(REPO))
        for p in modules_under(PACKAGE)
        if "HookspecMarker(" in p.read_text(encoding="utf-8")
    ]
    assert defining == ["rdq_compliance/storage/hookspecs.py"]


def test_pytest11_entry_module_imports_only_pytest_at_start_up() -> None:
    entry = PACKAGE / "_pytest" / "entry.py"
    top = {m for _, m in imports(entry, top_level_only=True)}
    assert top <= {"pytest", "rdq_compliance._pytest._options"}, top
    options = {m for _, m in imports(PACKAGE / "_pytest" / "_options.py", top_level_only=True)}
    assert options <= {"pytest", "typing", "pathlib"}, options


@pytest.mark.parametrize(
    "plugin",
    sorted(p.parent.name for p in (REPO / "plugins_example").glob("*/pyproject.toml")),
)
def test_example_plugins_use_only_the_public_api(plugin: str) -> None:
    bad = [
        f"{path.relative_to(REPO)}:{line}: imports {module}"
        for path in modules_under(REPO / "plugins_example" / plugin)
        for line, module in imports(path)
        if module.startswith("rdq_compliance") and module != "rdq_compliance"
    ]
    assert bad == []


def test_every_public_name_has_one_path() -> None:
    """pluggy's style: one import path per public name. A name bound in two public
    modules (``rdq_compliance.Envelope`` and ``rdq_compliance.envelope.Envelope``, say)
    is two paths; names of private modules (``_model``) are implementation."""
    import importlib
    import types

    public = sorted(
        _module_name(p) for p in modules_under(PACKAGE)
        if not any(part.startswith("_") for part in
                   p.relative_to(REPO).with_suffix("").parts if part != "__init__")
        and "suites" not in p.parts
    )
    paths: dict[tuple[str, int], list[str]] = {}
    for name in public:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.startswith("_") or isinstance(value, types.ModuleType):
                continue
            if getattr(value, "__module__", name) == "typing" or attr == "annotations":
                continue  # typing helpers and `from __future__ import annotations`
            if attr in getattr(module, "__all__", [attr]):
                paths.setdefault((attr, id(value)), []).append(f"{name}.{attr}")
    assert [p for p in paths.values() if len(p) > 1] == []


def test_the_public_surface_is_declared() -> None:
    import rdq_compliance
    import rdq_compliance.strategies
    import rdq_compliance.testing

    for module in (rdq_compliance, rdq_compliance.strategies, rdq_compliance.testing):
        assert module.__all__, module.__name__
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], f"{module.__name__}.__all__ names missing attributes: {missing}"
    assert (PACKAGE / "py.typed").exists()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The kit modules ``path`` imports when it runs, function-local imports included
    (a cycle hidden in a function is still a cycle); ``if TYPE_CHECKING:`` blocks are not."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    package = list(path.relative_to(REPO).with_suffix("").parts)[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in modules else module)
    return {m for m in found if m in modules} - {_module_name(path)}


def test_no_import_cycles() -> None:
    paths = {_module_name(p): p for p in modules_under(PACKAGE)}
    graph = {m: _runtime_imports(p, set(paths)) for m, p in paths.items()}
    cycles = []
    for start in sorted(graph):  # a path back to itself, by depth-first search
        stack, seen = [(start, (start,))], set()
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    cycles.append(" -> ".join((*trail, start)))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, (*trail, nxt)))
    assert cycles == []


@pytest.mark.parametrize(
    ("imports", "forbidden"),
    [
        pytest.param("from rdq_compliance import Envelope, decode, diff, encode, validate",
                     ("pytest", "_pytest", "pluggy", "hypothesis"), id="core"),
        pytest.param("import rdq_compliance.reporting, rdq_compliance.reporting._cli",
                     ("pytest", "_pytest", "hypothesis", "rdq_compliance.suites"),
                     id="reporting"),
    ],
)
def test_what_loads_at_runtime(imports: str, forbidden: tuple[str, ...]) -> None:
    """What a layer pulls in when it runs, read off ``sys.modules`` in a fresh
    interpreter (the static checks above miss an import done by a dependency)."""
    import subprocess

    code = (
        f"import sys\n{imports}\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {forbidden!r} "
        f"or m.startswith({forbidden!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


BRIDGE = PACKAGE / "storage" / "_stdio"
BRIDGE_ALLOWED = ("rdq_compliance.envelope", "rdq_compliance.storage._protocol",
                  "rdq_compliance.storage.hookspecs", "rdq_compliance.storage._stdio",
                  # where a testee may run while the kit's threads are pinned (stdlib only)
                  "rdq_compliance.storage._cpus")


def test_the_stdio_bridge_sits_on_the_protocol_and_the_core() -> None:
    """The bridge is a plugin like any other: it imports the standard library, the
    envelope core, the storage protocol and the hook markers, nothing of discovery
    or the pytest layer (function-local imports included: ``imports`` walks it all)."""
    assert len(modules_under(BRIDGE)) > 1  # the package, split by concern
    assert offenders(modules_under(BRIDGE), BRIDGE_ALLOWED) == []


def test_what_the_stdio_bridge_loads_at_runtime() -> None:
    """Importing the bridge in a fresh interpreter loads, of the kit, only the package
    ``__init__`` (with what it binds eagerly: ``_spec``, ``_version``), the storage
    package, the core and the modules the bridge names; no pytest or Hypothesis."""
    import subprocess

    code = (
        "import sys\nimport rdq_compliance.storage._stdio\n"
        "print('\\n'.join(sorted(m for m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    package_itself = {"rdq_compliance", "rdq_compliance._spec", "rdq_compliance._version",
                      "rdq_compliance.storage", "rdq_compliance.storage._stdio"}
    kit = [m for m in out if m.split(".")[0] == "rdq_compliance" and m not in package_itself
           and not any(m == a or m.startswith(a + ".") for a in BRIDGE_ALLOWED)]
    assert kit == []
    assert [m for m in out if m.split(".")[0] in ("pytest", "_pytest", "hypothesis")] == []


SUITE_IMPORTS = ("rdq_compliance", "rdq_compliance.testing", "rdq_compliance.strategies",
                 "rdq_compliance._corpus")
"""What a suite may import of the kit, each exactly (not a private module under it)."""


def test_suites_are_written_on_the_testing_api() -> None:
    """A suite (the kit's, or a third party's) sees the public API, the testing API, the
    strategies, the golden fixtures and its own private modules; pytest and Hypothesis.
    Never the pytest plugin's internals, nor a private module of the core."""
    paths = modules_under(PACKAGE / "suites")
    assert paths
    bad = []
    for path in paths:
        for line, module in imports(path):
            top = module.split(".")[0]
            if (top in STDLIB and top != "rdq_compliance") or top in ("pytest", "hypothesis"):
                continue
            if module in SUITE_IMPORTS or module.startswith("rdq_compliance.suites._"):
                continue
            bad.append(f"{path.relative_to(REPO)}:{line}: imports {module}")
    assert bad == []


def test_the_testing_api_knows_nothing_of_the_pytest_plugin() -> None:
    """The pytest plugin adapts the testing API, never the other way round: statically
    (every import, function-local ones included) and in what importing it loads (no
    plugin module, and no Hypothesis: the xdist controller loads it but runs no test)."""
    import subprocess

    paths = modules_under(PACKAGE / "testing")
    assert paths
    bad = [
        f"{path.relative_to(REPO)}:{line}: imports {module}"
        for path in paths
        for line, module in imports(path)
        if module == "rdq_compliance._pytest" or module.startswith("rdq_compliance._pytest.")
    ]
    assert bad == []
    code = ("import sys\nimport rdq_compliance.testing\n"
            "print(sorted(m for m in sys.modules if m.startswith("
            "('rdq_compliance._pytest', 'hypothesis'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
