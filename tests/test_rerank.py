"""The optional LLM rerank stage (`retrieve/rerank.py`, issue 35): the `[llm]` endpoint, served on
loopback by the test, reorders the first stage's top hits; a failure keeps the first stage's
order and says so. The vault, index, model and search are the real ones."""

from __future__ import annotations

import re
import time

import pytest
from click.testing import CliRunner

from tests.helpers.llm_endpoint import LoopbackLLM, completion
from tests.helpers.transcripts import write_jsonl
from tests.test_llm_command import CLAUDE, standins, use_command  # noqa: F401 (a fixture)
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.errors import ConfigError
from vaultmem.retrieve.hits import Hit
from vaultmem.retrieve.rerank import (ENDED_TOKENS, REPLY_TOKENS, RERANK_CANDIDATES, candidates, mark_ended, parse_ended, parse_ranking,
                                      rerank_messages)

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


# Issue 49: the model sees up to 100 hits, each with the day it was said and its session.

def extract_music(tmp_path, vault, embedder, monkeypatch) -> None:
    """A three-turn conversation about the cello, extracted offline on 2026-11-30."""
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    transcript = write_jsonl(tmp_path / "music.jsonl", "music", [
        ("user", "I started playing the cello again last month, in a community orchestra."),
        ("assistant", "Lovely! What are you rehearsing?"),
        ("user", "Dvorak's ninth, we perform it in the spring.")], speaker="user")
    assert not api.Memory(vault, embedder=embedder).extract([transcript], format="jsonl").get("errors")


def test_each_passage_is_shown_with_its_day_and_session(tmp_path, vault, embedder, monkeypatch):
    extract_music(tmp_path, vault, embedder, monkeypatch)
    with Ranker(first="cello") as llm:
        llm.configure(vault)
        ranked = api.Memory(vault, embedder=embedder).search(QUESTION, k=8, rerank="llm")
    assert not ranked.get("warning")
    prompt = llm.requests[0]["body"]["messages"][-1]["content"]
    assert "Asked on: 2026-11-30" in prompt
    lines = [line for line in prompt.splitlines() if line.startswith("[")]
    excerpt = next(line for line in lines if "· excerpt)" in line)
    assert re.match(r'\[\d+\] \(\d{4}-\d{2}-\d{2} · session "[^"]*music[^"]*" · excerpt\) ', excerpt), excerpt
    extracted = [line for line in lines if "memory (" in line and "music" in line]
    assert extracted, lines      # a memory names the session it came from
    added = next(line for line in lines if "Porto" in line)
    assert re.match(r"\[\d+\] \(\d{4}-\d{2}-\d{2} · memory \(fact\)\) ", added), added   # said by hand: no session


def test_an_as_of_question_is_asked_on_its_day(vault, embedder, monkeypatch):
    """`search --as-of D` and `context --as-of D` find what held on D: the model is told the
    question is asked on D (a "when" or "now" in it means then), not on today."""
    monkeypatch.setenv("VAULTMEM_NOW", "2031-03-30T12:00:00")   # the facts were added before both days
    with Ranker(first="cello") as llm:
        llm.configure(vault)
        memory = api.Memory(vault, embedder=embedder)
        assert memory.search(QUESTION, k=3, rerank="llm", as_of="2031-03-20")["hits"][0]["text"] == FACTS[1]
        assert FACTS[1] in memory.context(QUESTION, budget=200, rerank="llm", as_of=" 2031-03-21")["text"]
        assert memory.search(QUESTION, k=3, rerank="llm")["hits"][0]["text"] == FACTS[1]
    days = [re.search(r"Asked on: (\S+)", r["body"]["messages"][-1]["content"]).group(1) for r in llm.requests]
    assert days == ["2031-03-20", "2031-03-21", "2031-03-30"]


class ExcerptFirst(LoopbackLLM):
    """Ranks the session excerpts holding `word` first, then nothing else (as a model that
    finds the person's own words most helpful and leaves the memories out)."""

    def __init__(self, word):
        super().__init__()
        self.word = word

    def answer(self, body):
        prompt = body["messages"][-1]["content"]
        ranking = [int(n) for n, label, text in re.findall(r"^\[(\d+)\] \(([^)]*)\) (.*)$", prompt, re.M)
                   if label.endswith("excerpt") and self.word in text]
        return 200, completion(f'{{"ranking": {ranking}}}')


