"""`[llm] command`: a model CLI run as a real process. Stand-ins for `claude`, `codex` and
`ollama` (small Python scripts written here and put first on PATH) read the request on stdin,
log it, and print what each CLI prints; `init` names the CLIs on PATH and `doctor` says which
model writes the memory and when it last answered."""

import json
import os
import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tests.helpers.llm_endpoint import LoopbackLLM, completion
from tests.helpers.transcripts import write_jsonl
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.errors import LLMError
from vaultmem.extract.llm_command import request_text, unwrap
from vaultmem.extract.llm_endpoint import STATUS_FILE, LLMSettings, chat

CLAUDE = ["claude", "-p", "--output-format", "json"]
REPLY = '{"memory_items": []}'
MESSAGES = [{"role": "system", "content": "You write memories. Answer with JSON."},
            {"role": "user", "content": "[j-0] Alice (user): I live in Porto."}]

# One script for every stand-in: what it prints depends on the name it was called by and on
# STANDIN_MODE (ok, fail, is_error, empty, sleep); every call is logged to STANDIN_LOG.
STANDIN = r'''
import json, os, subprocess, sys, time
name = os.path.basename(sys.argv[0])
request = sys.stdin.read()
with open(os.environ["STANDIN_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"name": name, "argv": sys.argv[1:], "stdin": request}) + "\n")
mode = os.environ.get("STANDIN_MODE", "ok")
reply = os.environ.get("STANDIN_REPLY", '{"memory_items": []}')
if mode == "fail":
    sys.stderr.write("Loading...\nError: not signed in, run `claude /login`\n")
    sys.exit(1)
if mode == "sleep":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(os.environ["STANDIN_CHILD"], "w") as out:
        out.write(str(child.pid))
    time.sleep(60)
if mode == "empty":
    sys.stderr.write("\n")
    sys.exit(0)
if name == "claude":
    failed = mode == "is_error"
    print(json.dumps({"type": "result", "subtype": "success", "is_error": failed, "duration_ms": 2100,
                      "num_turns": 1, "result": "Credit balance is too low" if failed else reply,
                      "session_id": "5f0c", "total_cost_usd": 0.0123,
                      "usage": {"input_tokens": 12, "cache_creation_input_tokens": 100,
                                "cache_read_input_tokens": 30, "output_tokens": 7}}))
elif name == "codex":
    sys.stderr.write("OpenAI Codex v0.77.0 (research preview)\n--------\nworkdir: /tmp\nthinking\n")
    print(reply)
elif name == "ollama":
    spin = "\x1b[?25l\u280b \x1b[?25h\x1b[?25l\x1b[2K\x1b[1G\u2819 \x1b[?25h\x1b[?25l\x1b[2K\x1b[1G\x1b[?25h"
    sys.stdout.write(spin + reply + "\n\n")
'''


