"""Names of the vault's layout (SPEC §2, §3), written once: the note types, their folders
and vaultmem's state folder. Standard library only, so that the daemon client can import
it without paying for the rest of vaultmem.

    >>> TYPE_FOLDERS["preference"]
    'Preferences'
"""

from __future__ import annotations

# Statements a memory note holds; extractors write them, and they decay when never recalled.
STATEMENT_TYPES = ("fact", "preference", "event", "procedure")
# Plus entity hubs (a person or project that memories link to).
MEMORY_TYPES = STATEMENT_TYPES + ("entity",)
# Plus session notes (a transcript, which memories cite).
NOTE_TYPES = MEMORY_TYPES + ("session",)

# Each note type's folder under the memory root (`Memory/` by default).
TYPE_FOLDERS = {
    "fact": "Facts",
    "preference": "Preferences",
    "event": "Events",
    "procedure": "Procedures",
    "entity": "Entities",
    "session": "Sessions",
}

# The tag of a memory whose day cannot be known (a transcript without times): it has no
# `valid_from`, and the context block and the export say "date unknown" instead of a date.
UNDATED_TAG = "vaultmem/undated"

# vaultmem's own state (config, index, state.db, daemon socket and logs) under the vault root.
STATE_DIR = ".vaultmem"

# The words people ask about a memory's slot with (its `attribute`, up to a ':'), in English
# and Chinese: "where does the user live?" / "用户住在哪个城市？" should find "We're settled in
# 厦门 now" although it says neither "live" nor "住在". Full-text search only (chunking).
SLOT_WORDS = {
    "home": "home live lives living where city town moved 住 住在 居住 城市 哪里 哪个城市 家",
    "origin": "from origin hometown grew up 来自 老家 家乡",
    "location": "where now 在哪",
    "employer": "work works working job company employer where 工作 公司 上班 单位 哪家公司",
    "job": "job title role work works occupation position profession 工作 职位 职业 做什么 公司 哪家公司",
    "name": "name called 名字 叫什么",
    "relationship": "relationship married partner single engaged 婚姻 结婚 对象",
    "family": "family 家人 家庭",
    "pet": "pet pets animal 宠物",
    "diet": "diet eat eats food eating 饮食 吃 吃什么",
    "editor": "editor code coding IDE programming 编辑器 写代码",
    "tool": "tool tools use uses software 工具 用",
    "likes": "like likes enjoy love prefer dislike 喜欢 爱 讨厌 喜不喜欢",
    "favorite": "favorite favourite 最喜欢",
    "project": "project working 项目",
    "hobby": "hobby hobbies 爱好",
}


def slot_words(attribute) -> str:
    """SLOT_WORDS of a memory's `attribute` ("likes:coffee" -> the words of "likes")."""
    return SLOT_WORDS.get(str(attribute or "").split(":", 1)[0].strip().lower(), "")
