"""The LLM extractor against a real HTTP server on loopback that plays canned chat completions."""

import json
from dataclasses import dataclass
from datetime import date, datetime

import pytest
from click.testing import CliRunner

from tests.helpers.llm_endpoint import LoopbackLLM, completion
from tests.helpers.transcripts import write_jsonl
from vaultmem import api
from vaultmem.cli import cli
from vaultmem.errors import LLMError
from vaultmem.extract import llm as llm_module
from vaultmem.extract import llm_prompt
from vaultmem.extract.llm import extract_llm, extract_with_fallback
from vaultmem.extract.llm_endpoint import LLMSettings
from vaultmem.extract.llm_prompt import render_turns
from vaultmem.extract.llm_reply import parse_memory_items
from vaultmem.extract.llm_slots import normalise_slot
from vaultmem.store.note import read_note


@dataclass
class Turn:
    session: str
    id: str
    time: datetime | None
    speaker: str
    role: str
    text: str
    line: int = 0


SESSION = datetime(2023, 5, 8, 13, 56)
TURNS = [
    Turn("s1", "D1:1", SESSION, "Caroline", "user", "Hey Mel! Good to see you!"),
    Turn("s1", "D1:2", SESSION, "Caroline", "user",
         "I went to a LGBTQ support group yesterday and it was so powerful."),
    Turn("s1", "D1:3", SESSION, "Melanie", "user", "I live in Boston with my kids."),
]
VALID = {"memory_items": [
    {"content": "On 2023-05-07, Caroline went to an LGBTQ support group.", "type": "event",
     "importance": 0.6, "source_messages": ["D1:2"], "entities": ["Caroline", "LGBTQ"],
     "valid_from": "2023-05-07"},
    {"content": "Melanie lives in Boston with her kids.", "type": "fact", "importance": 0.7,
     "source_messages": ["D1:3"], "subject": "Melanie", "attribute": "home", "value": "Boston"},
]}


class CannedLLM(LoopbackLLM):
    """Serves queued (status, body) responses and records every request."""

    def __init__(self, responses):
        super().__init__()
        self.responses = list(responses)

    def answer(self, body):
        return self.responses.pop(0)


def test_valid_reply_becomes_candidates_and_sends_the_key(monkeypatch):
    monkeypatch.setenv("VAULTMEM_TEST_LLM_KEY", "sk-test-123")
    with CannedLLM([(200, completion(json.dumps(VALID)))]) as llm:
        cands = extract_llm(TURNS, SESSION, llm.settings)
    assert len(llm.requests) == 1
    request = llm.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test-123"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["response_format"] == {"type": "json_object"}
    prompt = request["body"]["messages"][1]["content"]
    assert "[D1:2] 2023-05-08 13:56 Caroline (user): I went to a LGBTQ support group" in prompt
    assert [c.content for c in cands] == ["On 2023-05-07, Caroline went to an LGBTQ support group.",
                                          "Melanie lives in Boston with her kids."]
    first, second = cands
    assert (first.type, first.importance, first.source_messages) == ("event", 0.6, ["D1:2"])
    assert first.valid_from == date(2023, 5, 7) and first.entities == ["Caroline", "LGBTQ"]
    assert first.speaker == "Caroline" and first.title == "Caroline went to an LGBTQ support group (2023-05-07)"
    assert (second.subject, second.attribute, second.value) == ("Melanie", "home", "Boston")
    assert second.speaker == "Melanie" and second.valid_from is None


def test_no_key_in_the_environment_sends_no_authorization(monkeypatch):
    monkeypatch.delenv("VAULTMEM_TEST_LLM_KEY", raising=False)
    with CannedLLM([(200, completion('{"memory_items": []}'))]) as llm:
        assert extract_llm(TURNS, SESSION, llm.settings) == []
    assert "Authorization" not in llm.requests[0]["headers"]


