"""An extraction run end to end (vaultmem/extract/run.py): real transcripts, a real vault,
git, LanceDB and the bundled model; the clock is faked and set *after* the sessions, so every
date in a memory must come from the session's time."""

import json
import re
import subprocess
from contextlib import ExitStack
from datetime import date, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.clock import clock_at
from tests.helpers.llm_endpoint import LoopbackLLM, completion
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.store.note import read_note
from vaultmem.store.session_note import parse_session_turns
from vaultmem.store.values import as_list, link_target

RUNS = Path(__file__).parent / "data" / "runs"
NOW = "2026-12-15T09:00:00"
MEMORY_FOLDERS = ("Facts", "Preferences", "Events", "Procedures")


@pytest.fixture(scope="module", autouse=True)
def fake_clock():
    with clock_at(NOW):
        yield


def open_vault(root: Path, embedder) -> api.Memory:
    api.init(root)
    mem = api.Memory(root, embedder=embedder)
    return mem


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def files(root: Path) -> dict:
    """Every file of the vault but git's and vaultmem's own state, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {".git", ".vaultmem"} & set(p.relative_to(root).parts)}


def memory_notes(root: Path, user: str | None = None) -> dict:
    """Statement -> note, for every memory note (any status) of `user` (None: anyone's)."""
    out = {}
    for folder in MEMORY_FOLDERS:
        for path in (root / "Memory" / folder).glob("*.md"):
            note = read_note(path)
            if user is None or note.user == user:
                out[note.statement()] = note
    return out


def decision(report, content) -> dict:
    return next(d for d in report["decisions"] if d["content"] == content)


def links(note, key) -> list[str]:
    return [str(link_target(v)) for v in as_list(note.get(key))]


# ---- one English transcript: every kind, every branch within one run -----------------------

@pytest.fixture(scope="module")
def english(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("en") / "vault"
    mem = open_vault(root, embedder)
    before, head = files(root), git(root, "rev-parse", "HEAD")
    dry = mem.extract([RUNS / "en_day1.jsonl"], dry_run=True)
    after_dry = (files(root), git(root, "rev-parse", "HEAD"))
    report = mem.extract([RUNS / "en_day1.jsonl"])
    return {"root": root, "mem": mem, "dry": dry, "report": report, "before": (before, head),
            "after_dry": after_dry}


def test_dry_run_writes_nothing_and_reports_every_decision(english):
    assert english["after_dry"] == english["before"]
    dry, real = english["dry"], english["report"]
    assert [(d["action"], d["content"]) for d in dry["decisions"]] == \
        [(d["action"], d["content"]) for d in real["decisions"]]
    # counts of notes: 15 memory notes (the new home's among them), 1 of them superseded
    assert (dry["created"], dry["superseded"], dry["rejected"]) == (15, 1, 2)
    assert (real["created"], real["superseded"], real["rejected"]) == (15, 1, 2)
    assert all(d["reason"] for d in dry["decisions"])


ENGLISH = [  # statement, type, importance at least, source message
    ("The user introduced themselves as Alice.", "fact", 0.5, "m-3"),
    ("The user works as a nurse at St Mary's Hospital.", "fact", 0.5, "m-4"),
    ("The user's wife Sarah is a teacher.", "fact", 0.5, "m-6"),
    ("The user's dog Max loves the beach.", "fact", 0.5, "m-7"),
    ("The user uses Obsidian for all their notes.", "fact", 0.5, "m-8"),
    ("The user is working on a Rust compiler.", "fact", 0.5, "m-9"),
    ("The user loves hiking in the mountains.", "preference", 0.5, "m-10"),
    ("The user hates crowded trains.", "preference", 0.5, "m-11"),
    ("On 2026-11-29, the user went to the dentist.", "event", 0.3, "m-12"),
    ("In the week before 2026-11-30, the user visited their parents in Boston.", "event", 0.3, "m-13"),
    ("In December 2026, the user is going to Japan.", "event", 0.3, "m-14"),
    ("The user's standing instruction: from now on, answer the user in French.", "procedure", 0.8, "m-15"),
    ("The user's sister's birthday is March 3.", "fact", 0.9, "m-16"),
]


@pytest.mark.parametrize("statement, type_, importance, message", ENGLISH)
def test_each_english_kind_becomes_a_typed_active_note(english, statement, type_, importance, message):
    note = memory_notes(english["root"])[statement]
    assert (note.type, note.status, note.user) == (type_, "active", "default")
    assert note.path.parent.name == {"fact": "Facts", "preference": "Preferences", "event": "Events",
                                     "procedure": "Procedures"}[type_]
    assert float(note.get("importance")) >= importance
    assert as_list(note.get("source_messages")) == [message]
    assert note.get("run") == english["report"]["run"]
    assert str(note.get("created")).startswith("2026-12-15")


def test_relative_dates_resolve_against_the_session_not_the_clock(english):
    notes = memory_notes(english["root"])
    assert notes["On 2026-11-29, the user went to the dentist."].get("valid_from") == date(2026, 11, 29)
    assert notes["In the week before 2026-11-30, the user visited their parents in Boston."] \
        .get("valid_from") == date(2026, 11, 23)
    assert notes["In December 2026, the user is going to Japan."].get("valid_from") == date(2026, 12, 1)


def assert_superseded(root, old_text, new_text, day, user=None):
    notes = memory_notes(root, user)
    old, new = notes[old_text], notes[new_text]
    assert old.path.exists() and new.path.exists()  # nothing deleted
    assert (old.status, new.status) == ("superseded", "active")
    assert old.get("valid_to") == day and new.get("valid_from") == day
    assert links(old, "superseded_by") == [new.path.stem]
    assert links(new, "supersedes") == [old.path.stem]
    return old, new


def test_moving_within_one_transcript_supersedes_the_old_home(english):
    assert_superseded(english["root"], "The user lives in Beijing.", "The user moved to Shanghai.",
                      date(2026, 11, 30))
    assert "Beijing -> Shanghai" in decision(english["report"], "The user moved to Shanghai.")["reason"]


def test_greeting_and_venting_are_rejected_and_stay_in_the_session_note_only(english):
    report, root = english["report"], english["root"]
    assert decision(report, "Hi there!")["action"] == "rejected"
    assert "greeting" in decision(report, "Hi there!")["reason"]
    vent = next(d for d in report["decisions"] if d.get("source_messages") == ["m-17"])
    assert vent["action"] == "rejected" and "venting" in vent["reason"]
    memories = " ".join(memory_notes(root))
    assert "WORST DAY" not in memories and "Hi there" not in memories
    session = (root / "Memory" / "Sessions" / "2026-11-30 en-1.md").read_text(encoding="utf-8")
    assert "I HATE EVERYTHING, this is the WORST DAY EVER!!! ^m-17" in session


def test_sources_link_to_a_block_of_the_session_note_holding_that_turn(english):
    root = english["root"]
    for note in memory_notes(root).values():
        (source,) = links(note, "sources")
        target, block = source.split("#^")
        session = root / "Memory" / f"{target}.md"
        turns = {t.block_id: t for t in parse_session_turns(read_note(session).body)}
        assert block in turns, source
        assert block == as_list(note.get("source_messages"))[0]  # m-12 stays m-12


def test_entities_get_hub_notes_the_memories_link_to(english):
    root = english["root"]
    hubs = {p.stem: read_note(p) for p in (root / "Memory" / "Entities").glob("*.md")}
    assert {"Alice", "Sarah", "Max", "Boston", "Beijing", "Shanghai", "Obsidian"} <= set(hubs)
    assert all(h.type == "entity" and h.status == "active" for h in hubs.values())
    for note in memory_notes(root).values():
        for entity in links(note, "entities"):
            assert entity in hubs


def test_one_commit_per_run_with_run_and_source_trailers(english):
    root, report = english["root"], english["report"]
    assert git(root, "rev-list", "--count", "HEAD").strip() == "2"  # init + this run
    body = git(root, "log", "-1", "--format=%B")
    assert f"Vaultmem-Run: {report['run']}" in body and "Vaultmem-Source: en_day1.jsonl" in body
    committed = set(git(root, "show", "--name-only", "--format=", "HEAD").splitlines())
    assert committed == set(report["notes"])
    assert git(root, "status", "--porcelain", "--", "Memory") == ""


def test_running_the_same_transcript_again_changes_nothing(english):
    root, mem = english["root"], english["mem"]
    before, head = files(root), git(root, "rev-parse", "HEAD")
    again = mem.extract([RUNS / "en_day1.jsonl"])
    assert (again["created"], again["updated"], again["superseded"]) == (0, 0, 0)
    assert again["notes"] == [] and again["rejected"] == 2
    assert git(root, "rev-parse", "HEAD") == head
    assert files(root) == before


# ---- Chinese ---------------------------------------------------------------------------------

CHINESE = [
    ("用户的名字叫小明。", "fact"), ("用户是一名医生。", "fact"), ("用户女儿叫朵朵。", "fact"),
    ("用户家的猫叫咪咪。", "fact"), ("用户一直用飞书。", "fact"), ("用户最近在学吉他。", "fact"),
    ("用户喜欢喝绿茶。", "preference"), ("用户不喜欢吃辣。", "preference"),
    ("2026-11-29，用户去了长城。", "event"), ("2026年12月，用户要去日本出差。", "event"),
    ("用户的长期要求：以后回答用户都用中文。", "procedure"), ("用户对花生过敏。", "fact"),
]


def test_chinese_transcript_every_kind_dates_supersede_and_rejections(tmp_path, embedder):
    root = tmp_path / "vault"
    report = open_vault(root, embedder).extract([RUNS / "zh_day1.jsonl"])
    notes = memory_notes(root)
    for statement, type_ in CHINESE:
        assert notes[statement].type == type_ and notes[statement].status == "active", statement
    # "dislikes spicy food" is not a near-duplicate of "likes green tea", however close MiniLM puts them
    assert decision(report, "用户不喜欢吃辣。")["action"] == "created"
    assert notes["2026-11-29，用户去了长城。"].get("valid_from") == date(2026, 11, 29)
    assert notes["2026年12月，用户要去日本出差。"].get("valid_from") == date(2026, 12, 1)
    assert float(notes["用户对花生过敏。"].get("importance")) == 0.9
    assert_superseded(root, "用户住在北京。", "用户搬到了上海。", date(2026, 11, 30))
    assert "greeting" in decision(report, "你好！")["reason"]
    vent = next(d for d in report["decisions"] if d.get("source_messages") == ["z-16"])
    assert vent["action"] == "rejected" and "气死" not in " ".join(notes)
    assert (root / "Memory" / "Entities" / "上海.md").exists()


# ---- across runs: supersede, near-duplicate, exact duplicate, a user edit mid-run -------------

def test_across_runs_supersede_merge_duplicates_and_keep_the_users_edit(tmp_path, embedder, monkeypatch):
    from vaultmem.extract import run

    root = tmp_path / "vault"
    mem = open_vault(root, embedder)
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-20T12:00:00")
    mem.extract([RUNS / "cross_en_a.jsonl"], user="en")
    mem.extract([RUNS / "cross_zh_a.jsonl"], user="zh")
    birthday = memory_notes(root)["The user's sister's birthday is March 3."]
    old_importance = float(birthday.get("importance"))

    real_load_pool = run.load_pool

    def user_edits_after_the_pool_is_read(*args, **kwargs):
        pool = real_load_pool(*args, **kwargs)
        text = birthday.path.read_text(encoding="utf-8")
        birthday.path.write_text(text + "\nShe turns 40 this year.\n", encoding="utf-8")
        return pool

    monkeypatch.setattr(run, "load_pool", user_edits_after_the_pool_is_read)
    monkeypatch.setenv("VAULTMEM_NOW", NOW)
    en = mem.extract([RUNS / "cross_en_b.jsonl"], user="en")
    monkeypatch.setattr(run, "load_pool", real_load_pool)
    zh = mem.extract([RUNS / "cross_zh_b.jsonl"], user="zh")

    # the move is a new note and marks the old one superseded; the tea and the birthday are merged into
    assert (en["created"], en["superseded"], en["updated"]) == (1, 1, 2), en["decisions"]
    assert_superseded(root, "The user lives in Beijing.", "The user moved to Shanghai.", date(2026, 11, 28),
                      user="en")
    assert zh["superseded"] == 1
    assert_superseded(root, "用户住在北京。", "用户搬到了上海。", date(2026, 11, 28))

    notes = memory_notes(root)
    tea = [n for text, n in notes.items() if "green tea" in text]
    assert len(tea) == 1, "a near-duplicate must not make a second note"
    near = decision(en, "Every morning the user drinks green tea.")
    assert near["action"] == "updated" and "near-duplicate" in near["reason"]
    assert links(tea[0], "sources") == ["Sessions/2026-11-20 x-en#^m-2", "Sessions/2026-11-28 y-en#^m-2"]
    assert tea[0].get("updated") == datetime(2026, 12, 15, 9) and tea[0].get("created") == datetime(2026, 11, 20, 12)

    edited = read_note(birthday.path)
    assert edited.body.endswith("She turns 40 this year.\n"), "the user's edit must survive"
    assert float(edited.get("importance")) == max(old_importance, 0.9) == 0.9
    assert len(links(edited, "sources")) == 2
    assert git(root, "rev-list", "--count", "HEAD").strip() == "5"  # init + four runs
    assert "Vaultmem-Source: cross_zh_b.jsonl" in git(root, "log", "-1", "--format=%B")

    # a file listing the newest session first (as ChatGPT exports do): the later move still wins
    mem.extract([RUNS / "newest_first.jsonl"], user="order")
    assert_superseded(root, "The user lives in Beijing.", "The user moved to Shanghai.", date(2026, 11, 28),
                      user="order")

    before, head = files(root), git(root, "rev-parse", "HEAD")  # merges and supersedes are not redone
    again = mem.extract([RUNS / "cross_en_a.jsonl", RUNS / "cross_en_b.jsonl"], user="en")
    assert {d["action"] for d in again["decisions"]} == {"unchanged"}, [(d["action"], d["content"], d["reason"]) for d in again["decisions"]]
    assert (files(root), git(root, "rev-parse", "HEAD")) == (before, head)


# ---- command line: --json, one bad file among good ones ---------------------------------------

def test_cli_json_and_a_bad_file_among_good_ones(tmp_path, embedder, monkeypatch):
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    root = tmp_path / "vault"
    api.init(root)
    bad = Path(__file__).parent / "data" / "transcripts" / "bad_json.jsonl"
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(RUNS / "cross_zh_a.jsonl"),
                                      str(bad), str(RUNS / "cross_en_a.jsonl"), "--json"])
    assert result.exit_code == 1, result.output  # the good files are in, but the batch failed
    data = json.loads(result.stdout)
    assert [(Path(f["path"]).name, f["line"]) for f in data["failed"]] == [("bad_json.jsonl", 3)]
    assert {"run", "sessions", "created", "updated", "superseded", "rejected", "notes"} <= set(data)
    assert (data["sessions"], data["created"], data["superseded"]) == (2, 4, 0)  # 北京 is Beijing
    assert data["run"].startswith("run-")
    assert all((root / p).exists() for p in data["notes"])
    (error,) = data["errors"]
    assert re.search(r"bad_json\.jsonl:3\b", error)  # file:line, as compilers print it
    assert result.stderr.count("bad_json.jsonl") == 1
    sessions = sorted(p.name for p in (root / "Memory" / "Sessions").glob("*.md"))
    assert sessions == ["2026-11-20 x-en.md", "2026-11-20 x-zh.md"]
    assert "fine too" not in "".join(p.read_text(encoding="utf-8") for p in root.rglob("*.md"))


