"""Services over the store that know what notes are: NoteService (and, later, search, graph, proposals)."""
