"""A generated vault of realistic notes for `perf.py`, deterministic for a seed.

Memory notes of every type (facts, preferences, events, procedures, entities) made of
sentences drawn from templates and a vocabulary of real-looking people, places, foods, tools
and projects, with SPEC §3 frontmatter written by vaultmem's own `new_memory_meta`, plus one
session note per 50 memories rendered by the extractor's `render_session`.

Beside them, the person's own notes outside `Memory/` (`generate_user_notes`): projects,
a journal, areas, reading and people notes, and one in ten in Chinese under `笔记/`, with
headings, lists, callouts, tables, code and wikilinks; a `Templates/` folder that Obsidian's
"Excluded files" leaves out.
"""

from __future__ import annotations

import json
import math
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
    from vaultmem.extract.sessions import render_session
    from vaultmem.store.ids import new_id
    from vaultmem.store.note import Note, render_note
    from vaultmem.store.session_note import Session, Turn
    from vaultmem.store.titles import safe_title
    from vaultmem.store.values import new_memory_meta

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


# --- the person's own notes ------------------------------------------------------------------
# Kinds of note: (weight, folder maker, title maker, headings, sentences, list items).
FIRST = ["Alice", "Ben", "Chen", "Dana", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas",
         "Kavya", "Liam", "Maya", "Noor", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tariq",
         "Uma", "Viktor", "Wen", "Yara", "Zoe", "Amir", "Bea", "Carlos", "Dmitri", "Emma"]
LAST = ["Moreau", "Okafor", "Tanaka", "Silva", "Novak", "Haddad", "Lindqvist", "Park", "Rossi",
        "Kowalski", "Mensah", "Fischer", "Duarte", "Nakamura", "Olsen", "Petrov", "Quist",
        "Reyes", "Schmidt", "Varga", "Walsh", "Yilmaz", "Zhou", "Brennan", "Costa"]
PROJECT_DIRS = ["Heron", "Billing Migration", "Mobile Redesign", "Data Warehouse", "Onboarding",
                "Search Service", "Atlas", "Home Renovation", "Garden Shed", "Podcast"]
AREA_DIRS = {"Health": ["Sleep", "Blood tests", "Running plan", "Dentist", "Physio exercises"],
             "Finance": ["Budget", "Taxes", "Pension", "Subscriptions", "Insurance"],
             "Home": ["Boiler", "Garden", "Cleaning rota", "Repairs", "Internet"],
             "Career": ["1-1 notes", "Review prep", "Skills", "Job ideas", "Conference talks"],
             "Travel": ["Packing list", "Trip ideas", "Visa", "Itinerary", "Train routes"]}
BOOKS = [("Thinking, Fast and Slow", "Kahneman"), ("Atomic Habits", "Clear"),
         ("The Design of Everyday Things", "Norman"), ("Deep Work", "Newport"),
         ("The Mythical Man-Month", "Brooks"), ("Sapiens", "Harari"), ("Range", "Epstein"),
         ("The Pragmatic Programmer", "Hunt"), ("Four Thousand Weeks", "Burkeman"),
         ("How Buildings Learn", "Brand"), ("Educated", "Westover"), ("Stolen Focus", "Hari")]
IDEAS = ["small habits compound over years", "attention is the scarce resource",
         "most choices are made by defaults", "deliberate practice needs fast feedback",
         "slow thinking is expensive so we avoid it", "adding people to a late project delays it",
         "memory is reconstruction rather than playback", "generalists win in messy domains",
         "buildings that adapt are the ones that last", "time is finite and that is freeing"]
HEADINGS = {"project": ["Context", "Decisions", "Open questions", "Next steps", "Meeting notes", "Risks"],
            "journal": ["Morning", "Work", "Evening", "Gratitude", "Notes"],
            "area": ["Overview", "Routine", "Goals", "Log", "Ideas", "Resources"],
            "reading": ["Summary", "Key ideas", "Quotes", "My thoughts", "Related"],
            "people": ["About", "How we met", "Conversations", "Gift ideas", "Follow-ups"],
            "zh": ["背景", "要点", "待办", "想法", "参考", "总结"]}
