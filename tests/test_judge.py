"""The model writes the memory and judges it against what is held, in one request a session
(extract/llm.py, extract/judge.py); the write policy checks what it says. Real extraction runs
into a real vault and a real git repo; the model is an endpoint on loopback that answers what
each test queues."""

import json
import subprocess
from datetime import date, datetime

from tests.helpers.llm_endpoint import completion
from tests.helpers.transcripts import write_jsonl
from tests.test_llm import CannedLLM, item, memory_notes, vault  # noqa: F401 (the fixture)
from vaultmem import api
from vaultmem.store.note import read_note

FIRST, SECOND = datetime(2026, 9, 1, 9, 0), datetime(2026, 10, 20, 9, 0)


def reply(*items):
    return (200, completion(json.dumps({"memory_items": list(items)})))


def said(tmp_path, name, texts, start, prefix):
    return write_jsonl(tmp_path / f"{name}.jsonl", name, [("user", t) for t in texts], prefix=prefix,
                       speaker="user", start=start)


def two_runs(vault, tmp_path, first, second, replies):
    """Session one (texts, items), then session two (texts), the model answering `replies`
    to the second; the requests and the second run's report."""
    one = said(tmp_path, "s1", first[0], FIRST, "a")
    two = said(tmp_path, "s2", second, SECOND, "b")
    with CannedLLM([reply(*first[1]), *replies]) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        assert mem.extract([one], llm=True)["warnings"] == []
        report = mem.extract([two], llm=True)
    return llm.requests, report


GYM = (["I go to Crunch Fitness every morning before work."],
       [item("The user goes to Crunch Fitness every morning.", "a-0", action="add")])


def test_one_request_a_session_shows_the_held_memories_and_an_update_supersedes_with_true_dates(vault, tmp_path):
    requests, report = two_runs(vault, tmp_path, GYM, ["Switched gyms last week: it's Brooklyn Boulders now."], [
        reply(item("The user climbs at Brooklyn Boulders.", "b-0", action="update", target="H1",
                   valid_from="2026-10-13", title="The user climbs at Brooklyn Boulders"))])
    assert len(requests) == 2  # one a session: no second request for the update
    second = requests[1]["body"]["messages"][1]["content"]
    assert second.startswith("Held memories:\n[H1] (since 2026-09-01) The user goes to Crunch Fitness every morning.")
    assert (report["superseded"], report["warnings"]) == (1, [])
    notes = memory_notes(vault)
    old, new = notes["The user goes to Crunch Fitness every morning."], notes["The user climbs at Brooklyn Boulders."]
    assert (old.status, new.status) == ("superseded", "active")
    # true from the day the change happened, not the day it was told; the old one until then
    assert new.get("valid_from") == date(2026, 10, 13) and new.get("said") == date(2026, 10, 20)
    assert old.get("valid_to") == date(2026, 10, 13)
    assert new.path.name == "The user climbs at Brooklyn Boulders.md"
    assert report["model_usage"]["calls"] == 1 and report["model_usage"]["sessions"] == 1
    assert report["model_sessions"][0]["decided_by"] == "model" and report["model_sessions"][0]["prompt_tokens"] > 0


def test_an_add_beside_a_held_memory_the_model_saw_keeps_both(vault, tmp_path):
    """The rules would supersede on the slot (both say the user's home); the model saw the held
    memory and says both hold (a second home): its call."""
    first = (["I live in Lisbon."], [item("The user lives in Lisbon.", "a-0", subject="user", attribute="home",
                                          value="Lisbon", action="add")])
    _requests, report = two_runs(vault, tmp_path, first, ["We also have a flat in Porto for the summers."], [
        reply(item("The user also has a summer flat in Porto.", "b-0", subject="user", attribute="home",
                   value="Porto", action="add"))])
    assert report["superseded"] == 0
    assert {n.status for n in memory_notes(vault).values()} == {"active"}


