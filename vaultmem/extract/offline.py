"""The offline extractor: English and Chinese chat turns -> memory `Candidate`s, by rules.

It works sentence by sentence. A sentence becomes memory when it is a first-person
statement (or a standing instruction, or a request to remember); greetings, thanks,
questions, one-off requests and reactions to the other person do not. Relative dates are
resolved against the turn's (or session's) time, and the sentence is rewritten in the third
person with the speaker's name, so the memory stands on its own:
"I went to a support group yesterday" -> "On 2023-05-07, Caroline went to a support group."

Rejections: `extract_offline` returns only what should be remembered, unless
`include_rejected=True`, which adds candidates with `rejected_reason` set for turns that
looked like memory but were turned down (emotional venting), so the run can report them.
`classify_turn` / `classify_text` say why any turn yields nothing.
"""

from __future__ import annotations

import re
from datetime import datetime

from vaultmem.extract.candidate import Candidate, make_title
from vaultmem.extract.classify import (
    assistant_statements, classify_text, correction_prefix, first_person_statement,
    is_context_statement, is_informative, is_past, is_reaction, procedure_prefix, remember_prefix,
    shared_images, split_sentences, strip_discourse)
from vaultmem.extract.corrections import find_correction
from vaultmem.extract.dates import DateMatch, find_date
from vaultmem.extract.patterns import _PETS, _RELATIONS, JOBS, KNOWN_TOOLS, Detection, detect
from vaultmem.extract.rewrite import capitalise, has_first_person, is_chinese, to_third_person
from vaultmem.policy import is_request

MAX_WORDS = 40
_GENERIC_SPEAKERS = {"", "user", "human", "me", "you", "customer", "assistant"}
_LOWER_STARTS = {"it", "the", "this", "that", "there", "a", "an", "these", "those", "they",
                 "their", "going", "everyone", "everything", "some", "lots", "now", "it's", "that's",
                 "there's", "here's", "they're", "they've", "what", "when", "how", "so", "all",
                 "people", "seeing", "being", "having", "my", "one", "every", "in", "on",
                 "around", "during", "since", "after", "before"}
_ABSOLUTE = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|"
                       r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2}\b"
                       r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:January|February|March|April|May|June|July|"
                       r"August|September|October|November|December)\b|\b\d{4}-\d{2}-\d{2}\b|\d{1,2}月\d{1,2}[日号]")
_BOUND = re.compile(r"(?:\b(?:until|till|through|up to)|到|直到)\s*$", re.I)
_COPULA = re.compile(r"\b(?:is|was|are|were|be)\s+$|是$", re.I)
_IN_PLACE = re.compile(r"\b(?:since|before|after|by|from|when|because|that|than)\s+(?:\w+\s+){0,6}$", re.I)
_ENTITY_SKIP = {"I", "The", "A", "An", "It", "This", "That", "On", "In", "Around", "My", "We",
                "They", "Their", "There", "He", "She", "His", "Her", "And", "But", "So", "Going",
                "Last", "Next", "Yesterday", "Today", "Tomorrow", "Thanks", "Plus", "Also",
                "Just", "Lately", "Since", "Now", "Family", "Everyone", "Here", "What", "When"}


def classify_turn(turn) -> tuple[str, str]:
    """(kind, reason) for one turn: kind is 'memory' when something may be extracted, else
    'tool', 'empty', 'greeting', 'filler', 'question', 'request' or 'venting'."""
    role = (getattr(turn, "role", "user") or "user").lower()
    if role not in ("user", "assistant"):
        return "tool", f"{role} turn"
    return classify_text(getattr(turn, "text", "") or "", role)