def test_malformed_then_valid_retries_once_telling_the_model_why():
    with CannedLLM([(200, completion("Sure! Here are the memories: ...")),
                    (200, completion(json.dumps(VALID)))]) as llm:
        cands = extract_llm(TURNS, SESSION, llm.settings)
    assert len(cands) == 2
    assert len(llm.requests) == 2
    retry = llm.requests[1]["body"]["messages"]
    assert retry[2] == {"role": "assistant", "content": "Sure! Here are the memories: ..."}
    assert retry[3]["role"] == "user" and "not valid JSON" in retry[3]["content"]


def test_malformed_twice_raises_and_the_fallback_uses_the_offline_extractor():
    bad = [(200, completion('{"items": []}')), (200, completion('{"items": []}'))]
    with CannedLLM(bad) as llm:
        with pytest.raises(LLMError, match="did not validate twice"):
            extract_llm(TURNS, SESSION, llm.settings)
    with CannedLLM(bad) as llm:
        cands, warnings = extract_with_fallback(TURNS, SESSION, llm.settings)
    assert len(warnings) == 1 and "used the offline extractor" in warnings[0]
    assert "memory_items" in warnings[0]
    contents = [c.content for c in cands]
    assert "On 2023-05-07, Caroline went to a LGBTQ support group and it was so powerful." in contents
    assert all(c.source_messages in (["D1:2"], ["D1:3"]) for c in cands)


def test_invalid_source_ids_are_refused():
    wrong = json.dumps({"memory_items": [{"content": "Caroline went to a support group.", "type": "event",
                                          "importance": 0.5, "source_messages": ["D9:99"]}]})
    with CannedLLM([(200, completion(wrong)), (200, completion(wrong))]) as llm:
        with pytest.raises(LLMError, match="'D9:99' is not a message id"):
            extract_llm(TURNS, SESSION, llm.settings)
    assert "D9:99" in llm.requests[1]["body"]["messages"][3]["content"]


def test_http_500_raises_without_retry_and_falls_back():
    with CannedLLM([(500, {"error": "model crashed"})]) as llm:
        with pytest.raises(LLMError, match="HTTP 500"):
            extract_llm(TURNS, SESSION, llm.settings)
        assert len(llm.requests) == 1
    with CannedLLM([(500, {"error": "model crashed"})]) as llm:
        cands, warnings = extract_with_fallback(TURNS, SESSION, llm.settings)
    assert "HTTP 500" in warnings[0] and cands


def test_unreachable_endpoint_raises_llm_error():
    with CannedLLM([]) as llm:
        settings = llm.settings
    with pytest.raises(LLMError, match="cannot reach"):
        extract_llm(TURNS, SESSION, settings)


def test_reply_that_is_not_a_chat_completion_raises():
    with CannedLLM([(200, {"unexpected": True})]) as llm:
        with pytest.raises(LLMError, match="did not answer with a chat completion"):
            extract_llm(TURNS, SESSION, llm.settings)


@pytest.mark.parametrize("item, problem", [
    ({"content": "", "type": "fact", "importance": 0.5, "source_messages": ["D1:2"]}, "content"),
    ({"content": "x", "type": "opinion", "importance": 0.5, "source_messages": ["D1:2"]}, "type"),
    ({"content": "x", "type": "fact", "importance": True, "source_messages": ["D1:2"]}, "importance"),
    ({"content": "x", "type": "fact", "importance": 0.5, "source_messages": []}, "source_messages"),
    ({"content": "x", "type": "fact", "importance": 0.5, "source_messages": ["D9:9"]}, "source_messages"),
])
def test_validation_names_the_broken_field(item, problem):
    """A reply whose only item is invalid is unusable as a whole (retried, then the fallback)."""
    with pytest.raises(ValueError, match=rf"memory_items\[0\]\.{problem}"):
        parse_memory_items(json.dumps({"memory_items": [item]}), ["D1:2"])


