"""`extract --llm`: the model decides add, update, merge or ignore against the nearest memories
held (extract/review.py), and the write policy checks what it says. Real extraction runs into a
real vault; the model is an endpoint on loopback that answers what each test queues."""

import json
from datetime import date, datetime

import pytest

from tests.helpers.llm_endpoint import completion
from tests.helpers.transcripts import write_jsonl
from tests.test_llm import CannedLLM, item, memory_notes, vault  # noqa: F401 (the fixture)
from vaultmem import api
from vaultmem.extract.review import ACTIONS, REVIEW_PROMPT, parse_decisions

FIRST, SECOND = datetime(2026, 9, 1, 9, 0), datetime(2026, 10, 20, 9, 0)


def extracted(items):
    return (200, completion(json.dumps({"memory_items": items})))


def decided(*decisions):
    return (200, completion(json.dumps({"decisions": [
        {"new": new, "action": action, "target": target} for new, action, target in decisions]})))


def two_sessions(tmp_path, first_text, second_texts):
    one = write_jsonl(tmp_path / "s1.jsonl", "s1", [("user", first_text)], prefix="a", speaker="user",
                      start=FIRST)
    two = write_jsonl(tmp_path / "s2.jsonl", "s2", [("user", t) for t in second_texts], prefix="b",
                      speaker="user", start=SECOND)
    return one, two


def run(vault, tmp_path, first, second, replies):
    """Extract two sessions with the model; the requests and the second run's report."""
    one, two = two_sessions(tmp_path, first[0], [text for text, _item in second])
    with CannedLLM([extracted([item(first[1], "a-0")])]
                   + [extracted([item(content, f"b-{n}") for n, (_t, content) in enumerate(second)])]
                   + replies) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        assert mem.extract([one], llm=True)["warnings"] == []
        report = mem.extract([two], llm=True)
    return llm.requests, report


def test_an_update_the_rules_cannot_see_supersedes_the_held_memory(vault, tmp_path):
    requests, report = run(vault, tmp_path,
                           ("I go to Crunch Fitness every morning before work.", "The user goes to Crunch Fitness every morning."),
                           [("Switched gyms, it's Brooklyn Boulders and climbing now.",
                             "The user now climbs at Brooklyn Boulders instead of going to the gym.")],
                           [decided(("N1", "update", "H1"))])
    assert len(requests) == 3  # extract, extract, review
    review = requests[2]["body"]["messages"]
    assert review[0]["content"] == REVIEW_PROMPT
    assert "[H1] The user goes to Crunch Fitness every morning." in review[1]["content"]
    assert "[N1] The user now climbs at Brooklyn Boulders instead of going to the gym." in review[1]["content"]
    assert (report["superseded"], report["warnings"]) == (1, [])
    notes = memory_notes(vault)
    old = notes["The user goes to Crunch Fitness every morning."]
    new = notes["The user now climbs at Brooklyn Boulders instead of going to the gym."]
    assert (old.status, new.status) == ("superseded", "active")
    assert old.get("valid_to") == date(2026, 10, 20)
    (decision,) = [d for d in report["decisions"] if d["action"] == "superseded"]
    assert decision["reason"].startswith("the model: updates")


def test_without_the_models_verdict_both_are_kept(vault, tmp_path):
    """The same two sessions, the model answering `add`: nothing is superseded."""
    _requests, report = run(vault, tmp_path,
                            ("I go to Crunch Fitness every morning before work.", "The user goes to Crunch Fitness every morning."),
                            [("Switched gyms, it's Brooklyn Boulders and climbing now.",
                              "The user now climbs at Brooklyn Boulders instead of going to the gym.")],
                            [decided(("N1", "add", None))])
    assert report["superseded"] == 0 and report["warnings"] == []
    assert {n.status for n in memory_notes(vault).values()} == {"active"}


