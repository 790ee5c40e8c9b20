"""The client commands' HTTP: one call shape, and the server's problem documents as typed errors.

A response that is not 2xx becomes a :class:`RemoteProblem` carrying the
server's problem document (its slug picks the exit code in ``exit_codes``); a
request that never got an answer becomes :class:`ServerUnreachable`. httpx is
imported on the first request, so ``fp --version`` and an offline capture that
fails fast do not pay for more than they use.
"""

from __future__ import annotations

from typing import Any

from fastpad.cli.options import settings
from fastpad.cli.profiles import Profiles, Target
from fastpad.errors import FastpadError, FieldError, Unauthenticated

USER_AGENT = "fp (fastpad cli)"


class ServerUnreachable(FastpadError):
    slug, title, retryable = "server-unreachable", "The server did not answer", True


class RemoteProblem(FastpadError):
    """A problem document (RFC 9457) from the server, as an error of its slug."""

    def __init__(self, document: dict[str, Any], status: int) -> None:
        slug = str(document.get("type", "")).rstrip("/").rsplit("/", 1)[-1] or f"http-{status}"
        extra = {k: v for k, v in document.items() if k not in ("title", "detail", "field_errors", "next")}
        field_errors = [FieldError(str(fe.get("field", "")), str(fe.get("code", "")), str(fe.get("message", "")))
                        for fe in document.get("field_errors") or [] if isinstance(fe, dict)]
        super().__init__(detail=str(document.get("detail") or document.get("title") or f"HTTP {status}"),
                         field_errors=field_errors, extra=extra, next_call=document.get("next"))
        self.document = document
        self.slug = slug
        self.title = str(document.get("title") or slug)
        self.status = status
        self.retryable = bool(document.get("retryable", False))


class Api:
    """One server, one credential; call :meth:`request`. Remembers whether the server answered."""

    def __init__(self, target: Target, *, timeout: float | None = None) -> None:
        self.target = target
        self.timeout = timeout if timeout is not None else settings.timeout
        self.answered = False  # a 2xx came back: the server is there and takes this credential
        self._http: Any = None

    @property
    def base_url(self) -> str:
        return self.target.url

    def _client(self) -> Any:
        if self._http is None:
            import httpx

            headers = {"user-agent": USER_AGENT}
            if self.target.token:
                headers["authorization"] = f"Bearer {self.target.token}"
            self._http = httpx.Client(base_url=self.target.url, headers=headers, timeout=self.timeout)
        return self._http

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | str | None = None,
        data: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        authenticated: bool = True,
        timeout: float | None = None,
    ) -> Any:
        """The response (httpx.Response) of a 2xx; RemoteProblem or ServerUnreachable otherwise."""
        if authenticated and not self.target.token:
            where = f"to {self.target.url}" if self.target.url else "(no server configured)"
            raise Unauthenticated(detail=f"not logged in {where}",
                                  next_call=f"fp login --url {self.target.url or 'https://your-fastpad'}")
        import httpx

        extra = {} if timeout is None else {"timeout": timeout}
        try:
            response = self._client().request(method, path, json=json, content=content, data=data,
                                              params=params, headers=headers, **extra)
        except httpx.TimeoutException as exc:
            raise ServerUnreachable(detail=f"{self.target.url} did not answer within the timeout ({exc})",
                                    next_call="try again, or raise --timeout") from None
        except httpx.TransportError as exc:
            raise ServerUnreachable(detail=f"cannot reach {self.target.url}: {exc}") from None
        if response.is_success:
            self.answered = True
            return response
        raise _problem(response)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()


def _problem(response: Any) -> RemoteProblem:
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict):
        document = {"type": f"http-{response.status_code}", "title": response.reason_phrase or "HTTP error",
                    "status": response.status_code, "detail": response.text[:500]}
    return RemoteProblem(document, response.status_code)


_current: Api | None = None


def connect() -> Api:
    """The Api for this invocation's server and credential (one per process)."""
    global _current
    if _current is None:
        _current = Api(Profiles().target())
    return _current


def current() -> Api | None:
    """The Api this invocation used, if it used one."""
    return _current