SENTENCES = {
    "project": ["Decided to move the {tool} setup into the main repo so {person} can review it.",
                "{person} raised a concern about the rollout order; we ship behind a flag first.",
                "The staging deploy failed twice because of a missing {tool} secret, see {link}.",
                "Next milestone is the demo in {month}: the import screen and the audit log.",
                "Latency of the search endpoint went from {n}0 ms to {n} ms with the cache.",
                "Open question: keep {tool2} for the reports or rewrite them in {tool}?",
                "Spent the afternoon pairing with {person} on the migration scripts.",
                "Budget for {project} is tight and {person} wants an estimate by {weekday}.",
                "The retro found three themes: unclear ownership, flaky tests, too many meetings.",
                "Feedback from the team in {place}: the onboarding emails arrive too late."],
    "journal": ["Woke up early and went {hobby} before breakfast.",
                "Had {food} with {person} at the small place near the station.",
                "Felt tired most of the day, probably the late call with {place} yesterday.",
                "Long walk by the river after work, thinking about {project}.",
                "Called my {relation} {person}, who plans a trip to {place} in {month}.",
                "Mood calm, energy {n} out of ten, slept about seven hours.",
                "Grateful for the help of {person} with the move, see {link}.",
                "Spent too long on email again; tomorrow the morning is for deep work.",
                "The weather in {place} turned and it rained all afternoon."],
    "area": ["The target is {n} sessions of {hobby} a month.",
             "The {tool} subscription renews every {month}; cancel it if unused.",
             "Dr. {last} suggested no {food} after 6 pm and a check again in {month}.",
             "The boiler service is due in {month}; the engineer last came on {date}.",
             "For the review with {person}, collect three examples of work on {project}.",
             "Rule: move a tenth of any bonus to the long-term account the day it arrives.",
             "The packing list for {place} is in {link}.",
             "Recipe idea from {person}: {food} with chilli and lime."],
    "reading": ["{author} argues that {idea}.", "Key idea of chapter {n}: {idea}.",
                "This connects to what {person} said about {project}, see {link}.",
                "I am not convinced by the part on how {idea}; the evidence is thin.",
                "Worth rereading the chapter where {author} shows that {idea}.",
                "Tried applying it to {hobby} and it mostly held up."],
    "people": ["{name} is a friend of my {relation} from {place}.",
               "Works with {tool} at a small consultancy in {place}.",
               "Birthday in {month}; likes {food} and {hobby}.",
               "Last talked on {date} about {project}.", "Introduced me to {person}, see {link}.",
               "Moved to {place} a few years ago and still misses the sea."],
    "zh": ["今天和{zperson}在{zplace}吃了{zfood}，聊了很久{zproject}的事情。",
           "{zproject}的进度比预期慢，下周需要再讨论一次。", "最近在学{zhobby}，每周练习{n}次，进步不大。",
           "{zperson}推荐了一本书，讲的是{zidea}。", "提醒{zperson}：{n}月之前把 {tool} 的配置改好，参考 {link}。",
           "这次去{zplace}出差，酒店离地铁站步行{n}分钟。", "晚上做了{zfood}，味道还可以，下次少放盐。",
           "部署流程：先跑测试，再用 {tool} 打包，最后通知{zperson}。"]}
ITEMS = {"project": ["Ask {person} about the {tool} licence", "Write the runbook for {project}",
                     "Book the room for {weekday}", "Compare {tool} and {tool2} for the queue"],
         "zh": ["联系{zperson}确认时间", "整理{zproject}的文档", "买{zfood}的材料", "预订去{zplace}的车票"]}
ZH = {"zperson": ["小王", "李娜", "张伟", "陈静", "老刘", "王芳"], "zplace": ["上海", "杭州", "成都", "北京", "深圳"],
      "zfood": ["火锅", "小笼包", "奶茶", "红烧肉", "牛肉面"], "zhobby": ["书法", "游泳", "吉他", "摄影"],
      "zproject": ["新版官网", "年度预算", "装修", "搬家"], "zidea": ["习惯的力量", "专注的价值", "如何做决定"]}
ZH_DIRS = {"工作": "周会记录", "生活": "生活随笔", "读书": "读书笔记", "旅行": "旅行计划"}
KIND_WEIGHTS = {"project": 25, "journal": 30, "area": 15, "reading": 10, "people": 10, "zh": 10}
CODE = ["```bash\ndocker compose up -d {service}\ndocker compose logs -f {service}\n```",
        "```python\nfor row in rows:\n    if row[\"status\"] == \"{service}\":\n        print(row)\n```",
        "```sql\nselect count(*) from {service}_events where created > now() - interval '7 days';\n```"]
CALLOUTS = ["note", "tip", "warning", "todo", "info"]
TEMPLATE_NOTES = {"Daily note": "# {{date}}\n\n## Morning\n\n## Work\n\n## Evening\n",
                  "Meeting": "# {{title}}\n\nAttendees:\n\n## Decisions\n\n## Next steps\n- [ ] \n",
                  "Book": "---\ntags: [reading]\n---\n# {{title}}\n\n## Summary\n\n## Quotes\n",
                  "Person": "# {{title}}\n\n## About\n\n## Conversations\n"}