@pytest.mark.parametrize("reply, warned", [
    ((200, completion("Sure! N1 updates H1.")), "were unusable (not valid JSON"),
    ((200, completion(json.dumps({"verdicts": []}))), 'were unusable (not a JSON object with a "decisions" list)'),
    ((500, {"error": "out of memory"}), "failed ("),
])
def test_a_nonsense_or_failed_review_leaves_the_rules_to_decide_and_says_so(vault, tmp_path, reply, warned):
    _requests, report = run(vault, tmp_path,
                            ("I go to Crunch Fitness every morning before work.", "The user goes to Crunch Fitness every morning."),
                            [("Switched gyms, it's Brooklyn Boulders and climbing now.",
                              "The user now climbs at Brooklyn Boulders instead of going to the gym.")],
                            [reply])
    (warning,) = report["warnings"]
    assert warning.startswith("session s2: the model's update decisions") and warned in warning
    assert warning.endswith("the write rules decided alone")
    notes = memory_notes(vault)
    assert len(notes) == 2 and {n.status for n in notes.values()} == {"active"}  # nothing lost


def test_a_review_that_times_out_loses_nothing(vault, tmp_path, monkeypatch):
    class Slow(CannedLLM):
        def answer(self, body):
            if "decisions" in body["messages"][0]["content"]:
                import time
                time.sleep(2)
            return super().answer(body)

    one, two = two_sessions(tmp_path, "Woodworking is my big hobby these days.",
                            ["Honestly film photography has replaced woodworking for me."])
    with Slow([extracted([item("The user's main hobby is woodworking.", "a-0")]),
               extracted([item("The user's main hobby is now film photography.", "b-0")]),
               decided(("N1", "update", "H1"))]) as llm:
        llm.configure(vault)
        config = vault / ".vaultmem" / "config.toml"
        config.write_text(config.read_text(encoding="utf-8").replace("timeout = 5", "timeout = 0.5"),
                          encoding="utf-8")
        mem = api.Memory(vault)
        mem.extract([one], llm=True)
        report = mem.extract([two], llm=True)
    (warning,) = report["warnings"]
    assert "update decisions failed" in warning
    assert {n.status for n in memory_notes(vault).values()} == {"active"}


def test_an_update_of_an_unrelated_memory_is_refused(vault, tmp_path):
    class Confused(CannedLLM):
        """Says the dog's news updates whichever held memory is about the user's job."""

        def answer(self, body):
            text = body["messages"][-1]["content"]
            if body["messages"][0]["content"] != REVIEW_PROMPT:  # the extraction, as queued
                return super().answer(body)
            job = next(line[1:].split("]")[0] for line in text.splitlines() if "nurse" in line)
            dog = next(line[1:].split("]")[0] for line in text.splitlines() if "Biscuit" in line and "[N" in line)
            return decided((dog, "update", job))[0], decided((dog, "update", job))[1]

    one = write_jsonl(tmp_path / "s1.jsonl", "s1", [("user", "Our dog Biscuit had knee surgery last week."),
                                                    ("user", "I work as a nurse at St Mary's.")],
                      prefix="a", speaker="user", start=FIRST)
    two = write_jsonl(tmp_path / "s2.jsonl", "s2", [("user", "Biscuit is walking fine again after the surgery."),
                                                    ("user", "I'm on night shifts at St Mary's now.")],
                      prefix="b", speaker="user", start=SECOND)
    with Confused([extracted([item("The user's dog Biscuit had knee surgery.", "a-0"),
                              item("The user works as a nurse at St Mary's hospital.", "a-1")]),
                   extracted([item("The user's dog Biscuit is walking fine again after his knee surgery.", "b-0"),
                              item("The user, a nurse, now works night shifts at St Mary's hospital.", "b-1")])]) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        mem.extract([one], llm=True)
        report = mem.extract([two], llm=True)
    assert len(llm.requests) == 3
    (warning,) = report["warnings"]
    assert "updates Memory/" in warning and "shares too little with it" in warning and warning.endswith("both kept")
    notes = memory_notes(vault)
    assert len(notes) == 4 and {n.status for n in notes.values()} == {"active"}


def test_a_change_only_talked_of_updates_nothing(vault, tmp_path):
    _requests, report = run(vault, tmp_path,
                            ("I've been doing CrossFit three times a week.", "The user does CrossFit three times a week."),
                            [("I'm thinking about switching from CrossFit to climbing.",
                              "The user is thinking about switching from CrossFit to climbing.")],
                            [decided(("N1", "update", "H1"))])
    (warning,) = report["warnings"]
    assert "speaks of a change that did not happen" in warning
    assert {n.status for n in memory_notes(vault).values()} == {"active"}


