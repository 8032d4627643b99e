"""Agents writing memory well, through a real `vaultmem mcp` subprocess: `remember` answers
with the policy's decision and the held memories nearest to the statement, and `update`
supersedes a named memory (old note kept, marked superseded; the new one supersedes it; one
commit), refuses a secret without writing anything, and names an unknown or stale target."""

import subprocess

from tests.test_mcp import call, call_error, env, run_session, vault  # noqa: F401  fixtures

from vaultmem.store.note import read_note
from vaultmem.store.values import as_list, link_target

TEA = "The user drinks green tea every morning."
COFFEE = "The user drinks a black coffee after lunch."
JASMINE = "The user drinks jasmine tea every morning now."
TOKEN = "ghp_" + "Zx8Qw3Lm5Rt7Yp2Vb9Nc4Hd6Jk1Fs0Ga3Ue"
UNKNOWN = "01JZZZZZZZZZZZZZZZZZZZZZZZ"


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def links(note, key) -> list[str]:
    return [str(link_target(v)) for v in as_list(note.get(key))]


def test_remember_shows_nearest_and_update_supersedes_over_mcp(vault, env):  # noqa: F811
    env = dict(env, VAULTMEM_NO_DAEMON="1")

    async def scenario(session, init):
        out = {"tools": {t.name: t for t in (await session.list_tools()).tools}}
        out["tea"] = await call(session, "remember", text=TEA, type="preference")
        out["coffee"] = await call(session, "remember", text=COFFEE, type="preference")
        out["again"] = await call(session, "remember", text=TEA, type="preference")
        out["head"] = git(vault, "rev-parse", "HEAD").strip()
        out["updated"] = await call(session, "update", note=out["tea"]["id"], text=JASMINE)
        out["unknown"] = await call_error(session, "update", note=UNKNOWN, text=JASMINE)
        out["stale"] = await call_error(session, "update", note=out["tea"]["id"], text=JASMINE)
        out["before_secret"] = git(vault, "rev-parse", "HEAD").strip()
        out["secret"] = await call(session, "update", note=out["updated"]["id"],
                                   text=f"The user's GitHub token is {TOKEN}")
        return out

    out = run_session(vault, env, scenario)

    tools = out["tools"]
    for name in ("remember", "update"):   # what the agent is asked for, and when to update
        text = tools[name].description + str(tools[name].input_schema)
        assert "third-person" in text and "language" in text and "pnpm over npm" in text, name
    assert "update" in tools["remember"].description and "nearest" in tools["remember"].description

    tea, coffee, again = out["tea"], out["coffee"], out["again"]
    assert (tea["action"], tea["reason"], tea["nearest"]) == ("created", "new memory", [])
    assert coffee["action"] == "created"
    assert [(n["id"], n["path"], n["text"]) for n in coffee["nearest"]] == [(tea["id"], tea["path"], TEA)]
    assert 0.3 <= coffee["nearest"][0]["score"] < 0.92   # related, not a duplicate
    assert again["action"] == "updated" and again["id"] == tea["id"] and "already remembered" in again["reason"]
    assert [n["id"] for n in again["nearest"]] == [coffee["id"]]   # the note just written is left out

    updated = out["updated"]
    assert updated["action"] == "superseded" and updated["superseded"] == tea["path"]
    old, new = read_note(vault / tea["path"]), read_note(vault / updated["path"])
    assert (old.status, links(old, "superseded_by")) == ("superseded", [new.path.stem])
    assert old.get("valid_to") is not None and old.statement() == TEA
    assert (new.status, links(new, "supersedes"), new.statement()) == \
        ("active", [old.path.stem], JASMINE)
    assert git(vault, "rev-list", "--count", f"{out['head']}..{out['before_secret']}").strip() == "1"
    changed = git(vault, "show", "--name-only", "--format=", out["before_secret"]).splitlines()
    assert sorted(changed) == sorted([tea["path"], updated["path"]])

    assert UNKNOWN in out["unknown"] and "no note matches" in out["unknown"]
    assert tea["path"] in out["stale"] and "superseded" in out["stale"]

    secret = out["secret"]
    assert secret["action"] == "rejected" and "secret" in secret["reason"] and TOKEN not in str(secret)
    assert git(vault, "rev-parse", "HEAD").strip() == out["before_secret"]
    assert read_note(vault / updated["path"]).status == "active"
    leaked = [p for p in vault.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert leaked == [] and TOKEN not in git(vault, "log", "--all", "-p")
    assert TOKEN not in (vault.parent / "server.log").read_text()
