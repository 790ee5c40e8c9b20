"""Uploading attachments over real HTTP: an image or a PDF is stored once per content and served
back; too large, the wrong kind, empty or not what it claims to be is a typed problem (413, 415,
422) that stores nothing."""

from __future__ import annotations

import httpx
import pytest

from fastpad.knowledge.attachments import MAX_ATTACHMENT_BYTES
from tests.api.conftest import OWNER_EMAIL, Server
from tests.api.helpers import assert_problem

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(64)


@pytest.fixture(scope="module")
def writer(server: Server) -> httpx.Client:
    token = server.mint("notes:read,notes:write", "--person", OWNER_EMAIL, "--label", "tests: uploads")["token"]
    with server.client(token) as client:
        yield client


def upload(client: httpx.Client, data: bytes, media_type: str, name: str = "picture.png") -> httpx.Response:
    return client.post("/v1/attachments", params={"name": name}, content=data, headers={"content-type": media_type})


def test_an_image_is_stored_once_and_served_back(writer: httpx.Client) -> None:
    first = upload(writer, PNG + b"once", "image/png")
    assert first.status_code == 201, first.text
    stored = first.json()
    assert (stored["media_type"], stored["size"], first.headers["location"]) == (
        "image/png", len(PNG) + 4, stored["url"])
    again = upload(writer, PNG + b"once", "image/png", name="copy.png")
    assert again.json()["id"] == stored["id"]
    served = writer.get(stored["url"])
    assert served.content == PNG + b"once" and served.headers["content-type"] == "image/png"
    assert served.headers["x-content-type-options"] == "nosniff"


def test_refused_uploads_are_typed_and_store_nothing(server: Server, writer: httpx.Client) -> None:
    too_big = PNG + bytes(MAX_ATTACHMENT_BYTES)
    big = assert_problem(upload(writer, too_big, "image/png"), 413, "payload-too-large", server.base_url)
    assert big["limit_bytes"] == MAX_ATTACHMENT_BYTES
    kind = assert_problem(upload(writer, b"#!/bin/sh\n", "application/x-sh", "run.sh"), 415,
                          "unsupported-media-type", server.base_url)
    assert "image/png" in kind["accepted"] and "application/pdf" in kind["accepted"]
    fake = assert_problem(upload(writer, b"not a png at all", "image/png"), 422, "validation-failed", server.base_url)
    assert fake["field_errors"][0]["code"] == "content_mismatch"
    assert_problem(upload(writer, b"", "image/png"), 422, "validation-failed", server.base_url)
    named = assert_problem(upload(writer, PNG + b"named", "image/png", name="../etc/passwd"), 422,
                           "validation-failed", server.base_url)
    assert named["field_errors"][0]["field"] == "name"
    # The refused content was not kept: sent properly now, it is stored afresh, under the new name
    # (the same content already stored would come back under the name it was stored with).
    fresh = upload(writer, PNG + b"named", "image/png", name="good.png")
    assert fresh.status_code == 201 and fresh.json()["name"] == "good.png"
    with server.client(server.mint("notes:read", "--label", "tests: upload reader")["token"]) as reader:
        assert_problem(upload(reader, PNG, "image/png"), 403, "insufficient-scope", server.base_url)
