"""A generated vault of realistic memory notes for `perf.py`, deterministic for a seed.

Memory notes of every type (facts, preferences, events, procedures, entities) made of
sentences drawn from templates and a vocabulary of real-looking people, places, foods, tools
and projects, with SPEC §3 frontmatter written by vaultmem's own `new_memory_meta`, plus one
session note per 50 memories rendered by the extractor's `render_session`.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

PEOPLE = ["Alice", "Ben", "Chen Wei", "Dana", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas",
          "Kavya", "Liam", "Maya", "Noor", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tariq"]
RELATIONS = ["sister", "brother", "manager", "colleague", "neighbour", "friend from school",
             "climbing partner", "landlord", "doctor", "mentor", "cousin", "daughter"]
PLACES = ["Lisbon", "Kyoto", "Berlin", "Montreal", "the Lake District", "Oaxaca", "Tallinn",
          "Cape Town", "Seoul", "Edinburgh", "Porto", "Vancouver", "Hanoi", "Ljubljana"]
FOODS = ["oat milk flat whites", "spicy ramen", "sourdough", "green tea", "dark chocolate",
         "mushroom risotto", "pad thai", "black coffee", "kimchi", "lemon tart", "falafel",
         "sparkling water", "decaf espresso", "miso soup", "blueberry pancakes"]
HOBBIES = ["bouldering", "trail running", "watercolour painting", "chess", "sourdough baking",
           "birdwatching", "learning Portuguese", "playing the cello", "cycling to work",
           "woodworking", "film photography", "gardening", "swimming laps", "yoga"]
TOOLS = ["Neovim", "VS Code", "Obsidian", "PostgreSQL", "Docker", "Rust", "TypeScript",
         "pytest", "Kubernetes", "Figma", "Terraform", "SQLite", "Go", "Django", "React"]
PROJECTS = ["the billing migration", "Project Heron", "the mobile app redesign",
            "the data warehouse", "the onboarding flow", "the search service", "Atlas",
            "the quarterly report", "the home renovation", "the garden shed", "the podcast"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

FACT = ["The user's {relation} is called {person}.", "The user lives in {place}.",
        "The user works on {project} with {person}.", "The user is allergic to {food}.",
        "The user's team uses {tool} for {project}.", "{person} moved to {place} last year.",
        "The user has been {hobby} for {n} years.", "The user's flat is a {n}-minute walk from the station.",
        "{person} is the user's {relation} and works with {tool}."]
PREFERENCE = ["The user prefers {food} in the morning.", "The user dislikes meetings on {weekday}s.",
              "The user likes {tool} more than {tool2}.", "The user wants to spend more time {hobby}.",
              "The user prefers short answers with code examples.", "The user avoids {food} after 6 pm.",
              "The user would rather travel to {place} by train than fly.",
              "The user likes to review pull requests before lunch."]
EVENT = ["The user visited {place} with {person} in {month}.", "The user started {hobby} on {date}.",
         "The user finished {project} on {date}.", "{person} gave the user feedback on {project}.",
         "The user ran a half marathon in {place}.", "The user switched from {tool2} to {tool}.",
         "The user had dinner with {person} and tried {food}.", "The user moved house on {date}."]
PROCEDURE = ["To deploy {project}, run the tests, build the {tool} image and tag the release.",
             "When the user asks for a summary, lead with the decision and keep it under five bullet points.",
             "Before editing {project}, pull the latest branch and run the {tool} migrations.",
             "Always write dates as YYYY-MM-DD in notes for the user.",
             "For travel plans, check trains to {place} first and book a seat by the window.",
             "When {person} emails about {project}, reply within a day and copy the user."]
ENTITY = ["{name} is a {kind} the user mentions often.", "{name} is linked to {project}.",
          "The user first met {person} in {place}.", "{name} comes up when the user talks about {hobby}."]
QUERIES = ["what does the user drink in the morning", "who is the user's {relation}",
           "where does the user live", "what happened in {place}", "how do I deploy {project}",
           "which editor does the user like", "when did the user start {hobby}",
           "what food is the user allergic to", "who works with the user on {project}",
           "what are the user's plans for {month}", "what does {person} do", "user preferences about meetings"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
TYPE_WEIGHTS = {"fact": 30, "preference": 25, "event": 25, "procedure": 10, "entity": 10}
FOLDERS = {"fact": "Facts", "preference": "Preferences", "event": "Events",
           "procedure": "Procedures", "entity": "Entities"}
TEMPLATES = {"fact": FACT, "preference": PREFERENCE, "event": EVENT, "procedure": PROCEDURE,
             "entity": ENTITY}
START = datetime(2025, 1, 6, 9, 0, 0)


def _fill(rng: random.Random, template: str) -> str:
    tool, tool2 = rng.sample(TOOLS, 2)
    day = START + timedelta(days=rng.randrange(0, 600))
    return template.format(
        person=rng.choice(PEOPLE), relation=rng.choice(RELATIONS), place=rng.choice(PLACES),
        food=rng.choice(FOODS), hobby=rng.choice(HOBBIES), tool=tool, tool2=tool2,
        project=rng.choice(PROJECTS), weekday=rng.choice(WEEKDAYS), n=rng.randrange(2, 25),
        month=rng.choice(MONTHS), date=day.date().isoformat(),
        name=rng.choice(PEOPLE + PLACES + TOOLS), kind=rng.choice(["person", "place", "tool"]))


def sentence(rng: random.Random, note_type: str) -> str:
    return _fill(rng, rng.choice(TEMPLATES[note_type]))


def queries(count: int, seed: int = 7) -> list[str]:
    """Questions of the kind an agent asks its memory."""
    rng = random.Random(seed)
    return [_fill(rng, rng.choice(QUERIES)) for _ in range(count)]


def generate_vault(root: Path, notes: int, seed: int = 1, user: str = "default") -> dict:
    """Write `notes` memory notes and notes // 50 session notes under `root/Memory`.

    Returns `{"memory_notes", "session_notes"}`. The vault layout itself (config, git) is
    `vaultmem.api.init`'s job; call it afterwards so that the notes are committed."""
    from vaultmem.extract.importers import Session, Turn
    from vaultmem.extract.sessions import render_session
    from vaultmem.ids import new_id
    from vaultmem.note import Note, new_memory_meta, render_note
    from vaultmem.vault import safe_title

    rng = random.Random(seed)
    memory = Path(root) / "Memory"
    for folder in [*FOLDERS.values(), "Sessions"]:
        (memory / folder).mkdir(parents=True, exist_ok=True)
    types = rng.choices(list(TYPE_WEIGHTS), weights=list(TYPE_WEIGHTS.values()), k=notes)
    for number, note_type in enumerate(types):
        body = " ".join(sentence(rng, note_type) for _ in range(rng.choice([1, 1, 2, 3])))
        created = START + timedelta(days=rng.randrange(0, 600), seconds=rng.randrange(0, 86400))
        meta = new_memory_meta(id=new_id(), type=note_type, created=created, user=user,
                               importance=round(rng.uniform(0.2, 0.95), 2),
                               tags=[rng.choice(["work", "home", "health", "travel", "people"])],
                               entities=rng.sample(PEOPLE + TOOLS, rng.randrange(0, 3)))
        title = safe_title(f"{body.split('.')[0][:60]} {number}")
        path = memory / FOLDERS[note_type] / f"{title}.md"
        path.write_text(render_note(Note(meta=meta, body=body + "\n")), encoding="utf-8")
    sessions = notes // 50
    for number in range(sessions):
        started = START + timedelta(days=number)
        sid = f"perf-session-{number}"
        turns = [Turn(sid, f"m-{i}", started + timedelta(seconds=30 * i),
                      "Alice" if i % 2 == 0 else "assistant", "user" if i % 2 == 0 else "assistant",
                      sentence(rng, rng.choice(list(TEMPLATES))), i + 1) for i in range(12)]
        rendered = render_session(Session(sid, sid, turns, "perf.jsonl"), user=user)
        (memory / "Sessions" / f"{rendered.title} {number}.md").write_text(rendered.text,
                                                                           encoding="utf-8")
    return {"memory_notes": notes, "session_notes": sessions}
