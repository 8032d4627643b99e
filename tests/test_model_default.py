"""The model as the default writer: with `[llm] enabled = true`, `vaultmem extract` without
a flag and the daemon's inbox ask the person's own model (vaultmem/cli/extract.py,
`Memory.extract` in vaultmem/api/writes.py, vaultmem/daemon/inbox.py); `--no-llm` keeps one
run to the offline rules; without a model, plain output says once how to turn one on.

The model is an OpenAI-compatible endpoint served on loopback by the test. Its answer does
not depend on the prompt (the prompt's format is not what is tested here): the tests look
at whether it was asked and whether the run went through, not at what it wrote."""

import json
import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.llm_endpoint import LoopbackLLM, completion
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.cli.extract import MODEL_HINT

CLAUDE_CODE = Path(__file__).parent / "data" / "agents" / "7f3c2a1e-5b4d-4c8e-9a6f-1d2e3f4a5b6c.jsonl"
SESSION_ID = CLAUDE_CODE.stem
HINT = MODEL_HINT.format(verb="wrote")


class CountingLLM(LoopbackLLM):
    """Answers every chat completion with no memories, whatever it was asked."""

    def answer(self, body):
        return 200, completion(json.dumps({"memory_items": []}))

    @property
    def calls(self) -> int:
        return sum(r["path"] == "/v1/chat/completions" for r in self.requests)


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-01T10:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)


@pytest.fixture
def llm():
    with CountingLLM() as server:
        yield server


@pytest.fixture
def vault(tmp_path, embedder, monkeypatch):
    """A fresh vault; in-process CLI commands open it with the shared embedding model."""
    monkeypatch.setattr("vaultmem.cli.app.Ctx.memory",
                        lambda self, user=None: api.Memory(self.vault_opt, embedder=embedder))
    root = tmp_path / "vault"
    api.init(root)
    return root


def set_llm(root: Path, base_url: str, enabled: bool) -> None:
    """Point `[llm]` of config.toml at `base_url` and turn `enabled` on or off."""
    config = root / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    text, urls = re.subn(r'(?m)^base_url = ".*"$', f'base_url = "{base_url}"', text)
    text, flags = re.subn(r"(?m)^enabled = (true|false)$", f"enabled = {str(enabled).lower()}", text)
    assert (urls, flags) == (1, 1), "config.toml has no [llm] base_url or enabled"
    config.write_text(text.replace("timeout = 60", "timeout = 5"), encoding="utf-8")


