"""`forget --purge` erases every byte vaultmem wrote of a memory (issue 13).

A memory is planted through a transcript (so a session turn holds its words) and another
through `add`; further commits edit, archive, correct and roll back (a message citing a
hash), searches touch the full-text index and state.db. After the purge and `git gc`,
every file under the vault is read as raw bytes (loose git objects inflated, Lance files
decoded, every git object through `git cat-file`) and none holds a word of either memory.
The same with a real daemon running, the transcript dropped into its inbox.

Real vault, git, LanceDB and the bundled model throughout.
"""

import json
import os
import re
import signal
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.wait import wait_for
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.history import git as history
from vaultmem.history.erasure import REDACTED, redact_turns
from vaultmem.ipc import client
from vaultmem.store.note import read_note

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
TURN = "I'm allergic to Macadamia nuts since my trip to Quetzaltenango."
TURN_WORDS = ("macadamia", "quetzaltenango", "allergic")
NICKNAME = "The user's childhood nickname was Snickerdoodle."
NICKNAME_WORDS = ("snickerdoodle", "nickname")
PURGED_WORDS = TURN_WORDS + NICKNAME_WORDS
CELLO = "I play the cello in a community orchestra on Tuesdays."
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")


@pytest.fixture(autouse=True)
def isolated_git(git_identity, monkeypatch):
    monkeypatch.delenv("VAULTMEM_NOW", raising=False)
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)


def assert_erased(root, label):
    """After `git gc`, none of the purged words is in any file or git object of the vault."""
    collect_garbage(root)
    hits, files, objects = occurrences(root, PURGED_WORDS)
    assert hits == {}, hits
    print(f"\npurge, {label}: 0 occurrences of {len(PURGED_WORDS)} words in {files} files and "
          f"{objects} git objects")


def git(root, *args, raw=False):
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)
    return done.stdout if raw else done.stdout.decode("utf-8", "replace")


def write_transcript(path: Path) -> Path:
    turns = [("m-1", "user", "Alice", "Good morning!"),
             ("m-2", "assistant", "Assistant", "Good morning, how can I help?"),
             ("m-3", "user", "Alice", TURN),
             ("m-4", "assistant", "Assistant", "Noted, I will keep that in mind."),
             ("m-5", "user", "Alice", CELLO)]
    path.write_text("".join(json.dumps({"session": "chat-7", "id": mid, "role": role, "speaker": who,
                                        "time": f"2026-11-29T10:0{i}:00", "text": text}) + "\n"
                            for i, (mid, role, who, text) in enumerate(turns)), encoding="utf-8")
    return path


# --- what is left under the vault -------------------------------------------------------------

def collect_garbage(root: Path) -> None:
    """What a user would run to be sure: expire every reflog, repack, prune everything."""
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "--prune=now", "--aggressive", "--quiet")


def occurrences(root: Path, words) -> tuple[dict, int, int]:
    """Where any of `words` (case-insensitive) is left under `root`: a file's name, its raw
    bytes, its zlib-inflated bytes (loose git objects), the decoded columns of a Lance file
    (Lance may compress strings), and every git object as git inflates it (packs included).
    Returns ({place: [words]}, files read, git objects read)."""
    from lance.file import LanceFileReader

    words = [w.lower().encode() for w in words]
    hits, files = {}, 0

    def check(place, data: bytes):
        found = [w.decode() for w in words if w in data.lower()]
        if found:
            hits.setdefault(place, []).extend(found)

    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue  # the daemon's socket
            files += 1
            rel = path.relative_to(root).as_posix()
            data = path.read_bytes()
            check(f"name {rel}", rel.encode())
            check(rel, data)
            try:
                check(f"{rel} (inflated)", zlib.decompress(data))
            except zlib.error:
                pass
            if name.endswith(".lance"):
                table = LanceFileReader(str(path)).read_all().to_table()
                check(f"{rel} (decoded)", repr(table.to_pylist()).encode())
    objects = git(root, "cat-file", "--batch-all-objects", "--batch", raw=True)
    check("git cat-file --batch-all-objects", objects)
    check("git log -p --all", git(root, "log", "-p", "--all", raw=True))
    count = len(git(root, "cat-file", "--batch-all-objects", "--batch-check").splitlines())
    return hits, files, count