def test_a_merge_replaces_the_held_memory_without_ending_it(vault, tmp_path):
    first = (["We have a dog called Biscuit."], [item("The user has a dog named Biscuit.", "a-0", action="add")])
    _requests, report = two_runs(vault, tmp_path, first, ["Biscuit is a five-year-old beagle, by the way."], [
        reply(item("The user has a five-year-old beagle named Biscuit.", "b-0", action="merge", target="H1"))])
    assert report["warnings"] == []
    notes = memory_notes(vault)
    old, new = notes["The user has a dog named Biscuit."], notes["The user has a five-year-old beagle named Biscuit."]
    assert (old.status, new.status) == ("superseded", "active")
    assert old.get("valid_to") is None  # it did not stop being true
    assert new.get("valid_from") == date(2026, 9, 1)  # what it says held since the first session


def test_ignore_writes_nothing(vault, tmp_path):
    first = (["I'm vegetarian."], [item("The user is vegetarian.", "a-0", action="add")])
    _requests, report = two_runs(vault, tmp_path, first, ["As I said, no meat for me."], [
        reply(item("The user does not eat meat.", "b-0", action="ignore", target="H1"))])
    assert report["created"] == 0 and report["superseded"] == 0
    assert list(memory_notes(vault)) == ["The user is vegetarian."]


def test_an_update_of_an_unrelated_memory_is_refused_and_said(vault, tmp_path):
    first = (["My sister is called Mei."], [item("The user's sister is called Mei.", "a-0", action="add")])
    _requests, report = two_runs(vault, tmp_path, first, ["My sister is called Mei, and I've started baking "
                                                          "sourdough on Sundays."], [
        reply(item("The user bakes sourdough bread on Sundays.", "b-0", action="update", target="H1"))])
    (warning,) = report["warnings"]
    assert "shares nothing with" in warning and "the rules decided" in warning
    assert {n.status for n in memory_notes(vault).values()} == {"active"}


def test_a_change_of_holder_that_shares_no_word_is_the_models_call_when_it_is_near(vault, tmp_path):
    """"The user's boss is Caitlin" updates "Howard is the general manager": no word, no slot in
    common and a cosine under UNRELATED, but Howard is the nearest held memory the model was
    shown, so its update stands; the unrelated bakery stays as it was."""
    first = (["Howard is the general manager, he runs the restaurant where I'm kitchen manager. "
              "I bake sourdough on Sundays."],
             [item("Howard is the general manager of the hotel restaurant where the user is kitchen manager.", "a-0",
                   action="add"),
              item("The user bakes sourdough bread on Sundays.", "a-0", action="add")])
    _requests, report = two_runs(vault, tmp_path, first, ["Howard left. New boss, Caitlin, came over from corporate."], [
        reply(item("The user's boss is Caitlin, who came over from corporate.", "b-0", action="update",
                   target="H1"))])
    notes = memory_notes(vault)
    howard = notes["Howard is the general manager of the hotel restaurant where the user is kitchen manager."]
    assert howard.status == "superseded", report["warnings"]
    assert notes["The user bakes sourdough bread on Sundays."].status == "active"
    assert not [w for w in report["warnings"] if "shares nothing" in w]


def test_a_target_that_was_not_shown_is_kept_as_new_and_said(vault, tmp_path):
    _requests, report = two_runs(vault, tmp_path, GYM, ["I also swim on Fridays."], [
        reply(item("The user swims on Fridays.", "b-0", action="update", target="H7"))])
    (warning,) = report["warnings"]
    assert "'H7'" in warning and "kept as new" in warning
    assert {n.status for n in memory_notes(vault).values()} == {"active"}


