"""Values of a kind, as the frames look for them: a place, an organisation, a person's name,
a tool of a kind (editor, language, phone, notes app, ...), in English and Chinese.

    >>> place_en("ugh the commute from the new place in Oakland is brutal"), org_zh("11月2号入职明帆物流了")
    ('Oakland', '明帆物流')
    >>> tools_in("I only use Vim for commit messages, everything else is in Cursor")
    [('Vim', 'editor'), ('Cursor', 'editor')]
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultmem.text.zh_names import ORGANISATIONS, PLACES

CAP = r"[A-Z][\w'&.-]*"
_JOINERS = r"(?:de|da|do|del|della|di|du|la|le|of|upon|on|am|an|im|sur|y|and)"
NAME_SPAN = rf"{CAP}(?:(?:\s+{_JOINERS})?\s+{CAP}){{0,3}}"
NOT_NAMES = frozenset("""I I'm I've I'd I'll The A An It It's This That These Those My Our We We're Their They He She
His Her Its On In At To From For With And But So Or Also Just Now Then Here There What When Where Which Who Why How
Yes No Ok Okay Oh Hey Hi Hello Thanks Thank Sorry Well Anyway Actually Honestly Still Btw Lol Ugh Wow Today Tomorrow
Yesterday Tonight Next Last This Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March
April May June July August September October November December Christmas Easter Thanksgiving Year Big Good
Great Bad Quick Update News Work Home Mom Mum Dad Family Everyone Everything Nothing Something Someone AI""".split())
_ORG_WORDS = (r"Inc|Inc\.|LLC|Ltd|Labs?|Health|Healthcare|Bank|Studios?|Systems|Group|Capital|Partners|"
              r"Technologies|Technology|Tech|Software|Solutions|Foods?|Freight|Logistics|Robotics|Motors|"
              r"University|College|School|Hospital|Clinic|Institute|Consulting|Media|Games|Airlines?|"
              r"Insurance|Pharma|Energy|Analytics|AI|Cloud|Networks|Corp|Corporation|Company|Co")
_PLACE_AFTER = re.compile(rf"\b(?:in|to|into|from|near|outside|around)\s+(?:the\s+)?({NAME_SPAN})")
_AT_ORG = re.compile(rf"\b(?:at|for|with|from|by|joined|join|joining|left|quit|leaving)\s+(?:the\s+)?({NAME_SPAN})")
ZH_PLACE_SUFFIX = re.compile(r"[\u4e00-\u9fff]{1,5}?(?:市|区|县|省|镇|州|岛|新区|街道)(?![\u4e00-\u9fff]*(?:公司|医院|大学))")
ZH_ORG = re.compile(r"([\u4e00-\u9fffA-Za-z0-9]{2,10}?)(公司|集团|科技|银行|医院|大学|学院|研究院|工作室|事务所|物流|"
                     r"传媒|网络|软件|证券|基金|保险|汽车|游戏|咨询|律所|设计院)")


def clean_name(span: str) -> str | None:
    words = span.split()
    while words and (words[0] in NOT_NAMES or words[0].lower() in _JOINERS_SET):
        words = words[1:]
    while words and (words[-1] in NOT_NAMES or words[-1].lower() in _JOINERS_SET):
        words = words[:-1]
    name = " ".join(words).rstrip(".,'’").removesuffix("'s").removesuffix("’s")
    return name if len(name) > 1 and not name.isupper() or name in _SHORT_OK else None


_JOINERS_SET = frozenset(_JOINERS.strip("(?:)").split("|"))
_SHORT_OK = frozenset({"NYC", "LA", "SF", "DC", "UK", "US", "USA", "HK"})


def place_en(text: str) -> str | None:
    """A capitalised place named after in/to/from ("moved to San Diego"), or before a home
    noun ("the Lisbon flat")."""
    for m in _PLACE_AFTER.finditer(text):
        name = clean_name(m.group(1))
        if name and not _ORG_SUFFIX.search(name) and not is_tool(name):
            return name
    m = re.search(rf"({NAME_SPAN})\s+(?:flat|apartment|apt|place|house|condo|home|office)\b", text)
    if m:
        name = clean_name(m.group(1))
        if name and not is_tool(name):
            return name
    return None


_ORG_SUFFIX = re.compile(rf"\b(?:{_ORG_WORDS})$")


def org_en(text: str) -> str | None:
    for m in _AT_ORG.finditer(text):
        name = clean_name(m.group(1))
        if name and not is_tool(name) and name not in KNOWN_PLACES_EN:
            return name
    m = re.search(rf"({NAME_SPAN}\s+(?:{_ORG_WORDS}))\b", text)
    return clean_name(m.group(1)) if m else None


KNOWN_PLACES_EN = frozenset("""London Paris Berlin Tokyo Beijing Shanghai Denver Chicago Austin Boston Seattle Portland
Lisbon Porto Madrid Barcelona Rome Milan Amsterdam Dublin Oakland Brooklyn Queens Manhattan Toronto Vancouver Montreal
Sydney Melbourne Singapore Dubai Mumbai Delhi Bangalore Berkeley Atlanta Miami Houston Dallas Phoenix Raleigh
Cleveland Pittsburgh Philadelphia Denver Oslo Stockholm Copenhagen Helsinki Vienna Prague Munich Zurich Geneva Hamburg
Edinburgh Glasgow Manchester Bristol Leeds Cardiff Belfast Auckland Wellington Seoul Osaka Kyoto Taipei
Shenzhen Hangzhou Chengdu Xiamen Nanjing Wuhan""".split())


def place_zh(text: str) -> str | None:
    listed = [(m.start(), m.group(0)) for m in zh_listed_places().finditer(text)]
    suffixed = []
    for m in ZH_PLACE_SUFFIX.finditer(text):
        lead = re.match(r"[了到在去住搬从回往的是和跟我们你他她家个一这那]*", m.group(0)).end()
        name = m.group(0)[lead:]
        if len(name) >= 2 and not any(s <= m.start() + lead < s + len(n) for s, n in listed):
            suffixed.append((m.start() + lead, name))
    spans = sorted(listed + suffixed)
    if not spans:
        return None
    start, name = spans[0]
    # "上海徐汇区": a city and the district inside it are one place
    end = start + len(name)
    for s, other in spans[1:]:
        if s == end:
            name, end = name + other, s + len(other)
        elif s < end and s + len(other) > end:
            name, end = text[start:s + len(other)], s + len(other)
    return re.sub(r"^(?:在|到|去|住|搬)+", "", name) or None


@lru_cache(maxsize=1)
def zh_listed_places() -> re.Pattern:
    return re.compile("|".join(map(re.escape, sorted(PLACES, key=len, reverse=True))))


def org_zh(text: str) -> str | None:
    for org in sorted(ORGANISATIONS, key=len, reverse=True):
        if org in text:
            return org
    m = re.search(r"(?:入职(?:了)?|加入(?:了)?|跳槽(?:到|去)(?:了)?|去了|进了|在|到)([\u4e00-\u9fffA-Za-z0-9]{2,12}?)"
                  r"(?:了)?(?:上班|工作|实习|做|当|入职|报到|$|[，。！])", text)
    if m and not re.search(r"家|里|这|那|公司$|^一家|^了|再|找|先|想|要|去|回|证明|手续|流程|职|岗|期", m.group(1)):
        name = m.group(1)
        if place_zh(name) != name:
            return re.sub(r"^[\u4e00-\u9fff]{1,4}的(?=[\u4e00-\u9fff]{2,})", "", name)
    m = ZH_ORG.search(text)
    if m and not m.group(1).startswith(("一家", "这家", "那家", "那个", "这个")) \
            and not re.search(r"[被把让给和跟的我你他她是在了]|那边|这边|有家|一家|哪家", m.group(1)):
        return re.sub(r"^(?:在|去|到|进|入职|加入)+", "", m.group(1) + m.group(2))
    return None


# --- tools by kind --------------------------------------------------------------------------

TOOL_KINDS = {
    "editor": ("VS Code", "VSCode", "Visual Studio Code", "Vim", "Neovim", "nvim", "Emacs", "Sublime Text",
               "Sublime", "PyCharm", "IntelliJ", "WebStorm", "Xcode", "Atom", "Zed", "Cursor", "Helix",
               "Android Studio", "Eclipse", "Visual Studio", "Notepad++", "RStudio", "Windsurf"),
    "language": ("Python", "Rust", "Go", "Golang", "JavaScript", "TypeScript", "Java", "Kotlin", "Swift",
                 "Ruby", "C#", "C\\+\\+", "Scala", "Elixir", "Haskell", "PHP", "Dart", "Julia", "Clojure", "Zig"),
    "framework": ("React", "Vue", "Angular", "Svelte", "Next.js", "Django", "Flask", "FastAPI", "Rails",
                  "Spring", "Laravel", "Flutter", "React Native", "SwiftUI", "Express", "Nuxt", "SolidJS"),
    "phone": ("iPhone", "Pixel", "Galaxy", "OnePlus", "Xiaomi", "Huawei", "华为", "小米", "苹果手机", "安卓"),
    "os": ("macOS", "Windows", "Linux", "Ubuntu", "Fedora", "Arch", "Debian", "ChromeOS"),
    "notes": ("Obsidian", "Notion", "Evernote", "Logseq", "Roam", "Bear", "OneNote", "Apple Notes", "飞书文档",
              "语雀", "印象笔记"),
    "browser": ("Chrome", "Firefox", "Safari", "Edge", "Arc", "Brave"),
    "database": ("PostgreSQL", "Postgres", "MySQL", "SQLite", "MongoDB", "Redis", "DynamoDB", "Snowflake"),
    "cloud": ("AWS", "GCP", "Azure", "阿里云", "腾讯云", "Vercel", "Heroku"),
}
_TOOL_OF = {t.replace("\\", "").lower(): kind for kind, tools in TOOL_KINDS.items() for t in tools}
_TOOL_RE = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted((t for tools in TOOL_KINDS.values() for t in tools),
                                                               key=len, reverse=True)) + r")(?![A-Za-z0-9_])", re.I)


def is_tool(name: str) -> bool:
    return name.lower() in _TOOL_OF


def tools_in(text: str) -> list[tuple[str, str]]:
    """(tool as written, its kind) in order: [("Vim", "editor"), ("Cursor", "editor")]."""
    return [(m.group(1), _TOOL_OF[m.group(1).lower()]) for m in _TOOL_RE.finditer(text)
            if m.group(1).lower() in _TOOL_OF]
