"""The LLM's subject, attribute and value in the offline extractor's terms, so the write policy
supersedes on them whichever extractor and wording made a memory.
"""

from __future__ import annotations

import re

from vaultmem.text.pattern_words import PETS, RELATIONS

# The LLM's words for a slot -> the offline extractor's name for it (text/patterns.py), so
# a later statement supersedes an earlier one whichever extractor and wording made them.
_ATTRIBUTES = {
    "home": ("home", "city", "home_city", "current_city", "city_of_residence", "residence",
             "location_of_residence", "place_of_residence", "lives_in", "living_in", "lives", "address",
             "home_address", "居住地", "住址", "住在", "城市", "所在城市", "现居地"),
    "origin": ("origin", "hometown", "home_town", "from", "birthplace", "place_of_birth", "家乡", "老家"),
    "employer": ("employer", "company", "works_at", "work_at", "works_for", "workplace", "organization",
                 "organisation", "公司", "单位", "雇主", "工作单位"),
    "job": ("job", "job_title", "title", "role", "occupation", "profession", "position", "career", "work",
            "职业", "工作", "职位"),
    "name": ("name", "full_name", "first_name", "名字", "姓名"),
    "relationship": ("relationship", "relationship_status", "marital_status", "婚姻状况"),
    "diet": ("diet", "dietary_preference", "dietary_restriction", "饮食"),
    "editor": ("editor", "code_editor", "text_editor", "ide", "编辑器"),
}
_SYNONYMS = {word: name for name, words in _ATTRIBUTES.items() for word in words}
# The attribute names the prompt gives (extract/llm_prompt.py): these and the heads of its
# `family:`, `pet:`, `likes:` and `tool:` forms.
PROMPT_SLOTS = frozenset(_ATTRIBUTES) | {"family", "pet", "likes", "tool"}
_LIKES = {"likes", "like", "loves", "love", "enjoys", "enjoy", "prefers", "preference", "喜欢", "爱"}
_DISLIKES = {"dislikes", "dislike", "hates", "hate", "不喜欢", "讨厌"}
_NO = {"no", "false", "dislike", "dislikes", "hate", "hates", "negative", "否", "不", "不喜欢", "讨厌"}
_THE_USER = {"i", "me", "my", "myself", "the user", "user", "the speaker", "我", "用户", "本人"}


def normalise_slot(subject: str | None, attribute: str | None, value: str | None,
                   speaker: str = "") -> tuple[str | None, str | None, str | None]:
    """The LLM's subject/attribute/value in the offline extractor's terms: subject "user" for
    the user, else the name as the offline side writes it (the policy compares slots
    case-blind), the message's speaker when the model named none; attribute synonyms onto
    the offline names, likes and dislikes onto `likes:<object>` = yes/no.

    >>> normalise_slot("I", "lives_in", "Denver")
    ('user', 'home', 'Denver')
    >>> normalise_slot("The user", "dislikes", "Running")
    ('user', 'likes:running', 'no')
    """
    from vaultmem.extract.speakers import display_name

    subject = " ".join((subject or "").split()).strip(" .")
    if subject.lower() in _THE_USER:
        subject = "user"
    if not attribute:
        return subject or None, None, value
    subject = subject or display_name(speaker, {}, False)[1]
    key = re.sub(r"[\s_-]+", "_", attribute.strip().lower()).strip("_")
    head, colon, obj = key.partition(":")
    obj = " ".join(obj.replace("_", " ").split())
    if not colon and head in _LIKES | _DISLIKES and value:
        head, obj, value = head, " ".join(value.lower().split()).strip(" ."), "yes"
    if obj and head in _LIKES | _DISLIKES:
        liked = (value or "yes").strip().lower() not in _NO
        return subject, f"likes:{obj}", "yes" if liked == (head in _LIKES) else "no"
    if head.startswith(("favorite_", "favourite_")) and not colon:
        head, obj = "favorite", head.split("_", 1)[1].replace("_", " ")
    elif head in ("favourite", "favorites", "favourites"):
        head = "favorite"
    elif head in RELATIONS and not colon:
        head, obj = "family", head
    elif head in PETS and not colon:
        head, obj = "pet", head
    else:
        head = _SYNONYMS.get(head, head)
    return subject, f"{head}:{obj}" if obj else head, value