def test_fenced_json_is_accepted():
    items, problems = parse_memory_items("```json\n" + json.dumps(VALID) + "\n```", ["D1:2", "D1:3"])
    assert [i["source_messages"] for i in items] == [["D1:2"], ["D1:3"]]
    assert problems == []


def test_settings_come_from_a_dict_or_config_like_object():
    @dataclass
    class Config:
        llm_base_url: str = "http://127.0.0.1:1/v1"
        llm_model: str = "m"
        llm_api_key_env: str = "K"
        llm_timeout: float = 3.0

    assert LLMSettings.coerce(Config()) == LLMSettings("http://127.0.0.1:1/v1", "m", "K", 3.0)
    assert LLMSettings.coerce({"base_url": "http://x/v1", "model": "m"}).timeout == 60.0
    with pytest.raises(LLMError, match="base_url"):
        LLMSettings.coerce({"model": "m"})


def test_render_turns_lists_ids_speakers_and_times():
    text = render_turns(TURNS[:1], SESSION)
    assert text.splitlines() == ["Session time: 2023-05-08 13:56", "Messages:",
                                 "[D1:1] 2023-05-08 13:56 Caroline (user): Hey Mel! Good to see you!"]


# ---- item by item: keep the valid items, report the rest ------------------------------------

def item(content, source, **more):
    return {"content": content, "type": "fact", "importance": 0.6, "source_messages": [source], **more}


def test_out_of_range_importance_and_a_date_that_is_not_one_are_cleaned_and_reported():
    reply = {"memory_items": [item("x", "D1:2", importance=1.5, valid_from="last week"),
                              item("y", "D1:3", importance=-0.2, valid_to="2026-02-30")]}
    (first, second), problems = parse_memory_items(json.dumps(reply), ["D1:2", "D1:3"])
    assert (first["importance"], first["valid_from"]) == (1.0, None)
    assert (second["importance"], second["valid_to"]) == (0.0, None)
    assert problems == ["memory_items[0].importance 1.5 is outside 0–1; clamped to 1.0",
                        "memory_items[0].valid_from 'last week' is not a YYYY-MM-DD date; left empty",
                        "memory_items[1].importance -0.2 is outside 0–1; clamped to 0.0",
                        "memory_items[1].valid_to '2026-02-30' is not a YYYY-MM-DD date; left empty"]


def test_an_unknown_source_id_beside_a_known_one_is_dropped():
    reply = {"memory_items": [{**item("x", "D1:2"), "source_messages": ["D9:9", "D1:2"]}]}
    (kept,), problems = parse_memory_items(json.dumps(reply), ["D1:2"])
    assert kept["source_messages"] == ["D1:2"]
    assert problems == ["memory_items[0].source_messages: dropped 'D9:9', not message ids of this conversation"]


def test_one_invalid_item_is_left_out_and_reported_without_a_retry_or_the_offline_extractor():
    reply = {"memory_items": [
        item("Caroline went to an LGBTQ support group.", "D1:2"),
        item("Melanie lives in Boston.", "D1:3"),
        item("Melanie has kids.", "D1:3"),
        {**item("Melanie is nice.", "D1:3"), "type": "opinion"}]}
    with CannedLLM([(200, completion(json.dumps(reply)))]) as llm:
        cands, warnings = extract_with_fallback(TURNS, SESSION, llm.settings)
    assert len(llm.requests) == 1
    assert [c.content for c in cands] == ["Caroline went to an LGBTQ support group.",
                                          "Melanie lives in Boston.", "Melanie has kids."]
    assert warnings == ["memory_items[3] left out: memory_items[3].type must be one of fact, preference, "
                        "event, procedure, not 'opinion'"]


