"""A BERT encoder's ONNX graph built from its weights with numpy and `onnx`, without torch.

    >>> build_bert_graph(onnx_model.bundled_model_path(), "mean", Path("/tmp/minilm"))  # doctest: +SKIP
    PosixPath('/tmp/minilm/model.onnx')

The graph is what `onnx_model`'s torch export writes, op for op in meaning: inputs
`input_ids`, `attention_mask`, `token_type_ids` (batch x tokens, int64); outputs `embedding`
(mean- or CLS-pooled, not normalised) and `token_embeddings` (the last hidden state). The
layers are those of Hugging Face's `BertModel` with eager attention: word + position + token
type embeddings and LayerNorm, then per layer self-attention (the padding masked with the
float32 minimum, as BertModel masks it), a residual LayerNorm, a GELU (erf) feed-forward and
another residual LayerNorm. The weights are read from `model.safetensors` (its format is a
JSON header and raw little-endian arrays, read here with numpy) and saved beside the graph in
`model.data`, where ONNX Runtime maps them. Float16 tensors, and int8 ones with a float32
scale a row (`<name>.row_scale`: the package's copy of the bundled model keeps its word
embeddings so), are widened to float32 as they are read.

Only plain BERT is built (`model_type` "bert", absolute positions, GELU); anything else is
`NotBert`, and `onnx_model` exports it with torch where torch is installed.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

OPSET = 17   # LayerNormalization is an operator from 17 on
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I8": "i1"}
# An int8 tensor's float32 scale, one a row, is the tensor named so.
SCALE_SUFFIX = ".row_scale"
# The tensors scripts/vendor_minilm.py keeps as int8 rows.
QUANTISED = {"embeddings.word_embeddings.weight"}


class NotBert(Exception):
    """The folder's model is not a plain BERT encoder this module can build."""


def read_safetensors(path: Path) -> dict:
    """name -> numpy array of a `.safetensors` file (F32, F16, I64 and I8 tensors) as stored."""
    import numpy as np

    data = Path(path).read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    base = 8 + size
    arrays = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in _DTYPES:
            raise NotBert(f"{path.name}: tensor {name} is {entry['dtype']}, not F32, F16, I64 or I8")
        start, end = entry["data_offsets"]
        arrays[name] = np.frombuffer(data, dtype=_DTYPES[entry["dtype"]], count=(end - start)
                                     // np.dtype(_DTYPES[entry["dtype"]]).itemsize,
                                     offset=base + start).reshape(entry["shape"])
    return arrays


def widened(arrays: dict) -> dict:
    """The tensors as float32 (I64 ones as they are): int8 rows times their `SCALE_SUFFIX`
    scales, float16 widened; the scales themselves dropped."""
    import numpy as np

    out = {}
    for name, array in arrays.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        if array.dtype == np.int8:
            scale = arrays.get(name + SCALE_SUFFIX)
            if scale is None or scale.shape != array.shape[:1]:
                raise NotBert(f"int8 tensor {name} has no scale a row ({name}{SCALE_SUFFIX})")
            out[name] = array.astype(np.float32) * scale.astype(np.float32)[:, None]
        elif array.dtype == np.float16:
            out[name] = array.astype(np.float32)
        else:
            out[name] = array
    return out


def bert_config(folder: Path) -> dict:
    """The folder's config.json, checked to be a BERT this module builds."""
    try:
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotBert(f"{folder} has no readable config.json") from exc
    if config.get("model_type") != "bert":
        raise NotBert(f"model_type is {config.get('model_type')!r}, not 'bert'")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise NotBert("positions are not absolute")
    if config.get("hidden_act", "gelu") != "gelu":
        raise NotBert(f"activation {config.get('hidden_act')!r} is not gelu")
    if not (Path(folder) / "model.safetensors").exists():
        raise NotBert(f"{folder} has no model.safetensors")
    return config


