"""The HTTP surface: parse a request, call a service, render the result or a problem document."""

from fastpad.api.app import create_app
from fastpad.api.limits import Limits

__all__ = ["Limits", "create_app"]
