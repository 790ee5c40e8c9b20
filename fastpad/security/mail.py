"""Outgoing mail for invitations, when the deployment configures SMTP.

``fastpad.json`` may hold ``"mail": {"host": …, "port": 587, "from": "fastpad@example.com",
"starttls": true, "username": …, "password": …}``; without it nothing is sent and the inviter
passes the link on by hand. Sent with the standard library's ``smtplib``.
"""

from __future__ import annotations

import smtplib
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

SEND_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Mailer:
    host: str
    port: int
    sender: str
    starttls: bool = False
    username: str | None = None
    password: str | None = None

    @classmethod
    def from_config(cls, config: Any) -> "Mailer | None":
        """The mailer ``fastpad.json``'s ``"mail"`` object describes, or None when it has none.
        A malformed object is a ValueError naming the field, raised when the server starts."""
        if config is None:
            return None
        if not isinstance(config, dict):
            raise ValueError('fastpad.json: "mail" must be an object with host, port and from')
        host, sender, port = config.get("host"), config.get("from"), config.get("port", 25)
        if not isinstance(host, str) or not host:
            raise ValueError('fastpad.json: mail.host must name the SMTP server')
        if not isinstance(sender, str) or "@" not in sender:
            raise ValueError('fastpad.json: mail.from must be the sender\'s email address')
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError("fastpad.json: mail.port must be a TCP port number")
        username, password = config.get("username"), config.get("password")
        if (username is None) != (password is None):
            raise ValueError("fastpad.json: mail.username and mail.password go together")
        return cls(host, port, sender, bool(config.get("starttls", False)), username, password)

    def send(self, to: str, subject: str, body: str) -> None:
        """Send one plain-text message; an OSError/SMTPException propagates to the caller."""
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        message.set_content(body)
        with smtplib.SMTP(self.host, self.port, timeout=SEND_TIMEOUT_S) as smtp:
            if self.starttls:
                smtp.starttls()
            if self.username is not None and self.password is not None:
                smtp.login(self.username, self.password)
            smtp.send_message(message)
