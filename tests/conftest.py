"""Shared fixtures: the real bundled model (loaded once per test process) and vault copies."""

import os
import shutil
from pathlib import Path

import pytest

SAMPLE_VAULT = Path(__file__).resolve().parent.parent / "sample_vault"

# The model exported for ONNX Runtime lives in the user's cache folder; tests that give a
# command a HOME of its own must still find it there rather than export it again.
if not os.environ.get("VAULTMEM_CACHE"):
    from vaultmem.index.onnx_model import cache_root

    os.environ["VAULTMEM_CACHE"] = str(cache_root())


def pytest_configure(config):
    """Hypothesis's cases are the same whatever ran before in the process (a `-k` selection,
    the modules an xdist worker was dealt): see tests/helpers/hypothesis_pool.py."""
    from tests.helpers.hypothesis_pool import pin_local_constants

    pin_local_constants(Path(__file__).resolve().parent.parent / "vaultmem")


# The modules that take longest in `make test`, longest first (seconds there on a quiet 2-core
# machine, both test processes busy). The two processes are dealt whole modules (--dist
# loadscope) in collection order (--no-loadscope-reorder: xdist's own order, most tests
# first, left long modules of few tests such as test_crash to the end, run alone while the
# other process had finished). Dealt first, the long modules run side by side and the short
# ones fill in at the end. The two that load the CPU most come first, one to each process.
# A module not listed keeps its place after these.
LONGEST_FIRST = (
    "test_perf_harness.py",     # 58
    "test_crash.py",            # 35
    "test_daemon.py",           # 41
    "test_sync.py",             # 22
    "test_relay.py",            # 19
    "test_benchmarks.py",       # 16
    "test_onnx_runtime.py",     # 15
    "test_limits.py",           # 13
    "test_fuzz.py",             # 12
    "test_fallback.py",         # 10
    "test_purge.py",            # 9
    "test_races.py",            # 9
    "test_multilingual.py",     # 9
    "test_secrets_corpus.py",   # 8
    "test_extract_steps.py",    # 8
    "test_isolation.py",        # 8
    "test_embed.py",            # 8 where it is the first to import sentence-transformers
    "test_index.py",            # 6
    "test_dependencies.py",     # 5
    "test_search.py",           # 5
    "test_protocol.py",         # 5
    "test_bulk_index.py",       # 4
    "test_review.py",           # 4
    "test_mcp.py",              # 4
    "test_change.py",           # 4
)


def pytest_collection_modifyitems(session, config, items):
    """In a test process of `make test` (pytest-xdist), the modules of LONGEST_FIRST first, in
    its order; each module's tests keep their order. A plain `pytest` run is left as it is."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    position = {}
    for item in items:
        position.setdefault(item.nodeid.split("::")[0], len(position))

    def key(item):
        module = item.nodeid.split("::")[0]
        return rank.get(module.rsplit("/", 1)[-1], len(rank)), position[module]

    items.sort(key=key)   # stable: a module's tests keep their order


def pytest_sessionstart(session):
    """Export the bundled model before any test runs, so no test's output carries the
    once-per-machine "preparing … for ONNX Runtime" line (test_onnx_runtime checks it)."""
    from vaultmem.index.onnx_model import bundled_model_path, ensure_exported

    ensure_exported(bundled_model_path())


@pytest.fixture
def git_identity(tmp_path, monkeypatch):
    """A git config of the test's own (HOME too): the user is 'Ada <ada@example.org>'."""
    home = tmp_path / "home"
    home.mkdir()
    config = home / ".gitconfig"
    config.write_text("[user]\n\tname = Ada\n\temail = ada@example.org\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 from the bundled package, shared by every test."""
    from vaultmem.index.embed import Embedder

    return Embedder("all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def multilingual():
    """The real multilingual USE v3 from its package (Chinese and English in one space)."""
    from vaultmem.index.embed import Embedder

    return Embedder("use-multilingual-v3")


def copy_sample_vault(dest: Path) -> Path:
    """A private copy of sample_vault/ (without any index or state left in it)."""
    shutil.copytree(SAMPLE_VAULT, dest, ignore=shutil.ignore_patterns(".vaultmem", ".git"))
    return dest


@pytest.fixture
def sample_vault(tmp_path):
    """A `Vault` over a fresh copy of sample_vault/ in tmp_path."""
    from vaultmem.store.vault import Vault

    return Vault(copy_sample_vault(tmp_path / "vault"))


@pytest.fixture
def indexer_for(embedder):
    """`indexer_for(vault)` -> an Indexer using the shared model; `.calls` counts model uses."""
    from vaultmem.index.ingest import Indexer

    def make(vault):
        def factory():
            make.calls += 1
            return embedder

        return Indexer(vault, embedder_factory=factory)

    make.calls = 0
    return make


def write_note(root: Path, rel: str, meta: dict, body: str) -> Path:
    """Write a note with simple block-style frontmatter (lists as `- item`)."""
    lines = ["---"]
    for key, value in meta.items():
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}:")
            lines.extend(f'  - "{v}"' if "[[" in str(v) else f"  - {v}" for v in value)
        else:
            lines.append(f"{key}: {value}")
    lines += ["---", body.rstrip("\n"), ""]
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def memory_meta(id, type="fact", status="active", **extra) -> dict:
    meta = {"id": id, "type": type, "created": "2026-11-01T09:00:00",
            "updated": "2026-11-01T09:00:00", "status": status, "importance": 0.5,
            "user": "default", "tags": [f"vaultmem/{type}"]}
    meta.update(extra)
    return meta
