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
        if not base_url or not model:
            raise LLMError("LLM settings need base_url and model — set them under [llm] in .vaultmem/config.toml")
        return cls(str(base_url), str(model), str(get("api_key_env", "") or ""), float(get("timeout", 60.0)))


def chat(settings: LLMSettings, messages: list[dict], max_tokens: int = MAX_TOKENS) -> str:
    """One chat-completions call; the reply's text."""
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
        return json.loads(payload)["choices"][0]["message"]["content"] or ""
    except (ValueError, KeyError, IndexError, TypeError):
        raise LLMError(f"{url} did not answer with a chat completion") from None
