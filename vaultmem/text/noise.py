"""What is not a memory, read from the words alone: greetings and fillers, one-off
requests, venting and tool output. The write policy's `screen` applies these to a whole
text (with the secret rules, which live in `policy/`); the extractor's sentence classifier
(`text/classify.py`) applies them to single sentences.
"""

from __future__ import annotations

import re

# Salutations: a text that is only one of them is a greeting; a sentence opening with one
# is a greeting when nothing else in it is worth keeping.
_SALUTATIONS = (
    r"hi|hey|hello|yo|hiya|howdy|good (?:morning|afternoon|evening|night)|bye|goodbye|"
    r"see (?:you|ya)|talk (?:to you )?(?:soon|later)|take care|cheers|nice to (?:meet|see|hear from) you|"
    r"(?:good|great|nice) to (?:see|hear from|talk to) you|long time no (?:see|talk|chat)|"
    r"hope you(?:'re| are) (?:well|good|doing well)|what's up|how are you|how have you been|"
    r"how's it going|missed you")
_ZH_SALUTATIONS = r"你好|您好|嗨|哈喽|早上好|早安|晚上好|晚安|再见|拜拜|回头聊|好久不见"
_GREETING_START = re.compile(rf"^(?:{_SALUTATIONS})\b", re.IGNORECASE)
_ZH_GREETING_START = re.compile(rf"^(?:{_ZH_SALUTATIONS})")
# Fillers: acknowledgements that carry nothing on their own.
_FILLERS = (r"thanks?(?: you)?(?: so much)?|thank you|ok(?:ay)?|sure|cool|great|nice|awesome|lol|"
            r"haha+|yes|no|yep|nope|谢谢|好的|嗯+|哈哈+")
# One of them, or several apart ("好的 ok", "ok, thanks so much!"; apart, so that no run of
# "嗯嗯嗯…" is tried every way it could be cut).
_GREETING_WORD = rf"(?:{_SALUTATIONS}|{_ZH_SALUTATIONS}|{_FILLERS})"
ONLY_GREETING = re.compile(rf"^{_GREETING_WORD}(?:[\s!.,~？?！。，]+{_GREETING_WORD})*[\s!.,~？?！。，]*$",
                           re.IGNORECASE)

# One-off requests ("can you summarise…"): a task for now, not a standing instruction.
_REQUEST = re.compile(
    r"^(?:(?:please|pls|hey|ok|okay)[,\s]+)*(?:(?:can|could|would|will) you\b|(?:please|pls)\s+(?!remember)|"
    r"(?:help me|give me|show me|tell me|write|summari[sz]e|translate|explain|list|generate|draft|"
    r"fix|check|find|create|make me|rewrite|convert|search|look up|let me know)\b)", re.IGNORECASE)
_ZH_REQUEST = re.compile(r"^(?:请|麻烦|帮我|能不能|可以帮|你能|你可以|给我|把这|帮忙)(?!.*记)")
STANDING = re.compile(r"\b(?:always|never|from now on|remember)\b|以后|记住", re.IGNORECASE)

# Venting: a hard marker is enough; a soft one needs excitement (an exclamation, shouting).
_VENT_HARD = re.compile(
    r"\b(?:hate (?:everything|everyone|my life|this|it all|all of this)|worst day (?:ever|of my life)|"
    r"can't take (?:it|this) anymore|fuck\w*|shit|damn it|kill me|i give up|sick of (?:this|everything|it all))\b"
    r"|烦死了|气死我了|气死了|受够了|最糟糕的一天|(?<!系统)(?<!电脑)(?<!程序)(?<!手机)崩溃了|去死(?!海)"
    # "妈的" the curse, not a mother's ("妈妈的生日", "我妈的手术", "姑妈的", "大妈的"),
    # which is how Chinese says "mom's"
    r"|(?<![妈我她姨姑舅婶岳干后继亲老大姥奶户])妈的|讨厌一切|什么都讨厌", re.IGNORECASE)
_VENT_SOFT = re.compile(
    r"\b(?:so (?:angry|pissed|furious|frustrated|annoyed|done)|fed up|ugh+|argh+|"
    r"worst day|f+u+c+k|sh[i1]t|screw (?:this|it|them)|can'?t take (?:it|this)|want to scream|sick of)\b"
    r"|好烦|烦人|气人|太糟了|糟透了|气死|烦死|崩溃|受不了了|(?<![体做跳早课])操(?![场作心练守])", re.IGNORECASE)
_SHOUTED_WORDS = re.compile(r"\b[A-Z]{4,}\b.*\b[A-Z]{4,}\b")

TOOL_OUTPUT = re.compile(r"^(```|\$ |>>> |Traceback|Tool (call|result)|\{\s*\")|^\[?(tool|function)[_ ]",
                   re.IGNORECASE)


def is_venting(text: str) -> bool:
    """Strong emotion with nothing durable: a hard marker, a soft one said with an
    exclamation or shouting, or a shouted text with several exclamations."""
    if _VENT_HARD.search(text):
        return True
    marks = text.count("!") + text.count("！")
    letters = [c for c in text if c.isalpha() and c.isascii()]
    shouting = len(letters) >= 12 and sum(c.isupper() for c in letters) / len(letters) > 0.6
    excited = marks >= 1 or shouting or bool(_SHOUTED_WORDS.search(text))
    return bool(_VENT_SOFT.search(text) and excited) or (shouting and marks >= 2)


def is_request(sentence: str, chinese: bool | None = None) -> bool:
    """A one-off request ("can you…", "帮我…"); `chinese` picks the language's rule (None: either)."""
    s = sentence.strip()
    if chinese is None:
        return bool(_REQUEST.match(s) or _ZH_REQUEST.match(s))
    return bool((_ZH_REQUEST if chinese else _REQUEST).match(s))


def opens_with_greeting(sentence: str, chinese: bool) -> bool:
    """The sentence starts with a salutation ("Hey Mel! …", "好久不见…")."""
    return bool((_ZH_GREETING_START if chinese else _GREETING_START).match(sentence.strip()))
