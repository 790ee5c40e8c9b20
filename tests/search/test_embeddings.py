"""The default local provider: the published weights, and sentence-transformers' numbers.

Reference fixture (fixtures/minilm_reference.json): eight texts — a short
phrase, a question, a chunk with its structural prefix, code, a table row,
accented text, an acronym and a 350-word-piece text that must be truncated at
256 — embedded ONCE by sentence-transformers 6.2.0 (transformers 5.24.0,
torch 2.13.0+cpu) loading the same, hash-verified model folder, in a throwaway
virtualenv under /tmp that is not part of the project. Only the resulting
vectors are committed. Our torch-free path (numpy safetensors reader, ONNX
graph, onnxruntime, tokenizers, mean pooling + L2) must reproduce each to
cosine >= 0.999; it measures 1.0000 (worst 0.99999994).

The int8 graph (the default) rounds its 36 weight matrices to int8 per output
column, so it cannot reproduce them to 0.999: it measures 0.9845-0.9958 on
these eight (0.990 worst, 0.993 mean over 512 Vaswani chunks against the fp32
graph, bench/embeddings.py). Its bound here is 0.98; whether that costs
retrieval quality is bench/retrieval.py's question, answered in the README.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from fastpad.search.embeddings import EmbeddingProvider, provider_from_config
from fastpad.search.minilm import (
    DIMENSIONS,
    MAX_SEQ_LENGTH,
    PUBLISHED_SHA256,
    MiniLMProvider,
    build_onnx_model,
    read_safetensors,
    WeightsError,
    packaged_model_dir,
    sha256_file,
    verify_model_dir,
)

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text())


def test_the_packaged_files_are_the_published_ones(minilm):
    model_dir = packaged_model_dir()
    assert model_dir is not None
    assert sha256_file(model_dir / "model.safetensors") == PUBLISHED_SHA256["model.safetensors"]
    assert (model_dir / "model.safetensors").stat().st_size == 90_868_376
    assert minilm.digests == PUBLISHED_SHA256  # what the loaded session was built from
    assert REFERENCE["model_safetensors_sha256"] == PUBLISHED_SHA256["model.safetensors"]


def test_a_tampered_file_is_refused(tmp_path):
    source = packaged_model_dir()
    for name in ("model.safetensors", "config.json"):
        (tmp_path / name).symlink_to(source / name)
    tokenizer = (source / "tokenizer.json").read_bytes()
    (tmp_path / "tokenizer.json").write_bytes(tokenizer.replace(b'"[UNK]"', b'"[UNX]"', 1))
    with pytest.raises(WeightsError, match="tokenizer.json"):
        verify_model_dir(tmp_path)
    with pytest.raises(WeightsError, match="tokenizer.json"):
        MiniLMProvider(tmp_path).embed(["x"])
    (tmp_path / "tokenizer.json").unlink()
    with pytest.raises(WeightsError, match="missing"):
        verify_model_dir(tmp_path)


@pytest.fixture(scope="module")
def minilm_fp32() -> MiniLMProvider:
    provider = MiniLMProvider(int8=False)
    provider.load()
    return provider


@pytest.mark.parametrize("graph, bound", [("fp32", 0.999), ("int8", 0.98)])
def test_embeddings_match_sentence_transformers(graph, bound, request):
    provider = request.getfixturevalue("minilm_fp32" if graph == "fp32" else "minilm")
    assert provider.int8 == (graph == "int8")
    reference = np.array(REFERENCE["vectors"], dtype=np.float32)
    batch = provider.embed(REFERENCE["sentences"])
    singles = np.vstack([provider.embed([s]) for s in REFERENCE["sentences"]])
    for got in (batch, singles):
        assert got.dtype == np.float32 and got.shape == (len(reference), DIMENSIONS)
        cosines = (got * reference).sum(axis=1) / np.linalg.norm(reference, axis=1)
        assert cosines.min() >= bound, cosines
    # Batching changes nothing beyond float rounding: fp32 pads within a batch, int8
    # embeds one text per run (its batch size; see MiniLMProvider.__init__).
    assert ((batch * singles).sum(axis=1)).min() > 0.99999
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("int8", [False, True])
def test_the_built_graph_passes_the_onnx_checker(int8):
    import onnx

    model_dir = packaged_model_dir()
    config = json.loads((model_dir / "config.json").read_text())
    onnx.checker.check_model(onnx.load_from_string(build_onnx_model(read_safetensors(model_dir / "model.safetensors"),
                                                                     config, int8=int8)))


def test_long_input_is_truncated_at_256_word_pieces_as_sentence_transformers_does(minilm):
    long_text = REFERENCE["sentences"][-1]
    assert len(minilm.load().tokenizer.encode(long_text).ids) == MAX_SEQ_LENGTH
    # Words past the window change nothing.
    a, b = minilm.embed([long_text, long_text + " completely different trailing words"])
    assert float(a @ b) > 0.99999


def test_similar_meaning_scores_higher_than_unrelated(minilm):
    q, near, far = minilm.embed(["how do I rotate API keys", "Rotating credentials without downtime", "Banana bread recipe"])
    assert float(q @ near) > float(q @ far) + 0.2


def test_empty_input_and_protocol_conformance(minilm):
    assert minilm.embed([]).shape == (0, DIMENSIONS)
    assert isinstance(minilm, EmbeddingProvider)
    assert minilm.name == "local:all-MiniLM-L6-v2-int8" and minilm.dimensions == 384
    assert MiniLMProvider(int8=False).name == "local:all-MiniLM-L6-v2"  # the two graphs' vectors never mix


def test_runs_side_by_side_give_each_text_the_vector_it_gets_alone():
    """Two single-threaded runs at once (the default on a 2-core machine) write each text's
    row, in input order, bit for bit what one run at a time gives."""
    texts = REFERENCE["sentences"] * 2 + [f"note {n} about storage and retrieval" for n in range(9)]
    one, two = MiniLMProvider(threads=1), MiniLMProvider(threads=2)
    assert one.load().runs is None and two.load().runs is not None
    alone = np.stack([one.embed([text])[0] for text in texts])
    assert np.array_equal(two.embed(texts), alone)
    assert np.array_equal(one.embed(texts), alone)


def test_concurrent_first_use_loads_once():
    provider = MiniLMProvider()
    calls = []

    def slow_load():
        calls.append(1)
        time.sleep(0.05)
        return "loaded"

    provider._load = slow_load  # type: ignore[method-assign]  # the lock is under test, not the model
    threads = [threading.Thread(target=provider.load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and provider.load() == "loaded"


def test_provider_from_config_choices(tmp_path, monkeypatch):
    assert provider_from_config({"provider": "none"}) is None
    local = provider_from_config(None)
    assert isinstance(local, MiniLMProvider) and local._loaded is None  # lazy: nothing loaded yet
    assert local.int8 and local.batch_size == 1 and MiniLMProvider(int8=False).batch_size == 8
    configured = provider_from_config({"provider": "local", "batch_size": 16, "threads": 1, "int8": False})
    assert isinstance(configured, MiniLMProvider) and configured.batch_size == 16 and configured.threads == 1
    assert not configured.int8
    with pytest.raises(ValueError):
        provider_from_config({"provider": "word2vec"})
    # Without the weights package: implicit default → None (dense off); explicit local → error.
    monkeypatch.setattr("fastpad.search.embeddings.packaged_model_dir", lambda: None)
    assert provider_from_config({}) is None
    with pytest.raises(WeightsError):
        provider_from_config({"provider": "local"})
    assert isinstance(provider_from_config({"provider": "local", "model_dir": str(tmp_path)}), MiniLMProvider)


def test_reference_fixture_is_what_the_docstring_says():
    assert REFERENCE["max_seq_length"] == 256
    assert REFERENCE["computed_with"]["sentence-transformers"] == "6.2.0"
    assert len(REFERENCE["sentences"]) == len(REFERENCE["vectors"]) == 8
