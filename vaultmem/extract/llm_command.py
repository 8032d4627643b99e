"""A model CLI the person already runs (`[llm] command`): the request goes to it on stdin as
one text, the reply comes back on its stdout, and the known CLIs' wrappers are taken off.

    >>> run_command(("claude", "-p", "--output-format", "json"), messages, timeout=60)  # doctest: +SKIP
    ('{"memory_items": []}', {'prompt_tokens': 812, 'completion_tokens': 9})

What each CLI prints: `claude -p --output-format json` one JSON object whose `result` is the
reply (`usage` its tokens, `is_error` a failure; with `--verbose` a list of events ending in
that object); `codex exec -` the final message on stdout, its progress on stderr; `llm` and
`ollama run MODEL` the reply as text (ollama with ANSI escapes for its spinner, and a
thinking model's "Thinking..." block first).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from vaultmem.errors import LLMError

# The CLIs `vaultmem init` looks for, and the `[llm] command` that runs each (MODEL: ollama's).
KNOWN_CLIS = {
    "claude": ["claude", "-p", "--output-format", "json"],
    "codex": ["codex", "exec", "--skip-git-repo-check", "-"],
    "llm": ["llm", "--no-log"],
    "ollama": ["ollama", "run", "--format", "json", "MODEL"],
}
OLLAMA_SUGGESTED = "qwen2.5"
# CSI and OSC escapes, two-byte escapes, the braille spinner and carriage returns a
# terminal program leaves in its output.
_TERMINAL_NOISE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
                             r"|[\u2800-\u28ff]|\r")
_THINKING_DONE = "...done thinking."
FIX = "or change [llm] command in .vaultmem/config.toml"


def request_text(messages: list[dict]) -> str:
    """The chat as one text for a CLI: the system message, then the user's; after a reply of
    the model's (a retry), that reply and the follow-up each under a label saying what it is."""
    parts, replied = [], False
    for message in messages:
        content = str(message.get("content") or "").strip()
        if message.get("role") == "assistant":
            replied = True
            parts.append(f"--- Your previous answer ---\n{content}")
        elif replied:
            parts.append(f"--- Follow-up to your answer ---\n{content}")
        else:
            parts.append(content)
    return "\n\n".join(parts) + "\n"


def run_command(command, messages: list[dict], timeout: float) -> tuple[str, dict | None]:
    """Run `command` (no shell) with the request on stdin; `(reply, usage)` where usage is
    `{"prompt_tokens", "completion_tokens"}` when the CLI counted them, else None. A missing
    executable, a non-zero exit, a timeout (the command's whole process group is killed),
    a reported error or an empty reply raises LLMError naming the command."""
    command = [str(part) for part in command]
    shown = " ".join(command)
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=os.name == "posix",
                                   env={**os.environ, "NO_COLOR": "1"})
    except FileNotFoundError:
        raise LLMError(f"cannot run `{shown}`: {command[0]} is not on PATH — install it, {FIX}") from None
    except OSError as exc:
        raise LLMError(f"cannot run `{shown}`: {exc.strerror or exc} — {FIX}") from None
    try:
        out, err = process.communicate(request_text(messages).encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise LLMError(f"`{shown}` gave no answer within {timeout:g} s and was stopped — raise [llm] "
                       f"timeout in .vaultmem/config.toml, or run the command by hand to see what it waits for")
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    reply, usage, reported = unwrap(stdout)
    if process.returncode != 0:
        how = f"was killed by signal {-process.returncode}" if process.returncode < 0 \
            else f"exited with code {process.returncode}"
        why = reported or last_line(stderr) or last_line(reply) or "it printed no message"
        raise LLMError(f"`{shown}` {how}: {why} — run it by hand to see why (signed in? model "
                       f"installed?), {FIX}")
    if reported:
        raise LLMError(f"`{shown}` reported an error: {reported} — run it by hand to see why, {FIX}")
    if not reply.strip():
        said = last_line(stderr)
        raise LLMError(f"`{shown}` answered nothing on stdout" + (f" ({said})" if said else "")
                       + f" — run it by hand with a short prompt on stdin, {FIX}")
    return reply, usage


def unwrap(stdout: str) -> tuple[str, dict | None, str | None]:
    """`(reply, usage, error)` of a CLI's stdout: Claude Code's JSON result taken apart, any
    other output as its text without terminal escapes or a thinking model's preamble."""
    text = _TERMINAL_NOISE.sub("", stdout).strip()
    result = _claude_result(text)
    if result is None:
        if _THINKING_DONE in text:
            text = text.split(_THINKING_DONE, 1)[1].strip()
        return text, None, None
    reply = result.get("result")
    reply = reply if isinstance(reply, str) else ""
    error = None
    if result.get("is_error") or str(result.get("subtype") or "success") != "success":
        error = last_line(reply) or str(result.get("subtype") or "is_error")
    return reply.strip(), _claude_usage(result.get("usage")), error


def _claude_result(text: str) -> dict | None:
    """Claude Code's result object in `text` (the whole of it, the last of a list of events,
    or the last line of stream-json); None when the text is not that wrapper."""
    if not text.startswith(("{", "[")):
        return None
    for candidate in (text, text.rsplit("\n", 1)[-1]):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, list):
            data = next((item for item in reversed(data) if isinstance(item, dict)
                         and item.get("type") == "result"), None)
        # A reply that is itself JSON (`{"memory_items": ...}`) has neither key.
        if isinstance(data, dict) and "result" in data and ("is_error" in data or data.get("type") == "result"):
            return data
    return None


