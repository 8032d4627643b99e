"""vaultmem.history.git, .rollback and .forget on real git repositories in tmp_path."""

import subprocess
import threading
import time
from pathlib import Path

import pytest

from vaultmem.errors import HistoryError
from vaultmem.history import git as history
from vaultmem.history import log as history_log
from vaultmem.history import rollback
from vaultmem.memory import forget as forgetting

NOTE = "Memory/Facts/Lives in Beijing.md"


def git(root, *args, check=True):
    done = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {args}: {done.stderr}")
    return done.stdout


@pytest.fixture(autouse=True)
def isolated_git(git_identity, monkeypatch):
    """A git config of the test's own: the user's identity is 'Ada <ada@example.org>'."""
    monkeypatch.setenv("VAULTMEM_GIT_LOCK_TIMEOUT", "2")
    return git_identity


def note_text(status="active", body="The user lives in Beijing.", note_id="01AAA"):
    return (f"---\nid: {note_id}\ntype: fact\ncreated: 2026-11-29T10:30:00\nupdated: 2026-11-29T10:30:00\n"
            f"status: {status}\nuser: default\n---\n{body}\n")


def write(root, rel, text):
    path = Path(root) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def vault(tmp_path):
    """A vault whose repo already has the user's own history and uncommitted work."""
    root = tmp_path / "vault"
    root.mkdir()
    assert history.ensure_repo(root) is True
    assert history.ensure_repo(root) is False
    write(root, "Diary.md", "my own note\n")
    write(root, "Staged.md", "v1\n")
    git(root, "add", "Diary.md", "Staged.md")
    git(root, "commit", "-q", "-m", "my notes")
    write(root, "Diary.md", "my own note, edited but not committed\n")
    write(root, "Staged.md", "v2 staged by me\n")
    git(root, "add", "Staged.md")
    write(root, "Scratch.md", "untracked thoughts\n")
    return root


def user_work_untouched(root):
    assert (root / "Diary.md").read_text() == "my own note, edited but not committed\n"
    assert (root / "Scratch.md").read_text() == "untracked thoughts\n"
    assert git(root, "diff", "--cached", "--name-only").split() == ["Staged.md"]
    assert git(root, "diff", "--name-only").split() == ["Diary.md"]
    assert "Scratch.md" in git(root, "ls-files", "--others", "--exclude-standard")
    assert git(root, "show", "HEAD:Diary.md") == "my own note\n"


def last_commit_files(root, rev="HEAD"):
    return git(root, "show", "--name-only", "--format=", rev).split("\n")


