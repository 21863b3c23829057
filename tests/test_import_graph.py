"""The import graph: layers point one way, no module imports itself back, imports are top-level.

Layers, lowest first: `lingprobe` (base) <- `internals`, `probes` <- `suites` <- `suites.cli`
and `suites.commands`. `probes` never imports `internals`; no suite imports another (shared
readers live in `suites/readers/`). Project imports sit at the top of
each module (not inside functions), so the graph below is the real one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from suites.registry import SUITES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lingprobe", "internals", "probes", "suites")
CLI = ("suites.cli", "suites.commands")


def modules() -> dict[str, Path]:
    """Every module of the project by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def project_imports(path: Path, known: set[str]) -> tuple[set[str], list[str]]:
    """(modules imported at the top of `path`, project imports made inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top, nested = set(), []

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            return [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        return []

    for node in ast.walk(tree):
        names = [n for n in targets(node) if n.split(".")[0] in PACKAGES]
        if not names:
            continue
        resolved = {n for n in names if n in known}
        # `from a.b import c` names module a.b.c when c is a module, else module a.b
        best = {n for n in resolved if not any(m != n and m.startswith(n + ".") for m in resolved)}
        if node in tree.body or _in_type_checking(tree, node):
            top |= best
        else:
            nested += sorted(best)
    return top, nested


def _in_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    for block in tree.body:
        guarded = isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        if guarded and any(child is node for child in ast.walk(block)):
            return True
    return False


def layer(name: str) -> int:
    if name.startswith(CLI):
        return 3
    return {"lingprobe": 0, "internals": 1, "probes": 1, "suites": 2}[name.split(".")[0]]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: project_imports(path, set(found))[0] for name, path in found.items()}


def test_layers_point_one_way(graph):
    wrong = []
    for module, imported in graph.items():
        for target in imported:
            upward = layer(target) > layer(module)
            sideways = {module.split(".")[0], target.split(".")[0]} == {"internals", "probes"}
            if upward or sideways:
                wrong.append(f"{module} imports {target}")
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


SUITE_PACKAGES = ("edge", "holmes", "curriculum", "cc", "structural")


def suite_of(name: str) -> str | None:
    """The suite package a module belongs to (`suites.edge.report` -> edge), else None."""
    parts = name.split(".")
    return (
        parts[1] if len(parts) > 1 and parts[0] == "suites" and parts[1] in SUITE_PACKAGES else None
    )


def test_no_suite_imports_another(graph):
    wrong = [
        f"{module} imports {target}"
        for module, imported in graph.items()
        for target in imported
        if suite_of(module) and suite_of(target) and suite_of(module) != suite_of(target)
    ]
    shared = "shared code belongs in suites/ or suites/readers/"
    assert not wrong, f"suites importing each other ({shared}):\n" + "\n".join(sorted(wrong))


def test_no_import_cycles(graph):
    state: dict[str, int] = {}
    path: list[str] = []
    cycles: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if target == node or target.startswith(node + "."):
                continue  # a package importing its own submodules
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_project_imports_are_top_level():
    found = modules()
    hidden = {
        name: nested
        for name, path in found.items()
        if (nested := project_imports(path, set(found))[1])
    }
    assert not hidden, f"imports inside functions hide dependencies: {hidden}"


def test_the_checks_can_fail(tmp_path):
    """The rules flag what they are meant to: an upward and a function-local import."""
    bad = tmp_path / "bad.py"
    bad.write_text("import suites.cli\n\ndef f():\n    from probes import fit_probes\n")
    top, nested = project_imports(bad, {"suites.cli", "probes"})
    assert top == {"suites.cli"} and nested == ["probes"]
    assert layer("suites.cli") > layer("internals.store")
    assert suite_of("suites.edge.report") == "edge" and suite_of("suites.readers.conllu") is None
    assert set(SUITE_PACKAGES) == set(SUITES)