def extract_offline(turns, session_time: datetime | None = None, user_names=None,
                    include_rejected: bool = False) -> list[Candidate]:
    """Candidates from the user turns (and assistant turns that restate a user fact).

    `turns` are `Turn`-like objects (`id`, `speaker`, `role`, `text`, `time`); relative dates
    resolve against `turn.time`, else `session_time`. `user_names` maps a speaker to the
    name memories use for them (default: the speaker itself; "user" becomes "The user").
    """
    turns = list(turns)
    names = dict(user_names or {})
    user_speakers = {t.speaker for t in turns if (t.role or "user").lower() == "user"}
    assistant_subject = next(iter(user_speakers)) if len(user_speakers) == 1 else "user"
    vocatives = _vocatives(turns)
    # "Always ..." between friends is advice, not an instruction to an assistant: standing
    # instructions exist only where an assistant listens or one person talks.
    instructions = (any((t.role or "").lower() == "assistant" for t in turns)
                    or len(user_speakers) <= 1)
    out: list[Candidate] = []
    for turn in turns:
        kind, reason = classify_turn(turn)
        anchor = getattr(turn, "time", None) or session_time
        fix = find_correction(turn.text or "", is_chinese(turn.text or "")) \
            if (turn.role or "user").lower() == "user" and kind != "tool" else None
        if fix is not None:  # the turn fixes one detail said before: that is all it says
            out.append(_correction(turn, fix, names))
            continue
        if kind == "venting":
            if include_rejected:
                out.append(_rejected(turn, names, reason))
            continue
        if kind != "memory":
            continue
        if turn.role.lower() == "assistant":
            sentences = assistant_statements(turn.text)
            speaker = assistant_subject
        else:
            sentences = split_sentences(turn.text)
            speaker = turn.speaker
        images = shared_images(turn.text) if turn.role.lower() == "user" else []
        out.extend(_turn_candidates(turn.id, speaker, names, sentences, anchor, turn.role.lower(),
                                    vocatives, images, instructions))
    return out


def display_name(speaker: str, names: dict, chinese: bool) -> tuple[str, str]:
    """(name used inside statements, subject key): ('Caroline', 'Caroline'), ('the user', 'user')."""
    shown = names.get(speaker, speaker) or ""
    if shown.strip().lower() in _GENERIC_SPEAKERS:
        return ("用户" if chinese else "the user"), "user"
    return shown, shown


def _strip_vocative(sentence: str, vocatives: set[str]) -> str:
    """"Hey Caroline, since we ..." -> "since we ...": the person addressed is not the topic."""
    for word in vocatives:
        lead = r"^(?:(?:hey|hi|oh|wow|yeah|yes|thanks|thank you)\W+)?"
        sentence = re.sub(rf"{lead}{re.escape(word)}\w*\s*[,!.\-–—]+\s*", "", sentence, flags=re.I)
        sentence = re.sub(rf",\s*{re.escape(word)}\w*(?=\s*[.!?]*$)", "", sentence)
    return sentence


def _strip_names(sentence: str, vocatives) -> str:
    """The sentence without the names people call each other by: "Remember Jon, just do it"
    is not news about anyone named Jon."""
    for word in vocatives:
        sentence = re.sub(rf"\b{re.escape(word)}\w*\b", "", sentence)
    return sentence


def _vocatives(turns) -> set[str]:
    """Speaker names and their short forms ("Mel" for Melanie), as people call each other."""
    names = {t.speaker for t in turns if t.speaker and t.speaker.lower() not in _GENERIC_SPEAKERS}
    return {n[:k] for n in names for k in (3, len(n)) if len(n) >= 3 and n[:1].isupper()}


_KIN = "|".join(_RELATIONS + _PETS)
_NAMED_IN_PASSING = re.compile(rf"\b([A-Z][a-z]+),? (?:my|our) ({_KIN})\b|\b(?:my|our) ({_KIN}),? ([A-Z][a-z]+)\b")
_HOUSEHOLD = re.compile(r"^(.*\b(?:live|lives|living|moved|based|settled)\s+(?:in|to)\s+(?:the\s+)?"
                        r"[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*)\s+with\s+((?:my|our)\s+.+)$", re.I)


