"""Issue 32's read-time net (`vaultmem.retrieve.current`): when the memories a question finds give one
slot two values and neither supersedes the other (a wording the write policy did not read,
a note written by hand), `context` and `search` show the one said last as current and the
other as earlier, until the day the later one was said; `doctor` lists the pair.

Real vault, real git, real index and the bundled model; the notes are written as a person
(or another tool) would write them, without the slot properties the extractor sets."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from tests.helpers.clock import clock_at
from vaultmem import api
from vaultmem.memory.memories import write_memory

NOW = "2026-11-30T12:00:00"


def memory(vault, text, said, type="fact", **extra):
    return write_memory(vault, text=text, type=type, user="default", valid_from=said,
                        now=datetime(2026, 11, 1, 9, 0), extra=extra or None)


def vault_of(tmp_path, embedder, *memories):
    """A fresh vault holding `memories` ((text, day, type) each, or (text, day, type, slot) with
    the note's subject, attribute and value), indexed."""
    with clock_at(NOW):
        api.init(tmp_path / "v", model="all-MiniLM-L6-v2")
        mem = api.Memory(tmp_path / "v", embedder=embedder)
        for text, said, type, *slot in memories:
            memory(mem.vault, text, said, type=type,
                   **(dict(zip(("subject", "attribute", "value"), slot[0])) if slot else {}))
        mem.reindex()
    return mem


@pytest.fixture
def vault(tmp_path, embedder, git_identity):
    # said on different days, each in its own words: no rule of the write policy saw them
    return vault_of(tmp_path, embedder,
                    ("The user lives in Chicago, in a small flat near the lake.", date(2026, 8, 2), "fact"),
                    ("The user's new place in Denver finally feels like home.", date(2026, 10, 12), "fact"),
                    ("The user's friend Jake lives in Seattle.", date(2026, 11, 2), "fact"),
                    ("The user loves deep-dish pizza.", date(2026, 9, 1), "preference"))


def memory_lines(text):
    return [line for line in text.splitlines() if line.startswith("- [fact") or line.startswith("- [pref")]


def test_context_shows_the_value_said_last_first_and_the_earlier_one_as_earlier(vault):
    with clock_at(NOW):
        block = vault.context("Where does the user live?", budget=400)["text"]
    lines = memory_lines(block)
    assert "Denver" in lines[0], block
    chicago = [line for line in lines if "Chicago" in line]
    assert chicago and all("until 2026-10-12" in line for line in chicago), block
    # another person's home is not the user's: it is neither earlier nor current of that slot
    assert all("until" not in line for line in lines if "Jake" in line), block


def test_search_marks_the_earlier_value_and_ranks_the_later_first(vault):
    with clock_at(NOW):
        hits = vault.search("Where does the user live?", k=5)["hits"]
    facts = [h for h in hits if h["type"] == "fact" and ("Denver" in h["text"] or "Chicago" in h["text"])]
    assert "Denver" in facts[0]["text"]
    assert [h["valid_to"] for h in facts if "Chicago" in h["text"]] == ["2026-10-12"]


def test_values_of_one_slot_from_the_notes_own_properties_are_grouped_too(tmp_path, embedder, git_identity):
    mem = vault_of(tmp_path, embedder,
                   ("The user's editor is Sublime Text.", date(2026, 7, 14), "fact", ("user", "editor", "Sublime Text")),
                   ("The user codes in PyCharm these days.", date(2026, 9, 20), "fact", ("user", "editor", "PyCharm")))
    with clock_at(NOW):
        block = mem.context("Which code editor does the user use?", budget=400)["text"]
    lines = memory_lines(block)
    assert "PyCharm" in lines[0] and any("Sublime" in line and "until 2026-09-20" in line for line in lines), block


def test_one_value_alone_is_left_as_it_is(tmp_path, embedder, git_identity):
    with clock_at(NOW):
        api.init(tmp_path / "v", model="all-MiniLM-L6-v2")
        mem = api.Memory(tmp_path / "v", embedder=embedder)
        memory(mem.vault, "The user lives in Porto.", date(2026, 8, 2))
        memory(mem.vault, "The user's flat in Porto has a balcony.", date(2026, 10, 2))
        mem.reindex()
        block = mem.context("Where does the user live?", budget=400)["text"]
    assert "until" not in block and "Porto" in memory_lines(block)[0], block


def test_doctor_lists_the_pair_read_from_the_statements(vault):
    from vaultmem.doctor import doctor

    found = doctor(vault.vault)["contradictions"]
    slot_pairs = [(sorted(c["paths"]), c["reason"]) for c in found if c["reason"].startswith("both active for")]
    assert [reason for paths, reason in slot_pairs
            if any("Chicago" in x for x in paths) and any("Denver" in x for x in paths)] == \
        ["both active for user / home"], found
    # Jake's home is another subject's slot: never paired with the user's
    assert not [paths for paths, _ in slot_pairs if any("Jake" in x for x in paths)], found


# --- a question no frame reads: the memories that answer it compete by when they were told --------

@pytest.fixture
def games(tmp_path, embedder, git_identity):
    return vault_of(tmp_path, embedder,
                    ("用户下班后会玩一会儿 Hollow Knight。", date(2026, 8, 2), "fact"),
                    ("用户入坑了 Elden Ring，每天都玩到半夜。", date(2026, 10, 12), "fact"),
                    ("用户的妹妹最近在玩 Stardew Valley。", date(2026, 11, 2), "fact"))


def test_the_answer_told_last_leads_a_question_no_frame_reads(games):
    with clock_at(NOW):
        block = games.context("用户最近在玩什么游戏？", budget=400)["text"]
    lines = memory_lines(block)
    assert "Elden Ring" in lines[0], block
    assert [line for line in lines if "Hollow Knight" in line and "until 2026-10-12" in line], block
    # the sister's game is her news, told later: it neither leads nor ends the user's
    assert all("until" not in line for line in lines if "Stardew" in line), block


def test_an_event_told_early_is_not_the_latest_answer_for_being_dated_late(tmp_path, embedder, git_identity):
    from vaultmem.retrieve.current import told_day

    with clock_at(NOW):
        api.init(tmp_path / "v", model="all-MiniLM-L6-v2")
        mem = api.Memory(tmp_path / "v", embedder=embedder)
        write_memory(mem.vault, text="In December 2026, the user flies to Lisbon.", type="event", user="default",
                     valid_from=date(2026, 12, 1), now=datetime(2026, 11, 1, 9, 0),
                     sources=["[[Sessions/2026-09-01 s1#^s1-1]]"])
        memory(mem.vault, "The user changed the trip: the user flies to Madrid now.", date(2026, 10, 5))
        mem.reindex()
        hits = mem.search("Where does the user fly to?", k=5)["hits"]
    lisbon = next(h for h in hits if "Lisbon" in h["text"])
    assert lisbon["valid_to"] == "2026-10-05", hits
    assert "Madrid" in next(h for h in hits if h["type"] in ("fact", "event"))["text"], hits


def test_a_yes_or_no_question_marks_nothing_earlier(games):
    with clock_at(NOW):
        block = games.context("用户最近还玩游戏吗？", budget=400)["text"]
    assert "Hollow Knight" in block and "until" not in block, block


def test_a_restated_value_is_not_shown_as_earlier_but_a_new_tool_is(tmp_path, embedder, git_identity,
                                                                     monkeypatch):
    """Two memories whose notes say their slot: the blog "stays on GitHub Pages" restates the
    value "built with Hugo, hosted on GitHub Pages" already gives (same slot, same value), so
    the Hugo memory is no earlier value; a switch of tool (tool:vim, then tool:vs code) is."""
    from vaultmem.retrieve import current

    mem = vault_of(tmp_path, embedder,
                   ("The user's blog is built with Hugo and hosted on GitHub Pages.", date(2026, 9, 3), "fact",
                    ("user", "blog_host", "GitHub Pages")),
                   ("The user's blog stays on GitHub Pages.", date(2026, 10, 15), "fact",
                    ("user", "blog_host", "GitHub Pages")),
                   ("The user writes code in Vim.", date(2026, 3, 2), "fact", ("user", "tool:vim", "yes")),
                   ("The user switched to VS Code.", date(2026, 10, 15), "fact", ("user", "tool:vs code", "yes")))

    def asked(question):
        with clock_at(NOW):
            return mem.context(question, budget=400)["text"]

    blog = asked("What is the user's blog built with?")
    assert [line for line in memory_lines(blog) if "Hugo" in line and "until" not in line], blog
    editor = asked("Which code editor does the user use?")
    assert [line for line in memory_lines(editor) if "Vim" in line and "until 2026-10-15" in line], editor
    monkeypatch.setattr(current, "_restated", lambda slots, hit, other: False)
    assert "until 2026-10-15" in asked("What is the user's blog built with?")   # what the rule changes


def test_a_tool_of_another_kind_is_no_later_value(tmp_path, embedder, git_identity):
    """"Which note-taking app does the user use?" asks for one kind of tool: the editor told
    later ("Helix", `tool:editor`) does not show the notes app as ended (it did, `until` the day
    Helix was told); an editor told later still ends the editor before it."""
    mem = vault_of(tmp_path, embedder,
                   ("All the user's notes live in Obsidian now.", date(2026, 3, 1), "fact"),
                   ("The user writes code in Vim.", date(2026, 3, 2), "fact", ("user", "tool:vim", "yes")),
                   ("The user uses Helix as their editor.", date(2026, 5, 10), "fact",
                    ("user", "tool:editor", "Helix")))

    def asked(question):
        with clock_at(NOW):
            return mem.context(question, budget=400)["text"]

    notes = asked("Which note-taking app does the user use?")
    obsidian = [line for line in memory_lines(notes) if "Obsidian" in line]
    assert obsidian and "until" not in obsidian[0], notes
    editor = asked("Which editor does the user use?")
    assert "Helix" in memory_lines(editor)[0], editor
    assert [line for line in memory_lines(editor) if "Vim" in line and "until 2026-05-10" in line], editor


def test_the_slot_asked_for_joins_the_hits_from_under_the_threshold(tmp_path, embedder, git_identity):
    """"How does the user get to work?" asks for the commute; the memory of it shares no word
    with the question and the search scores it under `[search] min_score`. The read-time net
    sees the memories under the threshold too: the latest of the slot asked for joins the hits
    and leads. One it does not lift stays out."""
    mem = vault_of(tmp_path, embedder,
                   ("Starting July 6, 2026, the user works in the office in the Loop Tuesday to Thursday.",
                    date(2026, 6, 10), "fact", ("user", "work_location", "the Loop office")),
                   ("The user's home workspace is a kitchen table rather than a proper desk.",
                    date(2026, 5, 6), "fact", ("user", "workspace", "kitchen table")),
                   ("Since July 6, 2026, the user commutes to the Loop three days a week on the Metra BNSF "
                    "express train; the ride takes 37 minutes.", date(2026, 8, 17), "fact",
                    ("user", "commute", "Metra BNSF express")),
                   ("Marco plays golf in a Saturday morning league.", date(2026, 9, 1), "fact",
                    ("Marco", "hobby", "golf")))
    question = "How does the user get to work?"
    with clock_at(NOW):
        raw = mem.searcher.search(question, k=10)
        block = mem.context(question, budget=400)["text"]
        found = mem.search(question, k=10)["hits"]
    assert raw and not [h for h in raw if "Metra" in h.text], [(h.text, h.score) for h in raw]   # under the threshold
    assert "Metra" in memory_lines(block)[0], block
    assert "Metra" in found[0]["text"] and found[0]["score"] >= mem.vault.config.min_score, found
    assert mem.indexer.state.all_access()[found[0]["id"]]["last_access"]   # recalled, as a hit is
    assert not [h for h in raw if "golf" in h.text]
    assert "golf" not in block and not [h for h in found if "golf" in h["text"]], block


def test_from_under_the_threshold_only_the_slot_asked_for_or_a_later_value_joins(monkeypatch):
    """`mark_current(under=...)`: a memory under the threshold joins the hits when the net
    lifts it as the slot the question asks for or as the later value of a hit's slot; not an
    unrelated one, even when a day asked of lifts it over the threshold by ENDED_FACTOR, and not
    a second copy of a note already among the hits (a hop found it since)."""
    from vaultmem.retrieve.current import mark_current
    from vaultmem.retrieve.hits import Hit, Hits

    monkeypatch.setenv("VAULTMEM_NOW", NOW)

    def hit(path, text, score, said, status="active", valid_to=""):
        return Hit(id=path, path=path, type="fact", title=path, text=text, score=score, status=status,
                   created=f"{said}T09:00:00", updated=f"{said}T09:00:00", source_messages=[],
                   valid_from=said, valid_to=valid_to)

    slots = {"office": ("user", "work_location", "the loop office"), "metra": ("user", "commute", "metra"),
             "old-home": ("user", "home", "chicago"), "home": ("user", "home", "denver"),
             "sox": ("marco", "team", "red sox")}

    def props(path):
        return dict(zip(("subject", "attribute", "value"), slots[path]))

    office = hit("office", "The user works in the office in the Loop.", 0.57, "2026-06-10")
    metra = hit("metra", "The user commutes on the Metra.", 0.14, "2026-08-17")
    sox = hit("sox", "Marco's team is the Red Sox.", 0.21, "2026-01-05", "superseded", "2026-03-01")
    hits = Hits([office])
    mark_current(hits, "How does the user get to work?", props, under=[metra, sox], floor=0.25)
    assert [h.path for h in hits] == ["metra", "office"]

    home = hit("home", "The user lives in Denver.", 0.6, "2026-01-02")
    again = hit("home", "The user lives in Denver.", 0.1, "2026-01-02")   # the same note, low
    sox = hit("sox", "Marco's team is the Red Sox.", 0.21, "2026-01-05", "superseded", "2026-03-01")
    hits = Hits([home])
    mark_current(hits, "Where does the user live?", props, as_of="2026-02-01", under=[again, sox], floor=0.25)
    assert [h.path for h in hits] == ["home"], hits   # one copy; sox stays out at 0.26 (the factor alone)
    assert sox.score > 0.25


def test_with_no_memory_of_the_employer_the_job_naming_the_workplace_answers_where_the_user_works(
        tmp_path, embedder, git_identity):
    """"Where does the user work?" asks for the employer; the person's only memory of it is the
    job, "ICU nurse at St. Luke's", which leads over "works night shifts" (that only shares
    "work"). Where an employer memory is held, it answers, and the job does not take its place."""
    nurse = ("The user is an ICU nurse at St. Luke's.", date(2026, 2, 3), "fact", ("user", "job", "ICU nurse"))
    shifts = ("The user works night shifts.", date(2026, 2, 3), "fact", ("user", "work_schedule", "night shifts"))
    mem = vault_of(tmp_path, embedder, nurse, shifts)
    with clock_at(NOW):
        block = mem.context("Where does the user work?", budget=400)["text"]
    assert "St. Luke's" in memory_lines(block)[0], block
    employer = ("The user's employer is Mercy General.", date(2026, 1, 5), "fact", ("user", "employer", "Mercy General"))
    mem = vault_of(tmp_path / "second", embedder, nurse, shifts, employer)
    with clock_at(NOW):
        block = mem.context("Where does the user work?", budget=400)["text"]
    assert "Mercy General" in memory_lines(block)[0], block


def test_the_job_does_not_answer_for_someone_else_nor_for_a_misread_frame(tmp_path, embedder, git_identity):
    """The job answers "Where does the user work?" for the employer, not a question of the
    husband's (his memory leads, not shown as earlier), nor from under the threshold "What is
    the title of the novel …?" (the job frame reads "title")."""
    nurse = ("The user is an ICU nurse at St. Luke's.", date(2026, 9, 1), "fact", ("user", "job", "ICU nurse"))
    tom = ("The user's husband Tom is a product manager at Google.", date(2026, 3, 1), "fact")
    mem = vault_of(tmp_path, embedder, nurse, tom)
    with clock_at(NOW):
        lines = memory_lines(mem.context("Where does the user's husband work?", budget=400)["text"])
    assert "Google" in lines[0] and "until" not in lines[0], lines
    acme = ("The user works at Acme Corp.", date(2026, 1, 5), "fact", ("user", "employer", "Acme Corp"))
    novel = ("The user is writing a fantasy novel called The Salt Road.", date(2026, 1, 5), "fact",
             ("user", "project", "novel"))
    mem = vault_of(tmp_path / "second", embedder, acme, novel)
    with clock_at(NOW):
        lines = memory_lines(mem.context("What is the title of the novel the user is writing?", budget=400)["text"])
    assert "Salt Road" in lines[0] and not any("Acme" in line for line in lines), lines
