"""The HTTP layer's pure pieces, without a server: shape limits, ETags, negotiation,
the rate limiter, the body limiter's clock, and problem documents."""

from __future__ import annotations

import asyncio
import json

import pytest

from fastpad.api.body_limits import BodyLimitMiddleware
from fastpad.api.etag import none_match, strong_etag
from fastpad.api.limits import Limits
from fastpad.api.negotiation import choose
from fastpad.api.problems import NotAcceptable, problem_body, problem_response
from fastpad.api.ratelimit import InMemoryRateLimiter
from fastpad.api.shape import check_shape
from fastpad.errors import FieldError, RateLimited, StaleFrontier, ValidationFailed


def test_shape_counts_arrays_and_values():
    check_shape({"a": list(range(10_000))}, max_array_items=10_000, max_values=50_000)
    with pytest.raises(ValidationFailed) as info:
        check_shape({"a": {"b": list(range(10_001))}}, max_array_items=10_000, max_values=50_000)
    assert [(fe.field, fe.code) for fe in info.value.field_errors] == [("a.b", "max_items")]
    with pytest.raises(ValidationFailed) as info:
        check_shape([[0] * 9_000 for _ in range(6)], max_array_items=10_000, max_values=50_000)
    assert [fe.code for fe in info.value.field_errors] == ["max_values"]


def test_shape_names_text_no_backend_can_store():
    check_shape({"title": "ünïcode ✓", "k": ["fine"]}, max_array_items=10, max_values=100)
    with pytest.raises(ValidationFailed) as info:
        check_shape({"a": "x\x00", "b": ["\ud800"], "c\x00": 1}, max_array_items=10, max_values=100)
    assert [(fe.field, fe.code) for fe in info.value.field_errors] == [
        ("a", "invalid_text"), ("b[0]", "invalid_text"), ("c\\u0000", "invalid_text")]
    # Every field name can be rendered: a problem document is UTF-8.
    json.dumps([fe.as_dict() for fe in info.value.field_errors], ensure_ascii=False).encode("utf-8")


def test_strong_etag_and_if_none_match():
    tag = strong_etag(b"doc")
    assert tag.startswith('"') and not tag.startswith("W/")
    assert none_match(tag, tag)
    assert none_match(f'"other", W/{tag}', tag)
    assert none_match("*", tag)
    assert not none_match('"other"', tag)
    assert not none_match(None, tag)


def test_negotiation_prefers_quality_then_offer_order():
    offered = ["application/json", "text/markdown"]
    assert choose(None, offered) == "application/json"
    assert choose("text/markdown", offered) == "text/markdown"
    assert choose("text/*;q=0.9, application/json;q=0.5", offered) == "text/markdown"
    assert choose("*/*", offered) == "application/json"
    with pytest.raises(NotAcceptable):
        choose("image/png", offered)


def _admitted(limiter: InMemoryRateLimiter, key: str, limit: int) -> bool:
    try:
        limiter.hit(key, limit)
    except RateLimited:
        return False
    return True


def test_rate_limiter_admits_at_most_n_in_any_rolling_window():
    now = [0.0]
    limiter = InMemoryRateLimiter(window_s=60, clock=lambda: now[0])
    # A request every 1.7 s for five minutes, against 5 a minute: a bucket refilling at 5/60 s let
    # 9 through in one 60 s window; a window log lets through exactly 5 in every one of them.
    admitted = []
    for step in range(177):
        now[0] = step * 1.7
        if _admitted(limiter, "token:a", 5):
            admitted.append(now[0])
    for start in admitted:  # the densest windows start at an admission
        assert sum(start <= t < start + 60 for t in admitted) <= 5
    assert len(admitted) == 5 * 5, "and no fewer: a slot frees the moment its request leaves the window"


def test_rate_limiter_retry_after_is_when_the_oldest_counted_request_leaves():
    now = [100.0]
    limiter = InMemoryRateLimiter(window_s=60, clock=lambda: now[0])
    for at in (100.0, 110.0, 125.5):
        now[0] = at
        limiter.hit("person:p", 3)
    now[0] = 130.25
    with pytest.raises(RateLimited) as info:
        limiter.hit("person:p", 3)
    assert info.value.extra["retry_after_ms"] == 29_750  # 100 + 60 − 130.25
    assert info.value.extra["limit"] == 3 and info.value.extra["window_ms"] == 60_000
    now[0] = 159.999
    assert not _admitted(limiter, "person:p", 3), "a refusal is not counted, and the window is not over"
    now[0] = 160.0
    assert _admitted(limiter, "person:p", 3), "admitted the moment retry_after_ms says"
    with pytest.raises(RateLimited) as info:
        limiter.hit("person:p", 3)
    assert info.value.extra["retry_after_ms"] == 10_000  # now 110 is the oldest
    assert _admitted(limiter, "person:q", 3), "each key has its own window"