def test_a_memory_takes_the_place_the_model_gave_the_turn_it_came_from(tmp_path, vault, embedder, monkeypatch):
    """The model ranks the excerpt of the person's words first: the memory that states what
    they said leads the block in its place (as the first stage puts a memory before the turns
    it came from), and the excerpt, which no longer repeats that turn, follows."""
    extract_music(tmp_path, vault, embedder, monkeypatch)
    with ExcerptFirst("cello") as llm:
        llm.configure(vault)
        block = api.Memory(vault, embedder=embedder).context(QUESTION, budget=400, rerank="llm")
    assert not block.get("warning") and llm.requests
    lines = [line for line in block["text"].splitlines() if line.startswith("- [")]
    first = lines[0]
    assert "cello" in first and "#^" not in first.split("]", 1)[0], lines   # a memory, not an excerpt
    assert sum("I started playing the cello" in line for line in lines) == 0, lines   # its turn, once


def test_a_memory_the_model_left_out_under_the_floor_takes_no_excerpts_place():
    """Only a memory the block shows anyway takes the place of the excerpt of its turn: a weak
    one the model left out (below the block's floor) would lead, and take the turn that says
    where the user lives out of the excerpt the model ranked first."""
    from vaultmem.retrieve.context import build_context

    def count(text):
        return len(text.split())

    excerpt = Hit(id="s", path="Sessions/2026-11-01 chat.md", type="session", title="chat",
                  text="user: I moved to Lisbon in May and adopted a dog called Rex.\nassistant: Congratulations!",
                  score=0.9, status="active", created="2026-11-01T10:00:00", updated="",
                  source_messages=["m-1", "m-2"], parts={"rerank": 1})
    nurse = Hit(id="c", path="Memory/Facts/nurse.md", type="fact", title="nurse", text="The user works as a nurse.",
                score=0.5, status="active", created="2026-11-01T10:00:00", updated="", source_messages=["m-9"],
                sources=["[[2026-11-01 chat#^m-9]]"], parts={"rerank": 2}, valid_from="2026-11-01")
    dog = Hit(id="b", path="Memory/Facts/dog.md", type="fact", title="dog", text="The user has a dog called Rex.",
              score=0.1, status="active", created="2026-11-01T10:00:00", updated="", source_messages=["m-1"],
              sources=["[[2026-11-01 chat#^m-1]]"], valid_from="2026-11-01")
    text = build_context([excerpt, nurse, dog], budget=400, count_tokens=count)["text"]
    lines = [line for line in text.splitlines() if line.startswith("- [")]
    assert "Lisbon" in lines[0] and "Rex" not in text.split("Congratulations")[1], text
    dog.score = 0.8   # above the floor: it is shown, and leads in its turn's place
    text = build_context([excerpt, nurse, dog], budget=400, count_tokens=count)["text"]
    said = [re.sub(r"^- \[.*? score [\d.]+\] ", "", line) for line in text.splitlines() if line.startswith("- [")]
    assert [line[:30] for line in said[:2]] == ["The user has a dog called Rex.", "assistant: Congratulations!"], text


def hit(n: int, text: str) -> Hit:
    return Hit(id=f"m{n}", path=f"Memory/Facts/m{n}.md", type="fact", title=text[:20], text=text, score=1.0,
               status="active", created="2026-11-01T10:00:00", updated="", source_messages=[],
               valid_from="2026-11-01")


def test_up_to_a_hundred_are_shown_as_many_as_the_window_holds():
    english = [hit(n, f"The user mentioned detail number {n} about their week, " * 6) for n in range(120)]
    chinese = [hit(n, f"用户提到了这周的第{n}件事，" * 12) for n in range(120)]
    assert candidates(english) == RERANK_CANDIDATES == 100   # the default window, 32,000 tokens
    assert candidates(english, context_tokens=8192) < 100
    small = candidates(english, context_tokens=4096)
    assert 10 <= small < 50
    assert 2 <= candidates(chinese, context_tokens=4096) < small
    assert candidates(english[:1]) == 1 and candidates([], 4096) == 0
    messages = rerank_messages("What happened this week?", english[:candidates(english, 4096)])
    assert sum(len(m["content"]) for m in messages) // 4 < 4096 - REPLY_TOKENS
    block = candidates(english, 4096, ended=True)   # the block's request: longer instructions and reply
    assert 2 <= block < small
    messages = rerank_messages("What happened this week?", english[:block], ended=True)
    assert sum(len(m["content"]) for m in messages) // 4 < 4096 - REPLY_TOKENS - ENDED_TOKENS