@pytest.fixture
def standins(tmp_path, monkeypatch):
    """`claude`, `codex` and `ollama` stand-ins first on PATH; `.calls()` what each was sent."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex", "ollama"):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\n{STANDIN}", encoding="utf-8")
        script.chmod(0o755)
    log = tmp_path / "standin.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_LOG", str(log))
    monkeypatch.delenv("STANDIN_MODE", raising=False)

    def calls():
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []

    return SimpleNamespace(bin=bin_dir, calls=calls)


def settings_for(command, tmp_path, timeout=10.0) -> LLMSettings:
    return LLMSettings.coerce({"command": command, "timeout": timeout,
                               "status_path": str(tmp_path / ".vaultmem" / STATUS_FILE)})


def status_of(tmp_path) -> dict:
    return json.loads((tmp_path / ".vaultmem" / STATUS_FILE).read_text(encoding="utf-8"))


# ---- the request, the reply, the usage, the record ------------------------------------------

def test_claude_reply_is_unwrapped_its_usage_counted_and_its_answer_recorded(standins, tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    usage = {}
    assert chat(settings_for(CLAUDE, tmp_path), MESSAGES, usage=usage) == REPLY
    (call,) = standins.calls()
    assert call["name"] == "claude" and call["argv"] == CLAUDE[1:]
    assert call["stdin"] == "You write memories. Answer with JSON.\n\n[j-0] Alice (user): I live in Porto.\n"
    # Claude's own counts: what was read from its prompt cache was sent all the same.
    assert usage == {"calls": 1, "prompt_tokens": 142, "completion_tokens": 7}
    assert status_of(tmp_path) == {"model": "claude -p --output-format json", "answered": "2026-11-30T12:00:00",
                                   "ok": True, "error": None, "at": "2026-11-30T12:00:00"}


def test_codex_final_message_is_the_reply_and_a_retry_is_labelled(standins, tmp_path):
    retry = MESSAGES + [{"role": "assistant", "content": '{"memory_items": [{"type": "opinion"}]}'},
                        {"role": "user", "content": "That reply was invalid. Answer again with only the JSON."}]
    usage = {}
    assert chat(settings_for(["codex", "exec", "-"], tmp_path), retry, usage=usage) == REPLY
    sent = standins.calls()[0]["stdin"]
    assert sent.startswith("You write memories. Answer with JSON.\n\n[j-0] Alice (user): I live in Porto.\n\n")
    assert ('--- Your previous answer ---\n{"memory_items": [{"type": "opinion"}]}\n\n'
            "--- Follow-up to your answer ---\nThat reply was invalid.") in sent
    assert usage["calls"] == 1 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0  # estimated
    assert status_of(tmp_path)["ok"] is True


def test_ollama_spinner_escapes_are_stripped(standins, tmp_path):
    assert chat(settings_for(["ollama", "run", "qwen2.5"], tmp_path), MESSAGES) == REPLY


def test_a_reply_that_is_json_itself_is_not_taken_for_a_wrapper():
    assert unwrap('{"result": "x", "ranking": [1]}\n') == ('{"result": "x", "ranking": [1]}', None, None)
    events = json.dumps([{"type": "system"}, {"type": "result", "subtype": "success", "is_error": False,
                                              "result": REPLY}])   # claude --verbose
    assert unwrap(events) == (REPLY, None, None)
    assert unwrap("Thinking...\nthe user lives in Porto\n...done thinking.\n\n" + REPLY)[0] == REPLY
    assert request_text([{"role": "user", "content": "hi"}]) == "hi\n"


def test_the_endpoint_records_its_answers_and_failures_too(tmp_path):
    class Endpoint(LoopbackLLM):
        replies = [(200, completion(REPLY)), (500, {"error": "overloaded"})]

        def answer(self, body):
            return self.replies.pop(0)

    with Endpoint() as llm:
        settings = LLMSettings.coerce({**llm.settings, "status_path": str(tmp_path / ".vaultmem" / STATUS_FILE)})
        assert chat(settings, MESSAGES) == REPLY
        answered = status_of(tmp_path)["answered"]
        with pytest.raises(LLMError, match="HTTP 500"):
            chat(settings, MESSAGES)
    status = status_of(tmp_path)
    assert status["model"] == f"test-model at {llm.settings['base_url']}"
    assert status["ok"] is False and "HTTP 500" in status["error"] and status["answered"] == answered


# ---- failures: each an LLMError that names the command and what to do ---------------------

def test_a_failing_command_names_itself_and_its_stderr_and_keeps_the_last_answer(standins, tmp_path, monkeypatch):
    settings = settings_for(CLAUDE, tmp_path)
    chat(settings, MESSAGES)
    answered = status_of(tmp_path)["answered"]
    monkeypatch.setenv("STANDIN_MODE", "fail")
    with pytest.raises(LLMError) as caught:
        chat(settings, MESSAGES)
    message = str(caught.value)
    assert message.startswith("`claude -p --output-format json` exited with code 1: "
                              "Error: not signed in, run `claude /login`")
    assert "[llm] command in .vaultmem/config.toml" in message
    status = status_of(tmp_path)
    assert status == {**status, "ok": False, "error": message, "answered": answered}


def test_a_missing_executable_says_it_is_not_on_path(standins, tmp_path):
    with pytest.raises(LLMError, match=r"cannot run `vaultmem-no-such-cli -p`: vaultmem-no-such-cli is not on "
                                       r"PATH — install it, or change \[llm\] command"):
        chat(settings_for(["vaultmem-no-such-cli", "-p"], tmp_path), MESSAGES)
    assert status_of(tmp_path)["ok"] is False and status_of(tmp_path)["answered"] is None


def test_claude_is_error_is_a_failure_with_its_message(standins, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_MODE", "is_error")
    with pytest.raises(LLMError, match="`claude -p --output-format json` reported an error: Credit balance is too low"):
        chat(settings_for(CLAUDE, tmp_path), MESSAGES)


def test_an_empty_reply_is_a_failure(standins, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_MODE", "empty")
    with pytest.raises(LLMError, match=r"`codex exec -` answered nothing on stdout — run it by hand"):
        chat(settings_for(["codex", "exec", "-"], tmp_path), MESSAGES)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_command_past_its_timeout_is_killed_with_what_it_started(standins, tmp_path, monkeypatch):
    child = tmp_path / "child.pid"
    monkeypatch.setenv("STANDIN_MODE", "sleep")
    monkeypatch.setenv("STANDIN_CHILD", str(child))
    with pytest.raises(LLMError, match=r"`claude -p --output-format json` gave no answer within 0.5 s and was "
                                       r"stopped — raise \[llm\] timeout"):
        chat(settings_for(CLAUDE, tmp_path, timeout=0.5), MESSAGES)

    def gone(pid):
        try:   # a killed process may linger a moment as a zombie until it is reaped
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
        except OSError:
            return True

    pid = int(child.read_text())
    deadline = time.monotonic() + 5
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(pid), "the command's own child outlived the timeout"


# ---- init, doctor, extract --llm ---------------------------------------------------------------

def only_git_on(path_dir: Path) -> str:
    """A PATH of `path_dir` and a folder holding git alone (no model CLI of this machine's)."""
    tools = path_dir.parent / "tools"
    tools.mkdir(exist_ok=True)
    (tools / "git").symlink_to(shutil.which("git"))
    return f"{path_dir}{os.pathsep}{tools}"


def test_init_names_the_model_clis_on_path_and_turns_none_on(standins, tmp_path, git_identity, monkeypatch):
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    pulled = Path.home() / ".ollama/models/manifests/registry.ollama.ai/library/qwen2.5/7b"
    pulled.parent.mkdir(parents=True)
    pulled.write_text("{}")
    monkeypatch.setenv("PATH", only_git_on(standins.bin))
    root = tmp_path / "vault"
    result = CliRunner().invoke(cli, ["init", str(root)])
    assert result.exit_code == 0, result.output
    assert "model CLIs on PATH: claude, codex, ollama. Nothing is sent to one until you turn it on" in result.output
    assert '      command = ["claude", "-p", "--output-format", "json"]\n      enabled = true\n' in result.output
    assert 'command = ["codex", "exec", "--skip-git-repo-check", "-"]' in result.output
    assert 'command = ["ollama", "run", "--format", "json", "qwen2.5:7b"]' in result.output
    config = (root / ".vaultmem/config.toml").read_text(encoding="utf-8")
    assert "\ncommand = []\n" in config and "\nenabled = false\n" in config
    assert standins.calls() == []   # found on PATH, never run

    found = json.loads(CliRunner().invoke(cli, ["init", str(root), "--json"]).stdout)["model_clis"]
    assert [(c["name"], c["path"]) for c in found] == [(n, str(standins.bin / n)) for n in ("claude", "codex", "ollama")]


def test_init_without_a_model_cli_points_at_an_endpoint(tmp_path, git_identity, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", only_git_on(empty))
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "vault")])
    assert result.exit_code == 0, result.output
    assert ("model: the offline rules write the memory; for a model, set base_url, model and api_key_env of "
            "an OpenAI-compatible endpoint under [llm]") in result.output