# ---- the LLM extractor against a chat-completions server on loopback -------------------------

def canned_items(conversation: str) -> list[dict]:
    """What a good model would answer, keyed on the message ids the request really holds."""
    items = []
    for message_id, text in re.findall(r"^\[([^\]]+)\].*?\((?:user|assistant)\): (.*)$", conversation, re.M):
        if "Porto" in text:
            items.append({"content": "The user lives in Porto.", "type": "fact", "importance": 0.7,
                          "source_messages": [message_id], "entities": ["Porto"], "subject": "user",
                          "attribute": "home", "value": "Porto"})
            items.append({"content": "The user plays the cello.", "type": "preference", "importance": 0.5,
                          "source_messages": [message_id], "entities": []})
        if "Miso" in text:
            items.append({"content": "On 2026-11-29, the user adopted a cat called Miso.", "type": "event",
                          "importance": 0.6, "source_messages": [message_id], "entities": ["Miso"],
                          "valid_from": "2026-11-29"})
    return items


class ConversationLLM(LoopbackLLM):
    """Answers each chat with `reply(conversation)`, the conversation being the user message."""

    def __init__(self, reply):
        super().__init__()
        self.reply = reply

    def answer(self, body):
        return 200, completion(self.reply(body["messages"][1]["content"]))