def index_files(root: Path) -> set[str]:
    lance = root / ".vaultmem" / "index" / "chunks.lance"
    return {p.relative_to(lance).as_posix() for p in lance.rglob("*")
            if p.is_file() and p.name != "latest_version_hint.json"}


def assert_messages_cite_live_commits(root: Path, receipts) -> None:
    """No commit message cites a rewritten hash: each hash it cites is a commit that exists."""
    old = {pair["old"] for receipt in receipts for pair in receipt["rewritten"]}
    messages = git(root, "log", "--all", "--format=%B%x00").split("\0")
    cited = [token for message in messages for token in _HEX.findall(message)]
    for token in cited:
        assert not any(sha.startswith(token) for sha in old), f"{token} is a rewritten commit"
        assert git(root, "cat-file", "-t", token).strip() == "commit", token


def assert_session_redacted(root: Path, session: str) -> None:
    text = (root / session).read_text(encoding="utf-8")
    assert f"{REDACTED} ^m-3" in text and CELLO in text, text
    assert "Good morning, how can I help? ^m-2" in text


# --- in-process: API and CLI -----------------------------------------------------------------

@pytest.fixture
def mem(tmp_path, monkeypatch, embedder):
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    root = tmp_path / "vault"
    api.init(root)
    return api.Memory(root, embedder=embedder)


def created_from(run: dict, message_id: str) -> str:
    return next(d["path"] for d in run["decisions"]
                if d["action"] == "created" and d["source_messages"] == [message_id])


def test_purge_leaves_no_byte_of_the_memory_or_of_its_turn(mem, tmp_path):
    root = mem.vault.root
    run = mem.extract([write_transcript(tmp_path / "chat.jsonl")])
    allergy, cello = created_from(run, "m-3"), created_from(run, "m-5")
    session = next(p for p in run["notes"] if p.startswith("Memory/Sessions/"))
    nickname = mem.add(NICKNAME, type="fact")["path"]
    assert mem.search("what is the user allergic to?")["hits"]
    # The user edits the memory (committed as theirs), then more history piles up.
    note = root / allergy
    note.write_text(note.read_text(encoding="utf-8") + "She carries an EpiPen for the macadamia allergy.\n",
                    encoding="utf-8")
    history.commit_user_edits(root, [allergy])
    first = mem.history(cello)["versions"][-1]["rev"]
    mem.correct(cello, "Alice plays the viola in a community orchestra on Tuesdays.")
    rolled = mem.rollback(cello, to=first)  # its message cites the extraction's commit
    archived = mem.forget(allergy)["note"]
    mem.reindex(full=True)
    assert mem.search("Quetzaltenango")["hits"]
    log = root / ".vaultmem" / "daemon.log"  # a line the daemon writes for a note it skipped
    log.write_text(f"2026-11-29 10:00:00 WARNING vaultmem-worker skipped {archived}: demo\n")
    before = index_files(root)

    result = CliRunner().invoke(cli, ["--vault", str(root), "forget", archived, "--purge", "--json"])
    assert result.exit_code == 0, result.output
    receipt = json.loads(result.stdout)
    second = mem.forget(nickname, purge=True)

    assert receipt["paths"] == sorted([allergy, archived]) and receipt["removed_from_disk"]
    assert receipt["turns_redacted"] == [{"note": session, "turns": ["m-3"]}]
    assert {"Memory/Entities/Macadamia.md", "Memory/Entities/Quetzaltenango.md"} <= set(receipt["hubs_removed"])
    assert "Memory/Entities/Alice.md" not in receipt["hubs_removed"]  # the cello memory links it
    assert receipt["files_redacted"] == [session] and receipt["blobs_rewritten"] >= 1
    assert receipt["messages_rewritten"] >= 3 and len(receipt["rewritten"]) >= 6
    assert receipt["index"]["versions_removed"] >= 1 and receipt["index"]["files_removed"] >= 1
    assert receipt["state"]["rows_removed"] >= 1 and receipt["state"]["vacuumed"]
    assert receipt["logs_scrubbed"] == [".vaultmem/daemon.log"]
    assert second["index"]["versions_removed"] >= 1 and second["rewritten"]
    assert_session_redacted(root, session)
    assert not (root / archived).exists() and not (root / "Memory/Entities/Macadamia.md").exists()
    assert (root / cello).is_file() and (root / "Memory/Entities/Alice.md").is_file()

    assert_erased(root, "in-process")
    # Every index file was written after the purge: no old full-text page survives (its
    # token dictionary is compressed, so this is checked by file, not only by grep).
    assert index_files(root).isdisjoint(before - {"_versions/latest_version_hint.json"})
    assert_messages_cite_live_commits(root, [receipt, second])
    rollback_message = git(root, "log", "--all", "--grep=roll back", "--format=%s").strip()
    cited = _HEX.findall(rollback_message)
    assert cited and cited != [rolled["rev"][:8]], rollback_message  # the new hash of that commit

    # Search finds nothing of it, and the vault keeps working.
    for query in ("Macadamia nuts allergy", "Quetzaltenango", "childhood nickname Snickerdoodle"):
        shown = json.dumps(mem.search(query, all=True)["hits"]).lower()
        assert not any(word in shown for word in PURGED_WORDS), shown
    assert mem.indexer.index.fts("quetzaltenango") == []
    assert mem.add("The user bakes sourdough bread on Sundays.", type="fact")["action"] == "created"
    assert mem.search("what does the user bake?")["hits"][0]["title"].startswith("The user bakes sourdough")
    assert mem.search("who plays in an orchestra?")["hits"]
    doctor = mem.doctor()
    assert not any(doctor["drift"].values()) and doctor["index_error"] is None, doctor
    assert git(root, "fsck", "--full", "--strict", "--no-dangling").strip() == ""