def split_slots(sentence: str, chinese: bool) -> list[str]:
    """A sentence that sets several things ("I'm Ravi, I work as a test engineer at Kestrel
    and I live in Cleveland"; "我叫林嘉怡，在成都的锦程新能源做财务分析师") as one clause per
    thing, so each is a memory of its own that a later change can supersede alone. Clauses
    that set nothing stay with the clause before them; a sentence that sets at most one
    thing is returned whole."""
    household = _HOUSEHOLD.match(sentence) if not chinese else None
    if (household and re.search(r"\b[A-Z][a-z]+", household.group(2))
            and (detect(household.group(1), False) or Detection("", "")).attribute == "home"):
        # "I live in Cleveland with my partner Noor": a move changes the first, not the second
        # (only where someone is named: "with my partner" alone says little on its own)
        return [household.group(1), "I live with " + household.group(2)]
    parts = re.split(r"(，|,\s+)", sentence)
    if len(parts) < 3:
        return [sentence]
    clauses, seps = parts[0::2], parts[1::2]
    kinds = [_clause_slot(c, chinese, first=i == 0) for i, c in enumerate(clauses)]
    if len({k for k in kinds if k}) < 2:
        return [sentence]
    out: list[str] = []
    for i, (clause, kind) in enumerate(zip(clauses, kinds)):
        if out and not kind:
            out[-1] += seps[i - 1] + clause
        else:
            out.append(_with_subject(clause, chinese) if i else clause)
    return out


def _clause_slot(clause: str, chinese: bool, first: bool) -> str | None:
    """The attribute a clause sets on its own (with its subject supplied), or None."""
    found = detect(clause if first else _with_subject(clause, chinese), chinese)
    return found.attribute if found and found.attribute else None


def _with_subject(clause: str, chinese: bool) -> str:
    """"在成都的锦程做分析师" -> "我在成都的锦程做分析师"; "backend developer at Pellucid" ->
    "I'm a backend developer at Pellucid": the subject a listing leaves out."""
    clause = clause.strip()
    if chinese:  # "叫咪咪" names what the clause before it named, not the speaker
        return clause if clause.startswith(("我", "他", "她", "叫", "是", "也", "还", "就", "都", "又")) \
            else "我" + clause
    if re.match(r"(?i)(?:an? )?(?:[\w-]+ ){0,3}(?:%s)s?\b" % "|".join(JOBS), clause) \
            and not re.match(r"(?i)(?:I|we|my|he|she|they)\b", clause):
        return "I'm " + ("" if re.match(r"(?i)an? ", clause) else "a ") + clause
    return clause


def _turn_candidates(turn_id, speaker, names, sentences, anchor, role, vocatives=frozenset(),
                     images=(), instructions=True) -> list[Candidate]:
    pieces: list[dict] = []
    pending_correction = False
    sentences = [part for raw in sentences for part in split_slots(raw, is_chinese(raw))]
    for raw in sentences:
        raw = _strip_vocative(raw, vocatives)
        chinese = is_chinese(raw)
        name, subject = display_name(speaker, names, chinese)
        sentence, corrected = correction_prefix(raw, chinese)
        if corrected and not sentence:
            pending_correction = True
            continue
        piece = _piece(sentence, name, subject, chinese, anchor,
                       correction=corrected or pending_correction, context=bool(pieces),
                       instructions=instructions, vocatives=vocatives)
        if piece is None:
            continue
        pending_correction = pending_correction and not piece["typed"]
        if role == "assistant":
            piece["importance"] = min(piece["importance"], 0.5)
            piece["tags"].append("from-assistant")
        pieces.append(piece)
    out = [_candidate(group, turn_id, speaker) for group in _merge(pieces)]
    return out + [_shared_image(caption, turn_id, speaker, names) for caption in images]


