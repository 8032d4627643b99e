"""The start-up brief: what an agent reads before the first prompt of a session (issue 50).

`vaultmem context --startup [--project DIR]` (the SessionStart hook of `docs/agents.md`, the
MCP `context` tool with `startup`) asks no question: it shows what an agent needs before any,
in this order, each line dated by when it was said, within the token budget:

1. standing instructions (procedures), then preferences: how the person wants the work done;
2. facts about the person;
3. recent work: the newest events and facts said in this project's sessions (of any session,
   with no project named); those dated after `today` (a plan) after them.

What belongs only to another project's sessions is left out, except facts and preferences
about the person (`projects.in_project`). The most important first within a section, then
the newest. Each section first gets up to its share of the budget (SHARES), so that recent
work is not crowded out by a long list of preferences; what the sections leave is then filled
in the same order.

    >>> print(startup_brief(rows, keep, budget=600, count_tokens=len)["text"])   # doctest: +SKIP
    ## Standing instructions
    - [procedure · 2026-12-01] The user's standing instruction: always run ruff before committing.
"""

from __future__ import annotations

from types import SimpleNamespace

from vaultmem.retrieve.projects import about_person

SECTIONS = ("instructions", "preferences", "person", "recent")
# Each section's share of the budget in the first pass (the rest fills in a second).
SHARES = {"instructions": 0.35, "preferences": 0.25, "person": 0.2, "recent": 1.0}
HEADINGS = {
    "en": {"instructions": "## Standing instructions", "preferences": "## Preferences",
           "person": "## About the user", "recent": "## Recent work", "project": "## Recent work on {project}",
           "none": "No memories yet."},
    "zh": {"instructions": "## 长期指示", "preferences": "## 偏好", "person": "## 关于用户",
           "recent": "## 最近的工作", "project": "## 最近的工作（{project}）", "none": "还没有记忆。"},
}
# The types the brief reads (entity hubs and session notes are not statements).
BRIEF_TYPES = ("procedure", "preference", "fact", "event")


def said(row) -> str:
    return (row.valid_from or row.created or "")[:10]


def section_of(row) -> str | None:
    """The section a memory goes under, or None when it is none of the brief's."""
    if row.type == "procedure":
        return "instructions"
    if row.type == "preference":
        return "preferences"
    if row.type == "fact" and about_person(row):
        return "person"
    if row.type in ("event", "fact"):
        return "recent"
    return None


def startup_brief(rows, keep, budget: int, count_tokens, project: str | None = None,
                  lang: str = "en", today: str = "9999-12-31", recent=None) -> dict:
    """`rows`: the active memories (dicts with id, note_id, path, type, text, importance,
    created, valid_from, sources); `keep(row)`: whether a row belongs in this project's brief;
    `recent(row)`: whether it is of this project's work (default: every row kept).
    Returns {"text", "tokens", "memories", "snippets", "notes", "pinned", "ids", "sections"}."""
    labels = HEADINGS.get(lang, HEADINGS["en"])
    recent = recent or (lambda row: True)
    by_section: dict[str, list] = {name: [] for name in SECTIONS}
    seen = set()
    for row in rows:
        row = row if isinstance(row, SimpleNamespace) else SimpleNamespace(**row)
        name = section_of(row)
        if name is None or row.note_id in seen or not keep(row) or name == "recent" and not recent(row):
            continue
        seen.add(row.note_id)
        by_section[name].append(row)
    for name, group in by_section.items():
        group.sort(key=said, reverse=True)                     # the newest first (what is yet
        group.sort(key=lambda r: said(r) > today)              # to come after), then
        if name != "recent":                                   # the most important first
            group.sort(key=lambda r: -(r.importance or 0.0))
    heading = dict(labels, recent=labels["project"].format(project=project) if project else labels["recent"])
    chosen: dict[str, list] = {name: [] for name in SECTIONS}

    def render(picked) -> str:
        return "\n".join(line for name in SECTIONS if picked[name]
                         for line in [heading[name], *(_line(r) for r in picked[name])])

    # Lines and headings counted once each, a line break a token: thousands of memories are
    # weighed in milliseconds; the whole block is counted at the end, and kept within budget.
    cost = {}

    def tokens(key, text):
        if key not in cost:
            cost[key] = count_tokens(text) + 1
        return cost[key]

    used = {name: 0 for name in SECTIONS}
    for first_pass in (True, False):
        for name in SECTIONS:
            cap = int(budget * SHARES[name]) if first_pass else budget
            for row in by_section[name]:
                if row in chosen[name]:
                    continue
                more = tokens(id(row), _line(row)) + (0 if chosen[name] else tokens(name, heading[name]))
                if used[name] + more > cap or sum(used.values()) + more > budget:
                    continue
                chosen[name].append(row)
                used[name] += more
    text = render(chosen)
    while text and count_tokens(text) > budget:   # the estimate ran over: the last line goes
        last = next(name for name in reversed(SECTIONS) if chosen[name])
        chosen[last].pop()
        text = render(chosen)
    if not text and not any(by_section.values()):   # nothing to say, not nothing that fits
        text = labels["none"] if count_tokens(labels["none"]) <= budget else ""
    shown = [r for name in SECTIONS for r in chosen[name]]
    return {"text": text, "tokens": count_tokens(text) if text else 0, "memories": len(shown),
            "snippets": 0, "notes": 0, "pinned": 0, "ids": [r.note_id for r in shown],
            "sections": {name: len(chosen[name]) for name in SECTIONS}}


def _line(row) -> str:
    return f"- [{' · '.join(x for x in (row.type, said(row)) if x)}] {' '.join(row.text.split())}"