def sessions_jsonl(path: Path, sessions: int) -> Path:
    """`sessions` one-turn sessions a day apart, each the user saying where they live."""
    lines = [{"session": f"chat-{s}", "id": f"s{s}-m1", "role": "user", "speaker": "user",
              "time": f"2026-11-0{s}T09:00:00", "text": f"I live in city number {s} now."}
             for s in range(1, sessions + 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def run_extract(root: Path, *args: str):
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", *args])
    assert result.exit_code == 0, result.output
    return result


def closed_port_url() -> str:
    """A loopback URL nothing listens on: the model's server is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ---- `vaultmem extract` ----------------------------------------------------------------------

def test_an_enabled_model_writes_extract_without_a_flag(vault, llm, tmp_path):
    set_llm(vault, llm.settings["base_url"], enabled=True)
    result = run_extract(vault, str(sessions_jsonl(tmp_path / "chat.jsonl", 2)))
    assert llm.calls >= 2  # one session at least once each
    assert HINT not in result.stdout
    as_json = run_extract(vault, "--json", str(sessions_jsonl(tmp_path / "more.jsonl", 1)))
    assert json.loads(as_json.stdout)["model"] == "llama3.1"


def test_no_llm_keeps_one_run_to_the_offline_rules(vault, llm, tmp_path):
    set_llm(vault, llm.settings["base_url"], enabled=True)
    result = run_extract(vault, "--no-llm", str(sessions_jsonl(tmp_path / "chat.jsonl", 2)))
    assert llm.calls == 0
    assert "2 session(s)" in result.stdout
    assert HINT not in result.stdout  # the person chose the rules for this run


def test_without_a_model_plain_output_says_once_how_to_turn_one_on(vault, llm, tmp_path):
    set_llm(vault, llm.settings["base_url"], enabled=False)
    result = run_extract(vault, str(sessions_jsonl(tmp_path / "chat.jsonl", 3)))
    assert llm.calls == 0
    assert result.stdout.count(HINT) == 1 and result.stdout.rstrip("\n").endswith(HINT)
    assert HINT not in result.stderr

    dry = run_extract(vault, "--dry-run", str(sessions_jsonl(tmp_path / "other.jsonl", 2)))
    assert dry.stdout.count(MODEL_HINT.format(verb="would write")) == 1

    as_json = run_extract(vault, "--json", str(sessions_jsonl(tmp_path / "third.jsonl", 1)))
    report = json.loads(as_json.stdout)  # the document alone: no hint line around it
    assert report["model"] is None and "Setting up a model" not in as_json.output


def test_llm_flag_still_asks_the_model_when_it_is_not_enabled(vault, llm, tmp_path):
    set_llm(vault, llm.settings["base_url"], enabled=False)
    result = run_extract(vault, "--llm", str(sessions_jsonl(tmp_path / "chat.jsonl", 1)))
    assert llm.calls >= 1 and HINT not in result.stdout


# ---- the daemon's inbox ----------------------------------------------------------------------

def daemon_inbox(root: Path, embedder):
    """The inbox as the daemon wires it (`Daemon._run_extract`, under its index lock); the
    daemon is built but not run."""
    from vaultmem.daemon.runner import Daemon

    return Daemon(root, embedder=embedder).inbox


def drop_session_end(root: Path) -> Path:
    """What a Claude Code session that ends does: its hook queues the transcript."""
    hook_input = {"session_id": SESSION_ID, "transcript_path": str(CLAUDE_CODE),
                  "hook_event_name": "SessionEnd", "reason": "exit"}
    result = CliRunner().invoke(cli, ["--vault", str(root), "hook", "session-end"], input=json.dumps(hook_input))
    assert result.exit_code == 0, result.output
    return root / "Memory" / "Inbox" / CLAUDE_CODE.name


def extract_inbox(root: Path, embedder) -> dict:
    inbox = daemon_inbox(root, embedder)
    inbox.settle = 0  # the agent wrote it whole: no need to wait for it to settle
    inbox.scan()
    (outcome,) = inbox.process_due()
    return outcome


def session_notes(root: Path) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in (root / "Memory" / "Sessions").glob("*.md")]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_inbox_asks_the_model_only_when_it_is_enabled(vault, llm, embedder, enabled):
    set_llm(vault, llm.settings["base_url"], enabled=enabled)
    queued = drop_session_end(vault)
    outcome = extract_inbox(vault, embedder)
    assert outcome["ok"], outcome
    assert not queued.exists() and (vault / "Memory" / "Inbox" / "processed" / CLAUDE_CODE.name).is_file()
    assert (llm.calls >= 1) is enabled
    assert outcome["model"] == ("llama3.1" if enabled else None)
    assert len(session_notes(vault)) == 1


def test_with_the_model_down_the_inbox_writes_the_session_by_the_rules_and_says_why(
        vault, embedder, caplog):
    set_llm(vault, closed_port_url(), enabled=True)
    drop_session_end(vault)
    with caplog.at_level("WARNING", logger="vaultmem.daemon"):
        outcome = extract_inbox(vault, embedder)
    assert outcome["ok"], outcome
    assert (vault / "Memory" / "Inbox" / "processed" / CLAUDE_CODE.name).is_file()
    (note,) = session_notes(vault)
    assert "pnpm" in note  # the session is written all the same
    # why, by session (the words are the extraction run's: not pinned here)
    assert outcome["warnings"] and all(SESSION_ID in w for w in outcome["warnings"])
    assert any(SESSION_ID in r.getMessage() and CLAUDE_CODE.name in r.getMessage() for r in caplog.records)

    # The model is back and the agent's log comes again (it only grows): the model decides it.
    with CountingLLM() as llm:
        set_llm(vault, llm.settings["base_url"], enabled=True)
        drop_session_end(vault)
        again = extract_inbox(vault, embedder)
        assert again["ok"], again
        assert llm.calls >= 1
    assert len(session_notes(vault)) == 1