def _shared_image(caption: str, turn_id: str, speaker: str, names: dict) -> Candidate:
    """What was in a photo the speaker shared: questions ask about those too."""
    name, _ = display_name(speaker, names, is_chinese(caption))
    caption = re.sub(r"^(?:an?\s+)?(?:photo(?:graph|graphy)?|picture|pic|image)\s+of\s+", "",
                     caption.strip().rstrip("."), flags=re.I)
    content = _finish(f"{capitalise(name)} shared a photo of {caption}", False)
    return Candidate(content=content, type="event", importance=0.3, source_messages=[turn_id],
                     entities=_entities([{"name": name, "original": caption}], None),
                     tags=["photo"], speaker=speaker)


def _piece(sentence, name, subject, chinese, anchor, correction, context,
           instructions: bool = True, vocatives=frozenset()) -> dict | None:
    """One sentence as a memory fragment, or None when it is not memory."""
    if is_reaction(sentence) or re.search(r"[?？]\s*$", sentence):
        return None
    remember, rest = remember_prefix(sentence, chinese) if instructions else (False, sentence)
    attributed, informative = False, False
    if remember:
        sentence = rest
    procedure = instructions and procedure_prefix(sentence, chinese)
    if remember and not has_first_person(sentence):
        procedure = instructions and (procedure or chinese
                                      or not re.match(r"(?i)(?:the|a|an|\w+'s)\b", sentence))
    detection = None
    if not procedure:
        sentence = strip_discourse(sentence, chinese)
        if not remember and is_request(sentence, chinese):
            # "(random one:) write me a haiku about Pistachio": asked once, not a fact; but who
            # it names in passing stays known ("Pistachio, our cat" -> the user's cat)
            named = None if chinese else _NAMED_IN_PASSING.search(sentence)
            if named is None:
                return None
            sentence = f"my {named.group(2) or named.group(3)} is called {named.group(1) or named.group(4)}"
        detection = detect(sentence, chinese)
        attributed = not remember and not first_person_statement(sentence, chinese)
        if detection and attributed:
            # The pattern knows it is the speaker's own ("11月2号入职明帆物流"): say whose it is
            attributed = False
            if chinese and not re.match(r"\s*(?:我|他|她)", sentence):
                sentence = "我" + sentence.lstrip()
        informative = is_informative(_strip_names(sentence, vocatives), chinese)
        if attributed and not (informative
                               or (context and is_context_statement(sentence, chinese))):
            return None
    if detection and re.search(r"\bactually\b|其实", sentence, re.I):
        correction = True
    if detection and correction:
        sentence = re.sub(r"\bactually\s+", "", sentence, flags=re.I).replace("其实", "")
    elif not detection and not remember and not procedure:
        correction = False  # "actually" in passing is not a correction
    if (detection and detection.kind == "preference" and not chinese
            and not re.search(r"\b(?:I|I'm|I've|I'd|my)\b", sentence) and re.search(r"\bme\b", sentence)):
        # "bouldering is not for me": "not for the user" would garble it; it is said as quoted
        sentence = f'I said: "{capitalise(sentence.rstrip(".!"))}."'
    match = find_date(sentence, anchor) if anchor else None
    text, valid_from, valid_to = _with_date(sentence, match, name, chinese, procedure)
    if procedure:
        text = _instruction(text, name, chinese)
    words = len(text.split()) if not chinese else len(text) // 2
    if detection:
        kind = detection.type
    elif procedure:
        kind = "procedure"
    else:
        kind = "event" if ((valid_from and not valid_to) or is_past(sentence)) else "fact"
    tags = [detection.kind] if detection else (["instruction"] if procedure else [])
    if correction and detection:
        tags.append("correction")
    if remember:
        tags.append("remember")
    importance = detection.importance if detection else (0.8 if procedure else 0.5)
    if remember:
        importance = 0.9
    elif correction and detection:
        importance = max(importance, 0.8)
    title = make_title(text.split("：" if chinese else ": ", 1)[-1]) if procedure else ""
    return {"text": _limit(text, chinese), "type": kind, "title": title, "importance": importance,
            "detection": detection, "subject": subject, "valid_from": valid_from,
            "valid_to": valid_to, "tags": tags, "correction": bool(correction and detection),
            "typed": bool(detection or procedure or remember), "words": words,
            "dated": match is not None, "original": sentence, "name": name, "attributed": attributed,
            "standalone": not attributed or informative or remember or procedure}


