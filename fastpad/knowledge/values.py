"""Property values: what each kind accepts, and how a value is indexed.

A value is stored in the note's document exactly as written (a date stays the
string the person typed); the index holds it in the column of its kind, in a
form whose order is the kind's order (numbers as numbers, dates and datetimes
as UTC instants). The checks here are the ones that need no database; who is
a workspace member and which notes exist are checked by the service.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from fastpad.knowledge.schema import PropertyDef
from fastpad.notes.ids import is_ulid

MAX_TEXT = 500  # characters; an index entry must stay under PostgreSQL's B-tree row limit
MAX_URL_BYTES = 2000
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# Which index column each kind's values go to.
COLUMN = {
    "text": "text", "url": "text", "select": "text", "multi_select": "text", "person": "text",
    "relation": "text", "file": "text", "number": "num", "checkbox": "num", "date": "time", "datetime": "time",
}


@dataclass(frozen=True)
class Indexed:
    """One index entry: exactly one of the three is set (none for an empty value)."""

    text: str | None = None
    num: float | None = None
    time: datetime | None = None


EMPTY = Indexed()


class InvalidValue(Exception):
    """A value its property's kind does not accept; ``code`` is the field error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def index_entries(prop: PropertyDef, value: Any) -> list[Indexed]:
    """The index entries of ``value`` (None: the property is empty). Raises InvalidValue.

    An unchecked checkbox and a missing one are the same thing: both index as 0.
    """
    if value is None:
        return [Indexed(num=0.0)] if prop.kind == "checkbox" else [EMPTY]
    if prop.kind == "multi_select":
        if not isinstance(value, list):
            raise InvalidValue("type", "a list of options")
        if len(set(map(str, value))) != len(value):
            raise InvalidValue("duplicate_option", "each option at most once")
        return [Indexed(text=_option(prop, item)) for item in value] or [EMPTY]
    return [_single(prop, value)]


def filter_value(prop: PropertyDef, value: Any) -> Any:
    """A query's comparison value for ``prop``, in its index column's form. Raises InvalidValue.

    (A multi_select is compared one option at a time.)
    """
    if prop.kind == "multi_select":
        return _option(prop, value)
    entry = _single(prop, value)
    return {"text": entry.text, "num": entry.num, "time": entry.time}[COLUMN[prop.kind]]


def _single(prop: PropertyDef, value: Any) -> Indexed:
    kind = prop.kind
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidValue("type", "a number")
        if not math.isfinite(value):
            raise InvalidValue("not_finite", "a finite number")
        return Indexed(num=float(value))
    if kind == "checkbox":
        if not isinstance(value, bool):
            raise InvalidValue("type", "true or false")
        return Indexed(num=1.0 if value else 0.0)
    if not isinstance(value, str):
        raise InvalidValue("type", "a string")
    if kind == "date":
        return Indexed(time=_date(value))
    if kind == "datetime":
        return Indexed(time=_datetime(value))
    if kind == "select":
        return Indexed(text=_option(prop, value))
    if kind in ("person", "relation"):
        if not is_ulid(value):
            raise InvalidValue("ulid", "a " + ("workspace member's id" if kind == "person" else "note id") + " (a ULID)")
        return Indexed(text=value)
    if kind == "url":
        _url(value)
        return Indexed(text=value)
    if not value and kind == "file":
        raise InvalidValue("required", "an attachment reference")
    if len(value) > MAX_TEXT:
        raise InvalidValue("max_length", f"at most {MAX_TEXT} characters")
    return Indexed(text=value)  # text, file


def _option(prop: PropertyDef, value: Any) -> str:
    if not isinstance(value, str) or value not in prop.options:
        raise InvalidValue("option", "one of " + ", ".join(repr(o) for o in prop.options))
    return value


def _date(value: str) -> datetime:
    try:
        if not _DATE.match(value):
            raise ValueError
        day = date.fromisoformat(value)
    except ValueError:
        raise InvalidValue("date", "a date, YYYY-MM-DD") from None
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)


def _datetime(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or len(value) < 16:
        raise InvalidValue("datetime", "an ISO 8601 date and time with an offset, e.g. 2025-01-14T09:30:00+01:00")
    return parsed.astimezone(timezone.utc)


def _url(value: str) -> None:
    if len(value.encode("utf-8")) > MAX_URL_BYTES:
        raise InvalidValue("max_length", f"at most {MAX_URL_BYTES} bytes")
    try:
        parts = urlsplit(value)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in value):
        raise InvalidValue("url", "an http or https URL")