def test_redact_turns_keeps_everything_but_the_words():
    note = ("---\r\nid: s1\r\ntype: session\r\n---\r\n**Alice** · 2026-11-29 10:02\r\nSome line\r\n"
            "\\- a listed line ^m-3\r\n\r\n**Bob** · 2026-11-29 10:03\r\nA reply ^m-4\r\n")
    out = redact_turns(note, {"m-3"})
    assert out == note.replace("Some line\r\n\\- a listed line ^m-3", f"{REDACTED} ^m-3")
    assert redact_turns(out, {"m-3"}) == out  # already redacted: unchanged
    assert redact_turns(note, {"m-9"}) == note


def test_purge_redacts_every_version_of_its_turn_and_keeps_the_users_work(tmp_path):
    """On git alone (no index): two versions of the session note, a staged and an unstaged
    edit of it, another memory drawn from the same turn, a message citing a hash."""
    from vaultmem.memory import forget

    root = tmp_path / "vault"
    api.init(root)
    session = "Memory/Sessions/2026-11-29 chat-7.md"
    fact, sibling = "Memory/Facts/Allergic to macadamia.md", "Memory/Facts/Visited Quetzaltenango.md"
    turn = f"**Alice** · 2026-11-29 10:02\n{TURN} ^m-3\n"
    (root / "Memory/Sessions").mkdir(parents=True, exist_ok=True)
    (root / session).write_text(f"---\nid: s1\ntype: session\n---\n{turn}", encoding="utf-8")
    for rel, body in ((fact, "Alice is allergic to Macadamia nuts."), (sibling, "Alice visited Quetzaltenango.")):
        (root / rel).write_text(f"---\nid: {Path(rel).stem[:3]}\ntype: fact\nsources:\n"
                                f'  - "[[Sessions/2026-11-29 chat-7#^m-3]]"\n---\n{body}\n', encoding="utf-8")
    first = history.commit(root, [session, fact, sibling], "vaultmem: extract", "extract")
    (root / session).write_text((root / session).read_text() + "\n**Bob** · 2026-11-29 10:05\nHello ^m-4\n")
    history.commit(root, [session], "vaultmem: append a turn", "extract")
    (root / sibling).write_text((root / sibling).read_text() + "In 2019.\n")
    history.commit(root, [sibling], f"vaultmem: roll back 'Visited Quetzaltenango' to {first[:8]}", "rollback")
    (root / session).write_text((root / session).read_text() + "\nMy note: she said it twice.\n")
    git(root, "add", session)
    (root / session).write_text((root / session).read_text() + "\nUnstaged thought.\n")

    receipt = forget.purge(root, fact)
    assert receipt["turns_redacted"] == [{"note": session, "turns": ["m-3"]}]
    assert receipt["still_mentioned_in"] == [sibling] and receipt["blobs_rewritten"] >= 2
    text = (root / session).read_text()
    assert f"{REDACTED} ^m-3" in text and text.endswith("My note: she said it twice.\n\nUnstaged thought.\n")
    assert git(root, "diff", "--cached", "--name-only").splitlines() == [session]
    assert git(root, "diff", "--name-only").splitlines() == [session]
    staged = git(root, "show", f":{session}")
    assert f"{REDACTED} ^m-3" in staged and "she said it twice" in staged and "Unstaged" not in staged
    for word in ("macadamia", "i'm allergic"):
        assert word not in git(root, "log", "-p", "--all").lower()
        assert word.encode() not in git(root, "cat-file", "--batch-all-objects", "--batch", raw=True).lower()
    subject = git(root, "log", "-1", "--format=%s").strip()
    cited = _HEX.findall(subject)[0]
    assert subject == f"vaultmem: roll back 'Visited Quetzaltenango' to {cited}" and cited != first[:8]
    assert git(root, "log", "-1", "--format=%s", cited).strip() == "vaultmem: extract"


