"""The write policy's decisions, on plain statements (no model, no files)."""

import numpy as np
import pytest

from vaultmem.policy.candidate import Candidate
from vaultmem.policy.decide import decide
from vaultmem.policy.pool import Existing, Pool, normalise
from vaultmem.policy.screen import screen, screen_request
from vaultmem.text.noise import ONLY_GREETING


@pytest.mark.parametrize("text, reason", [
    ("Good morning!", "greeting"),
    ("thanks so much", "greeting"),
    ("谢谢", "greeting"),
    ("My API key is sk-proj-abcdefghijklmnopqrstuvwx1234", "secret"),
    ("Card 4111 1111 1111 1111 is mine", "secret"),
    ("The user said [REDACTED:password] is the code", "secret"),
    ("I HATE EVERYTHING, this is the WORST DAY EVER!!!", "venting"),
    ("气死我了！受不了了！", "venting"),
    ("```python\nprint(1)\n```", "tool output"),
    ("ok", "greeting"),
])
def test_screen_rejects_noise_secrets_and_venting(text, reason):
    got = screen(text)
    assert got is not None and reason.split()[0] in got


@pytest.mark.parametrize("text", [
    "The user is cutting back on coffee.",
    "I really hate cold showers.",
    "用户最近在戒咖啡。",
    "Always answer in British English.",
    # short statements in both scripts, as a model writes them
    "用户有 asthma。",
    "Julian 吃素。",
    "用户叫 Wendy。",
    # a mother's ("妈妈的", "我妈的") is not the curse "妈的"; the Dead Sea, a crashed laptop, a
    # workout are not venting
    "用户妈妈的生日是11月23日。",
    "我妈的手术定在下周三！",
    "用户打算明年去死海旅游。",
    "用户的电脑系统崩溃了，重装了系统。",
    "用户每天晚上跟着帕梅拉跳操！",
])
def test_screen_keeps_real_memories(text):
    assert screen(text) is None


@pytest.mark.parametrize("text, reason", [
    ("妈的，又堵车", "venting"),
    ("他妈的又加班", "venting"),
    ("好的 ok", "greeting"),
    ("ok, thanks so much!", "greeting"),
    ("叫 Wendy", "too short"),
])
def test_screen_still_rejects_the_curse_a_run_of_fillers_and_a_fragment(text, reason):
    got = screen(text)
    assert got is not None and reason in got


def test_a_long_run_of_one_filler_character_before_a_word_is_no_greeting():
    # each "嗯" is a filler on its own: the greeting pattern must not try every way to cut the run
    assert ONLY_GREETING.match("嗯" * 5000 + "，我搬到杭州了") is None
    assert ONLY_GREETING.match("嗯 " * 5000) is not None


def test_a_model_statement_of_a_few_words_in_both_scripts_is_written():
    decision = decide(Candidate(content="用户有 asthma。", type="fact", origin="model"), "default", Pool([]))
    assert decision.action == "created", decision.reason


def test_one_off_requests_are_not_memories_but_standing_instructions_are():
    assert "one-off" in screen_request("Can you summarise this article for me?")
    assert screen_request("From now on, always answer in British English.") is None


def entry(text, rel, **kw):
    return Existing(id=rel, rel=rel, text=text, type=kw.pop("type", "fact"), user=kw.pop("user", "default"), **kw)


def test_exact_duplicate_with_known_sources_is_unchanged_and_new_sources_update():
    old = entry("The user lives in Lisbon.", "Facts/a.md", source_messages=["m-1"])
    pool = Pool([old])
    same = Candidate(content="the user lives in lisbon", type="fact", source_messages=["m-1"])
    assert decide(same, "default", pool).action == "unchanged"
    more = Candidate(content="The user lives in Lisbon", type="fact", source_messages=["m-9"])
    decision = decide(more, "default", pool)
    assert decision.action == "updated" and decision.target is old


def test_same_slot_other_value_supersedes_and_same_value_updates():
    old = entry("The user lives in Beijing.", "Facts/b.md", subject="user", attribute="home", value="Beijing")
    pool = Pool([old])
    moved = Candidate(content="The user lives in Shanghai.", type="fact", subject="user",
                      attribute="home", value="Shanghai")
    decision = decide(moved, "default", pool)
    assert decision.action == "superseded" and decision.target is old
    assert "Beijing" in decision.reason and "Shanghai" in decision.reason
    again = Candidate(content="User still lives in Beijing", type="fact", subject="User",
                      attribute="home", value="beijing")
    assert decide(again, "default", pool).action == "updated"


def test_slots_and_duplicates_never_cross_users():
    old = entry("The user lives in Beijing.", "Facts/b.md", user="alice", subject="user",
                attribute="home", value="Beijing")
    pool = Pool([old])
    cand = Candidate(content="The user lives in Beijing.", type="fact", subject="user",
                     attribute="home", value="Shanghai")
    assert decide(cand, "bob", pool).action == "created"


def test_near_duplicate_by_cosine_updates_only_at_threshold():
    a = np.array([1.0, 0.0], dtype=np.float32)
    old = entry("The user drinks green tea every morning.", "Preferences/t.md", type="preference", vector=a)
    pool = Pool([old], dedup_threshold=0.92)
    cand = Candidate(content="Every morning the user has green tea.", type="preference")
    close = np.array([0.95, np.sqrt(1 - 0.95 ** 2)], dtype=np.float32)
    far = np.array([0.8, 0.6], dtype=np.float32)
    assert decide(cand, "default", pool, close).action == "updated"
    assert decide(cand, "default", pool, far).action == "created"


