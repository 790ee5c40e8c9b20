"""Search: block-aligned chunks, embeddings, vector KNN, rank fusion with explanations.

The pure half (``chunker``, ``embeddings``/``minilm``, ``vector_index``, ``query``,
``fusion``, ``hybrid``) knows no store. The store-backed half: ``indexing`` (the
write path's chunk step), ``strategies`` (lexical, graph, recency), ``vectors``
(dense KNN over pgvector or an in-memory index), ``worker`` (the background
embedder), ``service`` (``SearchService``) and ``setup`` (both, from
``fastpad.json``). Heavy dependencies (onnxruntime, tokenizers, onnx) load only
when the local embedding model is first used.
"""

from fastpad.search.chunker import DEFAULT_TARGET_CHARS, Chunk, chunk_note
from fastpad.search.embeddings import (
    EmbeddingError,
    EmbeddingProvider,
    MiniLMProvider,
    OpenAICompatibleProvider,
    provider_from_config,
)
from fastpad.search.fusion import (
    Explanation,
    FusedHit,
    Penalty,
    RankedList,
    StrategyHit,
    classify_query,
    fuse,
    lexical_query_terms,
    postgres_tsquery,
)
from fastpad.search.hybrid import DenseStrategy, FusedResults, SearchRequest, Strategy, hybrid_search
from fastpad.search.vector_index import VectorIndex, WorkspaceVectorIndexes

__all__ = [
    "DEFAULT_TARGET_CHARS", "Chunk", "DenseStrategy", "EmbeddingError", "EmbeddingProvider", "Explanation",
    "FusedHit", "MiniLMProvider", "OpenAICompatibleProvider", "Penalty", "RankedList", "SearchRequest",
    "FusedResults", "Strategy", "StrategyHit", "VectorIndex", "WorkspaceVectorIndexes", "chunk_note",
    "classify_query", "fuse", "hybrid_search", "lexical_query_terms", "postgres_tsquery", "provider_from_config",
]
