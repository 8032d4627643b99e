"""The package's shape, read from its own imports (issue 34): the layers of
docs/ARCHITECTURE.md, each importing only from the layers below it, with no import loop
between modules, and every name one package takes from another listed in that package's
`__init__` (its public names). An import inside a function counts as much as one at the top:
a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "vaultmem"

# Top to bottom. Packages on one line are siblings: neither imports the other.
LAYERS = [
    ["__main__"],
    ["cli"],
    ["daemon"],
    ["agents"],
    ["api"],
    ["doctor"],
    ["extract", "retrieve", "sync", "ipc"],
    ["memory"],
    ["index", "history", "policy"],
    ["store"],
    ["text"],
    ["errors", "clock", "arenas", "public"],
]
LEVEL = {part: (depth, rank) for depth, row in enumerate(LAYERS) for rank, part in enumerate(row)}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = modules()


def imports_of(name: str) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every vaultmem import in `name`."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("vaultmem"):
                continue
            names = [alias.name for alias in node.names]
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            for sub in submodules:
                found.append((sub, [], node.lineno))
            rest = [n for n in names if f"{target}.{n}" not in MODULES]
            if rest or not submodules:
                found.append((target, rest, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("vaultmem")]
    return found


def part_of(module: str) -> str | None:
    """The layer part a module belongs to: its package under vaultmem, or itself when it
    sits at the package's top. The package root (vaultmem/__init__.py) is the facade above
    everything, part of no layer."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_has_a_layer():
    unplaced = sorted({part_of(m) for m in MODULES} - set(LEVEL) - {None})
    assert not unplaced, f"add these to LAYERS (and docs/ARCHITECTURE.md): {unplaced}"


def test_imports_go_down():
    wrong = []
    for name in MODULES:
        here = part_of(name)
        for target, _, line in imports_of(name):
            there = part_of(target)
            if here is None or there is None or there == here:
                continue
            if there not in LEVEL or here not in LEVEL:
                continue
            if LEVEL[there][0] <= LEVEL[here][0]:
                side = "up" if LEVEL[there][0] < LEVEL[here][0] else "sideways"
                wrong.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line} imports {target} ({side})")
    assert not wrong, "imports that do not go down a layer:\n" + "\n".join(wrong)


def test_no_import_loops():
    graph = {name: {t for t, _, _ in imports_of(name) if t in MODULES and t != name} for name in MODULES}
    graph = {n: {t for t in ts if part_of(t) is not None} for n, ts in graph.items()}
    index, low, stack, on_stack, loops = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                members.append(top)
                if top == node:
                    break
            if len(members) > 1:
                loops.append(sorted(members))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    assert not loops, f"import loops: {loops}"


def is_package(part: str) -> bool:
    return MODULES.get(f"vaultmem.{part}", Path()).name == "__init__.py"


def public_names(package: str) -> set[str]:
    """The names a package's `__init__` lists in `__all__` (importing a package runs only
    its `__init__`: the names themselves load when first asked for)."""
    import importlib

    return set(getattr(importlib.import_module(package), "__all__", ()))


def test_other_packages_use_public_names():
    private = []
    for name in MODULES:
        here = part_of(name)
        for target, names, line in imports_of(name):
            there = part_of(target)
            if there is None or there == here or not is_package(there):
                continue
            if target == f"vaultmem.{there}" and not names:
                continue
            wanted = names or [target.rpartition(".")[2]]
            missing = [n for n in wanted if n not in public_names(f"vaultmem.{there}")]
            if missing:
                private.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line} takes {missing} from {target}")
    assert not private, "names taken across packages but not listed in the package's __all__:\n" + "\n".join(private)


@pytest.mark.parametrize("package", sorted(p for p in MODULES if p.count(".") == 1 and MODULES[p].name == "__init__.py"))
def test_public_names_resolve(package):
    import importlib

    module = importlib.import_module(package)
    for name in sorted(public_names(package)):
        assert getattr(module, name) is not None, f"{package}.{name}"