@pytest.fixture
def llm_server():
    """`llm_server(reply)` -> a ConversationLLM serving on 127.0.0.1 until the test ends; its
    `.requests` holds what it received (tests/helpers/llm_endpoint.py)."""
    with ExitStack() as stack:
        yield lambda reply: stack.enter_context(ConversationLLM(reply))


def point_llm_at(root: Path, base_url: str) -> None:
    config = root / ".vaultmem" / "config.toml"
    text = re.sub(r'(?m)^base_url = ".*"$', f'base_url = "{base_url}"', config.read_text(encoding="utf-8"))
    config.write_text(text.replace("timeout = 60", "timeout = 10"), encoding="utf-8")


def test_extract_llm_creates_what_the_model_returns(tmp_path, embedder, monkeypatch, llm_server):
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    root = tmp_path / "vault"
    api.init(root)
    llm = llm_server(lambda convo: json.dumps({"memory_items": canned_items(convo)}))
    point_llm_at(root, llm.settings["base_url"])
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(RUNS / "llm.jsonl"),
                                      "--llm", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["created"], data["rejected"], data["warnings"]) == (3, 1, [])
    (request,) = (r["body"] for r in llm.requests)
    assert request["model"] == "llama3.1" and "[q-2]" in request["messages"][1]["content"]
    notes = memory_notes(root)
    porto = notes["The user lives in Porto."]
    assert (porto.type, porto.get("value"), links(porto, "sources")) == \
        ("fact", "Porto", ["Sessions/2026-11-30 llm-1#^q-2"])
    assert notes["On 2026-11-29, the user adopted a cat called Miso."].get("valid_from") == date(2026, 11, 29)
    assert notes["The user plays the cello."].type == "preference"
    assert "greeting" in decision(data, "Good morning!")["reason"]