def test_every_item_invalid_is_retried_then_falls_back_saying_why():
    bad = json.dumps({"memory_items": [{**item("x", "D1:2"), "type": "opinion"}, item("", "D1:3")]})
    with CannedLLM([(200, completion(bad)), (200, completion(bad))]) as llm:
        cands, warnings = extract_with_fallback(TURNS, SESSION, llm.settings)
    assert len(llm.requests) == 2
    retry = llm.requests[1]["body"]["messages"][3]["content"]
    assert "memory_items[0].type" in retry and "memory_items[1].content" in retry
    (warning,) = warnings
    assert "used the offline extractor" in warning and "memory_items[1].content" in warning
    assert "On 2023-05-07, Caroline went to a LGBTQ support group and it was so powerful." in \
        [c.content for c in cands]


def test_a_batch_that_fails_twice_falls_back_for_that_batch_alone(monkeypatch):
    monkeypatch.setattr(llm_module, "MAX_BATCH_TURNS", 2)  # batches: D1:1-D1:2, then D1:3
    garbage = (200, completion("no JSON here"))
    later = json.dumps({"memory_items": [item("Melanie lives in Boston.", "D1:3")]})
    with CannedLLM([garbage, garbage, (200, completion(later))]) as llm:
        cands, warnings = extract_with_fallback(TURNS, SESSION, {**llm.settings, "context_tokens": 4096})
    assert len(llm.requests) == 3
    assert "[D1:3]" in llm.requests[2]["body"]["messages"][1]["content"]
    (warning,) = warnings
    assert warning.startswith("messages D1:1–D1:2: LLM extraction failed") and "offline" in warning
    assert [c.source_messages for c in cands] == [["D1:2"], ["D1:3"]]
    assert cands[1].content == "Melanie lives in Boston."  # the model's, not the offline wording


def test_an_endpoint_failing_midway_sends_the_rest_of_the_session_offline(monkeypatch):
    monkeypatch.setattr(llm_module, "MAX_BATCH_TURNS", 1)
    first = json.dumps({"memory_items": []})
    with CannedLLM([(200, completion(first)), (500, {"error": "out of memory"})]) as llm:
        cands, warnings = extract_with_fallback(TURNS, SESSION, llm.settings)
    assert len(llm.requests) == 2  # the third batch is not tried against a failing server
    (warning,) = warnings
    assert warning.startswith("messages D1:2–D1:2: ") and "HTTP 500" in warning
    assert {tuple(c.source_messages) for c in cands} == {("D1:2",), ("D1:3",)}


# ---- what a small local model writes, and what fits its context ------------------------------

@pytest.mark.parametrize("sources, wanted", [
    ("D1:3", ["D1:3"]),  # a bare string
    (3, ["D1:3"]),  # a number: the one id that ends in it
    ("[D1:3]", ["D1:3"]),
    (["#D1:2", " ^D1:3 "], ["D1:2", "D1:3"]),
    (["[D1:3] 2023-05-08 13:56 Melanie (user)"], ["D1:3"]),  # as the prompt shows it
    ("D1:2, D1:3", ["D1:2", "D1:3"]),
    ([2.0, "d1:3"], ["D1:2", "D1:3"]),
])
def test_source_ids_written_loosely_are_mapped_to_the_real_ids(sources, wanted):
    reply = {"memory_items": [{**item("Melanie lives in Boston.", "D1:3"), "source_messages": sources}]}
    with CannedLLM([(200, completion(json.dumps(reply)))]) as llm:
        (cand,) = extract_llm(TURNS, SESSION, llm.settings)
    assert len(llm.requests) == 1  # accepted at once, no retry
    assert cand.source_messages == wanted and cand.speaker == ("Melanie" if wanted == ["D1:3"] else "Caroline")


@pytest.mark.parametrize("sources", ["D9:9", 7, [True], "[]", None, {"id": "D1:3"}])
def test_source_ids_that_name_no_message_are_still_refused(sources):
    reply = {"memory_items": [{**item("x", "D1:3"), "source_messages": sources}]}
    with pytest.raises(ValueError, match=r"memory_items\[0\]\.source_messages"):
        parse_memory_items(json.dumps(reply), ["D1:1", "D1:2", "D1:3"])


