"""Memory lifecycle (vaultmem/memory/lifecycle.py): access tracking, gc's decay policy under a fake
clock, stale ranking, corrections (command, API, EN/ZH transcripts) and the audit log.

Real vault, git, LanceDB and the bundled model; only the clock is faked (VAULTMEM_NOW)."""

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import api
from vaultmem.cli import cli
from vaultmem.index.state import State
from vaultmem.memory.memories import write_memory
from vaultmem.store.note import read_note

CREATED = "2026-11-01T09:00:00"


@pytest.fixture
def mem(tmp_path, monkeypatch, embedder):
    monkeypatch.setenv("VAULTMEM_NOW", CREATED)
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    root = tmp_path / "vault"
    api.init(root)
    memory = api.Memory(root, embedder=embedder)
    return memory


def run(mem, *args):
    result = CliRunner().invoke(cli, ["--vault", str(mem.vault.root), *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def files(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "Memory").rglob("*.md")}


def add(mem, text, importance, type="fact") -> dict:
    result = mem.add(text, type=type, importance=importance)
    assert result["action"] == "created", result
    return result


# --- access tracking and gc ----------------------------------------------------------------

def test_gc_archives_only_low_importance_memories_nobody_recalled(mem, monkeypatch):
    pottery = add(mem, "The user once tried a pottery class downtown.", 0.3)
    karaoke = add(mem, "The user sang karaoke at a birthday party.", 0.2, type="event")
    rain = add(mem, "The user likes the smell of rain in summer.", 0.3, type="preference")
    allergy = add(mem, "The user is allergic to penicillin.", 0.9)
    bike = add(mem, "The user rides a green folding bicycle.", 0.5)  # not below the threshold
    root = mem.vault.root

    # A search is a recall: counted in .vaultmem/, without touching notes or git.
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-25T18:00:00")
    before, head = files(root), git(root, "rev-parse", "HEAD").strip()
    assert rain["id"] in [h["id"] for h in mem.search("what smell does the user like?")["hits"]]
    assert State(root).access_stats(rain["id"])["last_access"] == "2026-11-25T18:00:00"
    assert files(root) == before and git(root, "rev-parse", "HEAD").strip() == head
    assert not git(root, "status", "--porcelain", "Memory")

    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-02T09:00:00")  # 31 days after they were written
    plan = json.loads(run(mem, "gc", "--dry-run", "--json"))
    assert plan["dry_run"] and plan["archived"] == []
    assert sorted(item["id"] for item in plan["plan"]) == sorted([pottery["id"], karaoke["id"]])
    reason = next(i["reason"] for i in plan["plan"] if i["id"] == pottery["id"])
    assert "importance 0.30 < 0.50" in reason and "31 days ago" in reason and "never recalled" in reason
    assert files(root) == before and git(root, "rev-parse", "HEAD").strip() == head
    human = run(mem, "gc", "--dry-run")
    assert "would archive: Memory/Facts/" in human and "why: importance 0.30" in human

    done = json.loads(run(mem, "gc", "--json"))
    assert sorted(done["archived"]) == sorted(f"Memory/Archive/{Path(x['path']).name}" for x in (pottery, karaoke))
    for item in (pottery, karaoke):
        archived = root / "Memory" / "Archive" / Path(item["path"]).name
        assert not (root / item["path"]).exists() and read_note(archived).status == "archived"
    # One commit per archive, each marked as an archive.
    commits = git(root, "log", f"{head}..HEAD", "--format=%H").split()
    assert len(commits) == 2
    for sha in commits:
        body = git(root, "show", "-s", "--format=%B", sha)
        assert "Vaultmem-Action: archive" in body and "gc: importance" in body
        assert len(git(root, "show", "--name-only", "--format=", sha).split("\n")) <= 3  # old + new path
    for kept in (rain, allergy, bike):
        assert read_note(root / kept["path"]).status == "active"

    # Archived memories leave default retrieval; --all still finds them.
    hits = mem.search("pottery class")["hits"]
    assert pottery["id"] not in [h["id"] for h in hits]
    every = mem.search("pottery class", all=True)["hits"]
    assert {pottery["id"]: "archived"}.items() <= {h["id"]: h["status"] for h in every}.items()

    assert json.loads(run(mem, "gc", "--json"))["plan"] == []  # nothing left to do
    assert "Nothing to archive." in run(mem, "gc")
    whats = [e["what"] for e in json.loads(run(mem, "log", "--json"))]
    assert whats.count("archived") == 2


def test_gc_never_archives_important_memories_however_old(mem, monkeypatch):
    vow = add(mem, "The user promised to call their grandmother every Sunday.", 0.8, type="procedure")
    monkeypatch.setenv("VAULTMEM_NOW", "2028-01-01T09:00:00")
    assert mem.gc(dry_run=True)["plan"] == []
    assert mem.gc()["archived"] == [] and read_note(mem.vault.abs(vow["path"])).status == "active"


def test_gc_counts_an_edit_after_the_last_recall_as_use(mem, monkeypatch):
    from vaultmem.memory.memories import update_note

    note = add(mem, "The user collects vintage postcards from Lisbon.", 0.3)
    State(mem.vault.root).record_access([note["id"]], "2026-11-02T09:00:00")
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-01T09:00:00")
    update_note(mem.vault, mem.vault.abs(note["path"]), {"importance": 0.35})  # edited: updated now
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-20T09:00:00")  # 48 days after the recall, 19 after the edit
    assert mem.gc(dry_run=True)["plan"] == []
    monkeypatch.setenv("VAULTMEM_NOW", "2027-01-05T09:00:00")
    [item] = mem.gc(dry_run=True)["plan"]
    assert item["id"] == note["id"] and "last updated 35 days ago" in item["reason"]


def test_gc_ages_a_memory_from_the_day_it_was_said_not_the_day_it_was_written(mem, monkeypatch):
    from datetime import date

    from vaultmem.memory.memories import update_note

    old = mem.add("The user once tried a pottery class downtown.", importance=0.3)
    path = mem.vault.abs(old["path"])
    # as an extraction of a chat from August writes it: said then, written today
    update_note(mem.vault, path, {"valid_from": date(2026, 8, 1), "updated": read_note(path).get("created")})
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-20T09:00:00")  # 19 days after writing, 111 after saying
    [item] = mem.gc(dry_run=True)["plan"]
    assert item["id"] == old["id"] and "never recalled; said 111 days ago" in item["reason"]


def test_stale_memories_rank_lower_until_recalled(mem, monkeypatch):
    text = "The user keeps a notebook of bird sightings."
    root = mem.vault.root
    old = write_memory(mem.vault, text=text, type="fact", user="default", importance=0.6,
                       title="Notebook one")
    recalled = write_memory(mem.vault, text=text, type="fact", user="default", importance=0.6,
                            title="Notebook two")
    old_id, recalled_id = read_note(old).id, read_note(recalled).id
    mem.reindex()
    monkeypatch.setenv("VAULTMEM_NOW", "2027-06-01T09:00:00")  # 212 days later (limit: 180)
    State(root).record_access([recalled_id], "2027-05-20T10:00:00")

    fresh = api.Memory(root, embedder=mem.embedder)
    scores = {h["id"]: h["score"] for h in fresh.search("bird sightings notebook")["hits"]}
    assert scores[recalled_id] > scores[old_id]
    assert scores[old_id] / scores[recalled_id] == pytest.approx(0.85, abs=0.01)
    # That search recalled both: the warm searcher knows at once, without re-reading state.db.
    again = {h["id"]: h["score"] for h in fresh.search("bird sightings notebook")["hits"]}
    assert again[old_id] == pytest.approx(again[recalled_id], abs=1e-3)


# --- corrections -----------------------------------------------------------------------------

def test_correct_command_supersedes_and_keeps_history(mem):
    home = add(mem, "The user lives in Beijing.", 0.7)
    out = json.loads(run(mem, "correct", "The user lives in Beijing", "The user lives in Shanghai.", "--json"))
    assert out["action"] == "superseded" and out["superseded"] == home["path"]
    old, new = read_note(mem.vault.abs(home["path"])), read_note(mem.vault.abs(out["path"]))
    assert old.status == "superseded" and new.status == "active"
    assert new.statement() == "The user lives in Shanghai."
    assert "Shanghai" in str(old.get("superseded_by")) and "Beijing" in str(new.get("supersedes"))
    assert [h["id"] for h in mem.search("where does the user live?")["hits"]][:1] == [out["id"]]
    actions = [v["action"] for v in mem.history(home["path"])["versions"]]
    assert actions[0] == "correct" and len(actions) == 2
    # Another namespace's note cannot be corrected (reported as missing), nor a retired one.
    result = CliRunner().invoke(cli, ["--vault", str(mem.vault.root), "correct", out["path"],
                                      "The user lives in Xi'an.", "--user", "bob"])
    assert result.exit_code == 1 and "no note matches" in result.output
    result = CliRunner().invoke(cli, ["--vault", str(mem.vault.root), "correct", home["path"], "x y z w"])
    assert result.exit_code == 1 and "superseded" in result.output


def test_correct_in_chinese_through_the_api(mem):
    home = mem.add("我住在北京。", type="fact", user="alice")
    out = mem.correct(home["id"], "我住在上海。", user="alice")
    assert out["action"] == "superseded"
    assert read_note(mem.vault.abs(home["path"])).status == "superseded"
    assert read_note(mem.vault.abs(out["path"])).statement() == "我住在上海。"


@pytest.mark.parametrize("first, correction, old_word, new_word", [
    ("I live in Beijing.", "That's wrong, I actually live in Shanghai.", "Beijing", "Shanghai"),
    ("我住在北京。", "我说错了，我住在上海。", "北京", "上海"),
])
def test_a_correction_in_a_transcript_supersedes_the_memory(mem, tmp_path, first, correction,
                                                           old_word, new_word):
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("".join(json.dumps({"session": "chat", "id": f"m-{i}", "role": "user",
                                              "speaker": "Alice", "time": f"2026-11-01T08:0{i}:00",
                                              "text": text}, ensure_ascii=False) + "\n"
                                  for i, text in enumerate([first, correction])), encoding="utf-8")
    report = mem.extract([transcript], user="alice")
    assert report["superseded"] == 1, report["decisions"]
    homes = {n["text"]: n["status"] for n in mem.list(user="alice")["notes"] if n["type"] == "fact"}
    assert [s for t, s in homes.items() if old_word in t] == ["superseded"]
    assert [s for t, s in homes.items() if new_word in t] == ["active"]


# --- audit log -------------------------------------------------------------------------------

def test_log_lists_every_kind_of_change_with_dates_and_runs(mem, tmp_path, monkeypatch):
    transcript = tmp_path / "chat.md"
    transcript.write_text("**Alice:** I play the viola in a community orchestra.\n", encoding="utf-8")
    run_id = mem.extract([transcript])["run"]
    tea = add(mem, "The user drinks jasmine tea in the afternoon.", 0.6, type="preference")
    mem.add("The user now drinks oolong tea in the afternoon.", type="preference")  # may merge or supersede
    fixed = mem.correct(tea["path"], "The user drinks white tea in the afternoon.")
    mem.forget(fixed["path"])
    secret = add(mem, "The user's childhood nickname was Pumpkin.", 0.4)
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-02T09:00:00")
    mem.forget(secret["path"], purge=True)
    coffee = add(mem, "The user gave up sugar in coffee.", 0.4)
    rev = mem.history(coffee["path"])["versions"][0]["rev"]
    mem.correct(coffee["path"], "The user takes one sugar in coffee again.")
    mem.rollback(coffee["path"], to=rev)

    events = json.loads(run(mem, "log", "--json"))
    whats = {e["what"] for e in events}
    assert {"created", "superseded", "forgotten", "rolled back", "forgotten (purged)"} <= whats
    assert all(e["date"][:4] == "2026" or e["date"][:4] == "2027" for e in events)
    assert [e["run"] for e in events if e["run"]] and run_id in {e["run"] for e in events}
    purge = next(e for e in events if e["what"] == "forgotten (purged)")
    assert purge["note_id"] == secret["id"] and purge["date"] == "2026-11-02T09:00:00"
    assert "rewritten" in purge["message"]
    # The purge erased the note: its title and text appear nowhere in the log.
    assert "Pumpkin" not in json.dumps(events) and "Pumpkin" not in run(mem, "log", "-n", "200")
    only_run = json.loads(run(mem, "log", "--run", run_id, "--json"))
    assert only_run and {e["run"] for e in only_run} == {run_id}
    human = run(mem, "log")
    assert f"[{run_id}]" in human and "rolled back" in human and "forgotten (purged)" in human