def build_bert_graph(folder: Path, pooling: str, out: Path) -> Path:
    """Write `out/model.onnx` and `out/model.data` for the BERT in `folder`; the graph's path."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    config = bert_config(folder)
    weights = widened(read_safetensors(Path(folder) / "model.safetensors"))
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""

    def weight(name):
        try:
            return np.ascontiguousarray(weights[prefix + name], dtype=np.float32)
        except KeyError:
            raise NotBert(f"model.safetensors has no {prefix + name}") from None

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x, layer_name, name):
        w = const(f"{layer_name}.weight_t", weight(f"{layer_name}.weight").T.copy())
        b = const(f"{layer_name}.bias", weight(f"{layer_name}.bias"))
        return node("Add", [node("MatMul", [x, w], f"{name}.mm"), b], name)

    def layer_norm(x, norm_name, name):
        return node("LayerNormalization", [x, const(f"{norm_name}.weight", weight(f"{norm_name}.weight")),
                                           const(f"{norm_name}.bias", weight(f"{norm_name}.bias"))],
                    name, axis=-1, epsilon=eps)

    # Embeddings: word + position (0..tokens-1) + token type, then LayerNorm.
    shape = node("Shape", ["input_ids"], "ids.shape")
    tokens = node("Gather", [shape, const("one_index", np.array(1, dtype=np.int64))], "tokens", axis=0)
    positions = node("Range", [const("zero", np.array(0, dtype=np.int64)), tokens,
                               const("one", np.array(1, dtype=np.int64))], "positions")
    embedded = node("Add", [
        node("Add", [
            node("Gather", [const("word_embeddings", weight("embeddings.word_embeddings.weight")), "input_ids"],
                 "word"),
            node("Gather", [const("position_embeddings", weight("embeddings.position_embeddings.weight")),
                            positions], "position")], "word+position"),
        node("Gather", [const("token_type_embeddings", weight("embeddings.token_type_embeddings.weight")),
                        "token_type_ids"], "token_type")], "embedded")
    x = layer_norm(embedded, "embeddings.LayerNorm", "embeddings.out")

    # The padding mask as BertModel adds it to the scores: 0 to keep, float32's minimum to drop.
    mask = node("Cast", ["attention_mask"], "mask.float", to=TensorProto.FLOAT)
    dropped = node("Sub", [const("one_float", np.array(1.0, dtype=np.float32)), mask], "mask.dropped")
    bias = node("Mul", [node("Unsqueeze", [dropped, const("mask.axes", np.array([1, 2], dtype=np.int64))],
                             "mask.4d"),
                        const("float_min", np.array(np.finfo(np.float32).min, dtype=np.float32))], "mask.bias")
    split = const("heads.shape", np.array([0, 0, heads, head], dtype=np.int64))
    merged = const("hidden.shape", np.array([0, 0, hidden], dtype=np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(head), dtype=np.float32))

    for n in range(int(config["num_hidden_layers"])):
        at = f"encoder.layer.{n}"

        def heads_of(part, perm):
            projected = linear(x, f"{at}.attention.self.{part}", f"l{n}.{part}")
            return node("Transpose", [node("Reshape", [projected, split], f"l{n}.{part}.split")],
                        f"l{n}.{part}.heads", perm=perm)

        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])
        v = heads_of("value", [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k], f"l{n}.qk"), scale], f"l{n}.scaled"), bias],
                      f"l{n}.scores")
        probs = node("Softmax", [scores], f"l{n}.probs", axis=-1)
        context = node("Reshape", [node("Transpose", [node("MatMul", [probs, v], f"l{n}.context.heads")],
                                        f"l{n}.context.tokens", perm=[0, 2, 1, 3]), merged], f"l{n}.context")
        attended = linear(context, f"{at}.attention.output.dense", f"l{n}.attention.out")
        x = layer_norm(node("Add", [attended, x], f"l{n}.attention.residual"),
                       f"{at}.attention.output.LayerNorm", f"l{n}.attention.norm")
        inner = linear(x, f"{at}.intermediate.dense", f"l{n}.intermediate")
        # GELU as BertModel computes it: x * 0.5 * (1 + erf(x / sqrt(2))).
        erf = node("Erf", [node("Mul", [inner, const(f"l{n}.rsqrt2", np.array(1 / np.sqrt(2), dtype=np.float32))],
                                f"l{n}.gelu.scaled")], f"l{n}.gelu.erf")
        gelu = node("Mul", [node("Mul", [inner, const(f"l{n}.half", np.array(0.5, dtype=np.float32))],
                                 f"l{n}.gelu.half"),
                            node("Add", [erf, const(f"l{n}.gelu.one", np.array(1.0, dtype=np.float32))],
                                 f"l{n}.gelu.one_plus")], f"l{n}.gelu")
        output = linear(gelu, f"{at}.output.dense", f"l{n}.output")
        x = layer_norm(node("Add", [output, x], f"l{n}.output.residual"), f"{at}.output.LayerNorm",
                       f"l{n}.output.norm")

    nodes.append(helper.make_node("Identity", [x], ["token_embeddings"], name="token_embeddings"))
    if pooling == "cls":
        node("Gather", ["token_embeddings", const("cls_index", np.array(0, dtype=np.int64))], "embedding", axis=1)
    else:
        weights_3d = node("Unsqueeze", [mask, const("last_axis", np.array([-1], dtype=np.int64))], "mask.3d")
        summed = node("ReduceSum", [node("Mul", ["token_embeddings", weights_3d], "masked"),
                                    const("token_axis", np.array([1], dtype=np.int64))], "summed", keepdims=0)
        counted = node("Max", [node("ReduceSum", [weights_3d, "token_axis"], "counted.raw", keepdims=0),
                               const("tiny", np.array(1e-9, dtype=np.float32))], "counted")
        node("Div", [summed, counted], "embedding")

    def tensor(name, dims):
        return helper.make_tensor_value_info(name, TensorProto.INT64 if name in INPUTS else TensorProto.FLOAT, dims)

    graph = helper.make_graph(
        nodes, "bert", [tensor(name, ["batch", "tokens"]) for name in INPUTS],
        [tensor("embedding", ["batch", hidden]), tensor("token_embeddings", ["batch", "tokens", hidden])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="vaultmem.bert_graph")
    onnx.checker.check_model(model)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(out / "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="model.data", size_threshold=1024)
    return out / "model.onnx"