def _with_date(sentence: str, match: DateMatch | None, name: str, chinese: bool, procedure: bool):
    """The sentence in the third person with its date made absolute."""
    lang = "zh" if chinese else "en"
    if match is None:
        return _finish(to_third_person(sentence, name) if not procedure else sentence, chinese), None, None
    before, after = sentence[:match.start], sentence[match.end:]
    if _COPULA.search(before):  # "my birthday is March 3": a recurring date, not an event
        return _finish(to_third_person(sentence, name), chinese), None, None
    if _ABSOLUTE.search(sentence[match.start:match.end]) and not procedure:
        # "the talk is on November 26" names its day already: kept in the speaker's words (the
        # day is still `valid_from`); only "yesterday", "next Friday" need making absolute
        return _finish(to_third_person(sentence, name), chinese), match.date, None
    if _BOUND.search(before):
        text = before + match.label(lang) + after
        anchor_day = match.anchor
        return _finish(to_third_person(text, name), chinese), anchor_day, match.date
    if procedure:
        return _finish(before + match.label(lang) + after, chinese), None, None
    if _IN_PLACE.search(before) and not chinese:
        phrase = match.phrase(lang)
        phrase = phrase[:1].lower() + phrase[1:]
        if re.search(r"\b(?:since|before|after|by|from)\s+$", before, re.I):
            phrase = match.label(lang)
        return _finish(to_third_person(before + phrase + after, name), chinese), match.date, None
    joiner = "" if chinese else " "
    rest = re.sub(r"\s{2,}", " ", (before.rstrip(" ,") + joiner + after.lstrip(" ,")).strip())
    rest = re.sub(r"\s+([,.!?;])", r"\1", rest).strip(" ,，")
    body = to_third_person(rest, name)
    if chinese:
        return _finish(f"{match.phrase(lang)}，{body}", chinese), match.date, None
    first = body.split(" ", 1)[0].lower()
    if first in _LOWER_STARTS or first.endswith("ing"):
        body = body[:1].lower() + body[1:]
    return _finish(f"{match.phrase(lang)}, {body}", chinese), match.date, None


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0].lower().strip(",")
    if first in _LOWER_STARTS or first in {"his", "her", "its", "our", "he", "she", "we", "one"}:
        return text[:1].lower() + text[1:]
    return text


def _instruction(text: str, name: str, chinese: bool) -> str:
    body = to_third_person(text, name)
    if chinese:
        return f"{name}的长期要求：{body}"
    body = body[:1].lower() + body[1:] if not body.startswith(("I ", name)) else body
    return capitalise(f"{name}'s standing instruction: {body}")


def _finish(text: str, chinese: bool) -> str:
    text = re.sub(r"\s+", " ", text).strip().strip(",，;:；：").lstrip("-–—• ")
    text = capitalise(text)
    if chinese:
        return text if re.search(r"[。！？.!?]$", text) else text + "。"
    text = re.sub(r"[!?]+$", ".", text)
    return text if re.search(r"[.!…\"')]$", text) else text + "."


def _limit(text: str, chinese: bool) -> str:
    if chinese:
        return text if len(text) <= 2 * MAX_WORDS else text[: 2 * MAX_WORDS - 1] + "…"
    words = text.split()
    return text if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS - 1]).rstrip(",;") + "…"


def _merge(pieces: list[dict]) -> list[list[dict]]:
    """Plain statements of one turn go together (up to MAX_WORDS) so a memory keeps its
    context; typed facts, instructions and each new date start their own memory."""
    groups: list[list[dict]] = []
    for piece in pieces:
        last = groups[-1] if groups else None
        joinable = (last is not None and not last[0]["typed"] and not piece["typed"]
                    and not piece["dated"]
                    and sum(p["words"] for p in last) + piece["words"] <= MAX_WORDS)
        if joinable:
            last.append(piece)
        elif piece["standalone"]:
            groups.append([piece])
    return groups


