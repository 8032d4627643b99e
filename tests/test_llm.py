"""The LLM extractor against a real HTTP server on loopback that plays canned chat completions."""

import json
from dataclasses import dataclass
from datetime import date, datetime

import pytest

from tests.helpers.llm_endpoint import LoopbackLLM, completion
from vaultmem.errors import LLMError
from vaultmem.extract.llm import (
    LLMSettings, extract_llm, extract_with_fallback, parse_memory_items, render_turns)


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
    ({"content": "x", "type": "fact", "importance": 1.5, "source_messages": ["D1:2"]}, "importance"),
    ({"content": "x", "type": "fact", "importance": True, "source_messages": ["D1:2"]}, "importance"),
    ({"content": "x", "type": "fact", "importance": 0.5, "source_messages": []}, "source_messages"),
    ({"content": "x", "type": "fact", "importance": 0.5, "source_messages": ["D1:2"],
      "valid_from": "last week"}, "valid_from"),
])
def test_validation_names_the_broken_field(item, problem):
    with pytest.raises(ValueError, match=rf"memory_items\[0\]\.{problem}"):
        parse_memory_items(json.dumps({"memory_items": [item]}), ["D1:2"])


def test_fenced_json_is_accepted():
    items = parse_memory_items("```json\n" + json.dumps(VALID) + "\n```", ["D1:2", "D1:3"])
    assert [i["source_messages"] for i in items] == [["D1:2"], ["D1:3"]]


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