NOTE_QUERIES = ["what did we decide about {tool} for {project_dir}", "notes from the {project_dir} retro",
                "when is {name}'s birthday", "what does {author} say about {idea}",
                "{area_topic} plan", "packing list for {place}", "dinner with {person} at the station",
                "why did the staging deploy fail", "who introduced me to {person}",
                "{zproject}的进度怎么样", "{zperson}推荐了什么书"]


def _note_fill(rng, template, links, author="", name=""):
    tool, tool2 = rng.sample(TOOLS, 2)
    day = START + timedelta(days=rng.randrange(0, 600))
    zh = {k: rng.choice(v) for k, v in ZH.items()}
    return template.format(
        person=f"{rng.choice(FIRST)} {rng.choice(LAST)}", last=rng.choice(LAST), tool=tool,
        tool2=tool2, place=rng.choice(PLACES), food=rng.choice(FOODS), hobby=rng.choice(HOBBIES),
        project=rng.choice(PROJECTS), relation=rng.choice(RELATIONS), month=rng.choice(MONTHS),
        weekday=rng.choice(WEEKDAYS), n=rng.randrange(2, 10), date=day.date().isoformat(),
        idea=rng.choice(IDEAS), author=author or rng.choice(BOOKS)[1], name=name or rng.choice(FIRST),
        link=_link(rng, links) if "{link}" in template else "", **zh)


def _link(rng, titles):
    target = rng.choice(titles)
    roll = rng.random()
    if roll < 0.2:
        return f"[[{target}|{target.split(' ')[0].lower()}]]"
    if roll < 0.3:
        return f"[[{target}#{rng.choice(HEADINGS['project'])}]]"
    return f"[[{target}]]"


def _placed(rng, kind, number, taken):
    """(folder, title) of a note of `kind`, the title unique in the vault (Obsidian links by name)."""
    day = (START + timedelta(days=rng.randrange(0, 900))).date()
    if kind == "project":
        project = rng.choice(PROJECT_DIRS)
        topic = rng.choice(["kickoff", "sync", "design review", "retro", "planning", "spec", "incident"])
        folder, title = f"Projects/{project}", f"{project} {topic} {day.isoformat()}"
    elif kind == "journal":
        day = (datetime(2025, 12, 31) - timedelta(days=number)).date()  # one note a day, backwards
        folder, title = f"Journal/{day.year}/{day.month:02d}", day.isoformat()
    elif kind == "area":
        area = rng.choice(list(AREA_DIRS))
        folder, title = f"Areas/{area}", f"{rng.choice(AREA_DIRS[area])} {MONTHS[day.month - 1]} {day.year}"
    elif kind == "reading":
        book = rng.choice(BOOKS)[0]
        folder, title = "Reading", f"{book} – notes"
    elif kind == "people":
        folder, title = "People", f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    else:
        sub = rng.choice(list(ZH_DIRS))
        folder, title = f"笔记/{sub}", f"{ZH_DIRS[sub]} {day.isoformat()}"
    unique, n = title, 1
    while unique.casefold() in taken:
        n += 1
        unique = f"{title} {n}"
    taken.add(unique.casefold())
    return folder, unique


def _table(rng, kind, links):
    head = ["事项", "负责人", "日期"] if kind == "zh" else ["Item", "Who", "When"]
    items = ITEMS["zh" if kind == "zh" else "project"]
    rows = [f"| {_note_fill(rng, rng.choice(items), links)} | {rng.choice(FIRST)} | "
            f"{(START + timedelta(days=rng.randrange(600))).date()} |" for _ in range(rng.randrange(2, 6))]
    return "\n".join([f"| {' | '.join(head)} |", "| --- | --- | --- |", *rows])


