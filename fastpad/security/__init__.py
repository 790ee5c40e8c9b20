"""Principals and credentials: who is acting, and what they may reach."""

from fastpad.security.principals import Principal
from fastpad.security.scopes import ALL_SCOPES, SESSION_SCOPES

__all__ = ["ALL_SCOPES", "SESSION_SCOPES", "Principal"]