def _candidate(group: list[dict], turn_id: str, speaker: str) -> Candidate:
    head = group[0]
    chinese = is_chinese(head["text"])
    content = ("" if chinese else " ").join(p["text"] for p in group)
    if head["attributed"]:  # someone else's news, told by the speaker: say who told it
        content = (f"{head['name']}说：{content}" if chinese
                   else capitalise(f"according to {head['name']}, {_lower_first(content)}"))
        content = _limit(content, chinese)
    detection: Detection | None = head["detection"]
    return Candidate(
        content=content,
        type=head["type"],
        importance=max(p["importance"] for p in group),
        source_messages=[turn_id],
        entities=_entities(group, detection),
        subject=head["subject"] if detection else None,
        attribute=detection.attribute if detection else None,
        value=detection.value if detection else None,
        valid_from=head["valid_from"],
        valid_to=head["valid_to"],
        tags=head["tags"],
        title=head["title"],
        correction=head["correction"],
        speaker=speaker,
    )


def _entities(group: list[dict], detection: Detection | None) -> list[str]:
    found: list[str] = []
    name = group[0]["name"]
    if name and name not in ("the user", "用户"):
        found.append(name)
    if detection:
        found.extend(e for e in detection.entities if e)
    for piece in group:
        text = piece["original"]
        for m in re.finditer(r"(?<![\w'])([A-Z][\w&+-]*(?:'[A-Z]\w*)?(?:\s+(?:of\s+)?[A-Z][\w&+-]*)*)", text):
            words = m.group(1).split()
            while words and words[0] in _ENTITY_SKIP:
                words = words[1:]
            while words and (words[-1] in _ENTITY_SKIP or words[-1] in _months_days()):
                words = words[:-1]
            at_start = not text[:m.start()].strip(" \"'(")
            if at_start and len(words) == 1 and not words[0].isupper():
                continue  # a capital that only starts the sentence names nothing
            entity = " ".join(words).rstrip(".")
            if entity and len(entity) > 1:
                found.append(entity)
        for tool in KNOWN_TOOLS:
            if re.search(rf"(?<![\w]){re.escape(tool)}(?![\w])", text, re.I) and len(tool) > 2:
                found.append(tool)
        for m in re.finditer(r"(?:叫|和|跟)([\u4e00-\u9fff]{2,3})(?=[一起去说聊见吃玩，。！\s]|$)", text):
            found.append(m.group(1))
    unique: list[str] = []
    for entity in found:
        entity = entity.rstrip(".")
        if entity.lower() not in {u.lower() for u in unique} and entity not in _months_days():
            unique.append(entity)
    # "St Mary" and "Hospital" are parts of "St Mary's Hospital", not entities of their own
    unique = [e for e in unique if not any(e != o and re.search(rf"\b{re.escape(e)}\b", o) for o in unique)]
    return unique[:6]


def _months_days() -> set[str]:
    from vaultmem.extract.dates import MONTHS, WEEKDAYS
    return set(MONTHS) | {d.capitalize() for d in WEEKDAYS}


def _correction(turn, fix, names: dict) -> Candidate:
    chinese = is_chinese(turn.text)
    name, _ = display_name(turn.speaker, names, chinese)
    return Candidate(content=_limit(_finish(to_third_person(turn.text.strip(), name), chinese), chinese),
                     type="fact", importance=0.8, source_messages=[turn.id], speaker=turn.speaker,
                     corrects=fix, correction=True, tags=["correction"])


def _rejected(turn, names: dict, reason: str) -> Candidate:
    chinese = is_chinese(turn.text)
    name, _ = display_name(turn.speaker, names, chinese)
    return Candidate(content=_limit(_finish(to_third_person(turn.text.strip(), name), chinese), chinese),
                     type="fact", importance=0.0, source_messages=[turn.id], speaker=turn.speaker,
                     rejected_reason=reason)

