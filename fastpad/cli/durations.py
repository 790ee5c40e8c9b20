"""``7d``-style durations for command-line flags."""

from __future__ import annotations

import re
from datetime import timedelta

import click

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_PATTERN = re.compile(r"^(\d+)([smhdwy])$")


class Duration(click.ParamType):
    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> timedelta:
        if isinstance(value, timedelta):
            return value
        match = _PATTERN.match(str(value).strip().lower())
        if not match or int(match.group(1)) == 0:
            self.fail(f"{value!r} is not a duration like 30m, 12h, 7d, 4w or 1y", param, ctx)
        return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
