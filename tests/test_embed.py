import os

import numpy as np
import pytest

from vaultmem.embed import Embedder, bundled_model_path, resolve_model
from vaultmem.errors import ConfigError


def test_bundled_model_is_installed_and_default_names_resolve_to_it():
    path = bundled_model_path()
    assert (path / "config.json").is_file()
    assert resolve_model("all-MiniLM-L6-v2") == str(path)
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(path)


def test_encode_returns_normalised_float32_rows(embedder):
    vectors = embedder.encode(["The user drinks tea.", "用户最近在戒咖啡"])
    assert vectors.shape == (2, embedder.dim) == (2, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.encode([]).shape == (0, 384)


def test_similar_meaning_scores_higher_than_unrelated(embedder):
    query = embedder.encode_query("What is the user trying to give up?")
    related, unrelated = embedder.encode(
        ["The user is cutting back on coffee and wants to drink less of it.",
         "The capital of Mongolia is Ulaanbaatar."])
    assert query @ related > query @ unrelated + 0.2


def test_model_loads_offline(embedder):
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert embedder.name == "all-MiniLM-L6-v2"


def test_count_tokens_uses_the_model_tokenizer(embedder):
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("coffee") == 1
    assert embedder.count_tokens("The user is cutting back on coffee.") == 8


def test_unknown_model_is_a_clear_config_error(tmp_path):
    with pytest.raises(ConfigError, match="could not be loaded offline"):
        Embedder(str(tmp_path / "no-such-model"))


def test_query_fast_path_matches_batch_encode(embedder):
    for text in ("coffee", "What is the user trying to give up?", "用户最近在戒咖啡"):
        assert np.allclose(embedder.encode_query(text), embedder.encode([text])[0], atol=1e-5)
