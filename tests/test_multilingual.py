"""Chinese as a first language (issue 17): the model a vault gets, switching it both ways on
a live vault, mixed Chinese/English search through the real index, and hubs for the people,
places and organisations a Chinese chat names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultmem import api
from vaultmem.store.config import MINILM_MODEL, MULTILINGUAL_MODEL
from vaultmem.store.init import with_model
from vaultmem.store.languages import cjk_share, pick_model
from vaultmem.text.zh_names import zh_entities

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
ENV = dict(os.environ, VAULTMEM_NO_DAEMON="1", VAULTMEM_NOW="2026-11-29T10:30:00")
ENV.pop("VAULTMEM_VAULT", None)


def cli(*args, vault=None) -> subprocess.CompletedProcess:
    argv = [VAULTMEM] + (["--vault", str(vault)] if vault else []) + list(args)
    return subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=300)


def hits(vault, question) -> dict:
    done = cli("search", question, "--json", vault=vault)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# ---- which model a new vault gets -----------------------------------------------------------

def test_a_vault_of_chinese_notes_gets_the_multilingual_model(tmp_path):
    (tmp_path / "日记").mkdir()
    (tmp_path / "日记" / "周报.md").write_text("# 周报\n这周和王磊做完了杭州的项目，下周去上海出差。\n")
    (tmp_path / "notes.md").write_text("Buy milk.\n")
    model, why = pick_model(tmp_path, environ={"LANG": "en_US.UTF-8"})
    assert model == MULTILINGUAL_MODEL and "Chinese" in why


def test_an_english_vault_keeps_the_english_model_whatever_the_locale(tmp_path):
    (tmp_path / "notes.md").write_text("Met Alice for coffee; the Boston trip is on for May. 好的\n")
    assert pick_model(tmp_path, environ={"LANG": "zh_CN.UTF-8"})[0] == MINILM_MODEL


def test_an_empty_vault_goes_by_the_locale(tmp_path):
    assert pick_model(tmp_path, environ={"LANG": "zh_CN.UTF-8"})[0] == MULTILINGUAL_MODEL
    assert pick_model(tmp_path, environ={"LC_ALL": "ja_JP.UTF-8", "LANG": "en_US"})[0] == MULTILINGUAL_MODEL
    assert pick_model(tmp_path, environ={"LANG": "C.UTF-8"})[0] == MINILM_MODEL


def test_hidden_folders_and_obsidian_settings_do_not_vote(tmp_path):
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "笔记.md").write_text("全是中文的设置文件" * 50)
    (tmp_path / "a.md").write_text("An English note about the garden.\n")
    assert pick_model(tmp_path, environ={})[0] == MINILM_MODEL


def test_cjk_share_counts_letters_not_digits_or_marks():
    assert cjk_share("") == 0.0 and cjk_share("2026-11-29, !!") == 0.0
    assert cjk_share("用户住在上海") == 1.0
    assert 0.3 < cjk_share("用户住在上海, near the Bund") < 0.4


def test_with_model_changes_only_the_embedding_line():
    text = ('user = "default"\n\n[embedding]\n# the model\nmodel = "all-MiniLM-L6-v2"\nthreads = 0\n\n'
            '[llm]\nmodel = "llama3.1"\n')
    changed = with_model(text, "use-multilingual-v3")
    assert changed == text.replace('model = "all-MiniLM-L6-v2"', 'model = "use-multilingual-v3"')
    assert 'model = "x"' in with_model('user = "default"\n', "x").split("[embedding]")[1]


def test_init_says_which_model_it_chose_and_why(tmp_path):
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "旅行.md").write_text("五月去成都看大熊猫，住在宽窄巷子附近。\n")
    done = cli("init", str(tmp_path / "v"))
    assert done.returncode == 0, done.stderr
    assert "embedding model: use-multilingual-v3 (100% of the vault's text is Chinese" in done.stdout
    assert api.load_config(tmp_path / "v").model == MULTILINGUAL_MODEL
    # the person's note is untouched
    assert (tmp_path / "v" / "旅行.md").read_text() == "五月去成都看大熊猫，住在宽窄巷子附近。\n"


def test_the_first_transcripts_of_a_vault_picked_while_empty_choose_its_model(tmp_path):
    """init on an English locale picks the English model for an empty vault; the person's first
    transcripts mix Chinese and English, so the memories will be Chinese: the first extract
    switches to the multilingual model before indexing, says so, and an English question then
    finds them. A vault whose first transcripts are English, or whose model was asked for,
    keeps it; the choice is made once."""
    from tests.helpers.transcripts import write_jsonl

    mixed = write_jsonl(tmp_path / "mixed.jsonl", "s1", [
        ("user", "帮我 schedule 东西的时候, 时间一律用 SGT, 我现在人在新加坡, 在 Singapore office 上班"),
        ("assistant", "好的, 以后时间都按 SGT 给你."),
        ("user", "我养了一只猫, 叫布丁, 每天晚上都要陪它玩")], speaker="user")
    english = write_jsonl(tmp_path / "english.jsonl", "s2", [
        ("user", "I moved to Leeds last month and I work at the library now."),
        ("assistant", "Congratulations on the move!")], speaker="user")

    vault = tmp_path / "v"
    assert cli("init", str(vault)).returncode == 0
    assert api.load_config(vault).model == MINILM_MODEL    # ENV's locale is not CJK
    done = cli("extract", "--no-llm", str(mixed), vault=vault)
    assert done.returncode == 0, done.stderr
    assert "Embedding model: use-multilingual-v3 from now on (" in done.stderr
    assert api.load_config(vault).model == MULTILINGUAL_MODEL
    found = hits(vault, "What is the name of the user's cat?")["hits"]
    assert found and "布丁" in found[0]["text"]
    # decided once: an English transcript later changes nothing
    assert "Embedding model" not in cli("extract", "--no-llm", str(english), vault=vault).stderr
    assert api.load_config(vault).model == MULTILINGUAL_MODEL

    plain, asked = tmp_path / "plain", tmp_path / "asked"
    assert cli("init", str(plain)).returncode == 0 and cli("init", str(asked), "--model", MINILM_MODEL).returncode == 0
    assert "Embedding model" not in cli("extract", "--no-llm", str(english), vault=plain).stderr
    assert "Embedding model" not in cli("extract", "--no-llm", str(mixed), vault=plain).stderr  # chosen already
    assert "Embedding model" not in cli("extract", "--no-llm", str(mixed), vault=asked).stderr
    assert api.load_config(plain).model == api.load_config(asked).model == MINILM_MODEL


# ---- a live vault: switch the model both ways, search across languages -----------------------

NOTES = ["The user is allergic to peanuts.", "The user works as a nurse at Ruijin Hospital.",
         "用户养了一只猫，叫布丁。", "用户的老板叫王磊。", "The user prefers tea over coffee.",
         "用户下个月要去成都出差。"]


def test_switching_the_model_both_ways_rebuilds_the_index_and_crosses_languages(tmp_path, embedder, multilingual,
                                                                               monkeypatch):
    vault = tmp_path / "vault"
    assert cli("init", str(vault), "--model", MINILM_MODEL).returncode == 0
    memory = api.Memory(vault, embedder=embedder)
    for text in NOTES:
        assert memory.add(text)["action"] == "created"
    notes = sorted(p.read_bytes() for p in (vault / "Memory").rglob("*.md"))

    def first(question):
        found = hits(vault, question)
        assert not found.get("warning"), found["warning"]
        return found["hits"][0]["text"] if found["hits"] else None

    # The English model: a Chinese question does not find the English note that answers it,
    # and the answer says how to switch (on stderr for a person, `advice` for an agent).
    assert "advice" not in hits(vault, "What is the user allergic to?")
    asked = cli("search", "用户对什么过敏？", vault=vault)
    assert "hint: " in asked.stderr and f"vaultmem init --model {MULTILINGUAL_MODEL}" in asked.stderr
    assert "hint: " not in cli("search", "用户对什么过敏？", vault=vault).stderr   # told once
    assert "advice" not in hits(vault, "用户对什么过敏？")
    assert first("用户对什么过敏？") != NOTES[0]

    switched = cli("init", str(vault), "--model", MULTILINGUAL_MODEL, "--json")
    assert json.loads(switched.stdout)["model"] == MULTILINGUAL_MODEL
    stale = hits(vault, "用户对什么过敏？")
    assert "vaultmem reindex" in stale["warning"]   # never a silent answer from the old vectors
    done = cli("reindex", "--json", vault=vault)
    assert done.returncode == 0, done.stderr
    assert "model changed from all-MiniLM-L6-v2 to use-multilingual-v3" in done.stdout
    assert first("用户对什么过敏？") == NOTES[0]
    # The command reads the new model's index; the other questions ask that index in-process,
    # the model loaded once (a command loads it each time, ~1.3 s), on the commands' clock.
    monkeypatch.setenv("VAULTMEM_NOW", ENV["VAULTMEM_NOW"])
    switched_memory = api.Memory(vault, embedder=multilingual)
    assert switched_memory.vault.config.model == MULTILINGUAL_MODEL

    def first_in_process(question):
        found = switched_memory.search(question)
        assert not found.get("warning"), found["warning"]
        return found["hits"][0]["text"] if found["hits"] else None

    assert "advice" not in switched_memory.search("用户对什么过敏？")
    assert first_in_process("What is the name of the user's cat?") == NOTES[2]
    assert first_in_process("Who is the user's boss?") == NOTES[3]
    assert first_in_process("用户做什么工作？") == NOTES[1]

    assert cli("init", str(vault), "--model", MINILM_MODEL).returncode == 0
    done = cli("reindex", "--json", vault=vault)
    assert "model changed from use-multilingual-v3 to all-MiniLM-L6-v2" in done.stdout
    assert first("What is the user allergic to?") == NOTES[0]
    # the notes themselves never changed
    assert sorted(p.read_bytes() for p in (vault / "Memory").rglob("*.md")) == notes


# ---- hubs for Chinese names ---------------------------------------------------------------

@pytest.mark.parametrize("text, names", [
    ("我老板王磊让我下周去杭州出差。", ["王磊", "杭州"]),
    ("我去年从北京搬到了上海。", ["北京", "上海"]),
    ("我在腾讯上班，同事张伟人很好。", ["腾讯", "张伟"]),
    ("周末和李娜一起去了西湖。", ["李娜", "西湖"]),
    ("我女儿糖糖今年四岁了。", ["糖糖"]),
    ("交给邻居小雨了，她也养了两只猫。", ["小雨"]),
    ("我叫王小明，在字节跳动做后端。", ["王小明", "字节跳动"]),
    ("我在星河科技公司上班。", ["星河科技公司"]),
    ("和朋友一起去吃饭，跟他说了周末去玩。", []),
])
def test_people_places_and_organisations_of_a_chinese_sentence(text, names):
    assert zh_entities(text) == names


def test_a_chinese_chat_gets_hubs_for_the_people_and_places_it_names(tmp_path, multilingual):
    transcript = tmp_path / "chat.jsonl"
    turns = ["我老板王磊让我下周去杭州出差。", "我去年从北京搬到了上海，在腾讯上班。"]
    lines = []
    for n, text in enumerate(turns):
        lines.append({"role": "user", "text": text, "timestamp": f"2026-11-2{n}T10:00:00"})
        lines.append({"role": "assistant", "text": "好的，记下了。", "timestamp": f"2026-11-2{n}T10:01:00"})
    transcript.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")
    api.init(tmp_path / "vault", model=MULTILINGUAL_MODEL)
    api.Memory(tmp_path / "vault", embedder=multilingual).extract([transcript], format="jsonl")
    hubs = {p.stem for p in (tmp_path / "vault" / "Memory" / "Entities").glob("*.md")}
    assert {"王磊", "杭州", "北京", "上海", "腾讯"} <= hubs


def test_a_multilingual_vault_embeds_session_chunks_as_shown_and_with_neighbours(multilingual, embedder):
    import numpy as np

    from vaultmem.index.chunking import Chunk
    from vaultmem.index.passages import chunk_vectors

    base = dict(note_id="n", path="p.md", title="t", status="active", user="default", tags="",
                entities="", created="", updated="", valid_from="", valid_to="", importance=0.5,
                content_hash="")
    session = Chunk(chunk_id="n#0", type="session", text="周婷: 上周六提的",
                    search_text="苏晴: 新车提了吗？\n周婷: 上周六提的\n苏晴: 恭喜！", **base)
    memory = Chunk(chunk_id="m#0", type="fact", text="用户开比亚迪。", search_text="t: 用户开比亚迪。", **base)
    vectors = chunk_vectors(multilingual, [session, memory])
    both = multilingual.encode([session.search_text])[0] + multilingual.encode([session.text])[0]
    assert np.allclose(vectors[0], both / np.linalg.norm(both), atol=1e-5)
    assert np.allclose(vectors[1], multilingual.encode([memory.search_text])[0], atol=1e-5)
    # the English model keeps one view (a second encode would double its indexing time)
    assert np.allclose(chunk_vectors(embedder, [session])[0], embedder.encode([session.search_text])[0], atol=1e-5)


def test_doctor_advises_the_multilingual_model_for_a_chinese_vault_on_the_english_one(tmp_path, embedder):
    vault = tmp_path / "vault"
    api.init(vault, model=MINILM_MODEL)
    memory = api.Memory(vault, embedder=embedder)
    for text in ("用户住在厦门。", "用户在明帆物流做财务分析。", "用户对芒果过敏。"):
        memory.add(text)
    advice = memory.doctor()["model_advice"]
    assert "use-multilingual-v3" in advice and "vaultmem reindex" in advice
    assert memory.doctor()["ok"]   # a hint, not a fault
    api.init(tmp_path / "english", model=MINILM_MODEL)
    english = api.Memory(tmp_path / "english", embedder=embedder)
    english.add("The user lives in Xiamen.")
    assert english.doctor()["model_advice"] is None


def test_the_speaker_is_not_supplied_twice_in_casual_chinese():
    from datetime import datetime

    from vaultmem.extract.offline import extract_offline
    from vaultmem.store.session_note import Turn

    now = datetime(2026, 9, 20, 10, 0)
    for said, written in (("现在周五我宁愿去公司。Kevin推荐我看《置身事内》", "现在用户宁愿去公司"),
                          ("最近在学日语", "用户最近在学日语")):
        turns = [Turn("s", "m-0", now, "user", "user", said, 1),
                 Turn("s", "m-1", now, "assistant", "assistant", "好的。", 2)]
        contents = [c.content for c in extract_offline(turns, now)]
        assert any(written in c for c in contents) and not any("用户现在用户" in c for c in contents), contents
