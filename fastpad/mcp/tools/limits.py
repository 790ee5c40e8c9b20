"""Limits the tools share (the capabilities tool reports them)."""

FETCH_MAX_NOTES = 20
SEARCH_MAX_HITS = 50
