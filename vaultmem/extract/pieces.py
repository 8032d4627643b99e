"""A turn's sentences as pieces of memory: each sentence read (patterns, frames, dates, who
it names), rewritten about the speaker and typed, or dropped as chat; then grouped into the
turn's candidates (`grouping`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from vaultmem.extract.clauses import split_slots
from vaultmem.extract.grouping import candidate, merge
from vaultmem.extract.speakers import display_name, strip_names, strip_vocative
from vaultmem.policy.candidate import Candidate, make_title
from vaultmem.text.chatter import (
    chatter,
    is_venting_sentence,
    leans_on_context,
    strip_lead_in,
    without_chat,
    without_clause,
    without_question,
    without_request,
)
from vaultmem.text.classify import (
    correction_prefix,
    first_person_statement,
    is_context_statement,
    is_informative,
    is_reaction,
    procedure_prefix,
    remember_prefix,
    sentence_kind,
    strip_discourse,
)
from vaultmem.text.dates import find_date
from vaultmem.text.frames import FRAME_KINDS, HEDGED, frame_detection
from vaultmem.text.frames import read as read_frame
from vaultmem.text.kinds import STANDING, content_words, plain_kind
from vaultmem.text.names import entities_of, names_someone, resolve_pronoun, the_one_named
from vaultmem.text.noise import is_request
from vaultmem.text.pattern_words import HEALTH, PETS, RELATIONS
from vaultmem.text.patterns import Detection, detect
from vaultmem.text.rewrite import capitalise, has_first_person, to_third_person
from vaultmem.text.script import is_chinese
from vaultmem.text.statements import frame_statement, says_little_else
from vaultmem.text.wording import finish, instruction_text, limit_words, lower_first, with_date

# what a request is for ("we want a go-to takeout place", "I'd like a build system that…",
# "我想发个朋友圈"), not a goal ("I want to learn Rust this year", "我今年想学日语")
_WANTS = re.compile(r"(?:I|we)(?:'d| would| really| just|\s)*\s*(?:want|need|like|am looking for|are looking for)\s+"
                    r"(?:a|an|some|the|to find|to get|to make|to write|help)\b|(?:I|we)'d like\b"
                    r"|我(?:们)?(?:想|需要|要)(?!念|吃)(?!.*(?:今年|明年|以后|将来|一直|打算|这辈子))", re.I)
_KIN = "|".join(RELATIONS + PETS)
_NAMED_IN_PASSING = re.compile(rf"\b([A-Z][a-z]+),? (?:my|our) ({_KIN})\b|\b(?:my|our) ({_KIN}),? ([A-Z][a-z]+)\b")


def turn_candidates(turn_id, speaker, names, sentences, anchor, role, vocatives=frozenset(),
                    images=(), instructions=True, known=None, asks=False) -> list[Candidate]:
    """`asks`: the turn asks something (a question its sentences may have lost: "我想先给他转
    两万块红包，手机银行一天能转这么多吗？"). `known`: the names the user writes, when an
    assistant listens (else None): news about no one in particular told to an assistant ("the
    rate in this house is 2 dollars now") is chat; told to a friend, it may be what the friend
    asks about later."""
    pieces: list[dict] = []
    pending_correction = False
    sentences = [part for raw in sentences for part in split_slots(raw, is_chinese(raw))]
    # a complaint ("honestly it's a nightmare…"): only what the rules type survives from it;
    # the rest of a turn that asks for something is the request's framing ("we want a takeout place")
    venting = any(is_venting_sentence(s, is_chinese(s)) for s in sentences)
    asking = role == "user" and (asks or any(sentence_kind(s) in ("request", "question") for s in sentences))
    antecedent = None  # the one person or pet the turn has named so far
    for raw in sentences:
        raw = strip_vocative(raw, vocatives)
        chinese = is_chinese(raw)
        raw = strip_lead_in(raw, chinese)
        if chatter(raw, chinese) and not detect(strip_discourse(raw, chinese), chinese):
            continue
        raw = without_chat(raw, chinese)
        if known is not None:   # told to an assistant: its task of the moment is no fact
            asked, raw = raw, without_question(without_request(raw, chinese), chinese)
            if raw != asked:    # "can you help me thank my manager Shivon?" names who "she" is next
                antecedent = the_one_named(asked, chinese, vocatives) or antecedent
        if not raw or "[REDACTED:" in raw:   # talk around a secret is no memory of its own
            continue
        raw = resolve_pronoun(raw, antecedent, chinese)
        antecedent = the_one_named(raw, chinese, vocatives) or antecedent
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
        if not piece["typed"] and (venting or (asking and _WANTS.match(piece["original"]))):
            continue
        if (known is not None and piece["attributed"] and not piece["typed"]
                and not chinese and not names_someone(piece["original"], known, piece["dated"])):
            piece["standalone"] = False
        naming = _naming_apart(piece, name, chinese)
        if naming is not None:
            pieces.append(naming)
        if role == "assistant":
            piece["importance"] = min(piece["importance"], 0.5)
            piece["tags"].append("from-assistant")
        pieces.append(piece)
    out = [candidate(group, turn_id, speaker) for group in merge(pieces)]
    return out + [_shared_image(caption, turn_id, speaker, names) for caption in images]


def _shared_image(caption: str, turn_id: str, speaker: str, names: dict) -> Candidate:
    """What was in a photo the speaker shared: questions ask about those too."""
    name, _ = display_name(speaker, names, is_chinese(caption))
    caption = re.sub(r"^(?:an?\s+)?(?:photo(?:graph|graphy)?|picture|pic|image)\s+of\s+", "",
                     caption.strip().rstrip("."), flags=re.I)
    content = finish(f"{capitalise(name)} shared a photo of {caption}", False)
    return Candidate(content=content, type="event", importance=0.3, source_messages=[turn_id],
                     entities=entities_of([{"name": name, "original": caption}], None),
                     tags=["photo"], speaker=speaker)


def _naming_apart(piece: dict, name: str, chinese: bool) -> dict | None:
    """"My daughter Yara's school nativity play is on December 14": a dated event that names
    someone in passing. The naming becomes a fact of its own (which a later change of that
    slot may supersede) and the sentence stays an event, said on its day."""
    found: Detection | None = piece["detection"]
    if (found is None or found.kind not in ("family", "pet") or not piece["valid_from"]
            or piece["valid_to"] or not found.entities):
        return None
    relation, who = found.attribute.split(":", 1)[-1], re.sub(r"['’]s$", "", found.value)
    text = (f"{name}的{relation}叫{who}。" if chinese else f"{capitalise(name)}'s {relation} is called {who}.")
    naming = dict(piece, text=text, bare=text, words=len(text.split()), dated=False, valid_from=None,
                  detection=replace(found, value=who, entities=[who]),
                  tags=list(piece["tags"]), title="")
    piece.update(detection=None, type="event", tags=[t for t in piece["tags"] if t != found.kind],
                 importance=min(piece["importance"], 0.6))
    return naming


def _piece(sentence, name, subject, chinese, anchor, correction, context,
           instructions: bool = True, vocatives=frozenset()) -> dict | None:
    """One sentence as a memory fragment, or None when it is not memory."""
    if is_reaction(sentence) or re.search(r"[?？]\s*$", sentence):
        return None
    remember, rest = remember_prefix(sentence, chinese) if instructions else (False, sentence)
    attributed, informative = False, False
    if remember:
        sentence = rest
    procedure = instructions and (procedure_prefix(sentence, chinese) or bool(STANDING.search(sentence)))
    if procedure and not chinese:
        sentence = re.sub(r"^(?:(?:also|and|so|oh|ok|okay|btw|plus)[,\s]+)+", "", sentence, flags=re.I)
    if remember and not has_first_person(sentence):
        procedure = instructions and (procedure or chinese
                                      or not re.match(r"(?i)(?:the|a|an|\w+'s)\b", sentence))
    detection = framed = None
    planned = False
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
        reading = read_frame(sentence, chinese)
        if reading is not None and reading.subject == "user" and not remember:
            if instructions and (reading.modality in ("negated", "hypothetical") or (
                    reading.modality == "plan" and HEDGED.search(sentence) and reading.attribute != "learning")):
                # (told to an assistant; between friends, plans and maybes are what they talk about)
                # talk of a change that did not (or may not) happen: not a memory of what holds;
                # it stays in the session note, where search still finds it; the rest of the
                # sentence ("…, my wife Dana matched into a residency there") may still be news
                rest = without_clause(sentence, reading.value, chinese)
                if not rest:
                    return None
                return _piece(rest, name, subject, chinese, anchor, correction, context, instructions, vocatives)
            if reading.modality == "plan" and not _dated_ahead(sentence, anchor):
                detection = None   # a firm plan without a day is an event, not yet the new value
            elif reading.modality == "plan":
                # "下周一入职云帆物流": the new value holds from the day it names (`valid_from`)
                detection, framed = detection or frame_detection(reading), None if detection else reading
                planned = True
            elif detection is None or detection.attribute in (None, "location") or (
                    detection.kind in FRAME_KINDS and detection.attribute != reading.attribute
                    and reading.attribute not in ("job", "employer")):
                detection, framed = frame_detection(reading), reading
        attributed = not remember and not first_person_statement(sentence, chinese)
        if detection and attributed:
            # The pattern knows it is the speaker's own ("11月2号入职明帆物流"): say whose it is
            attributed = False
            if chinese and not re.match(r"\s*(?:我|他|她)", sentence):
                sentence = "我" + sentence.lstrip()
        informative = is_informative(strip_names(sentence, vocatives), chinese)
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
    text, valid_from, valid_to = with_date(sentence, match, name, chinese, procedure)
    frame_title = ""
    if framed is not None and instructions:  # the slot says it all: one clean statement, not the chat
        # around it (told to an assistant; between friends the sentence keeps who said what to whom)
        said = (anchor.date() if hasattr(anchor, "date") else anchor) if anchor else None
        ahead = match is not None and said is not None and match.date > said and not planned
        statement, frame_title = frame_statement(framed, name, chinese, None if ahead or not match else match.date)
        if statement and says_little_else(sentence, framed.value, chinese):
            text = statement   # else the sentence stays: it carries more than the slot (望京, 国贸)
            if ahead:
                # "I'm in Minneapolis, our lease runs out March 31": the day is the lease's, not
                # the day the value began; the memory is dated by when it was said
                match, valid_from, valid_to = None, None, None
        else:
            frame_title = ""
    bare = lower_first(to_third_person(text, name)) if procedure else text
    if procedure:
        text = instruction_text(text, name, chinese)
    words = len(text.split()) if not chinese else len(text) // 2
    if detection:
        kind = detection.type
    elif procedure:
        kind = "procedure"
    else:
        kind = plain_kind(sentence, chinese, valid_from, valid_to)
    if detection and detection.kind == "name" and not chinese and content_words(text) < 4:
        # "The user is Ravi." reads as a fragment: say what it is
        text = finish(f"{capitalise(name)} introduced themselves as {detection.value}", False)
    elif detection and detection.kind == "name" and chinese and re.fullmatch(rf"{re.escape(name)}(?:叫|是)\S{{1,6}}。", text):
        text = finish(f"{name}的名字叫{detection.value}", True)
    tags = [detection.kind] if detection else (["instruction"] if procedure else [])
    if kind == "preference" and not detection:
        tags.append("habit")
    if correction and detection:
        tags.append("correction")
    if remember:
        tags.append("remember")
    importance = detection.importance if detection else (0.8 if procedure else 0.5)
    if HEALTH.search(sentence):  # allergies, conditions, medication: what must not be missed
        importance = max(importance, 0.9)
        tags.append("health")
    if remember:
        importance = 0.9
    elif correction and detection:
        importance = max(importance, 0.8)
    title = make_title(text.split("：" if chinese else ": ", 1)[-1]) if procedure else frame_title
    return {"text": limit_words(text, chinese), "type": kind, "title": title, "importance": importance,
            "detection": detection, "subject": subject, "valid_from": valid_from,
            "valid_to": valid_to, "tags": tags, "correction": bool(correction and detection),
            "typed": bool(detection or procedure or remember), "words": words, "bare": bare,
            "dated": match is not None, "original": sentence, "name": name, "attributed": attributed,
            "standalone": ((not attributed or informative or remember or procedure)
                           and (bool(detection or procedure or remember)
                                or not leans_on_context(sentence, chinese)))}


def _dated_ahead(sentence: str, anchor) -> bool:
    """The sentence names the day (or month) a change takes effect, on or after it was said."""
    if not anchor:
        return False
    match = find_date(sentence, anchor)
    said = anchor.date() if hasattr(anchor, "date") else anchor
    return match is not None and match.date >= said and match.granularity in ("day", "month", "weekend")