def test_a_change_within_one_session_states_the_current_value_and_the_old_one_is_history(vault, tmp_path):
    """The model writes the old value (ended) and the new one as its update (target "N1")."""
    one = said(tmp_path, "s1", ["We moved from Austin to Portland on October 5th."], SECOND, "a")
    austin = item("The user lived in Austin.", "a-0", subject="user", attribute="home", value="Austin",
                  valid_to="2026-10-05", action="add")
    portland = item("The user lives in Portland.", "a-0", subject="user", attribute="home", value="Portland",
                    valid_from="2026-10-05", action="update", target="N1")
    with CannedLLM([reply(austin, portland)]) as llm:
        llm.configure(vault)
        report = api.Memory(vault).extract([one], llm=True)
    assert report["warnings"] == []
    notes = memory_notes(vault)
    assert (notes["The user lived in Austin."].status, notes["The user lives in Portland."].status) == \
        ("superseded", "active")
    assert notes["The user lived in Austin."].get("valid_to") == date(2026, 10, 5)
    hits = api.Memory(vault).search("Where does the user live?", as_of="2026-09-20")["hits"]
    assert "Austin" in hits[0]["text"]
    hits = api.Memory(vault).search("Where does the user live?")["hits"]
    assert "Portland" in hits[0]["text"]


def test_two_updates_of_one_held_memory_in_one_reply_are_both_carried_out(vault, tmp_path):
    """The second update targets a memory the first superseded a moment earlier: it is still
    the model's call (both new memories replace it), not "no longer active"."""
    first = (["I teach maths at a school in Leeds."],
             [item("The user is a maths teacher at a school in Leeds.", "a-0", action="add")])
    _requests, report = two_runs(vault, tmp_path, first,
                                 ["Big news: I quit teaching, I'm a data analyst now, and we moved to York."], [
        reply(item("The user works as a data analyst.", "b-0", action="update", target="H1"),
              item("The user lives in York.", "b-0", action="update", target="H1"))])
    assert report["warnings"] == []
    notes = memory_notes(vault)
    old = notes["The user is a maths teacher at a school in Leeds."]
    assert old.status == "superseded" and len(old.get("superseded_by")) == 2
    assert {notes["The user works as a data analyst."].status, notes["The user lives in York."].status} == {"active"}


def test_a_model_that_writes_a_door_code_costs_a_warning_never_a_memory(vault, tmp_path):
    one = said(tmp_path, "s1", ["The new flat is on Elm Street.", "Code for the building door is 4417#."],
               FIRST, "a")
    leaked = item("The building door code is 4417#.", "a-1", action="add", title="Door code 4417#")
    kept = item("The user lives on Elm Street.", "a-0", action="add")
    with CannedLLM([reply(kept, leaked)]) as llm:
        llm.configure(vault)
        report = api.Memory(vault).extract([one], llm=True)
    assert "4417" not in json.dumps(report)
    assert [d["action"] for d in report["decisions"] if "door" in d["content"].lower()] == ["rejected"]
    assert list(memory_notes(vault)) == ["The user lives on Elm Street."]
    files = "".join(p.read_text(errors="replace") + p.name for p in vault.rglob("*") if p.is_file()
                    and ".git" not in p.parts)
    history = subprocess.run(["git", "-C", str(vault), "log", "-p", "--all"], capture_output=True, text=True).stdout
    assert "4417" not in files and "4417" not in history


