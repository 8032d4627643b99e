"""Secrets never reach memory notes, the LanceDB index or git history: a transcript holding
one secret of each kind goes through a real extraction run, then `add` is tried with them."""

import subprocess
from pathlib import Path

import pytest

from vaultmem import api
from vaultmem.index.table import ChunkIndex

TRANSCRIPT = Path(__file__).parent / "data" / "runs" / "secrets.jsonl"

SECRETS = {  # kind -> the raw values that must not leave the transcript
    "openai-key": ["sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv", "Ab3dEf6hIj9kLm2nOp5qRs8tUv"],
    "github-token": ["ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"],
    "password": ["Tr0ub4dor&3", "Tr0ub4dor"],
    "card-number": ["4111 1111 1111 1111", "4111111111111111"],
    "cn-id": ["11010519491231002X"],
    "phone": ["13812345678"],
    "private-key": ["BEGIN RSA PRIVATE KEY", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw",
                    "7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u"],
    "street-address": ["221 Baker Street", "Baker Street", "建国路88号"],
}
ALL_VALUES = [value for values in SECRETS.values() for value in values]


@pytest.fixture(scope="module")
def vault(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("secrets") / "vault"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VAULTMEM_NOW", "2026-12-01T10:00:00")
        mp.delenv("VAULTMEM_VAULT", raising=False)
        api.init(root)
        mem = api.Memory(root, embedder=embedder)
        report = mem.extract([TRANSCRIPT])
        added = [mem.add(text, type="fact") for text in (
            "My password is Tr0ub4dor&3 for the bank",
            "The user's phone number is 13812345678",
            "The user lives at 221 Baker Street, London")]
    return root, report, added


def leaks(text: str) -> list[str]:
    return [value for value in ALL_VALUES if value in text]


def test_the_session_note_holds_a_redaction_mark_for_each_kind(vault):
    root, report, _ = vault
    (session,) = (root / "Memory" / "Sessions").glob("*.md")
    text = session.read_text(encoding="utf-8")
    for kind in SECRETS:
        assert f"[REDACTED:{kind}]" in text, kind
    assert "我住在[REDACTED:street-address]。 ^s-9" in text
    assert leaks(text) == []
    assert report["redactions"] == 9


def test_no_secret_in_any_note_and_turns_carrying_one_are_rejected(vault):
    root, report, _ = vault
    for path in root.rglob("*.md"):
        assert leaks(path.read_text(encoding="utf-8")) == [], path
    by_turn = {d["source_messages"][0]: d for d in report["decisions"] if d.get("source_messages")}
    for turn in ("s-1", "s-2", "s-3", "s-4", "s-5", "s-6", "s-7", "s-8", "s-9"):
        assert by_turn[turn]["action"] == "rejected", by_turn[turn]
        assert "secret" in by_turn[turn]["reason"]
    assert report["created"] == 0  # "Here is the user's private key." is no memory either


def test_add_with_a_secret_is_rejected_and_writes_nothing(vault):
    _, _, added = vault
    for result in added:
        assert (result["action"], result["path"], result["id"]) == ("rejected", None, None)
        assert "secret" in result["reason"]


def test_no_secret_in_the_index(vault):
    root, _, _ = vault
    rows = ChunkIndex(root).rows()
    assert any(r["type"] == "session" for r in rows)
    assert any("[REDACTED:" in r["search_text"] for r in rows)
    for row in rows:
        assert leaks(row["text"]) == [] and leaks(row["search_text"]) == [], row["path"]


def test_no_secret_in_git_history(vault):
    root, _, _ = vault
    log = subprocess.run(["git", "log", "-p", "--all"], cwd=root, capture_output=True, text=True,
                         check=True).stdout
    assert "[REDACTED:private-key]" in log  # the history does hold the session note
    assert leaks(log) == []
