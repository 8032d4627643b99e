"""The LLM's reply checked item by item: a valid item is kept, a field that is merely wrong
is cleaned, an invalid item is left out, each with a line saying why; a reply that is not a
JSON object with a "memory_items" list, or has no valid item, is refused (`ValueError`).
"""

from __future__ import annotations

import json
import re
from datetime import date

from vaultmem.extract.llm_prompt import SYSTEM_PROMPT
from vaultmem.store.layout import STATEMENT_TYPES

DEFAULT_IMPORTANCE = 0.5  # for an item the model gave none


def _echo_key(text: str) -> str:
    return re.sub(r"[^\w]+", " ", text.lower()).strip()


# The example statements SYSTEM_PROMPT quotes: a small model sometimes hands one back as a
# memory ("Caroline adopted a dog." in a conversation with no Caroline).
PROMPT_EXAMPLES = {_echo_key(q) for q in re.findall(r'"([A-Z][^"]{8,}[.!])"', SYSTEM_PROMPT)}


ACTIONS = ("add", "update", "merge", "ignore")
# The kinds of name that get a hub note (`Memory/Entities/`): what a person would look up.
HUB_KINDS = ("person", "place", "organization", "pet", "work")
_KIND_WORDS = {"organisation": "organization", "company": "organization", "org": "organization",
               "people": "person", "city": "place", "country": "place", "animal": "pet",
               "book": "work", "film": "work", "movie": "work", "song": "work", "project": "work",
               "product": "work"}
TITLE_LIMIT = 60


def parse_memory_items(text: str, known_ids, held_keys=()) -> tuple[list[dict], list[str]]:
    """`(items, problems)` of a model reply: the items that validate, cleaned, and one line
    for each item left out or field cleaned. `ValueError` when the reply as a whole is
    unusable: not JSON, no "memory_items" list, or no item in it valid. `held_keys` are the
    held memories shown ("H1", ...): an item's `target` must be one of them or an earlier
    item ("N2"); an item whose target is neither is kept as an "add", with a problem line."""
    try:
        data = json.loads(strip_fence(text))
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the reply is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("memory_items"), list):
        raise ValueError('the reply must be a JSON object with a "memory_items" list')
    known = known_ids if isinstance(known_ids, dict) else set(known_ids)  # ids, or ids -> their text
    items, problems, refused = [], [], []
    numbers = {}  # N-number of the reply (1-based, as the model counts) -> index in `items`
    for i, raw in enumerate(data["memory_items"]):
        try:
            item = _validate_item(raw, i, known, problems)
        except ValueError as exc:
            refused.append((i, str(exc)))
            continue
        _verdict(item, raw, i, set(held_keys), numbers, problems)
        numbers[i + 1] = len(items)
        items.append(item)
    if refused and not items:
        raise ValueError("; ".join(reason for _i, reason in refused))
    return items, [f"memory_items[{i}] left out: {reason}" for i, reason in refused] + problems


def parse_secrets(text: str, said, remembered=()) -> tuple[list[str], list[str]]:
    """`(secrets, problems)`: the strings a reply's `"secrets"` list marks, each kept only when
    the messages (`said`, their texts) hold it verbatim and it is shaped like a secret (a digit
    or a symbol in it, or a name: a security answer is one). A name that one of the reply's own
    memories (`remembered`, their statements) gives is a contradiction, and the memory stands
    ("Anand" marked secret beside "The user's boyfriend is Anand."); a code it gives is still a
    secret, and the memory holding it is refused. A reply without the list (a small model's)
    marks none. The problems name the list's places, never what they hold."""
    try:
        data = json.loads(strip_fence(text))
    except (TypeError, json.JSONDecodeError):
        return [], []
    listed = data.get("secrets") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return [], []
    found, problems = [], []
    for i, value in enumerate(listed):
        value = value.strip() if isinstance(value, str) else ""
        if not value or "[REDACTED" in value or value in found:
            continue
        if not any(value in turn for turn in said):
            problems.append(f"secrets[{i}] left out: no message holds it as written")
        elif not _secret_shaped(value):
            problems.append(f"secrets[{i}] left out: too plain to be a secret")
        elif not _CODE_SHAPE.search(value) and any(value in statement for statement in remembered):
            problems.append(f"secrets[{i}] left out: a memory of the same reply names it")
        else:
            found.append(value)
    return found, problems


# A digit or a symbol: a code, not a name.
_CODE_SHAPE = re.compile(r"\d|[^\w\s]")


