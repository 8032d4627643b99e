"""The file relay (../shared/relay/README.md): a capable model that reads and writes files
stands behind the OpenAI-compatible endpoint vaultmem already calls, and every answer is
recorded, so that a model-path figure replays with no model at all.

    python benchmarks/llm_relay.py serve --recordings R.jsonl --dir /tmp/relay [--port P] [--replay]
    python benchmarks/llm_relay.py wave --dir /tmp/relay [--waves N] [--max-requests M]
    python benchmarks/llm_relay.py answer --dir /tmp/relay WAVE OUT
    python benchmarks/llm_relay.py status --dir /tmp/relay

- serve: `POST /t/TAG/v1/chat/completions` on 127.0.0.1 only (a non-loopback bind is
  refused). TAG names the conversation (`[llm] base_url = "http://127.0.0.1:P/t/{case}/v1"`).
  A request is keyed by the sha256 of its messages. A recorded key is answered at once; any
  other request is written to DIR/pending/ and its call waits until an answer arrives.
- wave: the next pending requests, never two of one tag in a wave, as one file a reader
  answers (DIR/waves/wave-NNNN.json), beside the reader's whole prompt: MODEL.md with WAVE,
  OUT and ANSWER_COMMAND filled in (wave-NNNN.prompt.md).
- answer: a reader's OUT (`{"id": "reply text", ...}`) releases the waiting calls; the
  server appends each reply to the recordings.
- replay (`serve --replay`, or `Relay(..., replay=True)` in a harness): only recorded replies;
  an unrecorded request gets HTTP 503 naming its key, and is listed in `relay.misses`.

Harnesses start a `Relay` in their own process (`memquality.py --llm --record/--replay`,
`locomo.py --rerank-llm --record/--replay`); several relays may share one DIR, and `wave`
then fills waves from all of them.
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import os
import re
import socket
import sys
import threading
import time
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL_MD = ROOT.parent / "shared" / "relay" / "MODEL.md"
MODEL_NAME = "a frontier model through the relay"
POLL_SECONDS = 0.25
_PATH = re.compile(r"^/t/(?P<tag>[A-Za-z0-9._-]{1,120})/v1/chat/completions/?$")


def request_key(messages: list[dict]) -> str:
    """The sha256 of a request's messages (role and content, in order): what a recording
    is looked up by, so a changed prompt is a different key."""
    canonical = json.dumps([{"role": m.get("role"), "content": m.get("content")} for m in messages],
                           ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_recordings(paths) -> dict[str, dict]:
    """key -> recorded entry, from JSONL files (a missing file holds nothing yet)."""
    out: dict[str, dict] = {}
    for path in paths:
        path = Path(path)
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                out[entry["key"]] = entry
            except (ValueError, KeyError, TypeError):
                raise SystemExit(f"{path}:{number}: not a recording (a JSON object with a key) — "
                                 f"fix or remove that line") from None
    return out


def loopback_only(host: str) -> str:
    """`host` when it is a loopback address; a SystemExit otherwise (the relay answers
    whoever reaches it, so it never listens beyond this machine)."""
    name = "127.0.0.1" if host == "localhost" else host
    try:
        if ipaddress.ip_address(name).is_loopback:
            return name
    except ValueError:
        pass
    raise SystemExit(f"the relay serves loopback only (127.0.0.1 or ::1), not {host!r}")


class Relay:
    """The relay's server, in a thread of the caller's process.

    >>> relay = Relay("rec.jsonl", "/tmp/relay", replay=True)   # doctest: +SKIP
    >>> relay.start(); relay.base_url("case-1")                 # doctest: +SKIP
    'http://127.0.0.1:40123/t/case-1/v1'
    """

    def __init__(self, recordings, directory=None, replay: bool = False, host: str = "127.0.0.1",
                 port: int = 0):
        self.recordings_path = Path(recordings)
        self.replay = replay
        if not replay and directory is None:
            raise SystemExit("recording needs a relay folder (--relay-dir) for the pending requests")
        self.dir = Path(directory) if directory else None
        self.recorded = load_recordings([self.recordings_path])
        self.misses: list[dict] = []   # replay: requests with no recording (key, tag, first words)
        self.served = 0                # answered from the recordings
        self.answered = 0              # answered by a reader while this relay ran
        self._lock = threading.Lock()
        host = loopback_only(host)
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                found = _PATH.match(self.path.split("?", 1)[0])
                if not found:
                    return self._send(404, {"error": f"no such path {self.path}: post to /t/TAG/v1/chat/completions"})
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                    messages = body["messages"]
                    assert isinstance(messages, list) and messages
                except (ValueError, KeyError, TypeError, AssertionError):
                    return self._send(400, {"error": "the body must be a chat-completions request with messages"})
                status, payload = relay.respond(found["tag"], messages)
                self._send(status, payload)

            def _send(self, status, payload):
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            # A harness asks every question at once: with the default backlog of 5 a replay's
            # burst of a hundred connections is reset, and those reranks silently fall back.
            request_queue_size = 1024
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        self.server = Server((host, port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def base_url(self, tag: str = "{case}") -> str:
        host = self.server.server_address[0]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/t/{tag}/v1"

    def start(self) -> "Relay":
        if self.dir:
            for sub in ("pending", "answers", "waves"):
                (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def respond(self, tag: str, messages: list[dict]) -> tuple[int, dict]:
        key = request_key(messages)
        entry = self.recorded.get(key)
        if entry is not None:
            with self._lock:
                self.served += 1
            return 200, completion(entry["reply"])
        if self.replay:
            first = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
            miss = {"key": key, "tag": tag, "user_message": " ".join(str(first).split())[:120]}
            with self._lock:
                self.misses.append(miss)
            return 503, {"error": f"relay replay: no recorded reply for request {key[:16]} (tag {tag}); "
                                  f"record it: {record_hint(self.recordings_path)}"}
        reply = self._wait_for_reader(key, tag, messages)
        return 200, completion(reply)

    def _wait_for_reader(self, key: str, tag: str, messages: list[dict]) -> str:
        pending = self.dir / "pending" / f"{key}.json"
        answer = self.dir / "answers" / f"{key}.json"
        if not answer.exists():
            _write_atomic(pending, {"key": key, "tag": tag, "set": self.recordings_path.stem,
                                    "asked": time.time(), "messages": messages})
        while not answer.exists():
            time.sleep(POLL_SECONDS)
        entry = json.loads(answer.read_text(encoding="utf-8"))
        record = {"key": key, "tag": tag, "model": MODEL_NAME, "date": entry.get("date"),
                  "wave": entry.get("wave"), "messages": messages, "reply": entry["reply"]}
        with self._lock:
            if key not in self.recorded:
                self.recorded[key] = record
                self.recordings_path.parent.mkdir(parents=True, exist_ok=True)
                with self.recordings_path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.answered += 1
        pending.unlink(missing_ok=True)
        return entry["reply"]


class HarnessRelay(Relay):
    """A harness's relay: the `[llm]` table that points its vaults here, and what it did."""

    @property
    def table(self) -> str:
        from llm_table import relay_table

        return relay_table(self)

    def summary(self) -> dict:
        return {"recordings": _shown(self.recordings_path), "mode": "replay" if self.replay else "record",
                "model": MODEL_NAME, "dates": sorted({e.get("date") for e in self.recorded.values()} - {None}),
                "served": self.served, "answered": self.answered, "misses": len(self.misses)}

    def report(self) -> str:
        """A line for stderr: what was served, and every miss with how to record it."""
        lines = [f"relay ({'replay' if self.replay else 'record'} {_shown(self.recordings_path)}): "
                 f"{self.served} replies from the recordings, {self.answered} from readers, "
                 f"{len(self.misses)} unrecorded"]
        lines += [f"  unrecorded request {m['key'][:16]} (tag {m['tag']}): {m['user_message']!r}"
                  for m in self.misses[:20]]
        if self.misses:
            lines.append(f"  a prompt or the first stage changed: {record_hint(self.recordings_path)}")
        return "\n".join(lines)


