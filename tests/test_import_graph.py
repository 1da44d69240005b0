"""The package's shape, checked from the source with `ast` (issue 21).

- No import circles: every intra-package import (module level and inside
  functions, `from livejudge.x import y` where `y` may be a submodule, and
  relative imports) is an edge of the module graph; a strongly connected
  component of more than one module is a circle and fails the test, listing
  its modules and the edges inside it.
- Only the commands room (`livejudge/commands/`) imports `argparse`.
- Nothing below the commands room receives an argparse `Namespace`: no
  function outside `livejudge/commands/` reads attributes off a name `args`
  (the CLI parses once into the frozen configs of `livejudge/config.py`).

These tests read files only; they import nothing from livejudge.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "livejudge"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
COMMANDS_ROOM = f"{PACKAGE}.commands"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Map dotted module name -> file for every module of the package under `root`."""
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of dotted `name` that is a module of the package."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` at module level."""
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
        and len(node.test.comparators) == 1
        and isinstance(node.test.comparators[0], ast.Constant)
        and node.test.comparators[0].value == "__main__"
    )


def _walk_importable(tree: ast.Module):
    """Every node of `tree` except those under a module-level `if __name__ == "__main__":`.

    That block runs only when the file is executed as a script, i.e. as the module
    `__main__`, a module of its own: `python -m livejudge.agents.demo` importing
    `livejudge.commands.demo_agent` (which imports `livejudge.agents.demo`) is not a circle.
    """
    for top in tree.body:
        if not _is_main_guard(top):
            yield from ast.walk(top)


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Intra-package modules imported anywhere in `path` (any nesting level, the script
    entry under `if __name__ == "__main__":` excepted)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in _walk_importable(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    target = _resolve(alias.name, modules)
                    if target:
                        found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: anchor on this module's package
                base = module.split(".")
                if not _is_package(path):
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            if not (prefix == PACKAGE or prefix.startswith(PACKAGE + ".")):
                continue
            for alias in node.names:
                sub = f"{prefix}.{alias.name}"
                if sub in modules:  # `from pkg import submodule`
                    found.add(sub)
                else:
                    target = _resolve(prefix, modules)
                    if target:
                        found.add(target)
    found.discard(module)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> set of intra-package modules it imports."""
    modules = _modules(root)
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def _sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out


def circles(graph: dict[str, set[str]]) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """Each strongly connected component of size > 1 with the edges inside it."""
    result = []
    for component in _sccs(graph):
        if len(component) > 1:
            members = set(component)
            edges = sorted((a, b) for a in component for b in graph[a] if b in members)
            result.append((component, edges))
    return result


def test_graph_sees_the_package():
    """The graph covers the package and finds known edges of every kind."""
    graph = import_graph()
    assert len(graph) > 50, sorted(graph)
    # module-level `from livejudge.x import y`
    assert "livejudge.session" in graph["livejudge.commands.runner"]
    # `from livejudge.judge.features import acoustic`-style and nested imports are
    # resolved to modules of the package, never to names outside it
    assert all(t in graph for targets in graph.values() for t in targets)


def test_tarjan_finds_a_planted_circle():
    """The circle finder is not vacuous: a planted 3-cycle and a 2-cycle are found."""
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "a"}, "f": set()}
    found = circles(planted)
    assert sorted(c for c, _ in found) == [["a", "b", "c"], ["d", "e"]]
    edges = dict((tuple(c), e) for c, e in found)
    assert edges[("a", "b", "c")] == [("a", "b"), ("b", "c"), ("c", "a")]


def test_relative_and_submodule_imports_resolve(tmp_path):
    """`from . import x`, `from ..y import z` and `from pkg import submodule` become edges."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import leaf\n")
    (pkg / "sub" / "leaf.py").write_text("def f():\n    from ..top import g\n")
    (pkg / "top.py").write_text("from livejudge.sub import leaf\n")
    graph = import_graph(pkg)
    assert graph["livejudge.sub"] == {"livejudge.sub.leaf"}
    assert graph["livejudge.sub.leaf"] == {"livejudge.top"}
    assert graph["livejudge.top"] == {"livejudge.sub.leaf"}
    assert [c for c, _ in circles(graph)] == [["livejudge.sub.leaf", "livejudge.top"]]


def test_script_entry_is_not_an_edge(tmp_path):
    """An import under `if __name__ == "__main__":` is the script's, not the module's."""
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "agent.py").write_text(
        'import sys\n\nif __name__ == "__main__":\n    from livejudge.cli import main\n    sys.exit(main())\n'
    )
    (pkg / "cli.py").write_text("from livejudge.agent import sys\n\ndef main():\n    from livejudge import agent\n")
    graph = import_graph(pkg)
    assert graph["livejudge.agent"] == set()
    assert graph["livejudge.cli"] == {"livejudge.agent"}
    assert circles(graph) == []


def test_no_import_circles():
    """There is no strongly connected component of more than one module."""
    found = circles(import_graph())
    report = "\n".join(
        f"circle {' <-> '.join(c)}:\n" + "\n".join(f"    {a} -> {b}" for a, b in e) for c, e in found
    )
    assert not found, f"{len(found)} import circle(s):\n{report}"


def _outside_commands() -> dict[str, Path]:
    return {
        m: p
        for m, p in _modules().items()
        if not (m == COMMANDS_ROOM or m.startswith(COMMANDS_ROOM + "."))
    }


def test_only_the_commands_room_imports_argparse():
    offenders = []
    for module, path in _outside_commands().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n == "argparse" or n.startswith("argparse.") for n in names):
                offenders.append(f"{module}:{node.lineno}")
    assert not offenders, f"argparse imported outside {COMMANDS_ROOM}: {offenders}"


def test_no_namespace_below_the_commands_room():
    """No `args.<attr>` read outside commands/: configs travel down, not a Namespace."""
    offenders = []
    for module, path in _outside_commands().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "args"
            ):
                offenders.append(f"{module}:{node.lineno} args.{node.attr}")
    assert not offenders, (
        "an argparse Namespace travels below the commands room; pass a frozen config "
        f"from livejudge.config instead: {offenders}"
    )
