"""How fast the Obsidian plugin's API answers (issue 37), against the daemon's own socket, on a
generated vault: each operation the plugin's panes send, many times, p50 and p95.

    python benchmarks/plugin_api.py --notes 10000 --user-notes 2000 [--runs 100] [--json OUT]

The vault is `perf_vault`'s (memory notes created over 600 days, session notes, the
person's notes), indexed once, then served by a real `vaultmem daemon start`. HTTP requests
go through urllib with a new connection each (as the plugin's `requestUrl` may), the socket's
through `vaultmem.ipc.client.request`. `review` looks back over the vault's last 10 days
(~1.7 % of its memories); `related` asks for a person's note and a memory note. The last
line on stdout is one JSON object of the figures (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_runtime import cli, percentile  # noqa: E402
from perf_vault import START, generate_user_notes, generate_vault, queries  # noqa: E402


def timed(fn, runs: int) -> dict:
    for _ in range(min(5, runs)):
        fn()
    walls = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        walls.append((time.perf_counter() - began) * 1000)
    return {"p50_ms": round(percentile(walls, 0.5), 2), "p95_ms": round(percentile(walls, 0.95), 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=2000, help="memory notes to generate")
    parser.add_argument("--user-notes", type=int, default=500, help="notes of the person's own")
    parser.add_argument("--runs", type=int, default=100, help="requests per operation and door")
    parser.add_argument("--json", dest="out", help="also write the figures here")
    args = parser.parse_args(argv)

    from vaultmem.api import init
    from vaultmem.ipc.client import request

    with tempfile.TemporaryDirectory(prefix="vaultmem-plugin-api-") as tmp:
        root = Path(tmp) / "vault"
        generate_vault(root, args.notes)
        generate_user_notes(root, args.user_notes)
        init(root)
        began = time.perf_counter()
        cli(root, "reindex", "--json", daemon=False, timeout=7200)
        print(f"indexed in {time.perf_counter() - began:.0f} s", file=sys.stderr)
        token = cli(root, "obsidian", "token", "--json", daemon=False)[1]["token"]
        cli(root, "daemon", "start", "--json")
        try:
            url = json.loads((root / ".vaultmem" / "obsidian.json").read_text())["url"]

            def http(op, body):
                sent = urllib.request.Request(f"{url}/v1/{op}", data=json.dumps(body).encode(),
                                              headers={"Authorization": f"Bearer {token}"})
                with urllib.request.urlopen(sent, timeout=120) as answer:
                    result = json.loads(answer.read())
                assert result["ok"], result
                return result["result"]

            asked = iter(queries(10_000, seed=9))
            user_note = next(p for p in sorted(root.rglob("*.md")) if "Memory" not in p.parts
                             and ".obsidian" not in p.parts and "Templates" not in p.parts)
            memory_note = sorted((root / "Memory" / "Facts").glob("*.md"))[0]
            since = (START + timedelta(days=590)).date().isoformat()
            reads = {
                "status": lambda: {},
                "search": lambda: {"query": next(asked), "k": 10},
                "review": lambda: {"since": since},
                "related_note": lambda: {"path": user_note.relative_to(root).as_posix()},
                "related_memory": lambda: {"path": memory_note.relative_to(root).as_posix()},
            }
            figures = {"notes": args.notes, "user_notes": args.user_notes, "runs": args.runs,
                       "review_count": http("review", {"since": since})["count"]}
            for name, body in reads.items():
                op = name.split("_")[0]
                figures[f"{name}_http"] = timed(lambda: http(op, body()), args.runs)
                if op in ("status", "search"):
                    figures[f"{name}_socket"] = timed(lambda: request(root, op, body()), args.runs)
                print(f"{name}: {figures[f'{name}_http']}", file=sys.stderr)
        finally:
            cli(root, "daemon", "stop", "--json")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
