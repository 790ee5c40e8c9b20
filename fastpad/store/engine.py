"""Which SQLite library the embedded backend links against.

The lexical strategy's cost is FTS5 scoring every block that matches any query
word, and SQLite's own FTS5 got markedly faster after the 3.40 that Debian 12's
Python links: the same bm25 OR queries run about 40% faster on SQLite 3.51
(bench/results/search_latency.json). ``pysqlite3-binary`` ships that SQLite
behind the stdlib module's exact interface; where no wheel exists (it is built
for Linux x86-64) the stdlib module serves, with the same behaviour and the
older speed.
"""

try:
    from pysqlite3 import dbapi2 as sqlite3
except ImportError:  # pragma: no cover - platforms without the wheel
    import sqlite3

__all__ = ["sqlite3"]