# --- a turn with blank lines and fenced code inside ----------------------------------------------

PAYMENTS = ("The payments suite has been red all week and I finally cornered it.\n\n"
            "It only fails when the Zanzibar fixture runs before the refund tests: it leaves a "
            "ledger row behind and the totals come out one cent short.\n- alone: green\n"
            "- after the fixture: red\n\n"
            "```bash\n# reproduce it\n\npytest -p no:randomly tests/test_zanzibar.py\n```\n\n"
            "Clearing the ledger in the fixture's teardown fixed it.")
PAYMENTS_WORDS = ("cornered", "zanzibar", "one cent short", "no:randomly", "reproduce it", "clearing the ledger")
TEARDOWN = "Here is the teardown:\n\n```python\ndef teardown():\n    ledger.clear()\n```"


def payments_session():
    from datetime import datetime

    from vaultmem.store.session_note import Session, Turn

    texts = [("Alice", "user", "Good morning!"), ("Assistant", "assistant", "Good morning, how can I help?"),
             ("Alice", "user", PAYMENTS), ("Assistant", "assistant", TEARDOWN),
             ("Alice", "user", "I play the cello in a community orchestra on Tuesdays.")]
    turns = [Turn("chat-7", f"m-{n}", datetime(2026, 11, 29, 10, n), who, role, text, n)
             for n, (who, role, text) in enumerate(texts, 1)]
    return Session("chat-7", "chat-7", turns, "chat-7.jsonl", datetime(2026, 11, 29, 10, 0))


def test_redact_turns_blanks_every_line_of_a_turn_with_paragraphs_and_code():
    from vaultmem.extract.sessions import render_session
    from vaultmem.store.session_note import parse_session_turns

    note = render_session(payments_session()).text
    out = redact_turns(note, {"m-3", "m-4"})
    assert not any(word in out.lower() for word in PAYMENTS_WORDS + ("ledger",)), out
    assert "**Alice** · 2026-11-29 10:03\n[REDACTED:forgotten] ^m-3\n\n**Assistant** · 2026-11-29 10:04\n" \
           "[REDACTED:forgotten] ^m-4\n\n**Alice** · 2026-11-29 10:05\n" in out
    before = {t.block_id: t for t in parse_session_turns(note.split("---\n", 2)[2])}
    after = {t.block_id: t for t in parse_session_turns(out.split("---\n", 2)[2])}
    assert {b: t.text for b, t in after.items()} == {b: REDACTED if b in ("m-3", "m-4") else t.text
                                                   for b, t in before.items()}
    assert redact_turns(out, {"m-3", "m-4"}) == out
    crlf = note.replace("\n", "\r\n")
    assert redact_turns(crlf, {"m-3"}) == redact_turns(note, {"m-3"}).replace("\n", "\r\n")


