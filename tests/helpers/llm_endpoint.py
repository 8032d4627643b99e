"""An OpenAI-compatible chat endpoint served on 127.0.0.1 by the test itself (the one fake
the house style allows at the edges). Subclasses say how to answer; every request is kept."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def completion(content: str) -> dict:
    """A chat completion whose one message is `content`."""
    return {"id": "c1", "object": "chat.completion", "model": "test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}]}


class LoopbackLLM:
    """`with Endpoint() as llm:` serves on a free loopback port; `llm.requests` holds each
    request as {"path", "headers", "body" (parsed), "raw" (bytes)}."""

    def __init__(self):
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                owner.requests.append({"path": self.path, "headers": dict(self.headers),
                                       "body": body, "raw": raw})
                status, reply = owner.answer(body)
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # shutdown() returns once serve_forever next looks at its flag: every 0.5 s by
        # default, half a second at the end of each of the many tests that serve a model.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01},
                                       daemon=True)

    def answer(self, body: dict) -> tuple[int, dict | bytes]:
        raise NotImplementedError

    @property
    def settings(self) -> dict:
        host, port = self.server.server_address
        return {"base_url": f"http://{host}:{port}/v1", "model": "test-model",
                "api_key_env": "VAULTMEM_TEST_LLM_KEY", "timeout": 5}

    def configure(self, vault_root: Path) -> None:
        """Point the `[llm]` table of the vault's config.toml (as `vaultmem init` wrote it)
        at this endpoint, so `extract --llm` and `Memory.extract(llm=True)` use it."""
        config = Path(vault_root) / ".vaultmem" / "config.toml"
        table = "[llm]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in self.settings.items())
        text, found = re.subn(r"(?m)^\[llm\]\n(?:(?!\[).*\n)*", lambda _m: table + "\n",
                              config.read_text(encoding="utf-8"))
        assert found == 1, f"no [llm] table in {config}"
        config.write_text(text, encoding="utf-8")

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
