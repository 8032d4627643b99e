"""The file relay (benchmarks/llm_relay.py): the product's own HTTP client against it, recording
then replaying; waves of one request per conversation; loopback only; a model reply that holds
a secret is screened like any other; and the memquality dev recordings replay in full."""

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.wait import wait_for
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.errors import LLMError
from vaultmem.extract.llm_endpoint import LLMSettings, chat

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
RECORDINGS = BENCH / "recordings"
SHARED = Path(os.environ.get("VAULTMEM_SHARED_DATA") or ROOT.parent / "shared")
MEMQUALITY_DEV = sorted((SHARED / "eval" / "memquality").glob("*.json"))
sys.path.insert(0, str(BENCH))

import llm_relay  # noqa: E402
from llm_relay import Relay, answer_wave, cut_waves, request_key  # noqa: E402

MODEL_MD = "Answer WAVE into OUT, then run:\n    ANSWER_COMMAND\n"
ASK = [{"role": "system", "content": "Rank."}, {"role": "user", "content": "Question: where?"}]


@pytest.fixture
def model_md(tmp_path):
    path = tmp_path / "MODEL.md"
    path.write_text(MODEL_MD, encoding="utf-8")
    return path


def ask_in_thread(relay, tag, messages, results):
    settings = LLMSettings(relay.base_url(tag), "relay", timeout=60)

    def call():
        try:
            results[tag] = chat(settings, messages)
        except LLMError as exc:
            results[tag] = exc
    thread = threading.Thread(target=call)
    thread.start()
    return thread


def answer_as_reader(wave_prompt: Path, reply_for) -> dict:
    """What a reader does with a wave: read WAVE, write OUT, run ANSWER_COMMAND (as written)."""
    text = wave_prompt.read_text(encoding="utf-8")
    wave = Path(re.search(r"Answer (\S+) into", text).group(1))
    out = Path(re.search(r"into (\S+), then", text).group(1))
    requests = json.loads(wave.read_text(encoding="utf-8"))["requests"]
    out.write_text(json.dumps({r["id"]: reply_for(r["messages"]) for r in requests}), encoding="utf-8")
    command = text.split("run:\n", 1)[1].strip()
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    return {"requests": requests, "done": done}


def test_record_then_replay_through_the_products_client(tmp_path, model_md):
    recordings, relay_dir = tmp_path / "rec.jsonl", tmp_path / "relay"
    results = {}
    with Relay(recordings, relay_dir) as relay:
        thread = ask_in_thread(relay, "case-1", ASK, results)
        wait_for(lambda: list((relay_dir / "pending").glob("*.json")), 'the relay', 10)
        (prompt,) = cut_waves(relay_dir, waves=2, model_md=model_md)
        assert "WAVE" not in prompt.read_text() and "ANSWER_COMMAND" not in prompt.read_text()
        read = answer_as_reader(prompt, lambda messages: '{"ranking": [1]}')
        assert read["done"].returncode == 0, read["done"].stderr
        assert "1 answers released" in read["done"].stdout
        assert [r["messages"] for r in read["requests"]] == [ASK]
        thread.join(10)
    assert results["case-1"] == '{"ranking": [1]}'
    (entry,) = [json.loads(line) for line in recordings.read_text().splitlines()]
    assert entry["key"] == request_key(ASK) and entry["tag"] == "case-1"
    assert entry["model"] == "a frontier model through the relay" and entry["messages"] == ASK
    assert not list((relay_dir / "pending").glob("*.json"))

    changed = [ASK[0], {"role": "user", "content": "Question: where now?"}]
    with Relay(recordings, replay=True) as relay:
        assert chat(LLMSettings(relay.base_url("other-tag"), "relay"), ASK) == '{"ranking": [1]}'
        with pytest.raises(LLMError, match=r"503.*no recorded reply for request " + request_key(changed)[:16]):
            chat(LLMSettings(relay.base_url("case-1"), "relay"), changed)
        assert relay.served == 1
        assert [m["key"] for m in relay.misses] == [request_key(changed)]