def test_what_the_model_marks_secret_is_hidden_from_the_saved_session_too(vault, tmp_path):
    """A security answer the patterns do not know ("the answer I used for my bank was Pemberton
    Road"): the model marks it, and neither the session note, the vault, the run's report nor
    git history holds it; the memory beside it is written. A memory holding a marked code is
    refused; a name the model both marks and remembers stays a memory (a contradiction costs
    the mark, with a warning that does not say what it was)."""
    one = said(tmp_path, "s1", ["The answer I used for my bank was Pemberton Road, don't forget it.",
                                "Grandma set the tv parental thing to 0852.", "My boyfriend Anand starts at Copper Kettle."],
               FIRST, "a")
    items = [item("The user's boyfriend Anand works at Copper Kettle.", "a-2", action="add"),
             item("Grandma's TV parental lock is 0852.", "a-1", action="add")]
    answer = {"memory_items": items, "secrets": ["Pemberton Road", "0852", "Anand", "not in any message"]}
    with CannedLLM([(200, completion(json.dumps(answer)))]) as llm:
        llm.configure(vault)
        report = api.Memory(vault).extract([one], llm=True)
    assert list(memory_notes(vault)) == ["The user's boyfriend Anand works at Copper Kettle."]
    assert [d["action"] for d in report["decisions"] if "parental" in d["content"]] == ["rejected"]
    assert sorted(w.split(": ", 1)[1] for w in report["warnings"]) == [
        "secrets[2] left out: a memory of the same reply names it",
        "secrets[3] left out: no message holds it as written"]
    files = "".join(p.read_text(errors="replace") + p.name for p in vault.rglob("*") if p.is_file()
                    and ".git" not in p.parts)
    history = subprocess.run(["git", "-C", str(vault), "log", "-p", "--all"], capture_output=True, text=True).stdout
    for secret in ("Pemberton", "0852"):
        assert secret not in files and secret not in history and secret not in json.dumps(report)
    session = next((vault / "Memory" / "Sessions").glob("*.md")).read_text()
    assert session.count("[REDACTED:") == 2 and "Anand" in session


def test_a_reply_without_secrets_marks_none():
    from vaultmem.extract.llm_reply import parse_secrets

    said_ = ["my locker is 4821", "I live in Porto"]
    assert parse_secrets(json.dumps({"memory_items": []}), said_) == ([], [])
    assert parse_secrets(json.dumps({"memory_items": [], "secrets": "4821"}), said_) == ([], [])
    found, problems = parse_secrets(json.dumps({"secrets": ["4821", "porto", "", 7, "[REDACTED:pin]"]}), said_)
    assert found == ["4821"] and problems == ["secrets[1] left out: no message holds it as written"]
    found, problems = parse_secrets(json.dumps({"secrets": ["live"]}), said_)
    assert found == [] and problems == ["secrets[0] left out: too plain to be a secret"]


def test_nonsense_leaves_the_session_to_the_rules_and_the_next_run_asks_the_model(vault, tmp_path):
    one = said(tmp_path, "s1", ["I live in Porto and I play the cello."], FIRST, "a")
    nonsense = (200, completion("I'm sorry, I can't help with that."))
    with CannedLLM([nonsense, nonsense]) as llm:
        llm.configure(vault)
        first = api.Memory(vault).extract([one], llm=True)
    assert first["model_usage"]["sessions_by_rules"] == 1
    assert first["model_sessions"][0]["decided_by"] == "model and rules"
    assert "offline extractor" in first["model_sessions"][0]["why"]
    assert first["created"] >= 1  # the rules wrote the session's memories
    session = read_note(next((vault / "Memory" / "Sessions").glob("*.md")))
    assert session.get("extracted_by") is None
    good = reply(item("The user plays the cello.", "a-0", action="add"))
    with CannedLLM([good]) as llm:
        llm.configure(vault)
        again = api.Memory(vault).extract([one], llm=True)
    assert len(llm.requests) == 1 and again["resumed"] == 0
    assert "[H1]" in llm.requests[0]["body"]["messages"][1]["content"]  # the rules' memories, shown
    assert read_note(next((vault / "Memory" / "Sessions").glob("*.md"))).get("extracted_by") == "llm"


def test_entity_hubs_only_for_what_the_model_marks_as_a_name(vault, tmp_path):
    one = said(tmp_path, "s1", ["My brother Tom just got a job at Figma."], FIRST, "a")
    tom = item("The user's brother Tom works at Figma.", "a-0", action="add",
               entities=[{"name": "Tom", "kind": "person"}, {"name": "Figma", "kind": "organization"},
                         {"name": "new job", "kind": "other"}])
    with CannedLLM([reply(tom)]) as llm:
        llm.configure(vault)
        api.Memory(vault).extract([one], llm=True)
    hubs = sorted(p.stem for p in (vault / "Memory" / "Entities").glob("*.md"))
    assert hubs == ["Figma", "Tom"]


def test_an_update_may_replace_several_held_memories(vault, tmp_path):
    """The move happened: it replaces the old home and the plan to move, in one item."""
    first = (["I live in Cleveland. If Noor gets the Raleigh job we'll probably move to Raleigh."],
             [item("The user lives in Cleveland.", "a-0", subject="user", attribute="home", value="Cleveland",
                   action="add"),
              item("The user would probably move to Raleigh if Noor gets the job there.", "a-0", action="add")])
    requests, report = two_runs(vault, tmp_path, first, ["We moved to Raleigh last Saturday!"], [
        reply(item("The user lives in Raleigh.", "b-0", action="update", target=["H1", "H2", "H9"]))])
    assert report["superseded"] == 2, (requests[1]["body"]["messages"][1]["content"], report)
    assert any("'H9'" in w and "left out of its targets" in w for w in report["warnings"])
    notes = memory_notes(vault)
    assert notes["The user lives in Cleveland."].status == "superseded"
    assert notes["The user would probably move to Raleigh if Noor gets the job there."].status == "superseded"
    assert notes["The user lives in Raleigh."].status == "active"


class KeyedLLM(CannedLLM):
    """Answers a queued function of the request (for a reply that names held memories by the
    keys the request gave them) or a queued response."""

    def answer(self, body):
        response = self.responses.pop(0)
        return response(body["messages"][1]["content"]) if callable(response) else response


def held_key(prompt: str, text: str) -> str:
    return next(line[1:line.index("]")] for line in prompt.splitlines() if line.startswith("[H") and text in line)


def updates_three_held(vault, tmp_path, first: str, second: str, held: list, new: tuple):
    """Session one says `first` and the model writes `held` ((text, attribute, value) each);
    session two says `second` and the model writes `new` (text, attribute, value) as an update
    of all three, listed in `held`'s order. The notes by statement, and the second report."""
    one = said(tmp_path, "s1", [first], FIRST, "a")
    two = said(tmp_path, "s2", [second], SECOND, "b")

    def reply_two(prompt):
        keys = [held_key(prompt, text) for text, _attribute, _value in held]
        return reply(item(new[0], "b-0", action="update", target=keys, subject="user", attribute=new[1],
                          value=new[2]))

    with KeyedLLM([reply(*(item(text, "a-0", subject="user", attribute=attribute, value=value, action="add")
                           for text, attribute, value in held)),
                   reply_two]) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        assert mem.extract([one], llm=True)["warnings"] == []
        report = mem.extract([two], llm=True)
    return memory_notes(vault), report


def test_an_update_also_replaces_a_memory_that_shares_the_old_value_but_not_one_that_shares_nothing(vault, tmp_path):
    """The new diet replaces the keto diet and the plan to batch-prep keto lunches (which shares
    "keto" with the diet it updates, not a word with the new statement); the cat stays."""
    diet, muffins, cat = ("The user follows a keto diet.", "The user batch-preps egg muffins with keto on Sundays.",
                          "The user's cat is named Miso.")
    notes, report = updates_three_held(
        vault, tmp_path, "I'm on keto. I batch-prep keto egg muffins on Sundays. Our cat is Miso.",
        "I've switched to a Mediterranean diet this month.",
        [(diet, "diet", "keto"), (muffins, "lunch_prep", "keto muffins"), (cat, "pet:cat", "Miso")],
        ("The user follows a Mediterranean diet.", "diet", "Mediterranean"))
    assert notes[diet].status == "superseded" and notes[muffins].status == "superseded", report
    assert notes[cat].status == "active"
    assert notes[muffins].get("superseded_by") == notes[diet].get("superseded_by")
    (warning,) = [w for w in report["warnings"] if "also replaces" in w]
    assert notes[cat].path.name in warning and warning.endswith("which it shares nothing with; kept")


