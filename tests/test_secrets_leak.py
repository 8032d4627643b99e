"""Secrets planted in transcripts of all four formats never leave them (issue 10).

One of each kind (cloud keys, API tokens, a JWT, a PEM private key, passwords in English and
Chinese, a card number, a Chinese resident id, phone numbers) goes into a jsonl file, a
ChatGPT export, a Claude export and a Markdown log; `vaultmem extract` runs on all four (the
CLI, the real model, real git). Then every place a secret could land is searched: the notes
under Memory/, every text column of the LanceDB rows, `git log -p --all`, every other file
in the vault (logs, state) and the command's own output. The write path's finer checks
(which turns are rejected, `add` with a secret) are in tests/test_secrets_e2e.py.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.transcripts import write_chatgpt, write_claude, write_jsonl, write_markdown
from vaultmem.store.note import read_note

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")


def luhn_digit(digits: str) -> str:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return str((10 - total % 10) % 10)


def cn_id(first17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return first17 + "10X98765432"[sum(int(c) * w for c, w in zip(first17, weights)) % 11]


CARD = "453914880343646" + luhn_digit("453914880343646")
RESIDENT_ID = cn_id("44030419880812341")
PEM_LINES = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
             "QyNTUxOQAAACDvXq0Zz3Y8nKp4LmT2wR6sVb9cH1jF5gN7aE3dU0iOkQAAAJj4hY2r"]
PEM = "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", *PEM_LINES, "-----END OPENSSH PRIVATE KEY-----"])
AWS_SECRET = "q8Fz3Lk2Vw9Rt5Yp1Nm7/Xc4Bv6Hj0Gd2Sa8Ke3U"
GITHUB = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed9Cb8"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ2YXVsdG1lbS10ZXN0IiwibmFtZSI6IlBsYW50ZWQifQ"
       ".Xk3vQ9mT2pL8wR5nY7cB1dF4gH6jK0sA")

# kind -> (sentence planting it, strings that must appear nowhere once it is redacted)
PLANTED = {
    "aws-access-key": ("For the backup bucket my AWS access key id is AKIAZ7Q2M4X9B3K8P1VW.",
                       ["AKIAZ7Q2M4X9B3K8P1VW"]),
    "aws-secret-key": (f"And the AWS secret access key is {AWS_SECRET} for the same account.",
                       [AWS_SECRET, AWS_SECRET[:20], AWS_SECRET[20:]]),
    "github-token": (f"My deploy script logs in to GitHub with {GITHUB} every night.", [GITHUB, GITHUB[4:]]),
    "openai-key": ("The summariser uses sk-proj-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk as its OpenAI key.",
                   ["sk-proj-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk", "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk"]),
    "anthropic-key": ("I pasted sk-ant-api03-Zq8Xw7Ce6Vr5Bt4Ny3Mu2Ki1Lo0Pa9Sd8Fg into the bot config.",
                      ["sk-ant-api03-Zq8Xw7Ce6Vr5Bt4Ny3Mu2Ki1Lo0Pa9Sd8Fg", "Zq8Xw7Ce6Vr5Bt4Ny3Mu2Ki1Lo0"]),
    "slack-token": ("Our Slack bot runs on xoxb-2468013579-1357924680-Rf4Tg5Yh6Uj7Ik8Ol9Pz0Xa today.",
                    ["xoxb-2468013579-1357924680-Rf4Tg5Yh6Uj7Ik8Ol9Pz0Xa", "Rf4Tg5Yh6Uj7Ik8Ol9Pz0Xa"]),
    "jwt": (f"The staging login token was {JWT} yesterday.", [JWT, JWT.split(".")[1], JWT.split(".")[2]]),
    "private-key": (f"Here is the server key so I do not lose it:\n{PEM}", [*PEM_LINES, PEM_LINES[0][20:40]]),
    "password": ("My password is Vq7!rainbow-Kettle and I keep forgetting it.", ["Vq7!rainbow-Kettle"]),
    "password-zh": ("我的银行卡密码是Lan9Shui8Qiao，别告诉别人。", ["Lan9Shui8Qiao"]),
    "card-number": (f"I pay the gym with card {CARD[:4]} {CARD[4:8]} {CARD[8:12]} {CARD[12:]} each month.",
                    [CARD, f"{CARD[:4]} {CARD[4:8]} {CARD[8:12]} {CARD[12:]}"]),
    "cn-id": (f"我的身份证号是{RESIDENT_ID}，办签证要用。", [RESIDENT_ID]),
    "phone": ("My new mobile is 13987654321, call me after six.", ["13987654321"]),
    "phone-intl": ("The London office number is +44 20 7946 0958 if you need it.",
                   ["+44 20 7946 0958", "20 7946 0958", "2079460958"]),
}
KIND = {name: name.split("-zh")[0].replace("phone-intl", "phone") for name in PLANTED}
FORMATS = ("jsonl", "chatgpt", "claude", "markdown")
TITLE_PLANTS = 1  # the ChatGPT conversation's title holds a phone number too
NOW = "2026-12-02T09:00:00"


def sentences():
    return [sentence for sentence, _ in PLANTED.values()]


def write_transcripts(folder: Path) -> list[Path]:
    folder.mkdir()
    turns = [("user", text) for text in sentences()]
    acknowledged = [turn for text in sentences() for turn in (("user", text), ("assistant", "Noted."))]
    return [write_jsonl(folder / "secrets.jsonl", "leak-jsonl", turns),
            write_chatgpt(folder / "chatgpt.json", "leak-chatgpt", "Call me on +44 20 7946 0958", turns),
            write_claude(folder / "claude.json", "leak-claude", "Keys and numbers", turns),
            write_markdown(folder / "chat.md", "leak-markdown", acknowledged)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    base = tmp_path_factory.mktemp("leak")
    root = base / "vault"
    env = dict(os.environ, VAULTMEM_NOW=NOW)
    env.pop("VAULTMEM_VAULT", None)
    subprocess.run([VAULTMEM, "init", str(root)], check=True, capture_output=True, env=env, timeout=120)
    files = write_transcripts(base / "transcripts")
    done = subprocess.run([VAULTMEM, "--vault", str(root), "extract", *map(str, files), "--json"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return root, json.loads(done.stdout), done.stdout + done.stderr


def leaks_in(text: str) -> list[str]:
    return [value for _, values in PLANTED.values() for value in values if value in text]


def test_every_format_was_imported(run):
    """One session note per format, known by its `session` property: a ChatGPT or Claude
    note is named by the conversation's title (the ChatGPT one holds a phone number)."""
    root, report, _ = run
    assert report["sessions"] == len(FORMATS)
    notes = {path: read_note(path) for path in (root / "Memory" / "Sessions").glob("*.md")}
    assert sorted(str(note.get("session")) for note in notes.values()) == sorted(f"leak-{f}" for f in FORMATS)
    assert all(note.type == "session" for note in notes.values())
    names = [path.stem for path in notes]
    assert all(name.startswith("2026-") for name in names) and not any(map(leaks_in, names)), names


