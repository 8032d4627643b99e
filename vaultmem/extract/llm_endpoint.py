"""The LLM endpoint: where it is (`LLMSettings`, `[llm]` of config.toml) and one call to its
OpenAI-compatible `/chat/completions`, in plain urllib (OpenAI, llama.cpp, Ollama, vLLM).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass

from vaultmem.errors import LLMError
from vaultmem.extract.llm_prompt import MAX_TOKENS


@dataclass(frozen=True)
class LLMSettings:
    """Where the endpoint is: `[llm]` of config.toml."""

    base_url: str
    model: str
    api_key_env: str = ""
    timeout: float = 60.0
    command: tuple = ()           # a model CLI run instead of the endpoint (`[llm] command`)
    context_tokens: int = 32000   # the model's context window (`[llm] context_tokens`)

    @classmethod
    def coerce(cls, settings) -> "LLMSettings":
        """From an `LLMSettings`, a dict (`Memory.llm_settings()`), or a `Config` (`llm_*` fields)."""
        if isinstance(settings, cls):
            return settings

        def get(key, default=None):
            if isinstance(settings, dict):
                return settings.get(key, default)
            return getattr(settings, key, getattr(settings, f"llm_{key}", default))

        base_url, model = get("base_url"), get("model")
        command = tuple(str(part) for part in (get("command") or ()))
        if not command and (not base_url or not model):
            raise LLMError("LLM settings need base_url and model, or a command — set them under [llm] in "
                           ".vaultmem/config.toml")
        return cls(str(base_url or ""), str(model or ""), str(get("api_key_env", "") or ""),
                   float(get("timeout", 60.0)), command, int(get("context_tokens", 32000) or 32000))

    def describe(self) -> str:
        """Which model this is, as the run and `doctor` say it."""
        return " ".join(self.command) if self.command else f"{self.model} at {self.base_url}"


def count_usage(usage: dict | None, reply: dict | None, messages: list[dict], text: str) -> None:
    """Add one call to `usage` (calls, prompt_tokens, completion_tokens): the server's own
    counts when its reply has them (`usage`), else `estimate_tokens` of what went and came."""
    if usage is None:
        return
    from vaultmem.extract.llm_prompt import estimate_tokens

    given = (reply or {}).get("usage") if isinstance(reply, dict) else None
    given = given if isinstance(given, dict) else {}
    sent = given.get("prompt_tokens", given.get("input_tokens"))
    got = given.get("completion_tokens", given.get("output_tokens"))
    if not isinstance(sent, int):
        sent = sum(estimate_tokens(str(m.get("content", ""))) for m in messages)
    if not isinstance(got, int):
        got = estimate_tokens(text)
    usage["calls"] = usage.get("calls", 0) + 1
    usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + sent
    usage["completion_tokens"] = usage.get("completion_tokens", 0) + got


def chat(settings: LLMSettings, messages: list[dict], max_tokens: int = MAX_TOKENS,
         usage: dict | None = None) -> str:
    """One chat-completions call; the reply's text. `usage` (a dict) counts the call and its
    tokens (`count_usage`)."""
    url = settings.base_url.rstrip("/") + "/chat/completions"
    body = {"model": settings.model, "messages": messages, "temperature": 0, "max_tokens": max_tokens,
            "response_format": {"type": "json_object"}}
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = os.environ.get(settings.api_key_env, "") if settings.api_key_env else ""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout) as response:
            payload = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:200].decode("utf-8", "replace").strip()
        raise LLMError(f"{url} answered HTTP {exc.code}: {detail or exc.reason}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LLMError(f"cannot reach {url} ({reason}) — start the server or fix [llm] base_url "
                       f"in .vaultmem/config.toml") from None
    try:
        reply = json.loads(payload)
        text = reply["choices"][0]["message"]["content"] or ""
    except (ValueError, KeyError, IndexError, TypeError):
        raise LLMError(f"{url} did not answer with a chat completion") from None
    count_usage(usage, reply, messages, text)
    return text