def _secret_shaped(value: str) -> bool:
    """A digit or a symbol in it, a name (a security answer is one: "Whitcombe Lane", 小橘子),
    or words too long to be a common one ("maple orbit crisp"); not a short plain word."""
    if len(value) > 200:
        return False
    if _CODE_SHAPE.search(value):
        return len(value) >= 3
    if re.search(r"[\u4e00-\u9fff]", value):
        return len(value) >= 2
    return len(value) >= 8 or (len(value) >= 4 and value != value.lower())


def _validate_item(item, i: int, known: set, problems: list[str]) -> dict:
    """One item, cleaned; `ValueError` when it cannot be kept. What was cleaned rather than
    refused (an importance out of range, a date that is not one, an unknown source id among
    known ones) is added to `problems`."""
    where = f"memory_items[{i}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f"{where}.content must be a non-empty string")
    if _echo_key(content) in PROMPT_EXAMPLES and not _said(content, item.get("source_messages"), known):
        raise ValueError(f"{where}.content copies an example of the instructions, not the conversation")
    if item.get("type") not in STATEMENT_TYPES:
        raise ValueError(f"{where}.type must be one of {', '.join(STATEMENT_TYPES)}, not {item.get('type')!r}")
    importance = item.get("importance", DEFAULT_IMPORTANCE)
    if isinstance(importance, bool) or not isinstance(importance, (int, float)):
        raise ValueError(f"{where}.importance must be a number from 0 to 1, not {importance!r}")
    if not 0 <= importance <= 1:
        clamped = min(max(float(importance), 0.0), 1.0)
        problems.append(f"{where}.importance {importance!r} is outside 0–1; clamped to {clamped}")
        importance = clamped
    sources = item.get("source_messages")
    if isinstance(sources, str):  # "m-3" or "m-3, m-4" for ["m-3", "m-4"]
        sources = sources.split(",") if sources.strip() not in known else [sources]
    elif isinstance(sources, (int, float)) and not isinstance(sources, bool):
        sources = [sources]
    if not isinstance(sources, list) or not sources:
        raise ValueError(f"{where}.source_messages must be a non-empty list of message ids, "
                         f"not {_short(item.get('source_messages'))}")
    found = [(s, message_id(s, known)) for s in sources]
    unknown = [s for s, found_id in found if found_id is None]
    if len(unknown) == len(sources):
        raise ValueError(f"{where}.source_messages: {unknown[0]!r} is not a message id of this conversation")
    if unknown:
        problems.append(f"{where}.source_messages: dropped {', '.join(map(repr, unknown))}, not message "
                        f"ids of this conversation")
    clean = {"content": " ".join(content.split()), "type": item["type"], "importance": float(importance),
             "source_messages": list(dict.fromkeys(found_id for _s, found_id in found if found_id))}
    clean["entities"] = _entities(item.get("entities") or [], where, problems)
    clean["title"] = _title(item.get("title"), where, problems)
    clean["alias"] = _title(item.get("alias"), where, problems, field="alias")
    for key in ("tags",):
        value = item.get(key) or []
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list):
            problems.append(f"{where}.{key} is not a list of strings; left empty")
            value = []
        clean[key] = [v.strip() for v in value if isinstance(v, str) and v.strip()]
    for key in ("valid_from", "valid_to"):
        clean[key] = _date(item.get(key), f"{where}.{key}", problems)
    for key in ("subject", "attribute", "value"):
        value = item.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if value is not None and not isinstance(value, str):
            problems.append(f"{where}.{key} is not a string; left empty")
            value = None
        clean[key] = (value or "").strip() or None
    correction = item.get("correction", False)
    if not isinstance(correction, bool):
        problems.append(f"{where}.correction {correction!r} is not true or false; taken as false")
        correction = False
    clean["correction"] = correction
    return clean


def _said(content: str, sources, known) -> bool:
    """Whether the messages an item cites speak of what its content says (a word of five
    letters or more of it): a conversation may well be about someone allergic to peanuts;
    an example copied into one about something else shares no such word with it."""
    texts = known if isinstance(known, dict) else {}
    sources = sources if isinstance(sources, list) else [sources]
    said = " ".join(str(texts.get(message_id(s, known), "")) for s in sources).lower()
    return bool(said) and any(w in said for w in re.findall(r"[a-z]{5,}", content.lower()) if w != "user")


