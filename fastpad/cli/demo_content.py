"""The small demo workspace ``fp demo`` seeds: three notes written for the project."""

from __future__ import annotations

WELCOME = """\
---
title: Welcome to Fastpad
types: [Guide]
---

# Welcome to Fastpad

Fastpad keeps your notes as documents of blocks. Every block has a stable id, so a link, a citation or an agent's proposed edit keeps pointing at the right paragraph while you keep writing.

## Try it

- [ ] Read a note as Markdown: `curl -H 'Accept: text/markdown' …/v1/notes/ID`
- [ ] Create one from Markdown: `POST /v1/notes` with `Content-Type: text/markdown`
- [ ] Connect an agent with the MCP config `fp demo` printed

> [!tip] Agents propose, you decide
> An agent token can read and propose. Nothing it writes lands without review unless you grant auto-apply, and even then it stays marked unreviewed.
"""

PROJECT = """\
---
title: Project — self-hosted launch
types: [Project]
status: active
owner: owner@localhost
---

# Self-hosted launch

Goal: anyone can run Fastpad on their own machine with two commands, `make run` and `make test`.

## Milestones

1. Store on SQLite and PostgreSQL, passing the same suite
2. The HTTP contract: problem documents, idempotency keys, rate limits
3. Tokens that always expire and can only narrow

| Area | Owner | State |
| --- | --- | --- |
| Store | B | in progress |
| HTTP and CLI | C | in progress |
"""

MEETING = """\
---
title: Meeting — API review
types: [Meeting]
date: "2025-01-14"
attendees: [owner@localhost]
---

# API review

Decisions:

- Every failure is an RFC 9457 problem document whose type URI resolves.
- A mutation replays its first response for the same idempotency key; a different body under that key is a 409.
- Writes carry the frontier they were computed against, so a stale write is refused rather than applied blind.

Follow-ups:

- [x] Publish the error catalog at /errors
- [ ] Benchmark POST /ops at 10,000 notes on both backends
"""

NOTES: tuple[str, ...] = (WELCOME, PROJECT, MEETING)
