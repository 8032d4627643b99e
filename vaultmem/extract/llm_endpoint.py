"""The LLM endpoint: where it is (`LLMSettings`, `[llm]` of config.toml) and one call to it:
an OpenAI-compatible `/chat/completions` in plain urllib (OpenAI, llama.cpp, Ollama, vLLM),
or a model CLI the person already runs (`[llm] command`, `llm_command`). Each call's outcome
is kept in `.vaultmem/llm-status.json`, which `doctor` reads: when the model last answered,
or its last error.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from vaultmem.clock import iso, now
from vaultmem.errors import LLMError
from vaultmem.extract.llm_prompt import MAX_TOKENS

STATUS_FILE = "llm-status.json"   # each call's outcome, in the vault's state folder (`.vaultmem/`)


@dataclass(frozen=True)
class LLMSettings:
    """Where the endpoint is: `[llm]` of config.toml."""

    base_url: str
    model: str
    api_key_env: str = ""
    timeout: float = 60.0
    command: tuple = ()           # a model CLI run instead of the endpoint (`[llm] command`)
    context_tokens: int = 32000   # the model's context window (`[llm] context_tokens`)
    status_path: str = ""         # where each call's outcome is kept (`STATUS_FILE`; "" = nowhere)

    @classmethod
    def coerce(cls, settings) -> "LLMSettings":
        """From an `LLMSettings`, a dict (`Memory.llm_settings()`), or a `Config` (`llm_*` fields)."""
        if isinstance(settings, cls):
            return settings

        def get(key, default=None):
            if isinstance(settings, dict):
                return settings.get(key, default)
            # `llm_` first: a Config's own `model` is the embedding model.
            return getattr(settings, f"llm_{key}", getattr(settings, key, default))

        base_url, model = get("base_url"), get("model")
        command = tuple(str(part) for part in (get("command") or ()))
        if not command and (not base_url or not model):
            raise LLMError("LLM settings need base_url and model, or a command — set them under [llm] in "
                           ".vaultmem/config.toml")
        return cls(str(base_url or ""), str(model or ""), str(get("api_key_env", "") or ""),
                   float(get("timeout", 60.0)), command, int(get("context_tokens", 32000) or 32000),
                   str(get("status_path", "") or ""))

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
    """One request to the model; the reply's text. `[llm] command` runs the model CLI
    (`llm_command`), else the endpoint's chat completions are called. `usage` (a dict) counts
    the call and its tokens (`count_usage`); the outcome goes to `settings.status_path`."""
    try:
        if settings.command:
            from vaultmem.extract.llm_command import run_command

            text, given = run_command(settings.command, messages, settings.timeout)
            count_usage(usage, {"usage": given} if given else None, messages, text)
        else:
            text = _chat_completion(settings, messages, max_tokens, usage)
    except LLMError as exc:
        record_status(settings, str(exc))
        raise
    record_status(settings)
    return text


def _chat_completion(settings: LLMSettings, messages: list[dict], max_tokens: int, usage: dict | None) -> str:
    """One call to the endpoint's OpenAI-compatible `/chat/completions`."""
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


def record_status(settings: LLMSettings, error: str | None = None) -> None:
    """Keep this call's outcome at `settings.status_path`, atomically: `{"model", "answered"
    (when it last answered; kept through a failure of the same model), "ok", "error", "at"}`.
    A state folder that cannot be written costs nothing but the record."""
    if not settings.status_path:
        return
    from vaultmem.store.files import atomic_write

    path, when, model = Path(settings.status_path), iso(now()), settings.describe()
    answered = when
    if error is not None:
        before = read_status(path)
        answered = before.get("answered") if before.get("model") == model else None
    state = {"model": model, "answered": answered, "ok": error is None, "error": error, "at": when}
    try:
        atomic_write(path, json.dumps(state, ensure_ascii=False, indent=1) + "\n")
    except OSError:
        pass


def read_status(path: Path | str) -> dict:
    """What `record_status` kept at `path`; {} when nothing was kept (or it is unreadable)."""
    try:
        state = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def model_report(config, state_dir: Path | str) -> dict:
    """Which model writes the memory, as `doctor` reports it: `{"model" (describe(), None when
    [llm] names none), "enabled", "rerank" (it also orders what search and context find:
    `[search] rerank = "llm"`), "answered", "ok", "error", "at"}`, the last four from the
    state file (None before the first call of this model)."""
    try:
        model = LLMSettings.coerce(config).describe()
    except LLMError:
        model = None
    state = read_status(Path(state_dir) / STATUS_FILE)
    if state.get("model") != model:
        state = {}   # another model's record: it says nothing of this one
    return {"model": model, "enabled": bool(getattr(config, "llm_enabled", False)),
            "rerank": getattr(config, "search_rerank", "") == "llm",
            **{key: state.get(key) for key in ("answered", "ok", "error", "at")}}