def test_a_merge_adds_the_turn_to_the_held_memory_and_ignore_writes_nothing(vault, tmp_path):
    _requests, report = run(vault, tmp_path,
                            ("I'm allergic to peanuts.", "The user is allergic to peanuts."),
                            [("Reminder that peanuts are a no for me, allergy.", "The user has a peanut allergy."),
                             ("Yeah the peanut allergy thing.", "The user avoids anything with peanuts in it.")],
                            [decided(("N1", "merge", "H1"), ("N2", "ignore", "[H1]"))])
    assert report["warnings"] == [] and report["created"] == 0
    assert [d["reason"].split(" ")[:3] for d in report["decisions"]] == [["the", "model:", "says"],
                                                                        ["the", "model:", "already"]]
    (note,) = memory_notes(vault).values()
    assert note.statement() == "The user is allergic to peanuts."
    assert any("#^b-0" in str(s) for s in note.get("sources"))  # the merged turn is a source now
    assert not any("#^b-1" in str(s) for s in note.get("sources"))


def test_a_merge_of_memories_that_are_not_near_duplicates_is_refused(vault, tmp_path):
    _requests, report = run(vault, tmp_path,
                            ("I'm allergic to peanuts.", "The user is allergic to peanuts."),
                            [("My sister is allergic to shellfish.", "The user's sister is allergic to shellfish.")],
                            [decided(("N1", "merge", "H1"))])
    (warning,) = report["warnings"]
    assert "not a near-duplicate" in warning and warning.endswith("kept as new")
    assert len(memory_notes(vault)) == 2


def test_a_slot_the_rules_supersede_is_not_asked_about(vault, tmp_path):
    one, two = two_sessions(tmp_path, "I live in Chicago.", ["We moved to Denver."])
    with CannedLLM([extracted([item("The user lives in Chicago.", "a-0", attribute="home", value="Chicago")]),
                    extracted([item("The user moved to Denver.", "b-0", attribute="home", value="Denver")])]) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        mem.extract([one], llm=True)
        report = mem.extract([two], llm=True)
    assert len(llm.requests) == 2 and report["superseded"] == 1 and report["warnings"] == []


def test_decisions_are_read_loosely_and_checked_item_by_item():
    news, keys = {"N1": object(), "N2": object(), "N3": object()}, {"H1": object()}
    reply = json.dumps({"decisions": [
        {"new": "[N1]", "action": "UPDATE", "target": "H1"},
        {"new": 2, "action": "replace", "target": "H1"},
        {"new": "N3", "action": "merge", "target": "H7"},
        {"new": "N9", "action": "add"}]})
    verdicts, problems = parse_decisions("```json\n" + reply + "\n```", news, keys)
    assert list(verdicts) == [id(news["N1"])] and verdicts[id(news["N1"])].target is keys["H1"]
    assert [p.split(":")[0] for p in problems] == ["decisions[1] left out", "decisions[2] left out",
                                                   "decisions[3] left out"]
    assert "'replace' is not one of " + ", ".join(ACTIONS) in problems[0]
    assert "needs a held memory as target, not 'H7'" in problems[1]
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_decisions("N1: update H1", news, keys)


def test_with_the_rules_extractor_the_model_only_reviews(vault, tmp_path):
    config = vault / ".vaultmem" / "config.toml"
    one, two = two_sessions(tmp_path, "I play tennis at the Riverside Club every Saturday.",
                            ["These days I play padel at the Harbour Padel Centre instead of tennis."])
    with CannedLLM([decided(("N1", "update", "H1"))]) as llm:
        llm.configure(vault)
        config.write_text(config.read_text(encoding="utf-8").replace("[llm]\n", '[llm]\nextractor = "rules"\n'),
                          encoding="utf-8")
        mem = api.Memory(vault)
        assert mem.extract([one], llm=True)["warnings"] == []  # nothing held yet: no request
        report = mem.extract([two], llm=True)
    (request,) = llm.requests
    assert request["body"]["messages"][0]["content"] == REVIEW_PROMPT
    assert report["superseded"] == 1 and report["warnings"] == []
    statuses = {n.statement(): n.status for n in memory_notes(vault).values()}
    assert sorted(statuses.values()) == ["active", "superseded"]
    assert any("Riverside" in s and status == "superseded" for s, status in statuses.items())
