"""The house's plan holds: each layer imports only the layers below it, no module imports itself back
through others, no class grows past 500 lines, and the module paths that moved still import (with a warning).

Imports inside functions and under ``TYPE_CHECKING`` count: a circle closed by a lazy import is still a circle.
"""

from __future__ import annotations

import ast
import configparser
import subprocess
import sys
import warnings
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_CLASS_LINES = 500


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("homiebot", include_external_packages=False)


def contract(name: str) -> configparser.SectionProxy:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    return config[f"importlinter:contract:{name}"]


def layers(section: configparser.SectionProxy, container: str = "") -> list[list[str]]:
    """The contract's layers, top first; each a list of independent siblings."""
    prefix = f"{container}." if container else ""
    return [[prefix + name.strip() for name in line.split("|")] for line in section["layers"].strip().splitlines()]


def ignored(section: configparser.SectionProxy) -> list[tuple[str, str]]:
    lines = [line.strip() for line in section.get("ignore_imports", "").splitlines()]
    return [tuple(part.strip() for part in line.split("->")) for line in lines if "->" in line and not line.startswith("#")]


def owner(module: str, order: list[list[str]]) -> tuple[int, str] | None:
    for level, siblings in enumerate(order):
        for package in siblings:
            if module == package or module.startswith(package + "."):
                return level, package
    return None


def is_ignored(importer: str, imported: str, rules: list[tuple[str, str]]) -> bool:
    def match(name: str, pattern: str) -> bool:
        return name == pattern or (pattern.endswith(".*") and name.startswith(pattern[:-1]))

    return any(match(importer, a) and match(imported, b) for a, b in rules)


def upward_imports(graph: grimp.ImportGraph, order: list[list[str]], rules: list[tuple[str, str]]) -> list[str]:
    """Every direct import that goes up a layer or across to an independent sibling, with its line."""
    found = []
    for importer in sorted(graph.modules):
        mine = owner(importer, order)
        if mine is None:
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            theirs = owner(imported, order)
            if theirs is None or theirs == mine or theirs[0] > mine[0] or is_ignored(importer, imported, rules):
                continue
            lines = [d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)]
            found.append(f"{importer} -> {imported} (line {lines})")
    return found


def test_the_layers_cover_every_package(graph):
    order = layers(contract("layers"))
    loose = {"homiebot", "homiebot._moved", "homiebot.llm_server"}  # the package, the old-path hook, a launcher
    outside = sorted(m for m in graph.modules if owner(m, order) is None and m not in loose)
    assert not outside, f"modules in no layer of .importlinter: {outside}"


def test_each_layer_imports_only_the_layers_below_it(graph):
    section = contract("layers")
    assert upward_imports(graph, layers(section), ignored(section)) == []


def test_the_ros_wing_goes_bringup_nodes_clients_kit_messages(graph):
    assert upward_imports(graph, layers(contract("ros-wings"), "homiebot.ros"), []) == []


def test_the_check_sees_an_upward_import(graph):
    """The check above can fail: the core importing the runtime is reported, with its line."""
    order = layers(contract("layers"))
    fake = grimp.ImportGraph()
    for module in ("homiebot.core.contracts", "homiebot.runtime"):
        fake.add_module(module)
    fake.add_import(importer="homiebot.core.contracts", imported="homiebot.runtime", line_number=7, line_contents="import x")
    assert upward_imports(fake, order, []) == ["homiebot.core.contracts -> homiebot.runtime (line [7])"]


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_module_imports_itself_back(graph):
    assert circles(graph) == []


def test_a_circle_is_seen():
    fake = grimp.ImportGraph()
    for module in ("a", "b", "c"):
        fake.add_module(module)
    fake.add_import(importer="a", imported="b")
    fake.add_import(importer="b", imported="c")
    fake.add_import(importer="c", imported="a")
    assert circles(fake) == [["a", "b", "c"]]


def test_no_class_is_over_500_lines():
    big = []
    for path in sorted((ROOT / "homiebot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                big.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert big == []


def test_an_old_module_path_is_the_new_module_with_a_warning():
    from homiebot import _moved

    sys.modules.pop("homiebot.worlds.base", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import homiebot.worlds.base as old
    import homiebot.core.world as new

    assert old is new
    assert any(issubclass(w.category, DeprecationWarning) and "homiebot.core.world" in str(w.message) for w in caught)
    assert _moved.new_name("homiebot.ros.robot.parts") == "homiebot.ros.clients.robot.parts"
    assert _moved.new_name("homiebot.agent") is None


def test_every_new_path_in_the_table_exists():
    import importlib.util

    from homiebot import _moved

    missing = [new for new in _moved.MOVED.values() if importlib.util.find_spec(new) is None]
    assert missing == []


def test_an_old_builder_path_still_runs_with_python_m():
    done = subprocess.run([sys.executable, "-m", "homiebot.worlds.home.build_suite", "--help"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "--count" in done.stdout