@pytest.mark.parametrize("context", [4096, 32000])
def test_every_request_and_retry_sends_max_tokens(context):
    shares = llm_prompt.budget(context)
    with CannedLLM([(200, completion("not JSON")), (200, completion(json.dumps(VALID)))]) as llm:
        extract_llm(TURNS, SESSION, {**llm.settings, "context_tokens": context})
    assert [r["body"]["max_tokens"] for r in llm.requests] == [shares.reply] * 2
    assert 0 < llm_prompt.MAX_TOKENS == shares.reply <= 1024 if context == 4096 else shares.reply > 1024


def request_tokens(body):
    """The estimated prompt of a request plus the reply it allows."""
    return (sum(llm_prompt.estimate_tokens(m["content"]) for m in body["messages"])
            + llm_prompt.OVERHEAD_TOKENS + body["max_tokens"])


LONG = [Turn("s1", f"m-{n}", SESSION, "Ravi", "user",
             f"Note {n}: " + "we talked about the release plan and the flaky test on the build server again " * 5)
        for n in range(60)]


def test_a_long_session_is_split_into_batches_that_fit_a_small_context():
    small = llm_prompt.budget(4096)
    with CannedLLM([(200, completion('{"memory_items": []}'))] * 60) as llm:
        assert extract_llm(LONG, SESSION, {**llm.settings, "context_tokens": 4096}) == []
    assert len(llm.requests) > 1
    seen = []
    for request in llm.requests:
        prompt = request["body"]["messages"][1]["content"]
        assert llm_prompt.estimate_tokens(prompt) <= small.turns + small.held
        assert request_tokens(request["body"]) + small.retry <= small.context
        seen += [line.split("]")[0][1:] for line in prompt.splitlines() if line.startswith("[")]
    assert seen == [t.id for t in LONG]  # every turn once, in order


def test_a_hosted_model_reads_the_same_session_in_one_request():
    with CannedLLM([(200, completion('{"memory_items": []}'))]) as llm:
        assert extract_llm(LONG, SESSION, llm.settings) == []  # the default context_tokens (32,000)
    (request,) = llm.requests
    prompt = request["body"]["messages"][1]["content"]
    assert [line.split("]")[0][1:] for line in prompt.splitlines() if line.startswith("[")] == [t.id for t in LONG]


@pytest.mark.parametrize("context", [4096, 32000])
def test_a_runaway_reply_and_a_huge_message_still_fit_on_the_retry(context):
    huge = [Turn("s1", "m-1", SESSION, "Ravi", "user", "log line 12345 failed " * 20000)]
    runaway = '{"memory_items": [' + '{"content": "x", ' * 30000
    with CannedLLM([(200, completion(runaway)), (200, completion(runaway))]) as llm:
        with pytest.raises(LLMError, match="did not validate twice"):
            extract_llm(huge, SESSION, {**llm.settings, "context_tokens": context})
    prompt = llm.requests[0]["body"]["messages"][1]["content"]
    assert prompt.endswith("…") and "[m-1]" in prompt
    retry = llm.requests[1]["body"]
    assert retry["messages"][2]["content"].startswith('{"memory_items": [') and \
        retry["messages"][2]["content"].endswith("…")
    assert request_tokens(retry) <= context


