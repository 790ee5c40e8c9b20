"""A deadline for a request's headers: a connection whose headers do not arrive in time is closed.

uvicorn bounds an idle keep-alive connection (``timeout_keep_alive``) and the body is bounded by
``api/body_limits.py``, but nothing bounds the headers: a client that connects and sends nothing,
or sends a header line now and then (slowloris), holds its connection — and the server's memory
and file descriptor — for as long as it likes. A thousand such connections stay open.

``header_deadline_protocol`` is uvicorn's own h11 protocol with one timer more: armed when the
connection opens, and again when the first byte of a following request arrives on a kept-alive
connection; cancelled once h11 has read the request's headers (it has left ``IDLE`` for the
request). If it fires first, the connection is closed: no request was read, so there is nothing
to answer (nginx's ``client_header_timeout`` does the same).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def header_deadline_protocol(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request headers take over ``seconds``;
    pass it as ``uvicorn.run(..., http=...)``."""

    class HeaderDeadlineProtocol(H11Protocol):
        header_timeout_s = seconds

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE:
                self._arm()  # the first bytes of a request on a kept-alive connection start its clock
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # h11 has the request line and headers: the body has deadlines of its own

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadlineProtocol
