"""Time-bound memories (issue 8): past its `valid_to` day a memory is no longer current.

It leaves default search, context and the exported hot set, but stays findable with `--all`
and `--as-of` a day it held. The clock is faked with VAULTMEM_NOW; everything else is real
(vault, git, LanceDB, the bundled model)."""

import json
import shutil
from datetime import date

import pytest
from click.testing import CliRunner

from vaultmem import api
from vaultmem.cli import cli
from vaultmem.memory.memories import write_memory
from vaultmem.store.note import read_note
from vaultmem.store.values import as_date

NOW = "2026-12-10T09:00:00"   # a Thursday


@pytest.fixture
def mem(tmp_path, monkeypatch, embedder):
    monkeypatch.setenv("VAULTMEM_NOW", NOW)
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    root = tmp_path / "vault"
    api.init(root)
    memory = api.Memory(root, embedder=embedder)
    return memory


def write(mem, text, type="event", **dates):
    path = write_memory(mem.vault, text=text, type=type, user="default", importance=0.7,
                        valid_from=dates.get("valid_from"), valid_to=dates.get("valid_to"))
    mem.reindex()
    return read_note(path).id


def ids(result) -> set:
    return {hit["id"] for hit in result["hits"]}


def test_expired_memory_leaves_default_retrieval_but_not_all_or_as_of(mem, tmp_path):
    tokyo = write(mem, "The user is staying in Tokyo for a conference.",
                  valid_from=date(2026, 12, 1), valid_to=date(2026, 12, 4))
    kyoto = write(mem, "The user is staying in Kyoto at a ryokan.",
                  valid_from=date(2026, 12, 5), valid_to=date(2026, 12, 10))  # last day: today
    osaka = write(mem, "The user has a flat in Osaka.", type="fact")
    query = "Where is the user staying in Japan?"

    current = ids(mem.search(query))
    assert tokyo not in current
    assert {kyoto, osaka} <= current  # valid_to is the last day it holds
    assert tokyo in ids(mem.search(query, all=True))
    assert tokyo in ids(mem.search(query, as_of="2026-12-03"))
    assert tokyo not in ids(mem.search(query, as_of="2026-12-05"))
    assert kyoto not in ids(mem.search(query, as_of="2026-12-03"))  # not yet valid then

    block = mem.context(query, budget=400)
    assert tokyo not in block["ids"] and "Tokyo" not in block["text"]
    assert kyoto in block["ids"]

    exported = mem.export("claude", out=tmp_path / "CLAUDE.md")
    assert tokyo not in exported["ids"] and kyoto in exported["ids"]
    assert "Tokyo" not in (tmp_path / "CLAUDE.md").read_text()

    # The same through the CLI, and in the keyword fallback when the index is gone.
    def cli_ids(*flags):
        result = CliRunner().invoke(cli, ["--vault", str(mem.vault.root), "search", query, "--json", *flags])
        assert result.exit_code == 0, result.output
        return ids(json.loads(result.output))

    assert tokyo not in cli_ids() and tokyo in cli_ids("--all") and tokyo in cli_ids("--as-of", "2026-12-02")
    shutil.rmtree(mem.vault.root / ".vaultmem" / "index")
    fallback = api.Memory(mem.vault.root).search("staying Tokyo conference")
    assert fallback.get("warning") and tokyo not in ids(fallback)
    assert tokyo in ids(api.Memory(mem.vault.root).search("staying Tokyo conference", all=True))


def test_expiry_follows_the_clock(mem, monkeypatch):
    trip = write(mem, "The user is visiting their sister in Lisbon.",
                 valid_from=date(2026, 12, 8), valid_to=date(2026, 12, 12))
    query = "Who is the user visiting?"
    assert trip in ids(mem.search(query))
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-13T08:00:00")  # the same warm Memory, a later day
    assert trip not in ids(mem.search(query))
    assert trip in ids(mem.search(query, as_of="2026-12-12"))


def test_until_friday_from_a_transcript_expires_after_friday(mem, monkeypatch, tmp_path):
    transcript = tmp_path / "trip.jsonl"
    transcript.write_text(json.dumps({"session": "trip", "id": "m-1", "time": "2026-11-30T09:00:00",
                                      "role": "user", "speaker": "Alice",
                                      "text": "I'm in Tokyo until Friday."}) + "\n", encoding="utf-8")
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T10:00:00")  # a Monday
    report = mem.extract([transcript])
    [note_rel] = [p for p in report["notes"] if "Tokyo" in p and p.split("/")[1] in ("Facts", "Events")]
    note = read_note(mem.vault.abs(note_rel))
    assert as_date(note.get("valid_to")) == date(2026, 12, 4)

    query = "Where is Alice right now?"
    assert note.id in ids(mem.search(query, user="default"))
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-07T10:00:00")
    assert note.id not in ids(mem.search(query))
    assert note.id in ids(mem.search(query, all=True))
    assert note.id in ids(mem.search(query, as_of="2026-12-02"))


def test_as_of_a_past_day_leads_with_the_memory_that_filled_the_asked_slot_then(mem):
    """Which editor did the user use on 2026-08-15? The superseded note of that day fills the
    slot the question asks for: it leads, as today's editor leads the same question today,
    above a note that only shares the question's words."""
    def slot(text, value, **dates):
        write_memory(mem.vault, text=text, type="fact", user="default", importance=0.7,
                     extra={"subject": "user", "attribute": "editor", "value": value,
                            **({"status": "superseded"} if dates.get("valid_to") else {})}, **dates)

    slot("The user does all their coding in Sublime Text.", "Sublime Text",
         valid_from=date(2026, 7, 14), valid_to=date(2026, 8, 28))
    slot("The user codes in PyCharm.", "PyCharm", valid_from=date(2026, 8, 28))
    write(mem, "The user keeps asking which code editor the team should use for code review.",  # reindexes
          type="fact", valid_from=date(2026, 8, 1))
    question = "Which code editor does the user use?"

    def top(**when):
        return mem.search(question, **when)["hits"][0]["text"]

    assert top(as_of="2026-08-15") == "The user does all their coding in Sublime Text."
    assert top() == "The user codes in PyCharm."


def test_a_state_told_with_an_aside_is_not_shown_as_earlier_for_having_become_true_sooner(mem):
    """The model dates "drives a Seal, picked up mid-February" by when it became true and keeps
    the day told in `said`; an aside about the car told in the same session must not make the
    Seal look like an earlier value, nor lead the question over it."""
    told = ["[[Sessions/2026-03-15 s2#^s2-1]]"]
    seal = write_memory(mem.vault, text="The user drives a BYD Seal electric car, picked up in mid-February 2026.",
                        type="fact", user="default", importance=0.7, valid_from=date(2026, 2, 15), sources=told,
                        extra={"said": date(2026, 3, 15)})   # as the model path writes it
    write_memory(mem.vault, text="The user uses seat heating instead of the heater to save the car's battery.",
                 type="preference", user="default", importance=0.5, valid_from=date(2026, 3, 15), sources=told)
    mem.reindex()
    top = [h for h in mem.search("Which car does the user drive?")["hits"] if h["type"] != "session"][0]
    assert top["path"] == mem.vault.rel(seal) and not top["valid_to"]


def test_an_event_told_ahead_of_its_day_held_from_the_day_it_was_told(mem):
    """A wedding planned in October for next June: asked "as of" a day in between, the plan
    was known and answers (the model dates an event by when it happens, `valid_from`, and
    keeps the day told in `said`); before it was told, it was not known."""
    wedding = write_memory(mem.vault, text="The user's wedding is set for June 12, 2027, at Cedar Hollow Farm.",
                           type="event", user="default", importance=0.7, valid_from=date(2027, 6, 12),
                           extra={"said": date(2026, 10, 5), "subject": "user", "attribute": "wedding",
                                  "value": "June 12, 2027"})
    write(mem, "The user's wedding budget is capped at 30k.", type="fact", valid_from=date(2026, 10, 5))
    question = "When is the user's wedding?"
    rel = mem.vault.rel(wedding)

    def memories(day):
        return [h["path"] for h in mem.search(question, as_of=day)["hits"] if h["type"] != "session"]

    assert memories("2026-10-25")[0] == rel
    assert rel not in memories("2026-09-01")


def test_a_question_of_the_users_relation_is_asked_again_of_their_name(mem):
    """"Where does the user's boyfriend work?": the memory that names him shares the
    question's words, the one that answers says his name; asked again of the name, the answer
    leads, today and on a past day, above the user's own employer. Who he is stays answered
    by the memory that names him."""
    def note(text, subject, attribute, value, **dates):
        return mem.vault.rel(write_memory(mem.vault, text=text, type="fact", user="default", importance=0.7,
                                          extra={"subject": subject, "attribute": attribute, "value": value,
                                                 **({"status": "superseded"} if dates.get("valid_to") else {})},
                                          **dates))

    named = note("The user's boyfriend is Anand.", "user", "relationship", "boyfriend Anand",
                 valid_from=date(2026, 7, 14))
    cook = note("Anand is a line cook at Marrow & Vine.", "Anand", "job", "line cook at Marrow & Vine",
                valid_from=date(2026, 7, 14), valid_to=date(2026, 8, 25))
    kettle = note("Anand works the breakfast shift at Copper Kettle.", "Anand", "employer", "Copper Kettle",
                  valid_from=date(2026, 8, 25))
    note("The user works at a bookshop in Leith.", "user", "employer", "a bookshop in Leith",
         valid_from=date(2026, 7, 14))
    write(mem, "Anand eats everything.", type="preference", valid_from=date(2026, 7, 14))   # reindexes

    def first(question, **when):
        return [h["path"] for h in mem.search(question, **when)["hits"] if h["type"] != "session"][0]

    assert first("Where does the user's boyfriend work?") == kettle
    assert first("Where does the user's boyfriend work?", as_of="2026-08-01") == cook
    assert first("Who is the user's boyfriend?") == named
    block = mem.context("Where does the user's boyfriend work?", budget=300)["text"]
    lines = [line for line in block.splitlines() if line.startswith("- [")]
    assert "Copper Kettle" in lines[0] and "bookshop" not in lines[0]


def test_memories_of_different_slots_are_not_each_others_earlier_values(mem):
    """"When is the user's birthday?": a birthday picnic told later names a day the birthday
    memory does not, but their notes fill different slots: the birthday is not shown as held
    only until the picnic. Two memories of one slot still are."""
    def note(text, attribute, value, day, type="fact"):
        return mem.vault.rel(write_memory(mem.vault, text=text, type=type, user="default", importance=0.7,
                                          valid_from=day, sources=[f"[[Sessions/{day} s1#^s1-1]]"],
                                          extra={"subject": "user", "attribute": attribute, "value": value}))

    birthday = note("The user's birthday is June 18.", "birthday", "June 18", date(2026, 5, 4))
    note("The user held a 30th birthday picnic at Century Park on June 20, 2026.", "birthday_party",
         "picnic at Century Park", date(2026, 6, 22), type="event")
    mem.reindex()
    question = "When is the user's birthday?"
    hits = {h["path"]: h for h in mem.search(question)["hits"]}
    assert birthday in hits and not hits[birthday]["valid_to"]
    assert "until" not in mem.context(question, budget=300)["text"]
    corrected = note("The user's birthday is June 19.", "birthday", "June 19", date(2026, 7, 1))
    mem.reindex()
    hits = {h["path"]: h for h in mem.search(question)["hits"]}
    assert hits[birthday]["valid_to"] == "2026-07-01" and not hits[corrected]["valid_to"]


def test_someone_elses_value_of_the_asked_slot_is_not_shown_under_the_users(mem):
    """"Where does the user live?" leads with the user's home and does not show the best
    friend's home at all (nor, as before, as the user's home "until" some day): it answers
    another question. Asked of the friend, it is the answer."""
    def note(text, subject, value, day):
        return mem.vault.rel(write_memory(mem.vault, text=text, type="fact", user="default", importance=0.7,
                                          valid_from=day, sources=[f"[[Sessions/{day} s1#^s1-1]]"],
                                          extra={"subject": subject, "attribute": "home", "value": value}))

    note("The user lives in Duluth, near Canal Park.", "user", "Duluth", date(2026, 1, 18))
    note("The user's best friend Marisol lives in Santa Fe, where she moved for a museum job.",
         "Marisol", "Santa Fe", date(2026, 2, 27))
    mem.reindex()
    block = mem.context("Where does the user live?", budget=300)["text"]
    lines = [line for line in block.splitlines() if line.startswith("- [")]
    assert "Duluth" in lines[0] and "Santa Fe" not in block, block
    assert "Santa Fe" in mem.context("Where does Marisol live?", budget=300)["text"]


def test_as_of_a_past_day_leads_with_what_held_then_and_ended_since(mem, monkeypatch):
    """What did the user drink on night shifts on 2026-02-20? The memory of that day, ended
    since (superseded), is the answer; "works night shifts" held that day too and shares
    more of the question's words, but says nothing of the day. Asked of today, the memory
    ended is not there at all."""
    from vaultmem.retrieve import current

    write_memory(mem.vault, text="The user drinks about three cans of Monster per shift.", type="preference",
                 user="default", importance=0.5, valid_from=date(2026, 2, 3), valid_to=date(2026, 3, 1),
                 extra={"status": "superseded"})
    write_memory(mem.vault, text="The user drinks green tea during shifts.", type="preference",
                 user="default", importance=0.5, valid_from=date(2026, 3, 1))
    write(mem, "The user works night shifts.", type="fact", valid_from=date(2026, 2, 3))   # reindexes
    question = "What does the user drink to stay awake on night shifts?"

    def top(**when):
        return [h["text"] for h in mem.search(question, **when)["hits"] if h["type"] != "session"][0]

    assert top(as_of="2026-02-20") == "The user drinks about three cans of Monster per shift."
    assert "Monster" not in " ".join(h["text"] for h in mem.search(question)["hits"])
    monkeypatch.setattr(current, "ENDED_FACTOR", 1.0)
    assert top(as_of="2026-02-20") == "The user works night shifts."   # what the factor changes


def test_only_a_memory_whose_last_day_is_gone_counts_as_ended(monkeypatch):
    """`_ended_lead`: a note merged away (superseded, no last day) ended nothing; one whose last
    day is the day asked held then and has ended; one whose last day is today still holds."""
    from types import SimpleNamespace

    from vaultmem.retrieve import current

    monkeypatch.setenv("VAULTMEM_NOW", NOW)

    def hit(status, valid_to):
        return SimpleNamespace(type="fact", status=status, valid_to=valid_to, score=1.0)

    merged, last_day_asked, today, ended = (hit("superseded", ""), hit("active", "2026-02-20"),
                                            hit("active", "2026-12-10"), hit("superseded", "2026-03-01"))
    current._ended_lead([merged, last_day_asked, today, ended], "2026-02-20")
    assert [h.score for h in (merged, last_day_asked, today, ended)] == [1.0, 1.25, 1.0, 1.25]