@pytest.mark.parametrize("given, wanted", [
    (("I", "city", "Chicago"), ("user", "home", "Chicago")),
    (("the user", "lives_in", "Denver"), ("user", "home", "Denver")),
    (("User", "Location of residence", "Denver"), ("user", "home", "Denver")),
    (("我", "居住地", "上海"), ("user", "home", "上海")),
    (("Ravi", "works_at", "Acme"), ("Ravi", "employer", "Acme")),
    (("user", "company", "Acme"), ("user", "employer", "Acme")),
    (("user", "Job Title", "Nurse"), ("user", "job", "Nurse")),
    (("user", "occupation", "nurse"), ("user", "job", "nurse")),
    (("user", "likes", "Running."), ("user", "likes:running", "yes")),
    (("user", "dislikes", "running"), ("user", "likes:running", "no")),
    (("user", "dislikes:running", "yes"), ("user", "likes:running", "no")),
    (("user", "likes:running", "No"), ("user", "likes:running", "no")),
    (("用户", "喜欢:咖啡", "不"), ("user", "likes:咖啡", "no")),
    (("user", "favourite_color", "blue"), ("user", "favorite:color", "blue")),
    (("user", "wife", "Ana"), ("user", "family:wife", "Ana")),
    (("user", "cat", "Miso"), ("user", "pet:cat", "Miso")),
    (("user", "Wedding Date", "2026-12-20"), ("user", "wedding_date", "2026-12-20")),
    (("Alice", None, None), ("Alice", None, None)),
])
def test_llm_slots_are_put_in_the_offline_extractors_terms(given, wanted):
    assert normalise_slot(*given) == wanted


def test_a_slot_without_a_subject_is_the_speakers():
    assert normalise_slot(None, "home", "Porto", speaker="user") == ("user", "home", "Porto")
    assert normalise_slot("", "home", "Porto", speaker="Caroline") == ("Caroline", "home", "Porto")


# ---- through a real extraction run: the run report, the notes, the write policy --------------

@pytest.fixture
def vault(tmp_path, embedder, monkeypatch):
    """A fresh vault whose `extract` embeds with the shared model; the clock after the sessions."""
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    root = tmp_path / "vault"
    api.init(root)
    return root


def memory_notes(root):
    return {note.statement(): note for note in map(read_note, (root / "Memory").rglob("*.md"))
            if note.type in ("fact", "preference", "event", "procedure")}


