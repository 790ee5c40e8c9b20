"""Exact KNN: the index agrees with brute force through adds, replacements and removals."""

from __future__ import annotations

import numpy as np
import pytest

from fastpad.search.embeddings import l2_normalize
from fastpad.search.vector_index import VectorIndex, WorkspaceVectorIndexes

D = 32


def brute_force(reference: dict[str, np.ndarray], query: np.ndarray, k: int, where=None) -> list[str]:
    scored = [(float(v @ query), i) for i, v in reference.items() if where is None or where(i)]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [i for _, i in scored[:k]]


def test_knn_matches_brute_force_through_adds_replacements_and_removals():
    rng = np.random.default_rng(7)
    index = VectorIndex(D, initial_capacity=4)  # forces growth
    reference: dict[str, np.ndarray] = {}
    for step in range(6):
        ids = [f"c{step}-{i}" for i in range(300)]
        vectors = l2_normalize(rng.standard_normal((300, D)))
        index.add(ids, vectors)
        reference.update(zip(ids, vectors))
        # Replace some existing vectors, remove some others (including unknown ids).
        replaced = list(reference)[::7][:40]
        fresh = l2_normalize(rng.standard_normal((len(replaced), D)))
        index.add(replaced, fresh)
        reference.update(zip(replaced, fresh))
        gone = list(reference)[::11][:30] + ["never-added"]
        assert index.remove(gone) == len(gone) - 1
        for chunk_id in gone:
            reference.pop(chunk_id, None)
        assert len(index) == len(reference)
        for _ in range(5):
            query = l2_normalize(rng.standard_normal((1, D)))[0]
            for k in (1, 10, 50):
                got = index.knn(query, k)
                assert [i for i, _ in got] == brute_force(reference, query, k)
                for chunk_id, score in got:
                    assert score == pytest.approx(float(reference[chunk_id] @ query), abs=1e-5)
    assert sorted(index.ids()) == sorted(reference)
    some = next(iter(reference))
    assert np.allclose(index.vector(some), reference[some])


def test_knn_with_a_filter_widens_until_k_accepted_ids_are_found():
    rng = np.random.default_rng(3)
    index = VectorIndex(D)
    vectors = l2_normalize(rng.standard_normal((2000, D)))
    ids = [f"n{i}" for i in range(2000)]
    index.add(ids, vectors)
    reference = dict(zip(ids, vectors))
    query = vectors[0]
    rare = lambda chunk_id: int(chunk_id[1:]) % 97 == 5  # 21 of 2000 accepted
    got = index.knn(query, 15, where=rare)
    assert [i for i, _ in got] == brute_force(reference, query, 15, rare)
    assert len(index.knn(query, 100, where=rare)) == 21  # all that exist, no more
    assert index.knn(query, 5, where=lambda _: False) == []


def test_edge_cases():
    index = VectorIndex(4)
    assert index.knn(np.ones(4), 3) == []
    index.add(["a"], np.array([1, 0, 0, 0], dtype=np.float32))  # a single 1-D vector
    assert index.knn(np.array([1, 0, 0, 0]), 5) == [("a", 1.0)]
    assert index.knn(np.ones(4), 0) == []
    assert "a" in index and "b" not in index
    with pytest.raises(ValueError):
        index.add(["x", "y"], np.zeros((1, 4)))
    with pytest.raises(ValueError):
        index.add(["x", "x"], np.zeros((2, 4)))
    with pytest.raises(ValueError):
        index.knn(np.ones(5), 1)


def test_one_index_per_workspace():
    indexes = WorkspaceVectorIndexes(4, provider="p")
    a, b = indexes.get("w1"), indexes.get("w2")
    assert a is indexes.get("w1") and a is not b and a.provider == "p"
    a.add(["x"], np.ones((1, 4)))
    assert len(b) == 0
    indexes.drop("w1")
    assert len(indexes.get("w1")) == 0
