"""What `perf.py` measures per embedding runtime (ONNX Runtime against sentence-transformers
on torch): child processes' wall time, CPU and peak RSS, a cold model load, how closely the
two runtimes' vectors agree, and the ingest rate of `Memory.extract` on LoCoMo.

A child's wall time, peak RSS and CPU come from a small launcher process that starts it
and reads the kernel's `ru_maxrss` and CPU times of its children (the command and what it
waited for, e.g. git), so nothing else the benchmark runs is counted and no package (psutil)
is needed.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIMES = ("onnx", "torch")


def available_runtimes() -> list[str]:
    """ONNX Runtime always (vaultmem falls back to torch itself when it cannot); torch when
    sentence-transformers and torch are importable."""
    found = ["onnx"]
    if importlib.util.find_spec("torch") and importlib.util.find_spec("sentence_transformers"):
        found.append("torch")
    return found


@dataclass
class Measured:
    """One child process: wall seconds, peak RSS (MB), CPU seconds (user + system), output."""
    wall_s: float
    peak_rss_mb: float
    cpu_s: float
    stdout: str
    stderr: str
    returncode: int


def child_env(runtime: str | None = None, daemon: bool = False) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("VAULTMEM_NO_DAEMON", None)
    if not daemon:
        env["VAULTMEM_NO_DAEMON"] = "1"
    if runtime:
        env["VAULTMEM_RUNTIME"] = runtime
    return env


# Runs the command and writes its rusage: a child forked from this small process, not from
# the benchmark (whose ~2 GB would count in a forked child's peak RSS until it execs).
LAUNCHER = """import json, resource, subprocess, sys, time
started = time.perf_counter()
try:
    code = subprocess.call(sys.argv[3:], timeout=float(sys.argv[2]))
except subprocess.TimeoutExpired:
    code = -9
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    json.dump([code, wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime], out)
"""


def run_measured(argv: list[str], env: dict, timeout: float) -> Measured:
    """Run `argv` to its end through LAUNCHER; killed after `timeout` seconds (returncode -9)."""
    with tempfile.TemporaryDirectory(prefix="vaultmem-perf-run-") as tmp:
        report = Path(tmp) / "rusage.json"
        done = subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, str(report), str(timeout), *argv],
                              capture_output=True, text=True, env=env, timeout=timeout + 60)
        if not report.exists():
            raise RuntimeError(f"the launcher failed ({done.returncode}): {done.stderr[-300:]}")
        code, wall, maxrss_kb, cpu = json.loads(report.read_text())
    return Measured(wall, maxrss_kb / 1024, cpu, done.stdout, done.stderr, code)


def percentile(values, share: float) -> float:
    """Nearest-rank percentile (share in 0..1) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def vaultmem_command() -> list[str]:
    """The `vaultmem` console script beside this interpreter, else the same CLI through -c."""
    script = Path(sys.executable).with_name("vaultmem")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from vaultmem.cli import main; sys.exit(main())"]


def cli_measured(root: Path, *args: str, runtime: str | None = None, timeout: float = 300.0,
                 daemon: bool = True):
    """Run `vaultmem --vault ROOT ARGS...`: (its Measured wall/RSS/CPU, parsed --json output)."""
    done = run_measured([*vaultmem_command(), "--vault", str(root), *args], child_env(runtime, daemon), timeout)
    if done.returncode != 0:
        raise RuntimeError(f"`vaultmem {' '.join(args)}` exited {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-300:]}")
    return done, (json.loads(done.stdout) if "--json" in args else None)


def cli(root: Path, *args: str, **options) -> tuple[float, dict | None]:
    """Run `vaultmem --vault ROOT ARGS...`: (wall seconds, parsed --json output)."""
    done, result = cli_measured(root, *args, **options)
    return done.wall_s, result


def set_runtime(root: Path, runtime: str) -> None:
    """`[embedding] runtime` of the vault's config.toml (what commands and the daemon read;
    `vaultmem init` writes the line, so VAULTMEM_RUNTIME alone would not reach them)."""
    config = Path(root) / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    line = re.compile(r'^runtime = ".*"$', re.MULTILINE)
    if line.search(text):
        text = line.sub(f"runtime = {json.dumps(runtime)}", text, count=1)
    else:
        text = text.replace("[embedding]\n", f"[embedding]\nruntime = {json.dumps(runtime)}\n", 1)
    config.write_text(text, encoding="utf-8")