def _verdict(item: dict, raw: dict, i: int, held: set, numbers: dict, problems: list[str]) -> None:
    """`item["action"]` and `item["target"]` ("H2", or the index in the items of an earlier
    item): an action without a target it may name becomes "add", said in `problems`."""
    where = f"memory_items[{i}]"
    item["also"] = []  # the further memories an update replaces
    if raw.get("action") in (None, ""):  # no word on what is held (a small model, the older prompt):
        item["action"], item["target"] = None, None  # the write rules decide alone
        return
    action = str(raw.get("action")).strip().lower()
    if action not in ACTIONS:
        problems.append(f"{where}.action {raw.get('action')!r} is not one of {', '.join(ACTIONS)}; taken as add")
        action = "add"
    item["action"], item["target"] = action, None
    if action == "add":
        return
    given = raw.get("target")
    targets = []
    for one in (given if isinstance(given, list) else [given]):
        found = re.fullmatch(r"\[?\s*([HhNn])\s*(\d+)\s*\]?", str(one).strip()) if one is not None else None
        letter, number = (found.group(1).upper(), int(found.group(2))) if found else (None, None)
        if letter == "H" and f"H{number}" in held:
            targets.append(f"H{number}")
        elif letter == "N" and number in numbers:
            targets.append(numbers[number])
        else:
            problems.append(f"{where}: {action} of {one!r}, which is neither a held memory shown nor an earlier "
                            f"item; {'left out of its targets' if isinstance(given, list) else 'kept as new'}")
    targets = list(dict.fromkeys(targets))
    if not targets:
        if isinstance(given, list):
            problems.append(f"{where}: no target it may name; kept as new")
        item["action"] = "add"
        return
    item["target"], item["also"] = targets[0], targets[1:] if action == "update" else []


def _entities(value, where: str, problems: list[str]) -> list[dict]:
    """`[{"name", "kind"}]`: objects as the prompt asks, or bare names (kind None) as small
    models and the older prompt give them."""
    value = [value] if isinstance(value, (str, dict)) else value
    if not isinstance(value, list):
        problems.append(f"{where}.entities is not a list; left empty")
        return []
    out = []
    for entry in value:
        if isinstance(entry, str) and entry.strip():
            out.append({"name": entry.strip(), "kind": None})
        elif isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"].strip():
            kind = str(entry.get("kind") or "").strip().lower()
            out.append({"name": entry["name"].strip(), "kind": _KIND_WORDS.get(kind, kind) or None})
    return out


ALIAS_LIMIT = 100  # an English name is longer than its Chinese title, and names no file


def _title(value, where: str, problems: list[str], field: str = "title") -> str:
    """The model's title (or its English alias) when it is one: a string of at most
    TITLE_LIMIT characters, one line."""
    instead = "the title is made from the content" if field == "title" else "left out"
    limit = TITLE_LIMIT if field == "title" else ALIAS_LIMIT
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        problems.append(f"{where}.{field} is not a string; {instead}")
        return ""
    title = " ".join(value.split()).strip(" .。")
    if len(title) > limit:
        problems.append(f"{where}.{field} is longer than {limit} characters; {instead}")
        return ""
    return title


def message_id(given, known) -> str | None:
    """The id of `known` that the model meant by `given`, or None. Small models write an id
    the way the prompt shows it (`render_turns`: "[m-3] 2026-08-22 09:18 Ravi (user): ..."),
    with "#" or "^" before it, in another case, or as its number alone.

    >>> message_id("[m-3] 2026-08-22 09:18 Ravi (user)", {"m-3", "m-4"})
    'm-3'
    >>> message_id(4, {"m-3", "m-4"})
    'm-4'
    """
    if isinstance(given, bool) or not isinstance(given, (str, int, float)):
        return None
    if isinstance(given, float):
        if not given.is_integer():
            return None
        given = int(given)
    text = str(given).strip()
    if text in known:
        return text
    words = [w.strip(":,;.\"'()") for w in re.sub(r"[\[\]#^]", " ", text).split()]
    folded = {k.lower(): k for k in known}
    for word in words:
        if word in known or word.lower() in folded:
            return word if word in known else folded[word.lower()]
    number = next((w for w in words if w.isdigit()), None)
    if number is not None:  # "3" for the one id that ends in 3: m-3, D1:3, j-3
        ends = [k for k in known if re.search(r"(?<!\d)0*" + str(int(number)) + r"$", k)]
        if len(ends) == 1:
            return ends[0]
    return None


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _date(value, where: str, problems: list[str]) -> date | None:
    """A YYYY-MM-DD date, or None for none given; a value that is not a real date is
    cleaned to None (the run then dates the item by its message) and reported."""
    if value in (None, ""):
        return None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        problems.append(f"{where} {value!r} is not a YYYY-MM-DD date; left empty")
        return None


def strip_fence(text: str) -> str:
    """Some servers wrap JSON in a ``` fence even when asked for a JSON object."""
    text = (text or "").strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