def test_context_follows_the_models_order(vault, embedder):
    memory = api.Memory(vault, embedder=embedder)
    plain = memory.context(QUESTION, budget=400, rerank="")
    assert "Civic" not in plain["text"].splitlines()[1]
    with Ranker(first="Civic", second="Porto") as llm:
        llm.configure(vault)
        ranked = api.Memory(vault, embedder=embedder).context(QUESTION, budget=400, rerank="llm")
    assert len(llm.requests) == 1 and not ranked.get("warning")
    lines = ranked["text"].splitlines()
    assert "Civic" in lines[1] and "Porto" in lines[2]
    set_search(vault, 'rerank = "llm"')          # the config turns it on for context as for search
    with Ranker(first="peanuts") as llm:
        llm.configure(vault)
        done = CliRunner().invoke(cli, ["--vault", str(vault), "context", QUESTION, "--budget", "400"],
                                  env={"VAULTMEM_NO_DAEMON": "1"})
        assert done.exit_code == 0, done.output
        assert "peanuts" in done.output.splitlines()[1] and len(llm.requests) == 1


class Ender(LoopbackLLM):
    """Ranks the passage holding `first` first and names the one holding `ended` as ended by it."""

    def __init__(self, first, ended):
        super().__init__()
        self.first, self.ended = first, ended

    def answer(self, body):
        prompt = body["messages"][-1]["content"]
        first, ended = (int(re.search(rf"\[(\d+)\] [^\n]*{word}", prompt).group(1)) for word in (self.first, self.ended))
        return 200, completion(f'{{"ranking": [{first}, {ended}], "ended": [[{ended}, {first}]]}}')


def test_the_block_shows_a_memory_the_model_says_has_ended_until_the_later_ones_day(vault, embedder):
    """For the block an agent reads, the model also names the memories a later passage ends:
    such a line says until when it held, as the offline net marks the earlier of two values;
    the model's answer and a search (which does not ask) stay unmarked."""
    memory = api.Memory(vault, embedder=embedder)
    assert "until" not in memory.context(QUESTION, budget=400, rerank="")["text"]
    with Ender(first="cello", ended="Civic") as llm:
        llm.configure(vault)
        block = api.Memory(vault, embedder=embedder).context(QUESTION, budget=400, rerank="llm")
        searched = api.Memory(vault, embedder=embedder).search(QUESTION, k=5, rerank="llm")
    assert not block.get("warning") and len(llm.requests) == 2
    context_system, search_system = (r["body"]["messages"][0]["content"] for r in llm.requests)
    assert '"ended"' in context_system and '"ended"' not in search_system
    lines = block["text"].splitlines()
    cello = next(h for h in searched["hits"] if "cello" in h["text"])
    day = (cello["valid_from"] or cello["created"])[:10]
    assert "cello" in lines[1] and "until" not in lines[1], lines
    civic = next(line for line in lines if "Civic" in line)
    assert re.match(r"\d{4}-\d{2}-\d{2}$", day) and f"· until {day} ·" in civic, civic
    assert not any(h["valid_to"] for h in searched["hits"]), searched["hits"]


def memory_hit(n: int, text: str, day: str, **fields) -> Hit:
    return Hit(**{**dict(id=f"m{n}", path=f"Memory/Facts/m{n}.md", type="fact", title=text[:20], text=text,
                         score=1.0, status="active", created=f"{day}T10:00:00", updated="", source_messages=[],
                         valid_from=day), **fields})


@pytest.mark.parametrize("reply, expected", [
    ('{"ranking": [1], "ended": [[3, 1], [2, 2], [9, 1], [3, 2], ["4", "1"], [3, 1]]}', [(2, 0), (2, 1), (3, 0)]),
    ('{"ranking": [1e400, 1], "ended": [[1e400, 1], [2, Infinity], [2, 1]]}', [(1, 0)]),   # JSON's infinities
    ('{"ranking": [1], "ended": []}', []),
    ('{"ranking": [1]}', []),                          # a reply that names none ends nothing
    ('{"ranking": [1], "ended": [3, 1]}', []),         # not pairs
    ('{"ranking": [1], "ended": {"3": 1}}', []),
    ("[1, 2]", []),
])
def test_parse_ended_keeps_the_pairs_of_two_passages(reply, expected):
    assert parse_ended(reply, 4) == expected
    assert parse_ranking(reply, 4)[0] == 0   # the ranking is read from the same reply