def test_an_update_listing_a_plan_first_is_carried_out_on_the_memory_it_is_related_to(vault, tmp_path):
    """The model lists the farewell planned at the old job before the old job it replaces: the
    new job shares nothing with the farewell, but the update leads with the old job (the same
    slot) and the farewell goes with it (it names the old employer); the cat stays."""
    plan, job, cat = ("The team at Lantu plans a farewell lunch on Friday.", "The user works at Lantu.",
                      "The user's cat is named Miso.")
    notes, report = updates_three_held(
        vault, tmp_path, "I've worked at Lantu for three years; my team there plans a farewell lunch on Friday. "
                         "Our cat is Miso.",
        "Two weeks in at Heying now, the Monday meetings are long.",
        [(plan, "farewell", "Friday"), (job, "employer", "Lantu"), (cat, "pet:cat", "Miso")],
        ("The user is employed by Heying.", "employer", "Heying"))
    assert (notes[plan].status, notes[job].status, notes[cat].status) == ("superseded", "superseded", "active"), report
    assert notes[plan].get("superseded_by") == notes[job].get("superseded_by")
    assert [w for w in report["warnings"] if "shares nothing" in w and "Miso" not in w] == [], report["warnings"]
    assert any("Miso" in w and "shares nothing" in w for w in report["warnings"]), report["warnings"]


def test_an_update_also_replaces_a_memory_related_only_to_another_it_replaces(vault, tmp_path):
    """The new job leads with the offer it fulfils (both name Heying) and lists the plan to leave
    Lantu before the job at Lantu: the plan shares nothing with the new job nor the offer, but
    names Lantu as the job it replaces does, so it goes too, whatever the order. One hop only:
    the plan to adopt a beagle shares "plans" with the plan to leave alone, so it stays, as
    does the cat."""
    offer, leave, job, dog, cat = ("The user has an offer from Heying, starting in May.",
                                   "The user plans to quit Lantu.", "The user works at Lantu.",
                                   "The user plans to adopt a beagle next spring.", "The user's cat is named Miso.")
    notes, report = updates_three_held(
        vault, tmp_path, "Got an offer from Heying for May, so I'm quitting Lantu where I work now. We plan to "
                         "adopt a beagle next spring. Our cat is Miso.",
        "First week at Heying done!",
        [(offer, "next_employer", "Heying"), (leave, "resignation", "plans to quit"), (job, "employer", "Lantu"),
         (dog, "pet_plan", "beagle"), (cat, "pet:cat", "Miso")],
        ("The user is employed by Heying.", "employer", "Heying"))
    assert [notes[t].status for t in (offer, leave, job, dog, cat)] == ["superseded"] * 3 + ["active"] * 2, report
    warnings = [w for w in report["warnings"] if "shares nothing" in w]
    assert sorted(warnings) == sorted(w for w in warnings if notes[cat].path.name in w or notes[dog].path.name in w)
    assert len(warnings) == 2, warnings


def test_an_update_of_a_slot_the_model_named_at_more_length_is_its_call(vault, tmp_path):
    """The model names the slot "learning" in one session and "learning_language" in the next:
    one slot, so its update stands though the statements share no word and lie far apart."""
    old, new = "The user is studying Cantonese.", "Every morning Grandma Lim teaches the user Hokkien over tea."
    one = said(tmp_path, "s1", ["I'm studying Cantonese. Grandma Lim lives in Penang, she has tea every morning."],
               FIRST, "a")
    two = said(tmp_path, "s2", ["Dropped Cantonese: Grandma Lim teaches me Hokkien over tea every morning now."],
               SECOND, "b")
    with KeyedLLM([reply(item(old, "a-0", action="add", subject="user", attribute="learning", value="Cantonese"),
                         item("Grandma Lim lives in Penang.", "a-0", action="add"),
                         item("Grandma Lim has tea every morning.", "a-0", action="add")),
                   lambda prompt: reply(item(new, "b-0", action="update", target=held_key(prompt, old), subject="user",
                                             attribute="learning_language", value="Hokkien"))]) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        assert mem.extract([one], llm=True)["warnings"] == []
        report = mem.extract([two], llm=True)
    assert not [w for w in report["warnings"] if "shares nothing" in w], report["warnings"]
    notes = memory_notes(vault)
    assert (notes[old].status, notes[new].status) == ("superseded", "active")