def test_a_model_answering_garbage_twice_falls_back_to_the_offline_extractor(tmp_path, embedder, llm_server):
    root = tmp_path / "vault"
    api.init(root)
    llm = llm_server(lambda convo: "Sure! Here are the memories: the user lives in Porto.")
    point_llm_at(root, llm.settings["base_url"])
    mem = api.Memory(root, embedder=embedder)
    report = mem.extract([RUNS / "llm.jsonl"], llm=True)
    assert len(llm.requests) == 2  # the first answer and the one retry
    (warning,) = report["warnings"]
    assert "llm-1" in warning and "offline extractor" in warning and "not valid JSON" in warning
    assert report["created"] >= 2
    statements = " ".join(memory_notes(root))
    assert "Porto" in statements and "Miso" in statements


def test_a_note_broken_by_hand_mid_run_is_left_alone_and_the_rest_goes_through(tmp_path, embedder,
                                                                                monkeypatch):
    from vaultmem.extract import run

    root = tmp_path / "vault"
    mem = open_vault(root, embedder)
    mem.extract([RUNS / "cross_en_a.jsonl"])
    tea = memory_notes(root)["The user drinks green tea every morning."].path
    real_load_pool = run.load_pool

    def user_rewrites_the_note_meanwhile(*args, **kwargs):
        pool = real_load_pool(*args, **kwargs)
        tea.write_text("Green tea, every morning. My own notes now.\n", encoding="utf-8")
        return pool

    monkeypatch.setattr(run, "load_pool", user_rewrites_the_note_meanwhile)
    report = mem.extract([RUNS / "cross_en_b.jsonl"])
    (error,) = report["errors"]
    assert tea.stem in error and "not a vaultmem note" in error
    assert tea.read_text(encoding="utf-8") == "Green tea, every morning. My own notes now.\n"
    assert report["superseded"] == 1 and report["updated"] == 1  # the move and the birthday
    # the run was committed; the user's own rewrite is the one change it left uncommitted
    assert git(root, "status", "--porcelain", "--", "Memory") == f' M "{tea.relative_to(root).as_posix()}"\n'
    assert f"Vaultmem-Run: {report['run']}" in git(root, "log", "-1", "--format=%B")