def measure_model_load(runtime: str, model: str | None = None) -> dict:
    """A fresh process importing vaultmem's embedder and encoding one text: seconds and peak RSS."""
    named = f"{model!r}, " if model else ""
    code = ("import json, time; t = time.perf_counter(); from vaultmem.index.embed import Embedder; "
            f"e = Embedder({named}runtime={runtime!r}); e.encode(['warm up']); "
            "print(json.dumps({'s': time.perf_counter() - t, 'runtime': e.runtime}))")
    done = run_measured([sys.executable, "-c", code], child_env(runtime), timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"loading the model ({runtime}) exited {done.returncode}: {done.stderr[-300:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["runtime"] != runtime and not (model and result["runtime"] == "numpy"):
        raise RuntimeError(f"asked for {runtime}, the embedder ran {result['runtime']}: {done.stderr[-300:]}")
    return {"model_load_s": result["s"], "model_load_rss_mb": done.peak_rss_mb, "model_load_cpu_s": done.cpu_s}


def min_cosine(embedders: dict, texts: list[str]) -> dict:
    """The lowest cosine between two runtimes' vectors of the same text, over `texts`."""
    import numpy as np

    if len(embedders) < 2:
        raise RuntimeError("one runtime only: nothing to compare")
    (one, first), (other, second) = list(embedders.items())[:2]
    a, b = first.backend.encode(texts, 64), second.backend.encode(texts, 64)
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return {"runtime_min_cosine": float(np.min(np.sum(a * b, axis=1))), "runtime_cosine_texts": len(texts),
            "runtime_cosine_pair": f"{one}/{other}"}


def measure_ingest(embedder, data: Path, conversations: int, sessions: int | None, workdir: Path) -> dict:
    """`Memory.extract` of LoCoMo conversations written as jsonl transcripts (as `locomo.py`
    does), each into a fresh vault, with this warm embedder: turns per CPU second of this
    process (all its threads) plus its children (git) over the extractions alone."""
    from locomo import load_conversations, set_model, write_transcript

    from vaultmem.api import Memory, init

    if not data.exists():
        raise OSError(f"no LoCoMo data at {data}")
    picked = load_conversations(data, None, sessions or None)[:conversations or None]
    turns, cpu, wall = 0, 0.0, 0.0
    for conv in picked:
        vault = workdir / f"ingest-{embedder.runtime}-{conv.sample_id}"
        init(vault, model=embedder.name)
        set_model(vault, embedder.name)
        set_runtime(vault, embedder.runtime)
        memory = Memory(vault, embedder=embedder)
        transcript = workdir / f"{conv.sample_id}.jsonl"
        write_transcript(conv, transcript)
        summary, cpu_s, wall_s = timed_extract(memory, transcript)
        cpu, wall = cpu + cpu_s, wall + wall_s
        if summary.get("errors"):
            raise RuntimeError(f"extract failed on {conv.sample_id}: {summary['errors']}")
        turns += len(conv.turns)
    return {"ingest_conversations": len(picked), "ingest_turns": turns, "ingest_cpu_s": cpu,
            "ingest_wall_s": wall, "ingest_turns_per_cpu_s": turns / cpu}


def timed_extract(memory, transcript: Path) -> tuple[dict, float, float]:
    """`memory.extract` of one jsonl transcript: (its summary, CPU seconds of this process's
    threads plus its children's (git), wall seconds). `ingest_rate.py` times earlier
    checkouts with it too, so it uses nothing but `Memory.extract`."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_started, started = time.process_time(), time.perf_counter()
    summary = memory.extract([transcript], format="jsonl", user="default")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - cpu_started + (after.ru_utime + after.ru_stime
                                               - children.ru_utime - children.ru_stime)
    return summary, cpu, wall


def process_memory(pid: int) -> dict:
    """A live process's RSS and peak RSS (MB), and which runtimes' libraries it has mapped."""
    status = Path(f"/proc/{pid}/status").read_text()
    kb = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines()
          if line.startswith(("VmRSS:", "VmHWM:"))}
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {"rss_mb": kb["VmRSS"] / 1024, "peak_rss_mb": kb["VmHWM"] / 1024,
            "torch_loaded": "libtorch" in maps, "onnxruntime_loaded": "onnxruntime" in maps}