def test_kin_slots():
    from vaultmem.extract.judge import kin_slots

    assert kin_slots("learning", "learning_language") and kin_slots("Diet", "diet")
    assert not kin_slots("family:sister", "family:husband") and not kin_slots("job", "") \
        and not kin_slots("learn", "learning")
    # a name of the model's own opening with one the prompt gives is another slot
    assert not kin_slots("home", "home_office") and not kin_slots("job_history", "job") \
        and not kin_slots("pet:cat", "pet:cat_food")


def test_a_chinese_memory_carries_its_english_name_and_an_english_question_finds_it(vault, tmp_path):
    """The model names a statement written in Chinese in English too (`alias`): the note gets
    Obsidian's `aliases`, the index reads it, and an English question finds the memory in a
    vault whose model reads English only."""
    one = said(tmp_path, "s1", ["最近在学粤语, because my 老公 family 都是香港人"], FIRST, "a")
    with CannedLLM([reply(item("用户在学粤语。", "a-0", title="用户在学粤语", alias="The user is learning Cantonese",
                               action="add"))]) as llm:
        llm.configure(vault)
        mem = api.Memory(vault)
        assert mem.extract([one], llm=True)["warnings"] == []
    note = memory_notes(vault)["用户在学粤语。"]
    assert note.get("aliases") == ["The user is learning Cantonese"]
    assert note.path.name == "用户在学粤语.md"
    hits = [h for h in mem.search("Which language is the user learning?")["hits"] if h["type"] != "session"]
    assert hits and hits[0]["text"] == "用户在学粤语。"


def unit(*xs):
    import numpy as np

    v = np.zeros(8, dtype=np.float32)
    v[:len(xs)] = xs
    return v / np.linalg.norm(v)


def test_the_lead_of_an_update_is_a_memory_still_held_and_near_counts_only_what_was_shown():
    """An earlier memory of the run already replaced "works at Lantu": a later update listing
    [farewell, job] cannot lead with the job (superseded twice), and the farewell, unrelated,
    is refused. An earlier item of the same reply was never shown: `near` does not vouch for it."""
    from vaultmem.extract.judge import judge, near
    from vaultmem.extract.llm import Verdict
    from vaultmem.policy.candidate import Candidate
    from vaultmem.policy.decide import Decision
    from vaultmem.policy.pool import Existing, Pool

    new = unit(1, 0, 0)
    job = Existing("j", "Memory/Facts/Works at Lantu.md", "The user works at Lantu.", "fact", "default",
                   "user", "employer", "Lantu", vector=unit(0.2, 1))
    plan = Existing("p", "Memory/Events/Farewell.md", "The team plans a farewell lunch on Friday.", "event",
                    "default", vector=unit(0.05, 1))
    pool = Pool([job, plan])
    pool.discard(job)
    cand = Candidate("The user is employed by Heying.", "fact", subject="user", attribute="employer",
                     value="Heying", origin="model", verdict=Verdict("update", plan, [job]))
    decision, warning = judge(Decision("created", "rules", cand.content, "fact", candidate=cand), pool, new,
                              {id(job), id(plan)}, {})
    assert decision.target is not job and "shares nothing" in (warning or ""), (decision.action, warning)
    made = Existing("", "Memory/Facts/Quiet.md", "The office is quiet.", "fact", "default", vector=unit(0.4, 1))
    assert not near(made, new, Pool([plan, made]), {id(plan)})
    assert near(made, new, Pool([plan, made]), {id(plan), id(made)})
