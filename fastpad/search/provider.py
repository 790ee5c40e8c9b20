"""The model provider that answers questions: any OpenAI-compatible chat-completions endpoint.

Configured by the ``ask`` object of ``fastpad.json``; without it the deployment has no
provider and ``POST /v1/ask`` refuses with ``provider-not-configured``::

    "ask": {
        "base_url": "http://127.0.0.1:8080/v1",
        "model": "qwen2.5-7b-instruct",
        "api_key_env": "FASTPAD_ASK_API_KEY",
        "timeout_s": 60,
        "max_completion_tokens": 1024
    }

``base_url``     the API root the provider documents (ending ``/v1`` for llama.cpp's server,
                 Ollama at ``http://127.0.0.1:11434/v1``, vLLM, or a hosted API); the request
                 goes to ``{base_url}/chat/completions``
``model``        the model name the provider expects
``api_key_env``  the *name* of an environment variable of the server's process holding the
                 API key, sent as ``Authorization: Bearer``. The key itself never lives in the
                 file. Leave it out for a local server that takes no key.
``timeout_s``    how long one answer may take (default 60)
``max_completion_tokens``  the longest answer asked for (sent as ``max_tokens``; default 1024). With
                 the prompt's own count it bounds what one question can cost, which a token's
                 spending cap reserves before the call (:meth:`ChatProvider.max_cost`)

Every failure is typed: a provider that cannot be reached, times out, fails (5xx, 408, 429) or
answers something that is not a chat completion is ``provider-unavailable`` (retryable, with the
provider's ``Retry-After`` as ``retry_after_ms`` when it sent one); one that refuses the request
itself (a wrong key, an unknown model: any other 4xx) is ``provider-refused``, which the operator
fixes. Neither carries the key or the provider's body back to the asker.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from fastpad.errors import FieldError, ProviderNotConfigured, ProviderRefused, ProviderUnavailable, ValidationFailed
from fastpad.outbound.tokens import count_tokens

CONFIG_KEY = "ask"
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 600.0
DEFAULT_MAX_COMPLETION_TOKENS = 1024
MAX_COMPLETION_TOKENS = 131_072
# What a chat template adds around each message (role markers, separators) and to prime the reply:
# OpenAI's published accounting is 3 per message and 3 for the reply; 4 and 4 leave a margin.
MESSAGE_OVERHEAD_TOKENS = 4
REPLY_OVERHEAD_TOKENS = 4
_KEYS = frozenset({"base_url", "model", "api_key_env", "timeout_s", "max_completion_tokens"})
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


@dataclass(frozen=True)
class Completion:
    text: str
    total_tokens: int  # the provider's usage.total_tokens, or our count when it reported none
    usage_reported: bool
    model: str


@dataclass(frozen=True)
class ChatProvider:
    base_url: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_completion_tokens: int = DEFAULT_MAX_COMPLETION_TOKENS

    def max_cost(self, messages: Sequence[Mapping[str, str]]) -> int:
        """The most one completion of ``messages`` may charge: the prompt as counted here (o200k,
        with the chat template's overhead) and the longest answer the request allows."""
        prompt = sum(count_tokens(m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in messages)
        return prompt + REPLY_OVERHEAD_TOKENS + self.max_completion_tokens

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def complete(self, messages: Sequence[Mapping[str, str]]) -> Completion:
        """One chat completion at temperature 0, or a typed error (see the module docstring)."""
        headers = {"accept": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ProviderNotConfigured(
                    detail=f"fastpad.json names the environment variable {self.api_key_env} for the model "
                           "provider's API key, and the server's environment does not set it; nothing was asked.",
                    next_call=f"set {self.api_key_env} in the server's environment and restart fp serve",
                )
            headers["authorization"] = f"Bearer {key}"
        body = {"model": self.model, "messages": list(messages), "temperature": 0, "stream": False,
                "max_tokens": self.max_completion_tokens}
        where = urlsplit(self.base_url).netloc
        try:
            with httpx.Client(timeout=self.timeout_s, follow_redirects=False) as client:
                response = client.post(self.endpoint, json=body, headers=headers)
        except httpx.TimeoutException:
            raise _unavailable("timeout", f"The model provider at {where} did not answer within "
                                          f"{self.timeout_s:g} s.") from None
        except httpx.HTTPError as exc:
            raise _unavailable("unreachable", f"The model provider at {where} could not be reached "
                                              f"({type(exc).__name__}).") from None
        status = response.status_code
        if status >= 500 or status in _RETRYABLE_STATUS:
            raise _unavailable("provider_status", f"The model provider at {where} answered {status}.",
                               status=status, retry_after=response.headers.get("retry-after"))
        if status >= 300:
            raise ProviderRefused(
                detail=f"The model provider at {where} refused this deployment's request ({status}): check the "
                       "model name and API key in fastpad.json and the server's environment.",
                extra={"provider_status": status},
                next_call="tell the deployment's operator; meanwhile POST /v1/search (fp query TEXT) still works",
            )
        return self._completion(response, where, messages)

    def _completion(self, response: httpx.Response, where: str, messages: Sequence[Mapping[str, str]]) -> Completion:
        try:
            data = response.json()
            text = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            text, data = None, None
        if not isinstance(text, str) or not text.strip():
            raise _unavailable("malformed", f"The model provider at {where} answered with no chat completion.")
        usage = data.get("usage") if isinstance(data, dict) else None
        total = usage.get("total_tokens") if isinstance(usage, dict) else None
        if isinstance(total, int) and not isinstance(total, bool) and total >= 0:
            return Completion(text, total, True, str(data.get("model") or self.model))
        # No usage reported: a spending cap still needs a figure, so count what went and came back.
        counted = sum(count_tokens(m["content"]) for m in messages) + count_tokens(text)
        return Completion(text, counted, False, str(data.get("model") or self.model))


def _unavailable(reason: str, detail: str, *, status: int | None = None,
                 retry_after: str | None = None) -> ProviderUnavailable:
    extra: dict[str, Any] = {"reason": reason}
    if status is not None:
        extra["provider_status"] = status
    if retry_after is not None and retry_after.strip().isdigit():
        extra["retry_after_ms"] = int(retry_after.strip()) * 1000
    return ProviderUnavailable(detail=detail + " Nothing was charged; ask again.", extra=extra,
                               next_call="POST /v1/ask again in a moment, or POST /v1/search (fp query TEXT) now")


def provider_from_config(config: Any) -> ChatProvider | None:
    """The provider ``fastpad.json``'s ``ask`` object describes; None without one. A malformed
    object is refused (``validation-failed`` naming the key), so ``fp serve`` does not start on it."""
    if config is None:
        return None

    def bad(key: str | None, what: str) -> ValidationFailed:
        name = CONFIG_KEY if key is None else f"{CONFIG_KEY}.{key}"
        return ValidationFailed(detail=f"fastpad.json: {name} {what}", field_errors=[FieldError(name, "invalid", what)])

    if not isinstance(config, dict):
        raise bad(None, "must be an object with base_url and model")
    unknown = sorted(set(config) - _KEYS)
    if unknown:
        raise bad(unknown[0], f"is not a setting (known: {', '.join(sorted(_KEYS))})")
    base_url = config.get("base_url")
    parts = urlsplit(base_url) if isinstance(base_url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise bad("base_url", "must be an http(s) URL such as http://127.0.0.1:8080/v1")
    model = config.get("model")
    if not isinstance(model, str) or not model.strip():
        raise bad("model", "must name the provider's model")
    key_env = config.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not key_env.strip() or "=" in key_env):
        raise bad("api_key_env", "must be the name of an environment variable (never the key itself)")
    timeout = config.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT_S:
        raise bad("timeout_s", f"must be a number of seconds up to {MAX_TIMEOUT_S:g}")
    longest = config.get("max_completion_tokens", DEFAULT_MAX_COMPLETION_TOKENS)
    if isinstance(longest, bool) or not isinstance(longest, int) or not 1 <= longest <= MAX_COMPLETION_TOKENS:
        raise bad("max_completion_tokens", f"must be a whole number of tokens from 1 to {MAX_COMPLETION_TOKENS}")
    return ChatProvider(base_url, model.strip(), key_env.strip() if key_env else None, float(timeout), longest)
