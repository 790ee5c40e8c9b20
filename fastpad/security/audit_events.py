"""Where the team's audit entries will be written: one call per event, through ``record``.

TODO(i30-audit merge): ``record`` is a no-op stub. The workspace audit log service is built on
branch i30-audit; at merge the lead makes this function append to it (inside the caller's
transaction where one is passed). Until then nothing is recorded — the call sites exist so each
event below is wired in one place:

  invitation.created, invitation.accepted, invitation.revoked, member.role_changed,
  member.removed, session.signed_in, session.sign_in_failed
"""

from __future__ import annotations

from typing import Any


def record(tx_or_store: Any, workspace_id: str | None, actor: str | None, action: str, **details: Any) -> None:
    """Record ``action`` by ``actor`` (a person id; None when nobody is signed in yet) in
    ``workspace_id``'s audit log. A no-op until the i30-audit merge (see the module docstring)."""
    del tx_or_store, workspace_id, actor, action, details