def _body(rng, kind, title, target, links) -> str:
    """Sections of paragraphs, lists, a callout, a table or code block until `target` words."""
    from vaultmem.index.user_notes import words

    author = next((a for b, a in BOOKS if title.startswith(b)), "")
    name = title if kind == "people" else ""
    joiner = "" if kind == "zh" else " "

    def say(count=1):   # distinct sentences: a paragraph does not repeat itself
        templates = rng.sample(SENTENCES[kind], min(count, len(SENTENCES[kind])))
        return joiner.join(_note_fill(rng, t, links, author, name) for t in templates)

    blocks, size = ([f"# {title}"] if rng.random() < 0.5 else []), 0.0
    headings = rng.sample(HEADINGS[kind], len(HEADINGS[kind]))
    extras = [b for b, p in (("table", 0.15), ("code", 0.4 if kind == "project" else 0.05)) if rng.random() < p]
    for section in range(100):
        if size >= target:
            break
        blocks.append(("### " if section >= len(headings) else "## ") + headings[section % len(headings)])
        for part in range(rng.randrange(1, 4)):
            if part and size >= target:
                break
            roll = rng.random()
            if part == 0 or roll < 0.6:   # every section opens with a paragraph
                sentences = max(1, min(rng.randrange(2, 6), math.ceil((target - size) / 12)))
                text = say(sentences)
                text += " #followup" if rng.random() < 0.05 else ""
            elif roll < 0.85:
                box = rng.choice(["- ", "- [ ] ", "1. "])
                text = "\n".join(box + _note_fill(rng, rng.choice(ITEMS.get(kind, SENTENCES[kind])),
                                                  links, author, name) for _ in range(rng.randrange(2, 5)))
            else:
                text = f"> [!{rng.choice(CALLOUTS)}]\n> {say()}"
            blocks.append(text)
            size += words(text)
        if extras and rng.random() < 0.5:
            service = rng.choice(["billing", "search", "auth", "mail"])
            extra = extras.pop()
            blocks.append(_table(rng, kind, links) if extra == "table" else rng.choice(CODE).format(service=service))
    return "\n\n".join(blocks) + "\n"


def _frontmatter(rng, kind, title) -> str:
    if rng.random() < 0.4:
        return ""
    tags = rng.sample([{"zh": "笔记"}.get(kind, kind), "work", "home", "idea", "review", "2025"], rng.randrange(1, 4))
    lines = ["---", f"tags: [{', '.join(tags)}]" if rng.random() < 0.5
             else "tags:\n" + "\n".join(f"  - {t}" for t in tags)]
    if rng.random() < 0.3:
        lines.append(f"aliases: [{json.dumps(title.split(' ')[0].lower(), ensure_ascii=False)}]")
    lines += [f"created: {(START + timedelta(days=rng.randrange(600))).date()}", "---", ""]
    return "\n".join(lines)


def _journal_days(kinds):
    """For each note, how many journal notes come before it (a journal note's day offset)."""
    seen = 0
    for kind in kinds:
        yield seen
        seen += kind == "journal"


def generate_user_notes(root: Path, count: int, seed: int = 2) -> dict:
    """Write `count` notes of the person's own outside `Memory/`, sizes ~50–600 words (mean
    ~200), plus `Templates/` and an `.obsidian/app.json` whose "Excluded files" leave the
    templates out. Returns `{"user_notes", "user_note_words", "templates"}`."""
    from vaultmem.index.user_notes import read_user_note, words

    rng = random.Random(seed)
    root = Path(root)
    kinds = rng.choices(list(KIND_WEIGHTS), weights=list(KIND_WEIGHTS.values()), k=count)
    taken: set[str] = set()
    placed = [_placed(rng, kind, journal_day, taken)
              for journal_day, kind in zip(_journal_days(kinds), kinds)]
    titles = [title for _, title in placed]
    total = 0.0
    for kind, (folder, title) in zip(kinds, placed):
        # A log-normal target (median ~150 words, cut to 45–560) and the block that crosses it:
        # ~50–600 words, mean ~200, median ~180, a tail of long notes.
        target = min(560, max(45, rng.lognormvariate(5.0, 0.55)))
        text = _frontmatter(rng, kind, title) + _body(rng, kind, title, target, titles)
        path = root / folder / f"{title}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        total += words(read_user_note(text.encode())[1])
    for name, text in TEMPLATE_NOTES.items():
        (root / "Templates").mkdir(parents=True, exist_ok=True)
        (root / "Templates" / f"{name}.md").write_text(text, encoding="utf-8")
    (root / ".obsidian").mkdir(parents=True, exist_ok=True)
    (root / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Templates/"]}),
                                                 encoding="utf-8")
    return {"user_notes": count, "user_note_words": round(total), "templates": len(TEMPLATE_NOTES)}


def note_queries(count: int, seed: int = 9) -> list[str]:
    """Questions a person asks of their own notes (one in five or so in Chinese)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        area = rng.choice(list(AREA_DIRS))
        template = rng.choice(NOTE_QUERIES).replace("{project_dir}", rng.choice(PROJECT_DIRS))
        out.append(_note_fill(rng, template.replace("{area_topic}", rng.choice(AREA_DIRS[area])), []))
    return out
