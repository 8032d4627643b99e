"""Ingest rate of a checkout of vaultmem: turns per CPU second extracting LoCoMo conversations.

    python benchmarks/ingest_rate.py [--code DIR] [--runtime onnx|torch] [--data FILE] [--json]

Runs `Memory.extract` (offline extractor, write policy, index, git) of every conversation of
the LoCoMo-format `--data` (default the dev split), each written as a jsonl transcript into
a fresh vault as `locomo.py` does, with one warm embedder of the code at `--code` (default
this checkout). The rate is turns per CPU second of this process (all its threads) plus its
children (git), over the extractions alone: the same measure as perf.py's `ingest_*`.

`--code` may be an older checkout (`git worktree add /tmp/base <commit>`), so that perf.py's
`--ingest-baseline` can put today's code beside an earlier one in one run: this machine's
speed moves by 15 % between runs, so only a ratio within one run says what a change did.
The older code is imported as it is; only this script and `locomo.py` come from here.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOCOMO_DEV = ROOT.parent / "shared" / "eval" / "locomo" / "locomo-dev.json"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="a vaultmem checkout (default: this one)")
    parser.add_argument("--runtime", help="embedding runtime, for code that has a choice (onnx or torch)")
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV, help="LoCoMo-format conversations")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    code = args.code.resolve()
    sys.path[:0] = [str(code), str(HERE)]
    import vaultmem

    if not Path(vaultmem.__file__).resolve().is_relative_to(code):
        raise SystemExit(f"vaultmem was imported from {vaultmem.__file__}, not from {code}")
    from locomo import load_conversations, set_model, write_transcript
    from perf_runtime import timed_extract

    from vaultmem.api import Memory, init
    from vaultmem.index.embed import Embedder

    options = {"threads": 1}
    if args.runtime:
        if "runtime" not in inspect.signature(Embedder).parameters:
            raise SystemExit(f"the code at {code} has one embedding runtime; leave out --runtime")
        options["runtime"] = args.runtime
    embedder = Embedder("all-MiniLM-L6-v2", **options)
    embedder.encode(["a warm-up sentence"])
    turns = cpu = wall = 0.0
    with tempfile.TemporaryDirectory(prefix="vaultmem-ingest-") as tmp:
        for conversation in load_conversations(args.data, None, None):
            vault = Path(tmp) / conversation.sample_id
            init(vault, model=embedder.name)
            set_model(vault, embedder.name)
            if args.runtime:
                config = vault / ".vaultmem" / "config.toml"
                text = config.read_text(encoding="utf-8")
                config.write_text(text.replace('runtime = "onnx"', f'runtime = "{args.runtime}"'), encoding="utf-8")
            memory = Memory(vault, embedder=embedder)
            transcript = Path(tmp) / f"{conversation.sample_id}.jsonl"
            write_transcript(conversation, transcript)
            summary, cpu_s, wall_s = timed_extract(memory, transcript)
            cpu, wall = cpu + cpu_s, wall + wall_s
            if summary.get("errors"):
                raise SystemExit(f"extract failed on {conversation.sample_id}: {summary['errors']}")
            turns += len(conversation.turns)
            shutil.rmtree(vault, ignore_errors=True)
    result = {"code": str(code), "runtime": getattr(embedder, "runtime", "torch"), "turns": int(turns),
              "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "turns_per_cpu_s": round(turns / cpu, 3)}
    print(json.dumps(result) if args.json else
          f"{result['turns']} turns in {result['cpu_s']} CPU-s ({result['wall_s']} s): "
          f"{result['turns_per_cpu_s']} turns per CPU second ({result['runtime']}, {code})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