def test_purge_erases_every_line_of_a_turn_with_paragraphs_and_code(tmp_path):
    """The turn is in a session note the real writer rendered (blank lines and a fence kept),
    in an older version of it written before (blank lines dropped, fences escaped), and in
    the transcript kept in the inbox: none of its words is left in any of them, in the
    working tree or in git; the other turns stay as they were."""
    from vaultmem.extract.sessions import render_session
    from vaultmem.memory import forget
    from vaultmem.store.session_note import parse_session_turns
    from vaultmem.store.vault import Vault

    root = tmp_path / "vault"
    api.init(root)
    session = "Memory/Sessions/2026-11-29 chat-7.md"
    fact, cello = "Memory/Facts/Payments tests fail after Zanzibar.md", "Memory/Facts/Plays the cello.md"
    note = render_session(payments_session()).text
    (root / "Memory/Sessions").mkdir(parents=True, exist_ok=True)
    written = PAYMENTS.replace("\n- ", "\n\\- ")  # the list escaped, the code as it is
    assert f"10:03\n{written} ^m-3\n" in note
    older = note.replace(written, "\n".join(
        "\\" + line if line.startswith(("```", "#", "- ")) else line for line in PAYMENTS.split("\n") if line.strip()))
    assert older != note and "\n\n" not in older.split("10:03\n", 1)[1].split("^m-3")[0]
    (root / session).write_text(older, encoding="utf-8")
    for rel, body, block in ((fact, "Alice's payments tests fail after the Zanzibar fixture.", "m-3"),
                             (cello, "Alice plays the cello on Tuesdays.", "m-5")):
        (root / rel).write_text(f"---\nid: {Path(rel).stem[:3]}\ntype: fact\nsources:\n"
                                f'  - "[[Sessions/2026-11-29 chat-7#^{block}]]"\n---\n{body}\n', encoding="utf-8")
    history.commit(root, [session, fact, cello], "vaultmem: extract", "extract")
    (root / session).write_text(note, encoding="utf-8")
    history.commit(root, [session], "vaultmem: extract", "extract")
    transcript = Vault(root).inbox_dir / "processed" / "chat-7.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(json.dumps({"session": "chat-7", "id": t.id, "speaker": t.speaker,
                                              "text": t.text}) + "\n" for t in payments_session().turns))

    receipt = forget.purge(root, fact)
    assert receipt["turns_redacted"] == [{"note": session, "turns": ["m-3"]}]
    assert sorted(receipt["files_redacted"]) == sorted([session, transcript.relative_to(root).as_posix()])
    text = (root / session).read_text(encoding="utf-8")
    assert "**Alice** · 2026-11-29 10:03\n[REDACTED:forgotten] ^m-3\n\n**Assistant**" in text
    turns = {t.block_id: t.text for t in parse_session_turns(text.split("---\n", 2)[2])}
    assert turns == {"m-1": "Good morning!", "m-2": "Good morning, how can I help?", "m-3": REDACTED,
                     "m-4": TEARDOWN, "m-5": CELLO}
    assert REDACTED in transcript.read_text() and "ledger.clear()" in transcript.read_text()
    assert (root / cello).is_file() and not (root / fact).exists()
    collect_garbage(root)
    for place, data in ((session, text), ("transcript", transcript.read_text()),
                        ("git log -p --all", git(root, "log", "-p", "--all")),
                        ("git objects", git(root, "cat-file", "--batch-all-objects", "--batch"))):
        left = [word for word in PAYMENTS_WORDS if word in data.lower()]
        assert left == [], (place, left)


