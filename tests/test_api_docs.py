"""The documented Python API runs as documented: the examples of README.md and docs/*.md
(the Python API's are in docs/agents.md) as doctests (outputs checked), and the examples in
`Memory`'s docstrings executed against a copy of the sample vault. Real vault, real git, real
model."""

import doctest
import json
import re
from pathlib import Path

import pytest
from conftest import copy_sample_vault

from vaultmem import api
from vaultmem.api import Memory
from vaultmem.memory import export

ROOT = Path(__file__).resolve().parent.parent
# Every Markdown page that holds `>>>` examples is run; none may be left out.
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLE_DOCS = [doc for doc in DOCS if ">>>" in doc.read_text(encoding="utf-8")]
# The examples the README held before they moved to docs/agents.md: the count may not fall.
MIN_EXAMPLES = 12
# The methods docs/agents.md promises, each with a short example in its docstring.
DOCUMENTED = ("add", "extract", "search", "context", "history", "rollback", "forget", "export")
CHAT_MD = ("**Alice:** I prefer window seats on long flights.\n"
           "**Assistant:** Noted, window seats it is.\n"
           "**Alice:** My sister Maria lives in Lisbon.\n")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Ada\n\temail = ada@example.org\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T09:00:00")
    monkeypatch.setenv("VAULTMEM_NO_DAEMON", "1")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "chat.md").write_text(CHAT_MD)
    (work / "chat.jsonl").write_text("".join(json.dumps(m) + "\n" for m in (
        {"session": "chat-7", "id": "m-1", "role": "user", "speaker": "Sam",
         "text": "I work as a nurse at the city hospital."},
        {"session": "chat-7", "id": "m-2", "role": "user", "speaker": "Sam",
         "text": "I really hate cold showers."},
        {"session": "chat-7", "id": "m-3", "role": "user", "speaker": "Sam",
         "text": "My daughter Lena was born on 2019-04-02."})))
    return work


def run_doctest(text: str, name: str, globs: dict) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(text, globs, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("doc", EXAMPLE_DOCS, ids=lambda doc: doc.relative_to(ROOT).as_posix())
def test_agents_doc_examples_run_as_doctests(doc, workdir, tmp_path):
    """Each page's examples in a vault of their own, in the order the page gives them."""
    root = tmp_path / "vault"
    api.init(root)
    name = doc.relative_to(ROOT).as_posix()
    results = run_doctest(doc.read_text(encoding="utf-8"), name, {"vault": str(root)})
    assert results.attempted > 0
    assert results.failed == 0


def test_docs_keep_their_examples():
    parser = doctest.DocTestParser()
    count = sum(len(parser.get_examples(doc.read_text(encoding="utf-8"))) for doc in EXAMPLE_DOCS)
    assert count >= MIN_EXAMPLES, \
        f"{count} doctest examples in README.md and docs/*.md, fewer than {MIN_EXAMPLES}"


def test_export_module_doctests():
    results = doctest.testmod(export, optionflags=doctest.ELLIPSIS)
    assert results.attempted >= 2 and results.failed == 0


@pytest.mark.parametrize("method", DOCUMENTED)
def test_documented_methods_carry_an_example(method):
    assert ">>>" in (getattr(Memory, method).__doc__ or ""), \
        f"Memory.{method} has no example in its docstring"


def test_docstring_examples_execute_on_the_sample_vault(workdir, tmp_path):
    """Every `>>>` line in Memory's docstrings runs without error (outputs there are
    illustrative: ids and paths differ per vault), in the order a user would try them."""
    root = copy_sample_vault(tmp_path / "sample")
    api.init(root)
    Memory(root).reindex()  # as after `vaultmem init` + `vaultmem reindex`
    globs = {"Memory": Memory, "vault": str(root), "tmp": tmp_path}
    failures = []
    parser = doctest.DocTestParser()
    for name in ("show", "search", "context", "add", "extract", "history", "correct", "rollback",
                 "forget", "export", "list"):
        for example in parser.get_examples(getattr(Memory, name).__doc__ or ""):
            source = re.sub(r"#\s*doctest:.*$", "", example.source, flags=re.M)
            try:
                exec(compile(source, f"Memory.{name}", "single"), globs)
            except Exception as exc:  # report every broken example at once
                failures.append(f"Memory.{name}: {source.strip()} -> {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)