def test_commit_takes_only_its_paths_with_trailers_and_vaultmem_identity(vault):
    write(vault, NOTE, note_text())
    sha = history.commit(vault, [NOTE], "vaultmem: add 'Lives in Beijing'", "add",
                         run="run-1", source="chat.jsonl")
    assert sha == git(vault, "rev-parse", "HEAD").strip()
    assert [f for f in last_commit_files(vault) if f] == [NOTE]
    assert git(vault, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == \
        "vaultmem <vaultmem@localhost>|vaultmem <vaultmem@localhost>"
    body = git(vault, "log", "-1", "--format=%B")
    assert body.startswith("vaultmem: add 'Lives in Beijing'\n\n")
    assert "Vaultmem-Action: add\nVaultmem-Run: run-1\nVaultmem-Source: chat.jsonl" in body
    # The real index follows: the note is tracked and clean, the user's work is as it was.
    assert git(vault, "status", "--porcelain", "--", NOTE) == ""
    user_work_untouched(vault)
    assert history.commit(vault, [NOTE], "vaultmem: nothing", "add") is None


def test_an_edit_saved_while_vaultmem_commits_stays_the_users_unstaged_change(vault, monkeypatch):
    """The real index gets what the commit holds, not what is on disk a moment later: the
    person's edit saved mid-commit is theirs to see as unstaged (it was staged, unasked)."""
    write(vault, NOTE, note_text())
    history.commit(vault, [NOTE], "vaultmem: add 'Lives in Beijing'", "add")
    write(vault, NOTE, note_text(body="The user lives in Shanghai."))
    real = history._build_commit

    def then_the_user_saves(*args, **kwargs):
        built = real(*args, **kwargs)
        write(vault, NOTE, note_text(body="The user lives in Shanghai.\n\nMy own line."))
        return built

    monkeypatch.setattr(history, "_build_commit", then_the_user_saves)
    history.commit(vault, [NOTE], "vaultmem: update 'Lives in Beijing'", "update")
    assert "Shanghai." in git(vault, "show", f"HEAD:{NOTE}") and "My own line" not in git(vault, "show", f"HEAD:{NOTE}")
    assert git(vault, "status", "--porcelain", "--", NOTE) == f' M "{NOTE}"\n'  # (quoted: spaces)
    assert git(vault, "diff", "--cached", "--name-only").split() == ["Staged.md"]
    monkeypatch.undo()
    # and a commit of a deleted note leaves it out of the index
    (vault / NOTE).unlink()
    history.commit(vault, [NOTE], "vaultmem: forget 'Lives in Beijing'", "forget")
    assert git(vault, "status", "--porcelain", "--", NOTE) == ""
    assert NOTE not in git(vault, "ls-files")
    user_work_untouched(vault)


def test_commit_records_deletions_and_refuses_paths_outside_the_vault(vault):
    write(vault, NOTE, note_text())
    history.commit(vault, [NOTE], "vaultmem: add", "add")
    (vault / NOTE).unlink()
    history.commit(vault, [NOTE], "vaultmem: remove", "archive")
    assert NOTE not in git(vault, "ls-tree", "-r", "--name-only", "HEAD")
    assert git(vault, "status", "--porcelain", "--", NOTE) == ""
    with pytest.raises(HistoryError, match="not a path inside the vault"):
        history.commit(vault, ["../elsewhere.md"], "vaultmem: no", "add")
    user_work_untouched(vault)


def test_first_commit_in_an_empty_repo_and_a_vault_inside_a_bigger_repo(tmp_path):
    outer = tmp_path / "notes-repo"
    root = outer / "vaults" / "main"
    root.mkdir(parents=True)
    git(outer, "init", "-q")
    assert history.ensure_repo(root) is False  # the existing repo above is used as it is
    write(root, NOTE, note_text())
    history.commit(root, [NOTE], "vaultmem: add 'Lives in Beijing'", "add")
    assert git(outer, "ls-tree", "-r", "--name-only", "HEAD").split("\n")[0] == f"vaults/main/{NOTE}"
    versions = history_log.history(root, NOTE)
    assert [(v["path"], v["action"]) for v in versions] == [(NOTE, "add")]


def test_history_across_user_edit_rename_and_rollback(vault, isolated_git):
    write(vault, NOTE, note_text())
    first = history.commit(vault, [NOTE], "vaultmem: add 'Lives in Beijing'", "add", run="run-a")
    write(vault, NOTE, note_text(body="The user lives in Beijing, near the park."))
    assert history.commit_user_edits(vault, [NOTE])
    renamed = "Memory/Facts/Home city.md"
    (vault / NOTE).rename(vault / renamed)
    history.commit(vault, [NOTE, renamed], "vaultmem: rename 'Lives in Beijing' to 'Home city'", "rename")

    versions = history_log.history(vault, renamed)
    assert [v["action"] for v in versions] == ["rename", "user-edit", "add"]
    assert [v["path"] for v in versions] == [renamed, NOTE, NOTE]
    assert versions[0]["change"] == "R" and versions[0]["old_path"] == NOTE
    assert versions[1]["author"] == "Ada" and versions[2]["author"] == "vaultmem"
    assert versions[2]["run"] == "run-a" and versions[2]["rev"] == first
    assert "near the park" in history_log.show_at(vault, renamed, versions[1]["rev"])
    assert history_log.show_at(vault, renamed, first) == note_text()
    assert "+The user lives in Beijing, near the park." in history_log.diff(vault, renamed, first)

    result = rollback.rollback_note(vault, renamed, first)
    assert result["note"] == NOTE and result["removed"] == [renamed]  # back under its old name
    assert (vault / NOTE).read_text() == note_text() and not (vault / renamed).exists()
    versions = history_log.history(vault, NOTE)
    assert [v["action"] for v in versions] == ["rollback", "rename", "user-edit", "add"]
    assert "-The user lives in Beijing, near the park." in history_log.diff(vault, NOTE)
    user_work_untouched(vault)


def test_user_edits_without_a_git_identity_are_the_obsidian_user(vault, isolated_git):
    isolated_git.write_text("[init]\n\tdefaultBranch = main\n")
    git(vault, "config", "--unset", "user.name", check=False)
    write(vault, NOTE, note_text())
    history.commit(vault, [NOTE], "vaultmem: add", "add")  # vaultmem needs no identity of the user's
    write(vault, NOTE, note_text(body="Edited in Obsidian."))
    history.commit_user_edits(vault, [NOTE])
    assert git(vault, "log", "-1", "--format=%an <%ae>").strip() == "Obsidian user <obsidian@localhost>"
    assert history_log.history(vault, NOTE)[0]["action"] == "user-edit"


def test_rollback_keeps_uncommitted_edits_in_history(vault):
    write(vault, NOTE, note_text())
    first = history.commit(vault, [NOTE], "vaultmem: add", "add")
    write(vault, NOTE, note_text(body="Typed in Obsidian, daemon not yet run."))
    rollback.rollback_note(vault, NOTE, first)
    actions = [v["action"] for v in history_log.history(vault, NOTE)]
    assert actions == ["rollback", "user-edit", "add"]
    assert "daemon not yet run" in history_log.show_at(vault, NOTE, "HEAD~1")


def test_rollback_run_removes_what_it_created_and_reactivates_superseded(vault):
    old = NOTE
    write(vault, old, note_text())
    history.commit(vault, [old], "vaultmem: add 'Lives in Beijing'", "add", run="run-1")
    new = "Memory/Facts/Lives in Shanghai.md"
    session = "Memory/Sessions/2026-11-30 chat.md"
    write(vault, new, note_text(body="The user lives in Shanghai.", note_id="01BBB"))
    write(vault, session, "---\nid: s1\ntype: session\n---\nturns\n")
    history.commit(vault, [new, session], "vaultmem: add 'Lives in Shanghai'", "add", run="run-2")
    write(vault, old, note_text(status="superseded"))
    history.commit(vault, [old], "vaultmem: supersede 'Lives in Beijing' by 'Lives in Shanghai'",
                   "supersede", run="run-2")

    result = rollback.rollback_run(vault, "run-2")
    assert sorted(result["removed"]) == sorted([new, session])
    assert result["restored"] == [old] and len(result["undone"]) == 2
    assert (vault / old).read_text() == note_text(status="active")
    assert not (vault / new).exists() and not (vault / session).exists()
    log = git(vault, "log", "-1", "--format=%B")
    assert "Vaultmem-Action: rollback-run" in log and "Vaultmem-Run: run-2" in log
    assert git(vault, "status", "--porcelain", "--", "Memory") == ""
    assert "Lives in Shanghai" in git(vault, "log", "--all", "--format=%s")  # history is kept
    with pytest.raises(HistoryError, match="run-404"):
        rollback.rollback_run(vault, "run-404")
    user_work_untouched(vault)


def test_index_lock_is_waited_for_and_never_deleted(vault, monkeypatch):
    lock = vault / ".git" / "index.lock"
    lock.write_text("")
    timer = threading.Timer(0.5, lock.unlink)
    timer.start()
    write(vault, NOTE, note_text())
    started = time.monotonic()
    assert history.commit(vault, [NOTE], "vaultmem: add", "add", lock_timeout=5)
    assert time.monotonic() - started >= 0.4
    timer.join()
    assert not lock.exists()

    lock.write_text("held by obsidian-git")
    write(vault, NOTE, note_text(body="changed"))
    with pytest.raises(HistoryError, match="index.lock is held by another git process"):
        history.commit(vault, [NOTE], "vaultmem: edit", "update", lock_timeout=0.3)
    assert lock.read_text() == "held by obsidian-git"
    lock.unlink()
    assert history.commit(vault, [NOTE], "vaultmem: edit", "update")  # the change was kept on disk
    user_work_untouched(vault)


def test_merge_in_progress_and_detached_head_are_refused_clearly(vault):
    git(vault, "stash", "-q")  # this test needs a clean tree to set up a conflict
    git(vault, "switch", "-q", "-c", "side")
    write(vault, "Diary.md", "side\n")
    git(vault, "commit", "-q", "-am", "side")
    git(vault, "switch", "-q", "main")
    write(vault, "Diary.md", "main\n")
    git(vault, "commit", "-q", "-am", "main")
    git(vault, "merge", "side", check=False)
    write(vault, NOTE, note_text())
    with pytest.raises(HistoryError, match="merge is in progress.*saved in the vault but not committed"):
        history.commit(vault, [NOTE], "vaultmem: add", "add")
    assert (vault / NOTE).exists()
    git(vault, "merge", "--abort")
    git(vault, "switch", "-q", "--detach", "HEAD")
    with pytest.raises(HistoryError, match="HEAD is detached"):
        history.commit(vault, [NOTE], "vaultmem: add", "add")
    with pytest.raises(HistoryError, match="nothing was changed"):
        rollback.rollback_run(vault, "run-1")


def all_objects(root) -> str:
    done = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True)
    return done.stdout.decode("utf-8", "replace")


