"""An extraction run in steps (vaultmem/extract/run.py): commits per session with one run id,
an interrupted LLM run resumed, `[llm] session_seconds`, progress on stderr, and summaries
that count what the commits hold. Real vault, git, LanceDB and model; the LLM is served on
loopback by the test."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.llm_endpoint import LoopbackLLM, completion
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.store.note import read_note
from vaultmem.store.properties import read_head

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from big_transcript import committed, write_transcript  # noqa: E402


@pytest.fixture(autouse=True)
def clock_after_sessions(monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-15T09:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)


FACTS = [("I live in Porto.", "My cat Miso sleeps all day."),
         ("I work as a nurse at St Mary's.", "I play the cello every evening."),
         ("My sister Ana lives in Lisbon.", "I am allergic to peanuts."),
         ("I drive a red Volvo.", "I learned Japanese in Kyoto."),
         ("My favourite book is Dune.", "I run marathons in spring.")]


def sessions_jsonl(path: Path, n: int) -> Path:
    """`n` sessions a day apart, each a user telling two things about themselves."""
    lines = []
    for s in range(1, n + 1):
        day = datetime(2026, 11, s, 9, 0)
        for i, text in enumerate(FACTS[s - 1]):
            lines.append(json.dumps({"session": f"chat-{s}", "id": f"s{s}-m{i}", "role": "user",
                                     "speaker": "user", "time": (day + timedelta(minutes=i)).isoformat(),
                                     "text": text}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class SessionLLM(LoopbackLLM):
    """Answers each request with a memory per message; `hang_on` a session id: that request
    sets `hung` and waits `hang_seconds` before answering."""

    def __init__(self, hang_on=None, hang_seconds=0.0):
        super().__init__()
        self.hang_on, self.hang_seconds, self.hung = hang_on, hang_seconds, threading.Event()

    def answer(self, body):
        convo = body["messages"][1]["content"]
        if self.hang_on and f"[{self.hang_on}-m0]" in convo:
            self.hung.set()
            time.sleep(self.hang_seconds)
        items = [{"content": text, "type": "fact", "importance": 0.6,
                  "source_messages": [mid]}
                 for mid, text in re.findall(r"^\[([^\]]+)\][^\n]*?\(user\): (.*)$", convo, re.M)]
        return 200, completion(json.dumps({"memory_items": items}))

    def sessions_asked(self) -> list[str]:
        return [m for r in self.requests
                for m in re.findall(r"^\[(s\d+)-m0\]", r["body"]["messages"][1]["content"], re.M)]


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def vault_files(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {".git", ".vaultmem"} & set(p.relative_to(root).parts)}


def use_model(monkeypatch, embedder):
    """In-process CLI commands open their Memory with the shared model."""
    monkeypatch.setattr("vaultmem.cli.app.Ctx.memory",
                        lambda self, user=None: api.Memory(self.vault_opt, embedder=embedder))


def test_llm_run_commits_each_session_under_one_run_id_and_rollback_undoes_them_all(tmp_path, embedder):
    root = tmp_path / "vault"
    api.init(root)
    before = vault_files(root)
    with SessionLLM() as llm:
        llm.configure(root)
        report = api.Memory(root, embedder=embedder).extract([sessions_jsonl(tmp_path / "t.jsonl", 3)], llm=True)
    assert (report["sessions"], report["created"], report["session_notes"]) == (3, 6, 3)
    assert len(report["commits"]) == 3
    for sha in report["commits"]:
        assert f"Vaultmem-Run: {report['run']}" in git(root, "log", "-1", "--format=%B", sha)
    marks = [read_head(p).get("extracted_by") for p in sorted((root / "Memory" / "Sessions").glob("*.md"))]
    assert marks == ["llm"] * 3
    undone = api.Memory(root, embedder=embedder).rollback(run=report["run"])
    assert undone["undone"] == report["commits"]
    assert vault_files(root) == before


def test_an_interrupted_llm_run_keeps_finished_sessions_and_a_rerun_resumes(tmp_path, embedder):
    root = tmp_path / "vault"
    api.init(root)
    transcript = sessions_jsonl(tmp_path / "t.jsonl", 5)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with SessionLLM(hang_on="s3", hang_seconds=8) as llm:
        llm.configure(root)
        proc = subprocess.Popen([sys.executable, "-c", "from vaultmem.cli import main; main()", "--vault",
                                 str(root), "extract", str(transcript), "--llm"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert llm.hung.wait(60), proc.communicate()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert "interrupted at session 3 of 5" in err and "kept" in err and "resume" in err
    assert not out.startswith("run "), "no success summary"
    run = re.search(r"\(run (run-\w+)\)", err).group(1)
    assert len(committed(root, run)["paths"]) > 0 and committed(root, run)["commits"] == 2
    assert sorted(p.stem for p in (root / "Memory" / "Sessions").glob("*.md")) == \
        ["2026-11-01 chat-1", "2026-11-02 chat-2"]
    assert git(root, "status", "--porcelain", "--", "Memory") == ""  # session 3 was undone whole

    with SessionLLM() as again:
        again.configure(root)
        report = api.Memory(root, embedder=embedder).extract([transcript], llm=True)
    assert again.sessions_asked() == ["s3", "s4", "s5"]  # sessions 1-2 are not asked again
    assert (report["sessions"], report["resumed"], report["created"]) == (5, 2, 6)
    assert len(report["commits"]) == 3


def test_session_seconds_bounds_the_llm_and_the_rules_decide_the_rest(tmp_path, embedder):
    root = tmp_path / "vault"
    api.init(root)
    with SessionLLM(hang_on="s1", hang_seconds=3) as llm:
        llm.configure(root)
        config = root / ".vaultmem" / "config.toml"
        config.write_text(config.read_text().replace("[llm]\n", "[llm]\nsession_seconds = 0.5\n"))
        started = time.monotonic()
        report = api.Memory(root, embedder=embedder).extract([sessions_jsonl(tmp_path / "t.jsonl", 1)], llm=True)
        took = time.monotonic() - started
    (warning,) = report["warnings"]
    assert "session chat-1" in warning and "session_seconds (0.5 s)" in warning and "offline extractor" in warning
    assert took < 3, "the request waited past the bound"
    assert report["created"] >= 1  # the rules found the home
    # the rules decided it because the model was slow: running the same command again asks the model
    assert read_head(next((root / "Memory" / "Sessions").glob("*.md"))).get("extracted_by") is None


def test_progress_on_stderr_and_none_with_json(tmp_path, embedder, monkeypatch):
    use_model(monkeypatch, embedder)
    root = tmp_path / "vault"
    api.init(root)
    transcript = sessions_jsonl(tmp_path / "t.jsonl", 3)
    shown = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(transcript), "--dry-run"])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"^extract: session 1/3 · 2 turns", shown.stderr, re.M)
    quiet = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(transcript), "--json"])
    assert quiet.exit_code == 0, quiet.output
    assert "extract:" not in quiet.stderr and json.loads(quiet.stdout)["sessions"] == 3


def test_a_big_run_commits_in_steps_and_its_summary_is_what_the_commits_hold(tmp_path, embedder, monkeypatch):
    from vaultmem.extract import run as run_module

    monkeypatch.setattr(run_module, "STEP_TURNS", 100)
    use_model(monkeypatch, embedder)
    root = tmp_path / "vault"
    api.init(root)
    before = vault_files(root)
    transcript = write_transcript(tmp_path / "big.jsonl", 400, per_session=50)
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(transcript), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    held = committed(root, report["run"])
    assert held["commits"] == len(report["commits"]) == 4  # 400 turns in steps of 100
    assert set(report["notes"]) == held["paths"]
    assert report["created"] == len(held["memory_added"]) == held["subjects_new"]
    superseded_new = sum(read_head(root / p).get("status") == "superseded" for p in held["memory_added"])
    superseded_old = sum(read_head(root / p).get("status") == "superseded" for p in held["memory_changed"])
    assert report["superseded"] == superseded_new + superseded_old > 0
    assert report["updated"] + superseded_old == len(held["memory_changed"])
    assert report["session_notes"] == 8

    printed = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(transcript)])
    assert printed.exit_code == 0, printed.output  # again: nothing new, and the printed summary says so
    run, updated = re.search(r"^run (\S+): 8 session\(s\); 0 created, (\d+) updated, 0 superseded",
                             printed.stdout, re.M).groups()
    # (a few events near-duplicate others of the same run, which the policy merges on a re-run)
    wrote = int(re.search(r"^wrote (\d+) note\(s\)", printed.stdout, re.M).group(1))
    again = committed(root, run)
    assert wrote == int(updated) == len(again["memory_changed"]) == len(again["paths"])

    undone = CliRunner().invoke(cli, ["--vault", str(root), "rollback", "--run", report["run"], "--json"])
    assert undone.exit_code == 0, undone.output
    assert vault_files(root) == before


def test_a_fact_restated_in_many_sessions_of_a_step_is_merged_into_its_note_once(tmp_path, embedder, monkeypatch):
    """Each restatement adds its turn to the note's sources, but the note is written once a
    step (it was re-read and re-rendered with its growing sources at every restatement);
    a restated memory superseded later in the same step keeps every restatement's turn."""
    from vaultmem.memory import memories

    writes = []
    real = memories.update_note

    def counted(vault, path, changes, **kw):
        writes.append(Path(path).name)
        return real(vault, path, changes, **kw)

    monkeypatch.setattr("vaultmem.memory.write.update_note", counted)
    lines = []
    says = ["I love jazz."] * 6 + ["I live in Porto."] * 3 + ["I live in Denver now."]
    for s, text in enumerate(says, start=1):
        lines.append(json.dumps({"session": f"chat-{s}", "id": f"s{s}-m0", "role": "user", "speaker": "user",
                                 "time": datetime(2026, 11, s, 9, 0).isoformat(), "text": text}))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    root = tmp_path / "vault"
    api.init(root)
    report = api.Memory(root, embedder=embedder).extract([transcript])
    assert len(report["commits"]) == 1 and report["errors"] == []

    facts = {p.name: read_note(p).meta for folder in ("Facts", "Preferences")
             for p in (root / "Memory" / folder).glob("*.md")}
    jazz = next(name for name in facts if "jazz" in name.lower())
    porto = next(name for name in facts if "Porto" in name)
    assert facts[jazz]["source_messages"] == [f"s{s}-m0" for s in range(1, 7)]
    assert len(facts[jazz]["sources"]) == 6
    assert writes.count(jazz) == 1
    assert facts[porto]["status"] == "superseded"
    assert facts[porto]["source_messages"] == ["s7-m0", "s8-m0", "s9-m0"]
    assert writes.count(porto) == 2  # its restatements, then superseded
