"""A Notion database's CSV as a type: property kinds inferred from the values, values converted.

Notion exports a database as ``Name <id>.csv`` (the view's columns) and
``Name <id>_all.csv`` (every property), UTF-8 with a byte-order mark. The
first column is the title. Each other column becomes a property of the
database's type, its kind inferred from every value in it:

- ``checkbox`` when every value is Yes or No;
- ``number``, ``url`` (http/https), ``date`` (``December 4, 2024`` or ISO) when every value is one;
- ``relation`` when every value links to at most one page of one database in the export;
- ``select`` when a few values repeat (at most 20 options, each seen twice on average);
- ``text`` otherwise. Notion's date-times carry no offset, so they stay text rather than
  be given a zone nobody chose; a value too long for a text property is left out of the
  properties (the page still holds it).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import unquote

from fastpad.knowledge.schema import MAX_OPTION_LENGTH, MAX_PROPERTIES, NAME
from fastpad.knowledge.values import MAX_TEXT

MAX_SELECT_OPTIONS = 20
_WORDS = re.compile(r"[A-Za-z0-9]+")
_INVALID = re.compile(r"[^A-Za-z0-9_]+")
_RELATION = re.compile(r"\s*(?P<label>[^,]*?)\s*\((?P<path>[^()]+\.md)\)\s*(?:,|$)")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


class NotATable(ValueError):
    """The CSV cannot be read as a table with a header."""


@dataclass(frozen=True)
class Column:
    header: str
    name: str  # the property name
    kind: str
    options: tuple[str, ...] = ()
    target_db: str | None = None  # relation: the csv path of the database its targets are rows of


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]  # each padded to the header's width
    raw_rows: list[str]  # each row as CSV text, for its digest


def read_table(text: str) -> Table:
    try:
        records = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    except csv.Error as exc:
        raise NotATable(f"not a CSV table: {exc}") from None
    if not records or not records[0] or not any(h.strip() for h in records[0]):
        raise NotATable("the CSV has no header row")
    header = [h.strip() for h in records[0]]
    width = len(header)
    rows, raw = [], []
    for record in records[1:]:
        if not any(cell.strip() for cell in record):
            continue
        row = (record + [""] * width)[:width]
        rows.append(row)
        out = io.StringIO()
        csv.writer(out).writerow(row)
        raw.append(out.getvalue())
    return Table(header, rows, raw)


def type_name(title: str, taken: set[str]) -> str:
    """A type name for a database title: ``Habit Tracker`` → ``HabitTracker``."""
    words = _WORDS.findall(title)
    base = "".join(w[:1].upper() + w[1:] for w in words) or "Database"
    if not base[0].isalpha():
        base = "Database" + base
    return _unique(base[:60], taken)


def property_names(header: list[str]) -> list[str]:
    """A property name per column after the title: ``Ran today`` → ``Ran_today``."""
    taken: set[str] = set()
    names = []
    for column in header[1:]:
        base = _INVALID.sub("_", column).strip("_") or "property"
        if not base[0].isalpha():
            base = "p_" + base
        names.append(_unique(base[:60], taken))
    return names


def infer_columns(table: Table, relation_target: Any) -> list[Column]:
    """One column per property (the title column excluded; past ``MAX_PROPERTIES`` columns are dropped).
    ``relation_target(path)`` names the database (its csv path) a linked page is a row of, or None."""
    columns = []
    for index, name in enumerate(property_names(table.header)[:MAX_PROPERTIES], start=1):
        values = [row[index].strip() for row in table.rows if row[index].strip()]
        columns.append(_infer(table.header[index], name, values, relation_target))
    return columns


def _infer(header: str, name: str, values: list[str], relation_target: Any) -> Column:
    if values and all(v in ("Yes", "No") for v in values):
        return Column(header, name, "checkbox")
    if values and all(_NUMBER.match(v) for v in values):
        return Column(header, name, "number")
    if values and all(_date(v) for v in values):
        return Column(header, name, "date")
    if values and all(v.startswith(("http://", "https://")) and " " not in v for v in values):
        return Column(header, name, "url")
    targets = [relation_paths(v) for v in values]
    if values and all(len(t) == 1 for t in targets):
        databases = {relation_target(t[0]) for t in targets}
        if len(databases) == 1 and None not in databases:
            return Column(header, name, "relation", target_db=databases.pop())
    distinct = list(dict.fromkeys(values))
    if (values and len(distinct) <= MAX_SELECT_OPTIONS and len(values) >= 2 * len(distinct)
            and all(len(v) <= MAX_OPTION_LENGTH for v in distinct)):
        return Column(header, name, "select", tuple(distinct))
    return Column(header, name, "text")


def convert(column: Column, value: str) -> Any:
    """The property value for one cell (None: leave the property unset)."""
    value = value.strip()
    if not value:
        return None
    if column.kind == "checkbox":
        return value == "Yes"
    if column.kind == "number":
        number = float(value)
        return int(number) if number.is_integer() and math.isfinite(number) and "." not in value else number
    if column.kind == "date":
        return _date(value)
    if column.kind == "relation":
        return None  # resolved to a note id once every row is a note
    if column.kind == "text" and len(value) > MAX_TEXT:
        return None
    return value


def relation_paths(value: str) -> list[str]:
    """The page paths a relation cell links to: ``A (A%20id.md), B (B%20id.md)``."""
    found, position = [], 0
    while position < len(value):
        match = _RELATION.match(value, position)
        if match is None:
            return []
        found.append(unquote(match.group("path")))
        position = match.end()
    return found


def _date(value: str) -> str | None:
    for parse in (lambda v: datetime.strptime(v, "%B %d, %Y").date(), date.fromisoformat):
        try:
            day = parse(value)
        except ValueError:
            continue
        if isinstance(day, date) and re.match(r"^(\d{4}-\d{2}-\d{2}|[A-Za-z]+ \d{1,2}, \d{4})$", value):
            return day.isoformat()
    return None


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken or not NAME.match(name):
        name = f"{base[:58]}{n}"
        n += 1
    taken.add(name)
    return name
