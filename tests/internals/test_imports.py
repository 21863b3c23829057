"""`internals` imports its own modules at the top only, with no circle between them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "internals"
OURS = ("internals", "probes", "suites", "lingprobe")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def graph() -> tuple[dict[str, set[str]], list[str]]:
    """Top-level edges between internals modules, and every import of ours inside a function."""
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    edges: dict[str, set[str]] = {name: set() for name in modules}
    nested: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets = [t for t in imported(node) if t.split(".")[0] in OURS]
            if targets and id(node) not in top:
                nested.append(f"{name}:{node.lineno}")
            edges[name].update(t for t in targets if t in modules and t != name)
    return edges, nested


def test_no_function_level_imports_of_our_packages():
    _, nested = graph()
    assert nested == []


def test_no_import_circle_inside_internals():
    edges, _ = graph()
    edges = {k: {t for t in v if t != "internals"} for k, v in edges.items() if k != "internals"}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                raise AssertionError(" -> ".join([*path, node, target]))
            if target not in state:
                visit(target, [*path, node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    assert "internals.subject" not in edges["internals.extract"]
    assert "internals.extract" in edges["internals.subject"]