def use_command(root: Path, command, enabled: bool = True) -> None:
    """Set `[llm] command` and `enabled` in the vault's config.toml, as a person would."""
    config = root / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert text.count("\ncommand = []\n") == 1 and text.count("\nenabled = false\n") == 1
    text = text.replace("\ncommand = []\n", f"\ncommand = {json.dumps(command)}\n", 1)
    config.write_text(text.replace("\nenabled = false\n", f"\nenabled = {str(enabled).lower()}\n", 1),
                      encoding="utf-8")


def doctor_of(root) -> tuple[dict, str]:
    runner = CliRunner()
    report = json.loads(runner.invoke(cli, ["--vault", str(root), "doctor", "--json"]).stdout)
    text = runner.invoke(cli, ["--vault", str(root), "doctor"]).output
    return report["llm"], next(line for line in text.splitlines() if line.startswith("llm: "))


def test_doctor_says_which_model_writes_the_memory_and_when_it_last_answered(standins, tmp_path, git_identity,
                                                                               monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    root = tmp_path / "vault"
    api.init(root)
    report, line = doctor_of(root)
    assert report == {"model": "llama3.1 at http://127.0.0.1:11434/v1", "enabled": False, "rerank": False,
                      "answered": None, "ok": None, "error": None, "at": None}
    assert line.startswith("llm: off, the offline rules write the memory ([llm] names llama3.1 at "
                           "http://127.0.0.1:11434/v1: `extract --llm` asks it for one run")
    assert line.endswith("; it has not answered yet")

    use_command(root, CLAUDE)
    settings = LLMSettings.coerce(api.Memory(root).llm_settings())
    chat(settings, MESSAGES)
    report, line = doctor_of(root)
    assert report == {"model": "claude -p --output-format json", "enabled": True, "rerank": False,
                      "answered": "2026-11-30T12:00:00", "ok": True, "error": None, "at": "2026-11-30T12:00:00"}
    assert line == ("llm: claude -p --output-format json writes the memory ([llm] enabled); "
                    "last answered 2026-11-30 12:00:00")
    config = root / ".vaultmem" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('rerank = ""', 'rerank = "llm"'), encoding="utf-8")
    report, line = doctor_of(root)
    assert report["rerank"] is True
    assert line == ("llm: claude -p --output-format json writes the memory ([llm] enabled); it orders what "
                    'search and context find ([search] rerank = "llm"); last answered 2026-11-30 12:00:00')

    monkeypatch.setenv("STANDIN_MODE", "fail")
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-01T08:00:00")
    with pytest.raises(LLMError):
        chat(settings, MESSAGES)
    report, line = doctor_of(root)
    assert report["ok"] is False and report["answered"] == "2026-11-30T12:00:00"
    assert line.startswith("llm: claude -p --output-format json writes the memory ([llm] enabled); it orders what "
                           'search and context find ([search] rerank = "llm"); its last call failed at 2026-12-01 '
                           "08:00:00: `claude -p --output-format json` exited with code 1")
    assert line.endswith("(last answered 2026-11-30 12:00:00)")


def test_extract_llm_runs_through_the_command(standins, tmp_path, git_identity, embedder, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    root = tmp_path / "vault"
    api.init(root)
    use_command(root, CLAUDE, enabled=False)
    transcript = write_jsonl(tmp_path / "porto.jsonl", "porto", [("user", "I moved to Porto last spring.")],
                             speaker="user")
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(transcript), "--llm", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sessions"] == 1
    calls = [call for call in standins.calls() if call["name"] == "claude"]
    assert calls and calls[0]["argv"] == CLAUDE[1:]
    assert any("I moved to Porto last spring." in call["stdin"] for call in calls)
    assert status_of(root)["ok"] is True
