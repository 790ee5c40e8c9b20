"""Where the client's server and credential come from: the environment, or a stored login (a profile).

Resolution, first match wins:

1. ``--profile NAME``: that profile's server and credential.
2. ``FASTPAD_URL`` / ``FASTPAD_TOKEN``: a server and a token from the
   environment (CI, containers); a missing token falls back to the stored
   profile's when that profile is for the same server.
3. ``FASTPAD_PROFILE``, else the default profile (the last one ``fp login`` wrote).

``fp login`` stores a profile's server, workspace and scopes in
``$XDG_CONFIG_HOME/fastpad/profiles.json`` and its token in the OS keychain
when the ``keyring`` package is installed and has a working backend, else in
``credentials.json`` beside it (mode 0600, directory 0700). Nothing secret is
ever in ``profiles.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fastpad.cli.options import settings
from fastpad.errors import FieldError, Unauthenticated, ValidationFailed

KEYRING_SERVICE = "fastpad"
DEFAULT_PROFILE = "default"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "fastpad"


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "fastpad"


def private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, atomically and durably."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError:
        raise ValidationFailed(detail=f"{path} is not valid JSON; fix or delete it") from None
    return data if isinstance(data, dict) else {}


@dataclass
class Profile:
    name: str
    url: str
    workspace_id: str | None = None
    token_id: str | None = None
    scopes: list[str] = field(default_factory=list)
    expires_at: str | None = None
    credential: str = "file"  # where the token is: "file" or "keyring"


@dataclass(frozen=True)
class Target:
    """The server a command talks to, with what to authenticate as."""

    url: str
    token: str | None
    profile: str | None  # None: the token came from FASTPAD_TOKEN

    @property
    def spool_key(self) -> str:
        """One spool per profile — so a capture made before `fp login` is sent once it is done —
        and one per server and token from the environment, so a capture is sent as whoever made it."""
        if self.profile is not None:
            return f"profile-{self.profile}"
        return "env-" + hashlib.sha256(f"{self.url}\0{self.token}".encode()).hexdigest()[:16]


class Profiles:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or config_dir()
        self.path = self.directory / "profiles.json"
        self.credentials_path = self.directory / "credentials.json"

    # ------------------------------------------------------------------ profiles

    def _data(self) -> dict[str, Any]:
        return _read_json(self.path)

    def default_name(self) -> str:
        return os.environ.get("FASTPAD_PROFILE") or self._data().get("default_profile") or DEFAULT_PROFILE

    def get(self, name: str) -> Profile | None:
        raw = self._data().get("profiles", {}).get(name)
        if not isinstance(raw, dict):
            return None
        known = {k: v for k, v in raw.items() if k in Profile.__dataclass_fields__ and k != "name"}
        return Profile(name=name, **known)

    def save(self, profile: Profile, token: str) -> None:
        """Store a login and make it the default profile."""
        _check_name(profile.name)
        profile.credential = "keyring" if self._store_in_keyring(profile.name, token) else "file"
        secrets = _read_json(self.credentials_path)
        if profile.credential == "file":
            secrets[profile.name] = token
        else:
            secrets.pop(profile.name, None)  # an older token of this profile never stays on disk
        if profile.credential == "file" or self.credentials_path.exists():
            write_private(self.credentials_path, json.dumps(secrets, indent=2) + "\n")
        data = self._data()
        record = asdict(profile)
        record.pop("name")
        data.setdefault("profiles", {})[profile.name] = record
        data["default_profile"] = profile.name
        write_private(self.path, json.dumps(data, indent=2) + "\n")

    def token(self, profile: Profile) -> str | None:
        if profile.credential == "keyring":
            keyring = _keyring()
            return keyring.get_password(KEYRING_SERVICE, profile.name) if keyring else None
        value = _read_json(self.credentials_path).get(profile.name)
        return value if isinstance(value, str) else None

    @staticmethod
    def _store_in_keyring(name: str, token: str) -> bool:
        keyring = _keyring()
        if keyring is None:
            return False
        try:
            keyring.set_password(KEYRING_SERVICE, name, token)
        except Exception:  # a backend that is there but locked or broken: use the file
            return False
        return True

    # ------------------------------------------------------------------ resolution

    def target(self) -> Target:
        """The server and credential this invocation uses (see the module docstring)."""
        if settings.profile is not None:
            profile = self.get(settings.profile)
            if profile is None:
                raise Unauthenticated(detail=f"no profile named {settings.profile!r}",
                                      next_call=f"fp login --profile {settings.profile} --url URL")
            return Target(profile.url, self.token(profile), profile.name)
        profile = self.get(self.default_name())
        env_url = os.environ.get("FASTPAD_URL")
        env_token = os.environ.get("FASTPAD_TOKEN")
        server = (env_url or (profile.url if profile else "")).rstrip("/")
        if not server:
            raise Unauthenticated(detail="no server: set FASTPAD_URL, or log in",
                                  next_call="fp login --url https://your-fastpad")
        if env_token:
            return Target(server, env_token, None)
        if profile is not None and profile.url.rstrip("/") == server:
            return Target(server, self.token(profile), profile.name)
        return Target(server, None, profile.name if profile else self.default_name())


def _check_name(name: str) -> None:
    if not name or len(name) > 64 or not all(ch.isalnum() or ch in "-_." for ch in name):
        raise ValidationFailed(detail="a profile name is 1–64 letters, digits, '-', '_' or '.'",
                               field_errors=[FieldError("--profile", "invalid", "letters, digits, - _ .")])


def _keyring() -> Any:
    """The keyring module when it is installed and has a real backend; else None."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return keyring
