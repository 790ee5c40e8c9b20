-- Version 17: the workspace and the trust floor inside the lexical ranking.
--
-- Nothing to change here: PostgreSQL's lexical query already ranks only the GIN
-- index's matches that pass the workspace and floor conditions of the same
-- statement (SearchIndex.lexical_blocks). SQLite's FTS5 index needed a column
-- for it (migrations/sqlite/0017); this version keeps the two numberings in step.

SELECT 1;
