"""Clean memory notes (issue 16): what the offline extractor writes from a chat with an
assistant is true, self-contained and worth keeping, of the right type and weight. The
examples are the issue's own, verbatim where it quotes them, with Chinese ones like them."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from vaultmem.extract.offline import extract_offline
from vaultmem.store.session_note import Turn
from vaultmem.text.dates import find_date
from vaultmem.text.howto import find_howto

NOW = datetime(2026, 9, 20, 10, 0)


def chat(*user_turns: str) -> list:
    """Candidates from a chat in which each user turn gets an assistant reply."""
    turns = []
    for i, text in enumerate(user_turns):
        turns.append(Turn("s", f"m-{2 * i}", NOW, "user", "user", text, 2 * i + 1))
        turns.append(Turn("s", f"m-{2 * i + 1}", NOW, "assistant", "assistant", "Sure, here you go.", 2 * i + 2))
    return extract_offline(turns, NOW)


def contents(*user_turns: str) -> list[str]:
    return [c.content for c in chat(*user_turns)]


# --- what stays out ----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # fragments whose referent is lost
    "I'll try that.",
    "we'll book that.",
    "She's 68 and still…",
    "that looks great, yes please make a shopping list",
    "我试试那个。",
    "好，我把这个发给我爸。",
    "她才68，还天天爬山…",
    # small talk, leaving, venting, deferrals, verdicts, questions without a mark
    "hey! happy saturday. coffee number two in hand and the sun is finally out over here",
    "Morning! The rain is going sideways in Glasgow today.",
    "nah this is good. gotta go, Kabir is demanding pancakes",
    "alright, I'm off to find the thermal socks. thanks as always",
    "honestly I'm knackered, on call this week and the pager went off at 4am three nights running. one of those weeks",
    "ugh I'm so done with this week!!",
    "yeah. we'll see. thanks for listening",
    "yeah a 1:1 next week makes sense. ok that's enough work talk for a saturday",
    "how long is the drive from Raleigh to Boone",
    "she did. the rate in this house is apparently 2 dollars now, inflation is real",
    "The python version please, sed scares me.",
    "今天下了一天雨。",
    "好的，我先撤了",
    "先这样，我去开会了",
    "不用了，明天再说吧。",
    "先不用，等定下来再说。",
    "今天真的要被气哭了。约好下午两点见的客户临时放我鸽子，我在他们公司楼下等了一个多小时，消息也不回",
    "帮我写一首藏头诗吧，藏“乔迁之喜”四个字，我想发个朋友圈",
    # what a request is for
    "ok, food question. we want a go-to takeout place near the new apartment. what kind of places should we look for?",
    "I'd like a build system that runs pytest on the file I'm editing. can you help?",
    "嗯。我想先给他转两万块红包，手机银行一天能转这么多吗？",
])
def test_chat_that_is_not_memory_stays_in_the_session_note(text):
    assert contents(text) == []


def test_a_fact_after_a_reaction_is_kept():
    """The issue: "Jordan hates mushrooms" was rejected as filler because the turn opened
    with "good catch … lol"."""
    assert contents("good catch lol, Jordan hates mushrooms") == ["Jordan hates mushrooms."]
    assert contents("哈哈被你说中了，我女儿糖糖天天偷偷喂它零食。") == ["用户女儿糖糖天天偷偷喂它零食。"]


def test_dated_news_about_someone_is_kept_and_chat_about_no_one_is_not():
    assert contents("ok good. Kabir lost his first tooth yesterday btw, he is extremely proud") \
        == ["On 2026-09-19, Kabir lost his first tooth, he is extremely proud."]
    assert contents("the kids start school on Monday.") \
        == ["On 2026-09-21, the kids start school."]
    assert contents("ah, someone reinstalled the app last week. that'll be it") == []
    assert contents("went four times this week.") == []


def test_tiredness_with_news_after_a_but_is_news():
    assert contents("I'm exhausted after the race but proud I finished my first marathon.") \
        == ["The user is exhausted after the race but proud they finished their first marathon."]
    assert contents("累死了，不过我终于跑完了第一个马拉松。") == ["用户终于跑完了第一个马拉松。"]


def test_the_fact_beside_the_chat_is_kept():
    assert contents("ok bit of background first since I'll probably be bugging you a lot. I live in Cleveland.") \
        == ["The user lives in Cleveland."]
    assert contents("不用了，明天再说吧。还有个大事：子航被公司调到厦门了，我们十月底就要搬过去。") \
        == ["子航被公司调到厦门了，用户等人十月底就要搬过去。"]


def test_a_goal_beside_a_question_is_kept():
    assert contents("I want to learn Rust this year. Any book you'd recommend?") == ["In 2026, the user wants to learn Rust."]
    assert contents("我今年想学日语，有什么推荐的书吗？") == ["2026年，用户想学日语。"]


def test_a_pronoun_names_the_one_the_turn_named():
    assert contents("random one: write me a haiku about Pistachio. she knocked my coffee off the desk again") \
        == ["Pistachio knocked the user's coffee off the desk again."]
    assert contents("我女儿糖糖天天看动画片。她才四岁，跟她讲道理也没用") \
        == ["用户女儿糖糖天天看动画片。糖糖才四岁，跟她讲道理也没用。"]


# --- wording -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, content", [
    ("I really don't like running.", "The user really doesn't like running."),
    ("Severe peanut allergy, like EpiPen-level. Nothing with peanuts or peanut oil, ever.",
     "The user has a severe peanut allergy, like EpiPen-level. Nothing with peanuts or peanut oil, ever."),
    ("My passport expires in March, I'll renew it with expedited service.",
     "In March 2027, the user's passport expires, they will renew it with expedited service."),
    ("We finally set the date for the wedding: June 5 next year, at a small farm venue with 60 guests.",
     "The user and others finally set the date for the wedding: June 5 next year, at a small farm venue "
     "with 60 guests."),
    ("The 14th is the dress rehearsal, I misread the letter from school.",
     "The 14th is the dress rehearsal, the user misread the letter from school."),
    ("我们家柯基馒头最近老是软便。", "用户家柯基馒头最近老是软便。"),
])
def test_rewrites_keep_grammar_and_the_key_detail(text, content):
    assert contents(text) == [content]


def test_a_name_note_says_what_it_is():
    assert contents("Hi! I'm Samir.") == ["The user introduced themselves as Samir."]
    assert contents("我叫林嘉怡。") == ["用户的名字叫林嘉怡。"]
    # a name said with more keeps the more
    assert contents("quick intro: I'm Dana, I teach chemistry at Westfield High.")[0] \
        == "The user is Dana, they teach chemistry at Westfield High."
    assert contents("你好！我叫王磊，在杭州一家游戏公司做后端开发。") == ["用户叫王磊，在杭州一家游戏公司做后端开发。"]
    assert contents("我们有个儿子叫豆豆，今年三岁。") == ["用户有个儿子叫豆豆，今年三岁。"]


# --- types ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, type_", [
    ("always run the deploy from my laptop", "procedure"),
    ("don't suggest anything before 8am", "procedure"),
    ("one thing before I forget: always give me metric units. km, kg, celsius, all of it.", "procedure"),
    ("also the metric thing still stands for work stuff btw. our routing software does everything in miles "
     "and it drives me nuts, so convert when we talk about it", "procedure"),
    ("对了有个要求：以后给我推荐东西的时候，先说结论，再说理由，别太啰嗦。", "procedure"),
    ("I'll eat pretty much anything except eggplant, can't stand it, the texture is like a wet sponge.",
     "preference"),
    ("我什么都吃，就是不吃茄子。", "preference"),
    ("我发现公司附近有个羽毛球馆，现在每周三晚上跟同事去打羽毛球。", "preference"),
    ("最后一个问题：楼下水果店老板送了我们一箱芒果，可我对芒果过敏，吃了嘴巴会肿", "fact"),
    ("remember that I take metformin every morning.", "fact"),
    ("guess who lives in Raleigh now. Noor got the job at Oakcrest Children's Hospital", "fact"),
    ("we're renting a cabin near Boone for thanksgiving week with Noor's sister Farah.", "event"),
    ("另外我弟弟林嘉豪11月8号在泉州结婚", "event"),
])
def test_each_kind_gets_its_type(text, type_):
    found = chat(text)
    assert found and found[-1].type == type_, [(c.type, c.content) for c in found]


def test_a_standing_instruction_reads_as_one_note():
    [note] = chat("one thing before I forget: always give me metric units. km, kg, celsius, all of it.")
    assert note.content == "The user's standing instruction: always give the user metric units. Km, kg, celsius, all of it."
    [note] = chat("also the metric thing still stands for work stuff btw. our routing software does everything "
                  "in miles and it drives me nuts, so convert when we talk about it")
    assert note.content.startswith("The user's standing instruction: the metric thing still stands for work stuff.")
    assert "btw" not in note.content and "convert when they talk about it" in note.content


# --- weight --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "I have a severe peanut allergy, like EpiPen-level.",
    "heads up for whenever you suggest anything health related, I'm allergic to sulfa drugs.",
    "最近体检查出来血糖偏高，医生让我控糖",
    "我对芒果过敏，吃了嘴巴会肿",
])
def test_health_ranks_high(text):
    [note] = chat(text)
    assert note.importance >= 0.9 and "health" in note.tags


def test_trivia_ranks_below_health_and_instructions():
    [trivia] = chat("I cycled to work along the canal this morning.")
    [instruction] = chat("always run the deploy from my laptop")
    assert trivia.importance < instruction.importance < 0.9


# --- numbered how-tos ----------------------------------------------------------------------

BACKUP = ("anyway, something useful. I want to write down how I do the photo backup because I keep skipping "
          "steps. every first sunday of the month I do this:\n1. plug the grey T7 drive into the mac mini in "
          "the office\n2. run backup-photos.sh from the terminal, it rsyncs the whole Photos library onto the "
          "drive\n3. wait for the checksum report and scan it for any MISMATCH lines\n4. eject the drive and put "
          "it back in the fire safe in the hall closet\ncan you tidy that up into a checklist")
RELEASE = ("Can you turn our release process into a proper checklist for the team wiki? It's for ledgerkit, our "
           "internal Python library. What we do now:\n1. bump the version in pyproject.toml\n2. update "
           "CHANGELOG.md with the merged PRs\n3. tag the commit as vX.Y.Z and push the tag\n4. wait for the "
           "publish job on CI to go green, then post in #releases\nPeople keep forgetting step 2.")


def test_a_numbered_how_to_is_one_procedure_with_every_step():
    [backup] = chat(BACKUP)
    assert backup.type == "procedure" and backup.title == "Photo backup"
    assert backup.content.startswith("The user's photo backup (every first sunday of the month): 1. plug the grey T7")
    assert backup.content.endswith("4. eject the drive and put it back in the fire safe in the hall closet.")
    [release] = chat(RELEASE)
    assert release.type == "procedure"
    assert release.content.startswith("The user's release process for ledgerkit, their internal Python library: ")
    assert "2. update CHANGELOG.md" in release.content and "publish job" in release.content


def test_a_chinese_how_to_and_a_list_that_is_not_one():
    [howto] = chat("我备份照片的步骤：\n1. 插上移动硬盘\n2. 运行备份脚本\n3. 把硬盘放回保险箱")
    assert howto.type == "procedure"
    assert howto.content == "用户的备份照片步骤：1. 插上移动硬盘；2. 运行备份脚本；3. 把硬盘放回保险箱。"
    assert find_howto("My shopping list:\n- milk\n- eggs") is None
    assert find_howto("how I do it:\n1. only one step") is None


# --- hubs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "As of October 1, my title is Analytics Manager.",
    "We meet at 9am MT every Monday.",
    "I have a severe peanut allergy, like EpiPen-level.",
    "I ran SELECT * FROM orders ORDER BY id DESC LIMIT 10 and it was slow",
    "我现在每周三晚上跟同事去打羽毛球",
])
def test_no_hub_for_abbreviations_code_or_common_words(text):
    hubs = {e for c in chat(text) for e in c.entities}
    assert not hubs & {"As of", "As", "MT", "EpiPen-level", "SELECT", "FROM", "ORDER BY", "DESC LIMIT", "同事"}


def test_analytics_manager_is_still_a_hub():
    assert "Analytics Manager" in chat("As of October 1, my title is Analytics Manager.")[0].entities


# --- dates ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("every Tuesday I swim", None),
    ("现在每周三晚上去打羽毛球", None),
    ("我弟弟林嘉豪11月8号在泉州结婚", date(2026, 11, 8)),
    ("十一月二十二号", date(2026, 11, 22)),
    ("on Tuesday we swam", date(2026, 9, 15)),
    ("我们下个月10号去三亚玩一周", date(2026, 10, 10)),
    ("我们有个儿子叫豆豆，今年三岁", None),
    # two weekdays joined, or a weekday's evenings: a schedule, not a day
    ("Tuesday and Thursday evenings are my climbing nights", None),
    ("in the office Tuesday to Thursday from next month", date(2026, 10, 1)),
    ("Monday evenings are choir", None),
    ("周二到周四要去公司坐班", None),
    ("I moved on Tuesday and it rained", date(2026, 9, 15)),
])
def test_a_recurring_day_is_no_date_and_a_chinese_month_day_is(text, day):
    found = find_date(text, NOW)
    assert (found.date if found else None) == day


# --- issue 33: a request to the assistant is its task of the moment, not a fact -----------------

@pytest.mark.parametrize("text, kept, left_out", [
    ("新班主任是 Mr Dawson，帮我写个 short email 介绍一下 Mia，她有点 dyslexia", "Mr Dawson", "帮用户"),
    ("在吗，帮我算个账", None, "帮用户"),
    ("帮我列个新 Mac 的 setup checklist", None, "checklist"),
    ("Can you help me plan a trip to Lisbon?", None, "Lisbon"),
    ("I just moved to Porto, can you suggest a good bakery nearby", "Porto", "bakery"),
    ("I need a toast for my brother's wedding.", None, "toast"),
    # a question to the assistant inside a Chinese sentence, with or without its mark
    ("我在青松幼儿园带大班，孩子们最近迷上恒星，有啥适合五岁的手工", "青松幼儿园", "有啥"),
    ("周末想带爸妈出去转转，杭州周边有没有不太累的地方，老人膝盖不好", "膝盖", "杭州"),
    ("绍兴这边黄酒到处都是，哪家老字号最正宗啊", None, "哪家"),
])
def test_a_request_to_the_assistant_is_not_written_as_a_fact(text, kept, left_out):
    written = " ".join(contents(text))
    assert left_out not in written
    if kept:
        assert kept in written


def test_a_request_to_remember_and_a_standing_instruction_stay():
    from vaultmem.text.chatter import without_request

    asked = "Can you remember that I'm allergic to peanuts"
    assert without_request(asked, False) == asked
    assert any("人民币" in c for c in contents("以后价格都帮我换算成人民币吧，客户只认人民币"))


def test_the_person_a_dropped_request_names_is_who_the_next_sentence_means():
    written = contents("can you help me write a thank-you card for my manager Shivon? she covered for me "
                       "during my dad's surgery and I want it personal but short")
    assert any("Shivon covered for the user" in c for c in written), written


@pytest.mark.parametrize("text, kept", [
    ("跟你说个事，我们决定搬去厦门了，下个月走", "厦门"),
    ("我跟你讲，我家楼下新开了一家云南菜，米线一碗才十八块", "云南菜"),
])
def test_the_telling_is_not_part_of_what_is_told(text, kept):
    written = contents(text)
    assert any(kept in c for c in written), written
    assert not any("跟你" in c or "跟用户" in c for c in written), written


# --- a note says whose it is, in both languages of a mixed turn, without the talk that opened it ----

@pytest.mark.parametrize("text, kept, left_out", [
    # a mixed turn: its 我 is the user too, its English opener is talk
    ("我 transfer 到 Singapore office 了! 以后所有时间都按 SGT 给我.", "用户 transfer 到 Singapore office", "我"),
    ("我在 work 用英文名 Vivian. 我是 UX researcher, 刚 join 深圳 office", "Vivian. 用户是 UX researcher", "我"),
    ("oh 拼错了，是 Veridiane，中间有个 i。", "Veridiane", "Oh"),
    ("update: 我们搬到槟城了, Marcus 的 grandma 住这边", "用户等人搬到槟城了", "pdate"),
    ("Quick sanity check: I have oatmeal every morning with blueberries", "The user has oatmeal", "check"),
    ("weird confession: I've never seen Star Wars", "The user has never seen Star Wars", "onfession"),
    ("在吗，男朋友陈昊下个月生日，他是做游戏策划的", "用户的男朋友陈昊", "在吗"),
    ("我们组下个月开始上 Kubernetes", "用户所在的组", "等人"),
    ("不过我们东湖实验小学要求评语里不能有负面的词", "用户所在的东湖实验小学", "等人"),
])
def test_a_note_says_whose_it_is_without_the_talk_that_opened_it(text, kept, left_out):
    written = " ".join(contents(text))
    assert kept in written and left_out not in written, written


# --- titles name the fact: a sentence or a clause, never a phrase cut off in the middle ------------

@pytest.mark.parametrize("content, title", [
    ("Nah the neighbour's giving the user a jump. The user just needed to whine.",
     "Nah the neighbour's giving the user a jump"),
    ("The user moved to Denver in October, after two years of looking for a flat there.",
     "The user moved to Denver in October"),
    ("The user's GP, Dr. Lindqvist, wants the user to keep a blood pressure log for two weeks.",
     "The user's GP, Dr. Lindqvist"),
    ("2026-05-02，用户的书法班上了两个月了，老师说用户横画终于不抖了，现在周六上午雷打不动去练字。",
     "用户的书法班上了两个月了 (2026-05-02)"),
    ("On 2023-05-07, Caroline went to an LGBTQ support group.", "Caroline went to an LGBTQ support group (2023-05-07)"),
    ("用户住在上海。", "用户住在上海"),
])
def test_a_title_is_the_first_sentence_or_clause_that_fits(content, title):
    from vaultmem.policy.candidate import make_title

    assert make_title(content) == title


def test_a_title_before_a_name_ends_no_sentence():
    written = contents("My new manager is Dr. Okafor, she runs the ICU.")
    assert any("Dr. Okafor" in c for c in written), written
