"""Search: block-aligned chunks, embeddings, vector KNN, rank fusion with explanations.

The store-independent half. Store-backed strategies (FTS5 / PostgreSQL lexical,
graph, recency) implement :class:`fastpad.search.hybrid.Strategy` and are handed
to :func:`fastpad.search.hybrid.hybrid_search` next to :class:`DenseStrategy`.
Heavy dependencies (onnxruntime, tokenizers, onnx) load only when the local
embedding model is first used.
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
from fastpad.search.hybrid import DenseStrategy, SearchRequest, SearchResults, Strategy, hybrid_search
from fastpad.search.vector_index import VectorIndex, WorkspaceVectorIndexes

__all__ = [
    "DEFAULT_TARGET_CHARS", "Chunk", "DenseStrategy", "EmbeddingError", "EmbeddingProvider", "Explanation",
    "FusedHit", "MiniLMProvider", "OpenAICompatibleProvider", "Penalty", "RankedList", "SearchRequest",
    "SearchResults", "Strategy", "StrategyHit", "VectorIndex", "WorkspaceVectorIndexes", "chunk_note",
    "classify_query", "fuse", "hybrid_search", "lexical_query_terms", "postgres_tsquery", "provider_from_config",
]