def test_purge_erases_every_version_and_keeps_everything_else(vault):
    secret = "The user lives at 12 Secret Lane."
    write(vault, NOTE, note_text(body=secret))
    history.commit(vault, [NOTE], "vaultmem: add 'Lives in Beijing'", "add")
    other = "Memory/Facts/Likes tea.md"
    write(vault, other, note_text(body="The user likes tea.", note_id="01CCC"))
    history.commit(vault, [other], "vaultmem: add 'Likes tea'", "add")
    write(vault, NOTE, note_text(body=secret + " Since 2020."))
    history.commit_user_edits(vault, [NOTE])
    archived = "Memory/Archive/Lives in Beijing.md"
    (vault / archived).parent.mkdir(parents=True)
    (vault / NOTE).rename(vault / archived)
    history.commit(vault, [NOTE, archived], "vaultmem: forget 'Lives in Beijing' (archived)", "forget")
    git(vault, "tag", "-a", "v1", "-m", "a tag")
    assert secret in git(vault, "log", "-p", "--all")

    receipt = forgetting.purge(vault, archived)
    assert receipt["paths"] == sorted([NOTE, archived])
    assert len(receipt["rewritten"]) == 4 and receipt["removed_from_disk"]
    assert "refs/heads/main" in receipt["refs"] and "refs/tags/v1" in receipt["refs"]
    log = git(vault, "log", "-p", "--all")
    assert secret not in log and "Lives in Beijing" not in log
    assert secret not in all_objects(vault)
    assert secret not in git(vault, "reflog", "--all")
    assert git(vault, "fsck", "--full", "--no-dangling").strip() == ""
    assert NOTE not in git(vault, "ls-files") and archived not in git(vault, "ls-files")
    assert not (vault / archived).exists()
    # Everything else survives: the other memory with its history, the user's commits and work.
    assert history_log.history(vault, other)[0]["message"] == "vaultmem: add 'Likes tea'"
    assert git(vault, "show", f"HEAD:{other}") == note_text(body="The user likes tea.", note_id="01CCC")
    assert git(vault, "log", "--format=%s", "--reverse").split("\n")[0] == "my notes"
    user_work_untouched(vault)