def add_relay_options(parser, does: str, unit: str) -> None:
    """A harness's --record / --replay / --relay-dir: `does` ("extract", "rerank") goes through
    the relay, each `unit` ("case", "conversation") under its own tag."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", type=Path, metavar="JSONL",
                       help=f"{does} through the file relay (llm_relay.py), each {unit} under its own tag: "
                            "recorded replies answer at once, the rest wait in --relay-dir for a reader's "
                            "wave and are added to JSONL")
    group.add_argument("--replay", type=Path, metavar="JSONL",
                       help=f"{does} through the relay with the recorded replies only (no model); an "
                            "unrecorded request is named and the run exits 3")
    parser.add_argument("--relay-dir", type=Path, help="with --record: the relay's folder")


def run_with_relay(args, run, table):
    """`run(llm_table)` through the relay `args` ask for (--record / --replay), else with
    `table`: `(figures, exit code)`, the figures with what the relay did, the code 3 when a
    replay met a request it has no recording for."""
    if not (args.record or args.replay):
        return run(table), 0
    relay = HarnessRelay(args.record or args.replay, args.relay_dir, replay=bool(args.replay)).start()
    try:
        figures = run(relay.table)
    finally:
        relay.stop()
    figures["relay"] = relay.summary()
    print(relay.report(), file=sys.stderr)
    return figures, 3 if relay.misses else 0


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def completion(content: str) -> dict:
    return {"id": "relay", "object": "chat.completion", "model": MODEL_NAME,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}]}


def record_hint(recordings: Path) -> str:
    return (f"run the harness with --record {_shown(recordings)} --relay-dir DIR and answer its waves "
            f"(python benchmarks/llm_relay.py wave --dir DIR; ../shared/relay/README.md)")


def _write_atomic(path: Path, data) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


# --- waves and answers (run beside the harness, from another shell) ------------------------

def cut_waves(directory: Path, waves: int = 1, max_requests: int = 20, stale_minutes: float = 60,
              model_md: Path = MODEL_MD, only: set[str] | None = None) -> list[Path]:
    """Cut up to `waves` waves from DIR/pending: each at most `max_requests`, never two of one
    tag (tags are told apart per recordings set). A request already in a wave is left out
    until that wave is answered or `stale_minutes` old; `only` keeps the requests of those
    recordings sets (by file stem: a run whose cases wait on each other goes first). Returns
    the prompt files."""
    directory = Path(directory)
    wave_dir = directory / "waves"
    wave_dir.mkdir(parents=True, exist_ok=True)
    taken = _taken(wave_dir, stale_minutes)
    pending = []
    for path in (directory / "pending").glob("*.json"):
        try:
            pending.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue   # being written
    pending = [p for p in pending if p["key"] not in taken and (not only or p.get("set") in only)
               and not (directory / "answers" / f"{p['key']}.json").exists()]
    pending.sort(key=lambda p: (p.get("asked", 0), p["key"]))
    template = model_md.read_text(encoding="utf-8")
    prompts = []
    number = max((int(m.group(1)) for p in wave_dir.glob("wave-*.json")
                  if (m := re.fullmatch(r"wave-(\d+)\.json", p.name))), default=0)
    for _ in range(waves):
        chosen, tags = [], set()
        for request in pending:
            tag = (request.get("set"), request["tag"])
            if tag in tags:
                continue
            chosen.append(request)
            tags.add(tag)
            if len(chosen) >= max_requests:
                break
        if not chosen:
            break
        pending = [p for p in pending if p not in chosen]
        number += 1
        name = f"wave-{number:04d}"
        wave_path, out_path = wave_dir / f"{name}.json", wave_dir / f"{name}.out.json"
        ids = {f"r{i}": request["key"] for i, request in enumerate(chosen, 1)}
        _write_atomic(wave_dir / f"{name}.keys.json", {"keys": ids, "cut": time.time()})
        wave_path.write_text(json.dumps({"requests": [{"id": i, "messages": r["messages"]}
                                                      for i, r in zip(ids, chosen)]},
                                        ensure_ascii=False, indent=1), encoding="utf-8")
        command = (f"{sys.executable} {Path(__file__).resolve()} answer --dir {directory.resolve()} "
                   f"{wave_path.resolve()} {out_path.resolve()}")
        prompt = (template.replace("ANSWER_COMMAND", command)
                  .replace("WAVE", str(wave_path.resolve())).replace("OUT", str(out_path.resolve())))
        prompt_path = wave_dir / f"{name}.prompt.md"
        prompt_path.write_text(prompt, encoding="utf-8")
        prompts.append(prompt_path)
    return prompts


def _taken(wave_dir: Path, stale_minutes: float) -> set[str]:
    """Keys in waves that are not yet answered and not stale."""
    taken = set()
    for path in wave_dir.glob("wave-*.keys.json"):
        meta = json.loads(path.read_text(encoding="utf-8"))
        if meta.get("answered") or time.time() - meta.get("cut", 0) > stale_minutes * 60:
            continue
        taken.update(meta["keys"].values())
    return taken


def answer_wave(directory: Path, wave: Path, out: Path) -> tuple[int, list[str]]:
    """Release a wave's answers: `(released, problems)`. Every reply must be a string for an
    id of the wave; ids missing from OUT are named in `problems` (their calls go on waiting)."""
    directory, wave, out = Path(directory), Path(wave), Path(out)
    meta_path = wave.with_name(wave.name.replace(".json", ".keys.json"))
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    try:
        replies = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{out}: not a JSON object of replies ({exc}) — write "
                         '{"r1": "reply text", ...} and run this command again') from None
    if not isinstance(replies, dict):
        raise SystemExit(f'{out}: must be one JSON object {{"r1": "reply text", ...}}')
    problems = [f"{i}: not an id of this wave" for i in replies if i not in meta["keys"]]
    problems += [f"{i}: the reply must be a string" for i, r in replies.items()
                 if i in meta["keys"] and not isinstance(r, str)]
    problems += [f"{i}: no reply in {out.name}" for i in meta["keys"] if i not in replies]
    released = 0
    for wave_id, key in meta["keys"].items():
        reply = replies.get(wave_id)
        if isinstance(reply, str):
            _write_atomic(directory / "answers" / f"{key}.json",
                          {"reply": reply, "wave": wave.stem, "date": date.today().isoformat()})
            released += 1
    if not problems:
        meta["answered"] = time.time()
        _write_atomic(meta_path, meta)
    return released, problems


def status(directory: Path) -> dict:
    directory = Path(directory)
    pending = [json.loads(p.read_text(encoding="utf-8")) for p in (directory / "pending").glob("*.json")]
    waves = list((directory / "waves").glob("wave-*.keys.json"))
    open_waves = [p.name for p in waves if not json.loads(p.read_text(encoding="utf-8")).get("answered")]
    return {"pending": len(pending), "tags": len({(p.get("set"), p["tag"]) for p in pending}),
            "waves": len(waves), "open_waves": sorted(open_waves)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the relay until Ctrl-C")
    serve.add_argument("--recordings", type=Path, required=True)
    serve.add_argument("--dir", type=Path, help="the relay folder (pending requests, waves, answers)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0)
    serve.add_argument("--replay", action="store_true", help="answer only from the recordings")
    wave = sub.add_parser("wave", help="cut waves from the pending requests")
    wave.add_argument("--dir", type=Path, required=True)
    wave.add_argument("--waves", type=int, default=1)
    wave.add_argument("--max-requests", type=int, default=20)
    wave.add_argument("--stale-minutes", type=float, default=60)
    wave.add_argument("--model-md", type=Path, default=MODEL_MD)
    wave.add_argument("--only", help="comma-separated recordings sets (file stems) to take requests from")
    answer = sub.add_parser("answer", help="release a wave's answers")
    answer.add_argument("--dir", type=Path, required=True)
    answer.add_argument("wave", type=Path)
    answer.add_argument("out", type=Path)
    stat = sub.add_parser("status", help="pending requests and open waves")
    stat.add_argument("--dir", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "serve":
        relay = Relay(args.recordings, args.dir, replay=args.replay, host=args.host, port=args.port).start()
        print(f"relay on {relay.base_url()} ({'replay' if args.replay else 'recording'} "
              f"{args.recordings}, {len(relay.recorded)} recorded)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            relay.stop()
        return 0
    if args.command == "wave":
        only = set(args.only.split(",")) if args.only else None
        for prompt in cut_waves(args.dir, args.waves, args.max_requests, args.stale_minutes, args.model_md, only):
            print(prompt)
        return 0
    if args.command == "answer":
        released, problems = answer_wave(args.dir, args.wave, args.out)
        for problem in problems:
            print(f"problem: {problem}", file=sys.stderr)
        print(f"{released} answers released" + (f"; {len(problems)} problems (fix OUT and run again)"
                                                  if problems else ""))
        return 1 if problems else 0
    print(json.dumps(status(args.dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