def test_session_notes_hold_a_redaction_mark_for_each_planted_secret(run):
    root, _, _ = run
    planted = found = 0
    for note in (root / "Memory" / "Sessions").glob("*.md"):
        text = note.read_text(encoding="utf-8")
        for name in PLANTED:
            planted += 1
            assert f"[REDACTED:{KIND[name]}]" in text, (note.name, name)
        for kind in set(KIND.values()):
            found += text.count(f"[REDACTED:{kind}]")
    print(f"secrets planted: {planted + TITLE_PLANTS} across {len(FORMATS)} formats, redaction marks: {found}")
    assert found >= planted + TITLE_PLANTS


def test_no_secret_in_any_note_the_index_git_or_state(run):
    from vaultmem.index.table import ChunkIndex

    root, _, output = run
    leaks = []
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(root).parts:
            data = path.read_bytes()
            leaks += [(path.relative_to(root).as_posix(), v) for _, values in PLANTED.values()
                      for v in values if v.encode("utf-8") in data]
    rows = ChunkIndex(root).rows()
    assert rows and any("[REDACTED:" in (row.get("text") or "") for row in rows)
    for row in rows:
        for column, value in row.items():
            text = " ".join(map(str, value)) if isinstance(value, list) else str(value)
            leaks += [(f"index {row['path']} {column}", v) for v in leaks_in(text)]
    history = subprocess.run(["git", "log", "-p", "--all"], cwd=root, capture_output=True, text=True,
                             check=True).stdout
    assert "[REDACTED:private-key]" in history  # the history does hold the session notes
    leaks += [("git log -p --all", v) for v in leaks_in(history)]
    leaks += [("vaultmem extract output", v) for v in leaks_in(output)]
    planted = len(PLANTED) * len(FORMATS) + TITLE_PLANTS
    print(f"secrets planted: {planted}, leaked: {len(leaks)}")
    assert leaks == []
