-- Version 13: note titles sort by code point, as on SQLite.
--
-- `notes.title` took the database's default collation, so on a server whose
-- locale is, say, en_US.UTF-8 a query or list sorted by title came back in
-- dictionary order ("apple", "Banana") where SQLite gives code-point order
-- ("Banana", "apple"): the same workspace paged differently on the two
-- backends. "C" is what `property_values.value_text` already uses. Changing a
-- column's collation rebuilds the indexes over it (notes_title).

ALTER TABLE notes ALTER COLUMN title TYPE text COLLATE "C";
