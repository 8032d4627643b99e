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

from vaultmem.extract.pieces import turn_candidates
from vaultmem.extract.speakers import display_name, vocatives
from vaultmem.policy.candidate import Candidate, make_title
from vaultmem.text.classify import (
    assistant_statements,
    classify_text,
    clean_text,
    shared_images,
    split_sentences,
)
from vaultmem.text.corrections import find_correction
from vaultmem.text.howto import find_howto, howto_text
from vaultmem.text.names import entities_of, known_names
from vaultmem.text.rewrite import capitalise, to_third_person
from vaultmem.text.script import is_chinese
from vaultmem.text.wording import finish, limit_words


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
    their_vocatives = vocatives(turns)
    # "Always ..." between friends is advice, not an instruction to an assistant: standing
    # instructions exist only where an assistant listens or one person talks.
    assistant_chat = any((t.role or "").lower() == "assistant" for t in turns)
    instructions = assistant_chat or len(user_speakers) <= 1
    known = known_names(turns) if assistant_chat else None
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
            text, speaker = turn.text, turn.speaker
            howto = find_howto(text) if instructions else None
            if howto is not None:  # the steps are one procedure; the rest is read as usual
                out.append(_howto(howto, turn.id, speaker, names))
                text = howto.rest
            sentences = split_sentences(text)
        images = shared_images(turn.text) if turn.role.lower() == "user" else []
        out.extend(turn_candidates(turn.id, speaker, names, sentences, anchor, turn.role.lower(),
                                   their_vocatives, images, instructions, known,
                                   asks=bool(re.search(r"[?？]", clean_text(turn.text)))))
    return out


def _howto(howto, turn_id: str, speaker: str, names: dict) -> Candidate:
    chinese = is_chinese(" ".join(howto.steps))
    name, _ = display_name(speaker, names, chinese)
    content = howto_text(howto, capitalise(name) if not chinese else name, chinese)
    content = content[:1].upper() + content[1:]
    return Candidate(content=content, type="procedure", importance=0.8, source_messages=[turn_id],
                     entities=entities_of([{"name": name, "original": " ".join(howto.steps)}], None),
                     tags=["howto"], title=make_title(howto.topic or content), speaker=speaker)


def _correction(turn, fix, names: dict) -> Candidate:
    chinese = is_chinese(turn.text)
    name, _ = display_name(turn.speaker, names, chinese)
    return Candidate(content=limit_words(finish(to_third_person(turn.text.strip(), name), chinese), chinese),
                     type="fact", importance=0.8, source_messages=[turn.id], speaker=turn.speaker,
                     corrects=fix, correction=True, tags=["correction"])


def _rejected(turn, names: dict, reason: str) -> Candidate:
    chinese = is_chinese(turn.text)
    name, _ = display_name(turn.speaker, names, chinese)
    return Candidate(content=limit_words(finish(to_third_person(turn.text.strip(), name), chinese), chinese),
                     type="fact", importance=0.0, source_messages=[turn.id], speaker=turn.speaker,
                     rejected_reason=reason)