def test_rate_limiter_forgets_idle_keys_and_honours_a_lowered_limit():
    now = [0.0]
    limiter = InMemoryRateLimiter(window_s=60, clock=lambda: now[0])
    for i in range(4):
        now[0] = float(i)
        limiter.hit("token:t", 4)
    with pytest.raises(RateLimited) as info:  # the limit lowered to 2: two must leave first
        limiter.hit("token:t", 2)
    assert info.value.extra["retry_after_ms"] == 59_000  # the one at 2 s leaves at 62 s
    now[0] = 200.0
    limiter.hit("other", 1)  # a window later: the sweep drops what has nothing left in its window
    assert set(limiter._logs) == {"other"}


def test_problem_document_shape():
    error = ValidationFailed(
        detail="bad", field_errors=[FieldError(f"f{i}", "x", "m") for i in range(60)]
    )
    body = problem_body(error, "http://h:1")
    assert body["type"] == body["docs_url"] == "http://h:1/errors/validation-failed"
    assert len(body["field_errors"]) == 50 and body["field_errors_truncated"] == 10
    assert body["retryable"] is False and body["next"]
    stale = problem_body(StaleFrontier(extra={"expected_frontier": "fp1:a", "current_frontier": "fp1:b"}), "http://h:1")
    assert stale["retryable"] is True and stale["current_frontier"] == "fp1:b"
    limited = problem_response(RateLimited(extra={"retry_after_ms": 1500}), "http://h:1")
    assert limited.headers["retry-after"] == "2"
    assert limited.media_type == "application/problem+json"
    assert json.loads(limited.body)["retry_after_ms"] == 1500


def test_min_rate_scales_with_size():
    limits = Limits()
    assert limits.min_bytes_per_sec(8 * 1024 * 1024) == 64 * 1024
    assert limits.min_bytes_per_sec(4 * 1024 * 1024) == 32 * 1024
    with pytest.raises(ValueError):
        Limits.from_json('{"no_such_limit": 1}')
    assert Limits.from_json('{"body_grace_s": 0.5}').body_grace_s == 0.5


async def _drive(middleware, headers, chunks, delays):
    """Feed ``chunks`` (after ``delays``) to the middleware; return the response status and body."""
    sent: list[dict] = []
    queue: asyncio.Queue = asyncio.Queue()

    async def feeder():
        for chunk, delay, last in zip(chunks, delays, [False] * (len(chunks) - 1) + [True]):
            await asyncio.sleep(delay)
            await queue.put({"type": "http.request", "body": chunk, "more_body": not last})

    async def receive():
        return await queue.get()

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/notes", "headers": headers}
    task = asyncio.ensure_future(feeder())
    await middleware(scope, receive, send)
    task.cancel()
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


def _middleware(limits):
    async def app(scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(body)).encode()})

    return BodyLimitMiddleware(
        app, limits=limits, is_public=lambda s: False, carries_credential=lambda s: True,
        render=lambda error, scope: problem_response(error, "http://t"),
    )


def test_body_deadline_applies_even_at_a_good_rate():
    limits = Limits(body_grace_s=0.05, body_deadline_s=0.3, body_min_rate_at_max=1)
    size = 70 * 1024
    chunk = b"x" * (size // 7)
    status, body = asyncio.run(
        _drive(_middleware(limits), [(b"content-length", str(size).encode())], [chunk] * 7, [0.08] * 7)
    )
    assert status == 408
    assert json.loads(body)["min_bytes_per_sec"] == 1


def test_small_and_chunked_bodies_are_timed_too_and_fast_bodies_pass():
    limits = Limits(body_grace_s=0.01, body_deadline_s=0.2)
    for headers in ([(b"content-length", b"10")], []):  # announced, and chunked
        status, body = asyncio.run(_drive(_middleware(limits), headers, [b"x" * 10], [0.3]))
        assert status == 408, headers
        status, body = asyncio.run(_drive(_middleware(limits), headers, [b"x" * 10], [0]))
        assert (status, body) == (200, b"10")
    size = 100 * 1024
    status, body = asyncio.run(
        _drive(_middleware(limits), [(b"content-length", str(size).encode())], [b"x" * size], [0])
    )
    assert (status, body) == (200, str(size).encode())


def test_chunked_body_over_cap_is_413():
    limits = Limits(authenticated_body_bytes=100 * 1024)
    status, body = asyncio.run(_drive(_middleware(limits), [], [b"x" * 60_000] * 2, [0, 0]))
    assert status == 413
    assert json.loads(body)["max_bytes"] == 100 * 1024