def test_a_wave_never_holds_two_requests_of_one_tag(tmp_path, model_md):
    relay_dir = tmp_path / "relay"
    results = {}

    def asking(text):
        return ASK[:1] + [{"role": "user", "content": text}]
    with Relay(tmp_path / "rec.jsonl", relay_dir) as relay:
        threads = [ask_in_thread(relay, "a", asking("a1"), results)]
        wait_for(lambda: len(list((relay_dir / "pending").glob("*.json"))) == 1, "the relay", 10)
        results2 = {}
        threads += [ask_in_thread(relay, "a", asking("a2"), results2),
                    ask_in_thread(relay, "b", asking("b1"), results)]
        wait_for(lambda: len(list((relay_dir / "pending").glob("*.json"))) == 3, "the relay", 10)
        first, second = cut_waves(relay_dir, waves=5, model_md=model_md)
        assert cut_waves(relay_dir, waves=5, model_md=model_md) == []   # all taken by open waves
        shown = []
        for prompt in (first, second):
            read = answer_as_reader(prompt, lambda messages: messages[-1]["content"].upper())
            assert read["done"].returncode == 0, read["done"].stderr
            shown.append(sorted(r["messages"][-1]["content"] for r in read["requests"]))
        for thread in threads:
            thread.join(10)
    assert shown == [["a1", "b1"], ["a2"]]
    assert results == {"a": "A1", "b": "B1"} and results2 == {"a": "A2"}
    assert len((tmp_path / "rec.jsonl").read_text().splitlines()) == 3


def test_an_answer_missing_a_reply_says_which_and_keeps_the_call_waiting(tmp_path, model_md):
    relay_dir = tmp_path / "relay"
    results = {}
    with Relay(tmp_path / "rec.jsonl", relay_dir) as relay:
        threads = [ask_in_thread(relay, tag, ASK[:1] + [{"role": "user", "content": tag}], results)
                   for tag in ("x", "y")]
        wait_for(lambda: len(list((relay_dir / "pending").glob("*.json"))) == 2, 'the relay', 10)
        (prompt,) = cut_waves(relay_dir, waves=1, model_md=model_md)
        wave = relay_dir / "waves" / "wave-0001.json"
        out = relay_dir / "waves" / "wave-0001.out.json"
        out.write_text(json.dumps({"r1": "one", "r9": "stray"}))
        released, problems = answer_wave(relay_dir, wave, out)
        assert released == 1
        assert problems == ["r9: not an id of this wave", "r2: no reply in wave-0001.out.json"]
        wait_for(lambda: len(results) == 1, 'the relay', 10)
        out.write_text(json.dumps({"r1": "one", "r2": "two"}))
        assert answer_wave(relay_dir, wave, out) == (2, [])
        for thread in threads:
            thread.join(10)
    assert sorted(results.values()) == ["one", "two"]