# --- with the daemon running -----------------------------------------------------------------

def vaultmem(root, *args, check=True):
    done = subprocess.run([VAULTMEM, "--vault", str(root), *args], capture_output=True, text=True,
                          timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"vaultmem {' '.join(args)}: {done.stderr}")
    return done


@pytest.fixture
def daemon_vault(tmp_path):
    root = tmp_path / "vault"
    vaultmem(root, "init", str(root))
    config = root / ".vaultmem" / "config.toml"
    config.write_text(config.read_text().replace("commit_quiet_seconds = 5", "commit_quiet_seconds = 1"))
    started = json.loads(vaultmem(root, "daemon", "start", "--json").stdout)
    assert started["started"], started
    try:
        wait_for(lambda: client.request(root, "status")["state"] == "watching", "the daemon to watch")
        yield root
    finally:
        from vaultmem.daemon.control import stop_daemon

        try:
            stop_daemon(root, timeout=60)
        except Exception:
            os.kill(started["pid"], signal.SIGKILL)


def settled(root: Path) -> bool:
    """The daemon has indexed every event and has no user edit left to commit."""
    status = client.request(root, "flush", {"timeout": 30})
    return status["idle"] and status["queue_detail"]["edits_to_commit"] == 0


def test_purge_with_the_daemon_running(daemon_vault):
    root = daemon_vault
    inbox = root / "Memory" / "Inbox"
    write_transcript(inbox / "chat.jsonl")  # the daemon extracts it and keeps it in processed/
    kept = inbox / "processed" / "chat.jsonl"
    wait_for(lambda: kept.is_file() and list((root / "Memory" / "Facts").glob("*Macadamia*")), "the inbox run")
    allergy = next((root / "Memory" / "Facts").glob("*Macadamia*")).relative_to(root).as_posix()
    session = next((root / "Memory" / "Sessions").glob("*.md")).relative_to(root).as_posix()
    vaultmem(root, "add", NICKNAME, "--type", "fact")
    assert "Quetzaltenango" in vaultmem(root, "search", "Quetzaltenango").stdout
    note = root / allergy
    note.write_text(note.read_text(encoding="utf-8") + "She carries an EpiPen for the macadamia allergy.\n",
                    encoding="utf-8")
    wait_for(lambda: "Edit '" in git(root, "log", "-1", "--format=%s"), "the daemon to commit the edit")
    wait_for(lambda: settled(root), "the daemon to settle")

    receipt = json.loads(vaultmem(root, "forget", allergy, "--purge", "--json").stdout)
    title = Path(next(p for p in (root / "Memory" / "Facts").glob("*Snickerdoodle*"))).stem
    second = json.loads(vaultmem(root, "forget", title, "--purge", "--json").stdout)
    assert receipt["turns_redacted"] == [{"note": session, "turns": ["m-3"]}]
    assert sorted(receipt["files_redacted"]) == sorted([session, kept.relative_to(root).as_posix()])
    assert receipt["index"]["versions_removed"] >= 1 and second["index"]["versions_removed"] >= 1
    assert REDACTED in kept.read_text(encoding="utf-8") and "Macadamia" not in kept.read_text(encoding="utf-8")
    assert_session_redacted(root, session)
    wait_for(lambda: settled(root), "the daemon to settle after the purge")
    assert client.request(root, "status")["running"]

    assert_erased(root, "daemon running")
    assert_messages_cite_live_commits(root, [receipt, second])
    found = client.request(root, "search", {"query": "Macadamia Quetzaltenango allergy", "k": 10})
    assert not any(word in json.dumps(found["hits"]).lower() for word in PURGED_WORDS)
    vaultmem(root, "add", "The user bakes sourdough bread on Sundays.", "--type", "fact")
    hits_after = client.request(root, "search", {"query": "what does the user bake?", "k": 3})["hits"]
    assert hits_after and hits_after[0]["title"].startswith("The user bakes sourdough")
    assert read_note(root / session).type == "session"
