"""What an agent reads first (issue 50): a context block where every line earns its place, the
start-up brief, and sessions that know their project, from agents' logs of the documented
shapes (Claude Code's project JSONL with `cwd` on its lines, Codex's rollout with
`session_meta.payload.cwd`), extracted by the offline rules into a real vault."""

import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from vaultmem import api
from vaultmem.retrieve.brief import SHARES, startup_brief

ACME = "/home/priya/code/acme-billing"
HARBOR = "/home/priya/code/harbor"
QUESTION = "acme-billing: the user's preferences, standing instructions and recent work"
PRIYA = [("user", "I'm Priya, I maintain the billing service at Acme. From now on always run ruff before you commit."),
         ("assistant", "Got it, Priya. I'll run ruff before every commit."),
         ("user", "Also, we moved the CI from Jenkins to GitHub Actions last week, so ignore the Jenkinsfile."),
         ("assistant", "I see ci.yml under .github/workflows; I'll leave the Jenkinsfile alone.")]
HARBOR_TURNS = [("user", "From now on always run the tests with pytest -x before you commit."),
                ("assistant", "Will do: pytest -x before each commit."),
                ("user", "We deployed harbor 2.3 to production yesterday."),
                ("assistant", "Noted.")]


def claude_code_log(path, cwd, turns, day="2026-12-01"):
    """A Claude Code session file (~/.claude/projects/<project>/<session>.jsonl)."""
    session, parent, lines = "5a1b2c3d-0000-4000-8000-00000000abcd", None, []
    for i, (role, text) in enumerate(turns):
        uuid = f"d{i:07d}-0000-4000-8000-000000000001"
        message = {"role": "user", "content": text} if role == "user" else \
            {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-x",
             "content": [{"type": "text", "text": text}]}
        lines.append({"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
                      "version": "2.1.39", "gitBranch": "main", "parentUuid": parent, "type": role,
                      "message": message, "uuid": uuid, "timestamp": f"{day}T10:0{i}:00.000Z"})
        parent = uuid
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def codex_log(path, cwd, turns, day="2026-11-29"):
    """A Codex CLI rollout (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)."""
    lines = [{"timestamp": f"{day}T14:02:10.512Z", "type": "session_meta",
              "payload": {"id": "0199a8f2-0000-7e5f-8a9b-0c1d2e3f4a5b", "timestamp": f"{day}T14:02:10.498Z",
                          "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.128.0"}}]
    for i, (role, text) in enumerate(turns):
        kind = "input_text" if role == "user" else "output_text"
        lines.append({"timestamp": f"{day}T14:0{3 + i}:00.000Z", "type": "response_item",
                      "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def vault(tmp_path_factory, embedder):
    monkey = pytest.MonkeyPatch()
    monkey.setenv("VAULTMEM_NOW", "2026-12-06T09:00:00")
    base = tmp_path_factory.mktemp("brief")
    root = base / "vault"
    api.init(root)
    memory = api.Memory(root, embedder=embedder)
    logs = [claude_code_log(base / "5a1b2c3d.jsonl", ACME, PRIYA),
            codex_log(base / "rollout-2026-11-29T14-02-10-0199a8f2.jsonl", HARBOR, HARBOR_TURNS)]
    report = memory.extract(logs)
    assert not report.get("errors"), report
    yield SimpleNamespace(root=root, memory=memory)
    monkey.undo()


def excerpt_turns(block: str) -> list[set[str]]:
    """The turn ids each excerpt line of a block shows (its link's and its widened turns')."""
    return [set(re.findall(r"#\^(d\d{7})", line)) for line in block.split("\n- ") if line.startswith("[2026")]


def test_sessions_record_where_they_ran(vault):
    heads = {}
    for note in (vault.root / "Memory" / "Sessions").glob("*.md"):
        text = note.read_text(encoding="utf-8")
        heads[re.search(r"^project: (.+)$", text, re.M).group(1)] = re.search(r"^cwd: (.+)$", text, re.M).group(1)
    assert heads == {"acme-billing": ACME, "harbor": HARBOR}


def test_the_documented_start_up_question_spends_no_line_twice(vault, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-06T09:00:00")
    block = vault.memory.context(QUESTION, budget=600)
    text = block["text"]
    assert "Hub note" not in text                                    # no empty entity hub
    assert text.count("I'll run ruff before every commit") <= 1       # no turn twice
    assert text.count("we moved the CI from Jenkins") == 1
    cited = set(re.findall(r"\(source: [^)]*#\^(d\d{7})", text))       # turns memory lines say
    shown = excerpt_turns(text)
    assert all(not (turns & cited) for turns in shown)                # no excerpt repeats one
    for a in range(len(shown)):                                       # excerpts do not overlap
        assert all(not (shown[a] & shown[b]) for b in range(a + 1, len(shown)))
    assert "standing instruction" in text and block["tokens"] <= 600


def test_the_start_up_brief_puts_instructions_first_and_keeps_to_its_project(vault, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-06T09:00:00")
    acme = vault.memory.context(startup=True, project=ACME, budget=600)
    text = acme["text"]
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Standing instructions" and headings[-1] == "## Recent work on acme-billing"
    assert "## About the user" in headings
    assert "ruff" in text.split("## About the user")[0]                # the instruction leads
    assert "pytest -x" not in text                                    # harbor's instruction stays there
    assert "harbor 2.3" not in text
    assert "GitHub Actions" in text.split("## Recent work on acme-billing")[1]
    assert all(re.match(r"- \[(procedure|preference|fact|event) · \d{4}-\d{2}-\d{2}\] ", line)
               for line in text.splitlines() if not line.startswith("## "))   # each dated
    assert acme["tokens"] <= 600 and acme["project"] == ACME and acme["sections"]["instructions"] == 1
    harbor = vault.memory.context(startup=True, project="harbor", budget=600)["text"]
    assert "pytest -x" in harbor and "ruff" not in harbor and "GitHub Actions" not in harbor
    assert "Priya" in harbor                                          # a fact about the person holds everywhere
    vault.memory.add("The staging database runs Postgres 16 in Porto.", type="fact")   # no project's
    assert "Porto" not in vault.memory.context(startup=True, project=ACME, budget=600)["text"]
    everything = vault.memory.context(startup=True, budget=600)["text"]
    assert "Porto" in everything
    assert "pytest -x" in everything and "ruff" in everything and "## Recent work\n" in everything + "\n"


def test_search_and_context_leave_out_other_projects(vault, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-06T09:00:00")
    found = [h["text"] for h in vault.memory.search("what did we deploy or move?", project="acme-billing")["hits"]]
    assert found and not any("harbor 2.3" in t for t in found)
    assert any("harbor 2.3" in h["text"] for h in vault.memory.search("what did we deploy?", project=HARBOR)["hits"])
    assert "harbor 2.3" not in vault.memory.context("what did we deploy?", project=ACME, budget=400)["text"]
    with pytest.raises(Exception, match="needs a question"):
        vault.memory.context("", budget=400)


def test_the_cli_gives_the_brief_and_filters_by_project(vault):
    env = dict(os.environ, VAULTMEM_NOW="2026-12-06T09:00:00", VAULTMEM_NO_DAEMON="1")
    cli = [sys.executable, "-m", "vaultmem", "--vault", str(vault.root)]
    done = subprocess.run([*cli, "context", "--startup", "--project", ACME, "--budget", "300", "--json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    brief = json.loads(done.stdout)
    assert brief["text"].startswith("## Standing instructions") and brief["tokens"] <= 300
    asked = subprocess.run([*cli, "search", "deployed to production", "--project", "acme-billing", "--json"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert asked.returncode == 0 and "harbor 2.3" not in asked.stdout
    bare = subprocess.run([*cli, "context"], capture_output=True, text=True, env=env, timeout=300)
    assert bare.returncode == 2 and "--startup" in bare.stderr


def row(n, type, text, day, importance=0.5):
    return {"note_id": f"n{n}", "path": f"Memory/{n}.md", "type": type, "text": text, "importance": importance,
            "created": day, "valid_from": day, "valid_to": "", "sources": []}


def test_many_preferences_leave_room_for_recent_work():
    count = lambda text: len(text.split())   # noqa: E731
    prefs = [row(n, "preference", f"The user prefers option number {n} for thing {n} in every case.",
                 f"2026-11-{n + 1:02d}") for n in range(25)]
    work = [row(100 + n, "event", f"The team shipped release {n}.", f"2026-12-0{n + 1}") for n in range(3)]
    plan = row(200, "event", "The team plans the 2027 roadmap offsite.", "2027-01-15")
    brief = startup_brief(prefs + work + [plan], lambda r: True, budget=200, count_tokens=count, today="2026-12-06")
    text = brief["text"]
    assert count(text) <= 200 and brief["sections"]["recent"] >= 3
    assert text.index("release 2") < text.index("release 0") < text.index("2027 roadmap")  # newest said first
    assert brief["sections"]["preferences"] >= 200 * SHARES["preferences"] // 13   # its share, at least
    assert text.index("## Preferences") < text.index("## Recent work")


@pytest.mark.parametrize("asked, ran, found", [
    ("/home/priya/code/acme-billing", "/home/priya/code/acme-billing/web", True),   # below the folder
    ("/home/priya/code/acme-billing/", "/home/priya/code/acme-billing", True),
    ("acme-billing", "/home/priya/code/acme-billing/web", True),                    # a folder above
    ("/home/priya/code/acme", "/home/priya/code/acme-billing", False),              # not a prefix
    ("/Users/priya/src/acme-billing", "/home/priya/code/acme-billing", True),       # another device
    ("C:/Users/Priya/code/harbor", "C:\\Users\\Priya\\code\\harbor\\api", True),
    ("c:\\users\\priya\\code\\harbor", "C:\\Users\\Priya\\code\\harbor", True),
    ("harbor", "/home/priya/code/acme-billing", False),
])
def test_a_project_is_its_folder_or_its_name(asked, ran, found):
    from vaultmem.retrieve.projects import matches
    from vaultmem.store.session_note import project_name

    assert matches((ran, project_name(ran)), asked) is found