def test_extract_llm_writes_the_valid_items_and_reports_the_invalid_one(vault, tmp_path):
    transcript = write_jsonl(tmp_path / "porto.jsonl", "porto", [
        ("user", "I live in Porto."), ("user", "I play the cello every evening."),
        ("user", "I work at Acme as a nurse."), ("user", "My sister Ana lives in Lisbon.")], speaker="user")
    reply = {"memory_items": [
        item("The user lives in Porto.", "j-0", subject="user", attribute="home", value="Porto"),
        item("The user works at Acme.", "j-2", subject="user", attribute="company", value="Acme"),
        item("The user's sister Ana lives in Lisbon.", "j-3"),
        {**item("The user plays the cello.", "j-1"), "importance": "high"}]}
    with CannedLLM([(200, completion(json.dumps(reply)))]) as llm:
        llm.configure(vault)
        result = CliRunner().invoke(cli, ["--vault", str(vault), "extract", str(transcript), "--llm", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["created"] == 3 and len(llm.requests) == 1
    assert report["warnings"] == ["session porto: memory_items[3] left out: memory_items[3].importance "
                                  "must be a number from 0 to 1, not 'high'"]
    notes = memory_notes(vault)
    assert sorted(notes) == ["The user lives in Porto.", "The user works at Acme.",
                             "The user's sister Ana lives in Lisbon."]  # no cello: not the offline extractor
    acme = notes["The user works at Acme."]
    assert (acme.get("subject"), acme.get("attribute"), acme.get("value")) == ("user", "employer", "Acme")
    assert notes["The user lives in Porto."].get("valid_from") == date(2026, 12, 1)  # the turn's day


def test_a_fully_invalid_reply_falls_back_to_the_offline_extractor_with_a_warning(vault, tmp_path):
    transcript = write_jsonl(tmp_path / "cello.jsonl", "cello", [("user", "I play the cello every evening.")],
                             speaker="user")
    bad = completion(json.dumps({"memory_items": [{**item("x", "j-0"), "type": "opinion"}]}))
    with CannedLLM([(200, bad), (200, bad)]) as llm:
        llm.configure(vault)
        report = api.Memory(vault).extract([transcript], llm=True)
    (warning,) = report["warnings"]
    assert warning.startswith("session cello: LLM extraction failed") and "offline extractor" in warning
    assert "memory_items[0].type" in warning
    assert any("cello" in statement for statement in memory_notes(vault))


def test_llm_synonym_attributes_from_two_sessions_supersede(vault, tmp_path):
    chicago = write_jsonl(tmp_path / "s1.jsonl", "s1", [("user", "I live in Chicago.")], prefix="a",
                          speaker="user", start=datetime(2026, 9, 1, 9, 0))
    denver = write_jsonl(tmp_path / "s2.jsonl", "s2", [("user", "We moved to Denver last month.")],
                         prefix="b", speaker="user", start=datetime(2026, 10, 12, 9, 0))
    first = {"memory_items": [item("The user lives in Chicago.", "a-0", subject="The user",
                                   attribute="city", value="Chicago")]}
    second = {"memory_items": [item("The user moved to Denver.", "b-0", attribute="lives_in", value="Denver")]}
    with CannedLLM([(200, completion(json.dumps(first))), (200, completion(json.dumps(second)))]) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        assert mem.extract([chicago], llm=True)["warnings"] == []
        report = mem.extract([denver], llm=True)
    assert len(llm.requests) == 2
    assert (report["superseded"], report["warnings"]) == (1, [])
    notes = memory_notes(vault)
    old, new = notes["The user lives in Chicago."], notes["The user moved to Denver."]
    assert (old.status, new.status) == ("superseded", "active")
    assert (old.get("attribute"), new.get("attribute")) == ("home", "home")
    assert old.get("valid_to") == date(2026, 10, 12) and new.get("valid_from") == date(2026, 10, 12)


def test_an_item_copying_the_instructions_own_example_is_left_out():
    copied = {"content": "The user is allergic to peanuts.", "type": "fact", "importance": 0.5,
              "source_messages": ["D1:2"]}
    real = {"content": "The user adopted a cat called Miso.", "type": "fact", "importance": 0.5,
            "source_messages": ["D1:2"]}
    said = {"D1:2": "We adopted a cat last week, her name is Miso."}
    items, problems = parse_memory_items(json.dumps({"memory_items": [copied, real]}), said)
    assert [i["content"] for i in items] == ["The user adopted a cat called Miso."]
    assert problems and "copies an example of the instructions" in problems[0]
    # ...but the same words are kept when the conversation says them.
    said = {"D1:2": "Please remember that I'm allergic to peanuts."}
    items, problems = parse_memory_items(json.dumps({"memory_items": [copied]}), said)
    assert [i["content"] for i in items] == ["The user is allergic to peanuts."] and problems == []


def test_session_seconds_sends_the_batches_left_to_the_offline_extractor(monkeypatch):
    from vaultmem.extract.llm import extract_session

    monkeypatch.setattr(llm_module, "MAX_BATCH_TURNS", 1)  # one request per message
    now = [0.0]

    def slow_clock():  # each look at the clock: the model took 4 s more
        now[0] += 4
        return now[0]

    with CannedLLM([(200, completion(json.dumps({"memory_items": []})))] * 3) as llm:
        outcome = extract_session(TURNS, SESSION, llm.settings, seconds=6, clock=slow_clock)
    assert len(llm.requests) == 1 and outcome.timed_out and not outcome.endpoint_failed
    (warning,) = outcome.warnings
    assert "session_seconds (6 s)" in warning and "messages D1:2–D1:3" in warning
    assert any("Boston" in c.content for c in outcome.candidates)  # the rules read the rest


def test_an_endpoint_failure_is_told_apart_so_a_later_run_asks_again():
    from vaultmem.extract.llm import extract_session

    with CannedLLM([(503, {"error": "loading model"})]) as llm:
        outcome = extract_session(TURNS, SESSION, llm.settings)
    assert outcome.endpoint_failed and not outcome.timed_out and outcome.candidates