def test_rejected_candidate_keeps_its_reason():
    cand = Candidate(content="Everything is terrible", type="fact", rejected_reason="emotional venting")
    decision = decide(cand, "default", Pool([]))
    assert decision.action == "rejected" and decision.reason == "emotional venting"
    assert decision.to_dict()["action"] == "rejected"


def test_normalise_ignores_case_space_and_final_punctuation():
    assert normalise("  The user  likes tea. ") == normalise("the user likes tea")


@pytest.mark.parametrize("field, value", [
    ("entities", ["sk_live_51HqLyjWDarjtT1zdp7dcXlh3GkT9x"]), ("title", "password is Greyhound!2026"),
    ("tags", ["ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed9Cb8"]), ("entities", ["[REDACTED:password]"]),
])
def test_no_note_or_hub_is_named_after_a_secret(field, value):
    cand = Candidate(content="The user deploys the blog with rsync from the laptop", type="procedure")
    setattr(cand, field, value)
    decision = decide(cand, "default", Pool([]))
    assert decision.action == "rejected" and "secret" in decision.reason
    clean = Candidate(content="The user deploys the blog with rsync from the laptop", type="procedure",
                      entities=["Rsync"], title="Deploying the blog")
    assert decide(clean, "default", Pool([])).action == "created"


def test_a_work_change_in_a_later_session_supersedes_the_other_work_slot():
    old = entry("The user is a financial analyst at Jincheng Energy.", "Facts/j.md", subject="user",
                attribute="job", value="financial analyst", sources=["Sessions/2026-08-30 chat#^m-3"])
    pool = Pool([old])
    joined = Candidate(content="The user joined Mingfan Logistics.", type="fact", subject="user",
                       attribute="employer", value="Mingfan Logistics", entities=["Mingfan Logistics"])
    later = decide(joined, "default", pool, links=["[[Sessions/2026-10-25 chat#^m-3]]"])
    assert later.action == "superseded" and later.target is old
    # in the same session the two complete each other; the same employer changes nothing
    assert decide(joined, "default", pool, links=["[[Sessions/2026-08-30 chat#^m-5]]"]).action == "created"
    same = Candidate(content="The user joined Jincheng Energy.", type="fact", subject="user",
                     attribute="employer", value="Jincheng Energy")
    assert decide(same, "default", pool, links=["[[Sessions/2026-10-25 chat#^m-3]]"]).action == "created"


def test_a_correction_supersedes_the_latest_memory_holding_its_detail_with_it_fixed():
    from vaultmem.text.corrections import find_correction

    older = entry("The dentist is on Tuesday.", "Facts/d.md", sources=["Sessions/a#^m-1"])
    latest = entry("Kabir's swim lessons are Tuesday evenings.", "Facts/s.md", sources=["Sessions/b#^m-11"])
    other = entry("The user lives in Denver.", "Facts/h.md", sources=["Sessions/b#^m-3"])
    pool = Pool([older, latest, other])
    fix = Candidate(content="Sorry, the user meant Thursday not Tuesday.", type="fact", source_messages=["m-13"],
                    corrects=find_correction("sorry, I meant Thursday not Tuesday", False))
    decision = decide(fix, "default", pool, links=["[[Sessions/b#^m-13]]"])
    assert decision.action == "superseded" and decision.target is latest
    assert decision.content == "Kabir's swim lessons are Thursday evenings."
    # nothing holding the old detail: the correction stays in the session note
    lonely = Candidate(content="Sorry, the user meant Thursday not Tuesday.", type="fact",
                       corrects=find_correction("sorry, I meant Thursday not Tuesday", False))
    assert decide(lonely, "default", Pool([other])).action == "rejected"


def test_a_possible_update_the_rules_cannot_settle_keeps_both_and_says_so():
    old = entry("The user lives in Beijing.", "Facts/b.md", subject="user", attribute="home", value="Beijing")
    cand = Candidate(content="用户住在北京。", type="fact", subject="user", attribute="home", value="北京")
    decision = decide(cand, "default", Pool([old]))
    assert decision.action == "created" and "Facts/b.md" in decision.reason and "both are kept" in decision.reason
    a = np.array([1.0, 0.0], dtype=np.float32)
    tea = entry("The user drinks green tea every morning.", "Preferences/t.md", type="preference", vector=a)
    switched = Candidate(content="The user now drinks black tea every morning.", type="preference")
    near = np.array([0.85, np.sqrt(1 - 0.85 ** 2)], dtype=np.float32)
    decision = decide(switched, "default", Pool([tea]), near)
    assert decision.action == "created" and "Preferences/t.md" in decision.reason
    plain = Candidate(content="The user drinks black tea every morning.", type="preference")
    assert decide(plain, "default", Pool([tea]), near).reason == "new memory"


def test_a_promotion_keeps_the_employer_the_old_job_named():
    old = entry("The user works as a senior test engineer at Kestrel Freight.", "Facts/k.md", subject="user",
                attribute="job", value="senior test engineer")
    promoted = Candidate(content="The user got promoted, they are quality engineering lead now.", type="fact",
                         subject="user", attribute="job", value="quality engineering lead")
    decision = decide(promoted, "default", Pool([old]))
    assert decision.action == "superseded"
    assert decision.content.endswith("(still at Kestrel Freight).") and "Kestrel Freight" in promoted.entities
    # a new career says nothing of the old employer
    nurse = Candidate(content="The user is a nurse now.", type="fact", subject="user", attribute="job", value="nurse")
    assert "Kestrel" not in decide(nurse, "default", Pool([old])).content