def test_the_relay_serves_loopback_only(tmp_path):
    with pytest.raises(SystemExit, match="loopback only"):
        Relay(tmp_path / "rec.jsonl", replay=True, host="0.0.0.0")
    done = subprocess.run([sys.executable, str(BENCH / "llm_relay.py"), "serve", "--replay",
                           "--recordings", str(tmp_path / "rec.jsonl"), "--host", "192.168.1.5"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "loopback only" in done.stderr
    with Relay(tmp_path / "rec.jsonl", replay=True, host="localhost") as relay:
        assert relay.server.server_address[0] == "127.0.0.1"


def test_a_model_reply_holding_an_access_code_is_screened_and_the_run_says_so(tmp_path, monkeypatch):
    """The model writes the code into a memory: the write policy refuses that memory, the code is
    nowhere in the vault, and extract's report names the refusal."""
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    code = "4471-9920"
    vault, relay_dir = tmp_path / "vault", tmp_path / "relay"
    api.init(vault)
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("".join(json.dumps(turn) + "\n" for turn in [
        {"session": "s1", "id": "m-1", "time": "2026-11-29T09:00:00", "role": "user",
         "text": "I moved to Porto last month and I love the light here."},
        {"session": "s1", "id": "m-2", "time": "2026-11-29T09:01:00", "role": "user",
         "text": f"Oh and the building door code is {code.replace('-', ' ')} if the courier asks."},
    ]), encoding="utf-8")

    def reply(messages):
        return json.dumps({"memory_items": [
            {"content": "The user moved to Porto.", "type": "fact", "importance": 0.7,
             "source_messages": ["m-1"], "subject": "user", "attribute": "home", "value": "Porto"},
            {"content": f"The user's building door access code is {code}.", "type": "fact",
             "importance": 0.8, "source_messages": ["m-2"]}]})

    def reader():  # the test stands in for the model, at the edge
        answered = set()
        while not stop.is_set():
            for prompt in cut_waves(relay_dir, waves=1, model_md=md):
                answer_as_reader(prompt, lambda messages: reply(messages) if "memory_items" in
                                 messages[0]["content"] else '{"decisions": []}')
                answered.add(prompt)
            time.sleep(0.1)

    md = tmp_path / "MODEL.md"
    md.write_text(MODEL_MD, encoding="utf-8")
    stop = threading.Event()
    with llm_relay.HarnessRelay(tmp_path / "rec.jsonl", relay_dir) as relay:
        from llm_table import put_llm_table

        put_llm_table(vault, relay.table, "secret-case")
        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        result = CliRunner().invoke(cli, ["--vault", str(vault), "extract", str(transcript), "--llm", "--json"])
        stop.set()
        thread.join(10)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["created"] >= 1 and report["rejected"] >= 1
    (refused,) = [d for d in report["decisions"] if d["action"] == "rejected" and "secret" in d["reason"]]
    assert refused["source_messages"] == ["m-2"] and "access code is [REDACTED" in refused["content"]
    assert code not in result.output and code not in (tmp_path / "rec.jsonl").read_text().split('"reply"')[0]
    files = [p for p in vault.rglob("*") if p.is_file() and ".git" not in p.parts]
    assert not [p for p in files if code in p.read_text(encoding="utf-8", errors="ignore")]
    log = subprocess.run(["git", "-C", str(vault), "log", "-p", "--all"], capture_output=True, text=True)
    assert code not in log.stdout
    assert any("Porto" in p.read_text(encoding="utf-8") for p in (vault / "Memory" / "Facts").glob("*.md"))


@pytest.mark.skipif(len(MEMQUALITY_DEV) < 3, reason="the memquality dev cases are not beside the repo")
def test_memquality_dev_replays_from_its_recordings():
    """`make test` replays the dev recordings through the real `extract --llm` path: a prompt
    change shows as an unrecorded request, named with how to record it; a figure below the
    recorded one fails."""
    recorded = json.loads((RECORDINGS / "memquality-dev.figures.json").read_text(encoding="utf-8"))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("VAULTMEM_VAULT", None)
    done = subprocess.run([sys.executable, str(BENCH / "memquality.py"), *map(str, MEMQUALITY_DEV),
                           "--replay", str(RECORDINGS / "memquality-dev.jsonl"), "--jobs", "3",
                           "--summary-only"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    relay_lines = "\n".join(line for line in done.stderr.splitlines() if "relay" in line or "unrecorded" in line)
    assert done.returncode == 0, f"the replay missed recordings:\n{relay_lines or done.stderr[-3000:]}"
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["relay"]["misses"] == 0 and figures["relay"]["answered"] == 0
    assert figures["relay"]["served"] == recorded["relay"]["served"]
    assert figures["pass_rate"] >= recorded["pass_rate"]
    for kind, value in recorded["by_kind"].items():
        assert figures["by_kind"][kind] >= value, kind
    assert figures["secrets_leaked"] == 0