def test_purge_refuses_pushed_history_unless_forced(vault, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    write(vault, NOTE, note_text(body="Pushed secret."))
    history.commit(vault, [NOTE], "vaultmem: add 'Lives in Beijing'", "add")
    git(vault, "remote", "add", "origin", str(remote))
    git(vault, "push", "-q", "origin", "main")
    with pytest.raises(HistoryError, match="origin/main.*--force"):
        forgetting.purge(vault, NOTE)
    assert (vault / NOTE).exists() and "Pushed secret." in git(vault, "log", "-p", "--all")
    receipt = forgetting.purge(vault, NOTE, force=True)
    assert receipt["pushed_to"] == ["origin/main"] and receipt["warnings"]
    assert "Pushed secret." not in git(vault, "log", "-p", "--all")
    user_work_untouched(vault)


def test_rollback_restores_bytes_exactly(vault):
    crlf = "\ufeff" + note_text().replace("\n", "\r\n")
    (vault / "Memory/Facts").mkdir(parents=True)
    (vault / NOTE).write_bytes(crlf.encode("utf-8"))
    first = history.commit(vault, [NOTE], "vaultmem: add", "add")
    write(vault, NOTE, note_text(body="changed"))
    history.commit(vault, [NOTE], "vaultmem: update", "update")
    rollback.rollback_note(vault, NOTE, first[:10])
    assert (vault / NOTE).read_bytes() == crlf.encode("utf-8")


def test_a_gitignored_memory_folder_gets_a_clear_error(vault):
    write(vault, ".gitignore", "Memory/\n")
    write(vault, NOTE, note_text())
    with pytest.raises(HistoryError, match="gitignore rule excludes"):
        history.commit(vault, [NOTE], "vaultmem: add", "add")
    assert (vault / NOTE).exists()


def test_purge_spares_another_note_that_later_took_the_same_name(vault):
    write(vault, NOTE, note_text(body="Old secret address."))
    history.commit(vault, [NOTE], "vaultmem: add 'Lives in Beijing'", "add")
    archived = "Memory/Archive/Lives in Beijing.md"
    (vault / archived).parent.mkdir(parents=True)
    (vault / NOTE).rename(vault / archived)
    history.commit(vault, [NOTE, archived], "vaultmem: forget 'Lives in Beijing' (archived)", "forget")
    write(vault, NOTE, note_text(body="A different, new note under the old name.", note_id="01NEW"))
    history.commit(vault, [NOTE], "vaultmem: add", "add")

    forgetting.purge(vault, archived)
    assert "Old secret address." not in git(vault, "log", "-p", "--all")
    assert (vault / NOTE).exists()
    assert git(vault, "show", f"HEAD:{NOTE}") == note_text(body="A different, new note under the old name.",
                                                         note_id="01NEW")


def test_purge_drops_signatures_that_no_longer_match(vault):
    write(vault, NOTE, note_text(body="Signed secret."))
    history.commit(vault, [NOTE], "vaultmem: add", "add")
    raw = git(vault, "cat-file", "commit", "HEAD")
    head, _, message = raw.partition("\n\n")
    signed = head + "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\n" + message
    done = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=vault, input=signed,
                          capture_output=True, text=True, check=True)
    git(vault, "update-ref", "HEAD", done.stdout.strip())
    forgetting.purge(vault, NOTE)
    assert "gpgsig" not in git(vault, "cat-file", "commit", "HEAD")
    assert git(vault, "log", "-1", "--format=%s").strip() == "vaultmem: add"
    assert "Signed secret." not in all_objects(vault)


def test_purge_receipt_names_notes_that_still_mention_it(vault):
    write(vault, NOTE, note_text(body="The user lives in Beijing."))
    session = "Memory/Sessions/2026-11-29 chat.md"
    write(vault, session, "---\nid: s1\ntype: session\n---\n**Ada:** The user lives in Beijing. ^m-1\n")
    newer = "Memory/Facts/Lives in Shanghai.md"
    write(vault, newer, note_text(body="The user lives in Shanghai.") +
          "\nSupersedes [[Lives in Beijing]].\n")
    history.commit(vault, [NOTE, session, newer], "vaultmem: extract", "extract", run="run-1")
    receipt = forgetting.purge(vault, NOTE)
    assert receipt["still_mentioned_in"] == [newer, session]
    assert any("still link to it or quote it" in w for w in receipt["warnings"])
