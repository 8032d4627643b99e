"""The optional LLM rerank stage (`retrieve/rerank.py`, issue 35): the `[llm]` endpoint, served on
loopback by the test, reorders the first stage's top hits; a failure keeps the first stage's
order and says so. The vault, index, model and search are the real ones."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from tests.helpers.llm_endpoint import LoopbackLLM, completion
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.errors import ConfigError
from vaultmem.retrieve.rerank import RERANK_CANDIDATES, parse_ranking

FACTS = ["The user drinks oolong tea every morning.",
         "The user plays the cello in a community orchestra.",
         "The user's sister Mira lives in Porto.",
         "The user is allergic to peanuts.",
         "The user drives a 2019 Honda Civic."]
QUESTION = "What music does the user make?"


class Ranker(LoopbackLLM):
    """Ranks the passage holding `first` first and `second` second; or answers `reply` as is."""

    def __init__(self, first="", second="", reply=None, status=200):
        super().__init__()
        self.first, self.second, self.reply, self.status = first, second, reply, status

    def answer(self, body):
        if self.status != 200:
            return self.status, b'{"error": "model not loaded"}'
        if self.reply is not None:
            return 200, completion(self.reply)
        prompt = body["messages"][-1]["content"]
        numbers = {word: re.search(rf"\[(\d+)\] [^\n]*{word}", prompt) for word in (self.first, self.second)}
        ranking = [int(m.group(1)) for m in numbers.values() if m]
        return 200, completion(f'{{"ranking": {ranking}}}')


def set_search(root, line: str) -> None:
    """Set `key = value` in the [search] table of the vault's config.toml, as a person edits it."""
    config = root / ".vaultmem" / "config.toml"
    key = line.split("=")[0].strip()
    text, found = re.subn(rf"(?m)^{key} = .*$", line, config.read_text(encoding="utf-8"), count=1)
    assert found == 1, f"no {key} in {config}"
    config.write_text(text, encoding="utf-8")


@pytest.fixture
def vault(tmp_path, embedder):
    root = tmp_path / "vault"
    api.init(root)
    set_search(root, "min_score = 0.0")   # every fact is a hit: the order is what is tested
    memory = api.Memory(root, embedder=embedder)
    for fact in FACTS:
        assert memory.add(fact)["action"] == "created"
    return root


def texts(result):
    return [hit["text"] for hit in result["hits"]]


@pytest.mark.parametrize("reply, count, expected", [
    ('{"ranking": [3, 1]}', 3, [2, 0]),
    ('{"ranking": [2, 2, "1", 7, 0, true, null, "x"]}', 3, [1, 0]),   # repeats, out of range, not numbers
    ('```json\n{"ranking": [1]}\n```', 2, [0]),
    ("[2, 1]", 2, [1, 0]),                                            # a bare list will do
])
def test_parse_ranking_keeps_each_passage_once_in_the_models_order(reply, count, expected):
    assert parse_ranking(reply, count) == expected


@pytest.mark.parametrize("reply, words", [
    ("the second one", "not JSON"),
    ('{"order": [1]}', 'no "ranking" list'),
    ('{"ranking": [9, 0]}', "ranked none"),
])
def test_parse_ranking_refuses_a_reply_it_cannot_use(reply, words):
    with pytest.raises(ValueError, match=words):
        parse_ranking(reply, 3)


def test_the_model_order_comes_first_and_the_rest_keep_theirs(vault, embedder):
    memory = api.Memory(vault, embedder=embedder)
    plain = memory.search(QUESTION, k=5)
    assert "rerank" not in plain["hits"][0] and len(plain["hits"]) >= 3
    with Ranker(first="peanuts", second="Porto") as llm:
        llm.configure(vault)
        ranked = api.Memory(vault, embedder=embedder).search(QUESTION, k=5, rerank="llm")
    assert not ranked.get("warning")
    (request,) = llm.requests
    prompt = request["body"]["messages"][-1]["content"]
    assert f"Question: {QUESTION}" in prompt and prompt.count("\n[") <= RERANK_CANDIDATES
    assert texts(ranked)[:2] == [FACTS[3], FACTS[2]]
    assert [hit.get("rerank") for hit in ranked["hits"][:2]] == [1, 2]
    rest = [t for t in texts(plain) if t not in FACTS[2:4]]
    assert texts(ranked)[2:] == rest[:len(texts(ranked)) - 2]     # unranked: the first stage's order


def test_the_config_turns_it_on_and_the_call_turns_it_off(vault, embedder):
    set_search(vault, 'rerank = "llm"')
    with Ranker(first="Civic") as llm:
        llm.configure(vault)
        memory = api.Memory(vault, embedder=embedder)
        assert texts(memory.search(QUESTION, k=3))[0] == FACTS[4]
        assert len(llm.requests) == 1
        assert texts(memory.search(QUESTION, k=3, rerank=""))[0] != FACTS[4]
        assert len(llm.requests) == 1                                 # off: no request made


@pytest.mark.parametrize("ranker, words", [
    (Ranker(status=503), "HTTP 503"),
    (Ranker(reply="I think the cello one."), "not JSON"),
])
def test_a_failed_rerank_keeps_the_first_stage_and_says_why(vault, embedder, ranker, words):
    memory = api.Memory(vault, embedder=embedder)
    plain = texts(memory.search(QUESTION, k=4))
    with ranker as llm:
        llm.configure(vault)
        result = api.Memory(vault, embedder=embedder).search(QUESTION, k=4, rerank="llm")
    assert texts(result) == plain
    assert "LLM rerank failed" in result["warning"] and words in result["warning"]


def test_the_cli_takes_rerank_and_refuses_an_unknown_stage(vault, embedder, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NO_DAEMON", "1")
    with Ranker(first="oolong") as llm:
        llm.configure(vault)
        done = CliRunner().invoke(cli, ["--vault", str(vault), "search", QUESTION, "-k", "3", "--rerank", "llm"])
        assert done.exit_code == 0, done.output
        assert done.output.splitlines()[1].strip() == FACTS[0]
        assert len(llm.requests) == 1
    with Ranker(first="Porto") as llm:    # [search] rerank = "llm" reaches the CLI's request too
        llm.configure(vault)
        set_search(vault, 'rerank = "llm"')
        done = CliRunner().invoke(cli, ["--vault", str(vault), "search", QUESTION, "-k", "3"])
        assert done.exit_code == 0 and done.output.splitlines()[1].strip() == FACTS[2], done.output
        done = CliRunner().invoke(cli, ["--vault", str(vault), "search", QUESTION, "-k", "3", "--rerank", "none"])
        assert done.exit_code == 0 and len(llm.requests) == 1
        set_search(vault, 'rerank = ""')
    with pytest.raises(ConfigError, match="unknown rerank stage"):
        api.Memory(vault, embedder=embedder).search(QUESTION, rerank="cohere")
    set_search(vault, 'rerank = "gpt"')
    with pytest.raises(ConfigError, match=r'config.toml.*"" \(off\) or "llm"'):
        api.Memory(vault, embedder=embedder).search(QUESTION)
