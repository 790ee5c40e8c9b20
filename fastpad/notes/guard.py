"""Turning Loro's exceptions into the project's typed errors.

Loro's Python binding raises bare ``BaseException`` (and pyo3's
``PanicException``), which ``except Exception`` lets through. Callers wrap
each Loro call that can reject input in ``loro_errors`` so a bad input becomes
a ``FastpadError`` while interpreter-level exits still propagate.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from fastpad.errors import FastpadError

_PASS_THROUGH = (KeyboardInterrupt, SystemExit, GeneratorExit, FastpadError)


class loro_errors:  # noqa: N801 - used like a function: ``with loro_errors(...):``
    """Re-raise whatever Loro raises inside the block as ``to_error(exc)``.

    A class rather than ``@contextmanager``: it wraps every imported keystroke,
    and the generator machinery cost more than the check it guards.
    """

    def __init__(self, to_error: Callable[[BaseException], FastpadError]) -> None:
        self._to_error = to_error

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is not None and not isinstance(exc, _PASS_THROUGH):
            raise self._to_error(exc) from exc