def test_only_a_memory_still_held_is_ended_and_only_by_a_passage_said_since():
    chicago = memory_hit(1, "The user lives in Chicago.", "2026-03-01")
    denver = memory_hit(2, "The user moved to Denver.", "2026-09-12")
    excerpt = memory_hit(3, "user: I live in Chicago.", "2026-02-01", type="session")
    earlier = memory_hit(4, "The user rents a flat.", "2026-10-01")
    dated = memory_hit(5, "The user worked at Acme.", "2026-01-01", valid_to="2026-05-31")
    gone = memory_hit(6, "The user lives in Austin.", "2026-01-01", status="superseded")
    shown = [chicago, denver, excerpt, earlier, dated, gone]
    note = memory_hit(7, "Moved to Denver in September.", "2026-12-01", type="note")
    shown.append(note)
    mark_ended(shown, [(0, 6), (0, 2), (0, 1), (2, 1), (3, 0), (4, 1), (5, 1)])
    assert chicago.valid_to == "2026-09-12"   # not by the person's note, nor by an older excerpt: by Denver
    assert excerpt.valid_to == earlier.valid_to == gone.valid_to == ""   # an excerpt; ended "by" an older one; not active
    assert dated.valid_to == "2026-05-31"                                  # its own last day stands
    asked_then = memory_hit(1, "The user lives in Chicago.", "2026-03-01")
    mark_ended([asked_then, denver], [(0, 1)], as_of="2026-06-01")   # a passage after the day asked of ends nothing
    assert asked_then.valid_to == ""
    trip = memory_hit(8, "The user flies to Kyoto on April 14, 2027.", "2027-04-14", type="event",
                      sources=["[[2026-10-01 chat#^m-3]]"])
    off = memory_hit(9, "The user called off the Kyoto trip.", "2026-11-20", sources=["[[2026-11-20 chat#^m-1]]"])
    mark_ended([trip, off], [(0, 1)])   # dated by the trip, told in October: called off in November
    assert trip.valid_to == "2026-11-20"


def test_an_as_of_block_ends_nothing_by_a_passage_told_after_its_day(vault, embedder):
    """`context --as-of` shows what held that day: the block's request is asked on that day, and
    a memory the model says ended is not shown as ended by a passage told after it."""
    from vaultmem.retrieve.hits import Hits
    from vaultmem.retrieve.rerank import llm_rerank

    with Ender(first="cello", ended="Civic") as llm:
        llm.configure(vault)
        memory = api.Memory(vault, embedder=embedder)
        today = memory.search(QUESTION, k=5)["hits"][0]["created"][:10]
        block = memory.context(QUESTION, budget=400, rerank="llm", as_of=today)
    assert f"Asked on: {today}" in llm.requests[0]["body"]["messages"][-1]["content"]
    assert f"until {today}" in next(line for line in block["text"].splitlines() if "Civic" in line)

    def reply(messages, max_tokens):
        return '{"ranking": [2, 1], "ended": [[1, 2]]}'

    for as_of, until in (("2026-06-01", ""), ("2026-09-12", "2026-09-12"), (None, "2026-09-12")):
        chicago = memory_hit(1, "The user lives in Chicago.", "2026-03-01")
        denver = memory_hit(2, "The user moved to Denver.", "2026-09-12")
        ranked = llm_rerank("Where does the user live?", Hits([chicago, denver]), reply, ended=True, as_of=as_of)
        assert [h.text for h in ranked][0] == denver.text and chicago.valid_to == until, as_of


class SlowRanker(Ranker):
    """Answers after the `[llm] timeout` has passed."""

    @property
    def settings(self) -> dict:
        return dict(super().settings, timeout=1)

    def answer(self, body):
        time.sleep(2)
        return super().answer(body)


def test_a_model_past_its_timeout_keeps_the_first_stage_and_says_why(vault, embedder):
    memory = api.Memory(vault, embedder=embedder)
    plain = texts(memory.search(QUESTION, k=4))
    with SlowRanker(first="Civic") as llm:
        llm.configure(vault)
        result = api.Memory(vault, embedder=embedder).search(QUESTION, k=4, rerank="llm")
    assert texts(result) == plain
    assert "LLM rerank failed" in result["warning"] and "timed out" in result["warning"]


def test_a_model_cli_reranks_too(standins, vault, embedder, monkeypatch):
    memory = api.Memory(vault, embedder=embedder)
    plain = texts(memory.search(QUESTION, k=5))
    use_command(vault, CLAUDE, enabled=False)
    monkeypatch.setenv("STANDIN_REPLY", '{"ranking": [3, 1]}')
    result = api.Memory(vault, embedder=embedder).search(QUESTION, k=5, rerank="llm")
    assert not result.get("warning"), result.get("warning")
    assert texts(result)[:2] == [plain[2], plain[0]]
    (call,) = [c for c in standins.calls() if c["name"] == "claude"]
    assert f"Question: {QUESTION}" in call["stdin"] and "· memory (fact))" in call["stdin"]