def _claude_usage(usage) -> dict | None:
    """Claude's `usage` as prompt and completion tokens: what was read from its prompt cache
    was sent all the same, so it counts as prompt."""
    if not isinstance(usage, dict) or not isinstance(usage.get("output_tokens"), int):
        return None
    sent = sum(usage.get(key) for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
               if isinstance(usage.get(key), int))
    return {"prompt_tokens": sent, "completion_tokens": usage["output_tokens"]}


def last_line(text: str) -> str:
    """The last non-blank line of `text`, without terminal escapes, at most 300 characters."""
    lines = [line.strip() for line in _TERMINAL_NOISE.sub("", text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _kill(process: subprocess.Popen) -> None:
    """Stop the command and whatever it started (its own process group)."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:   # a child that left the group still holds the pipes
        pass


def model_clis(path: str | None = None) -> list[dict]:
    """The model CLIs on PATH (`path` instead when given), each as `{"name", "path",
    "command", "note"}`: the `[llm] command` that runs it, and what to know first."""
    found = []
    for name, command in KNOWN_CLIS.items():
        where = shutil.which(name, path=path)
        if not where:
            continue
        note = ""
        if name == "ollama":
            model = next(iter(ollama_models()), None)
            note = "" if model else f"after `ollama pull {OLLAMA_SUGGESTED}` (or name a model you have)"
            command = [(model or OLLAMA_SUGGESTED) if part == "MODEL" else part for part in command]
        elif name == "llm":
            note = "llm's default model (`llm models default`); add \"-m\", \"MODEL\" for another"
        elif name == "codex":
            note = "runs in Codex's read-only sandbox"
        found.append({"name": name, "path": where, "command": list(command), "note": note})
    return found


def ollama_models() -> list[str]:
    """The models Ollama has pulled, read from its manifests (`$OLLAMA_MODELS`, the person's
    `~/.ollama/models`, or the Linux service's); nothing is run or asked."""
    roots = [os.environ.get("OLLAMA_MODELS", ""), str(Path.home() / ".ollama" / "models"),
             "/usr/share/ollama/.ollama/models"]
    for root in filter(None, roots):
        library = Path(root) / "manifests" / "registry.ollama.ai" / "library"
        try:
            tags = sorted(p for p in library.glob("*/*") if p.is_file())
        except OSError:
            continue
        if tags:
            return [p.parent.name if p.name == "latest" else f"{p.parent.name}:{p.name}" for p in tags]
    return []
