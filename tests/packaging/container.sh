#!/bin/sh
# The Dockerfile and compose.yaml, step by step, in a fresh directory: no container runtime runs
# here, so each step the image takes runs as the same docker/fastpad.sh command, with the
# image's paths moved under one temporary directory and the server bound to loopback.
#
#   sh tests/packaging/container.sh [POSTGRES_URL]
#
# With POSTGRES_URL (an empty database; tests/packaging/test_container.py passes one from the
# suite's pgserver), compose.yaml's app is mirrored too: first start against PostgreSQL.
set -eu
umask 022  # a container build's default
root="$(cd "$(dirname "$0")/../.." && pwd)"
postgres_url="${1:-}"
# The image's Python is the system's (python:3.11-slim); here too, since the image user cannot
# read an interpreter under a 0700 home such as pyenv's in /root.
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; fi
export PYTHON="${PYTHON:-python3}"
work="$(mktemp -d /tmp/fastpad-container-XXXXXX)"
chmod 755 "$work"  # the image's user reads the venv; mktemp's 0700 would hide it
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "container.sh: $*" >&2; for log in "$work"/*.log; do [ -f "$log" ] && tail -n 40 "$log" >&2; done; exit 1; }

# Stage "build": COPY pyproject.toml README.md constraints.txt, fastpad, docker/fastpad.sh; RUN fastpad.sh wheel.
mkdir "$work/src"
cp "$root/pyproject.toml" "$root/README.md" "$root/constraints.txt" "$work/src/"
cp -R "$root/fastpad" "$work/src/fastpad"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
cp "$root/docker/fastpad.sh" "$work/fastpad.sh"
sh "$work/fastpad.sh" wheel "$work/wheels" "$work/src"

# Stage 2: ENV, RUN fastpad.sh install, RUN useradd (uid 10001) + fastpad.sh volume, USER 10001.
export FASTPAD_PREFIX="$work/opt/fastpad" FASTPAD_DATA="$work/data" FASTPAD_HOST=127.0.0.1 FASTPAD_UID=10001 \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
FASTPAD_PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export FASTPAD_PORT
sh "$work/fastpad.sh" install "$work/wheels" "$work/src/constraints.txt"
py="$FASTPAD_PREFIX/bin/python"
# ENTRYPOINT fastpad.sh start, HEALTHCHECK fastpad.sh health (polled as the start period does),
# then what a person does first: sign in with the password the first start printed, open the app.
first_start() {
    log="$work/$1.log"
    # USER 10001: no user is added to this machine, the server just runs under that uid. Started
    # directly in the background (setpriv and fastpad.sh exec), so $! is the server itself.
    if [ "$(id -u)" = 0 ] && [ "$FASTPAD_UID" != 0 ]; then
        setpriv --reuid=10001 --regid=10001 --clear-groups sh "$work/fastpad.sh" start >"$log" 2>&1 &
    else
        sh "$work/fastpad.sh" start >"$log" 2>&1 &
    fi
    server=$!
    tries=0
    until sh "$work/fastpad.sh" health 2>/dev/null; do
        kill -0 "$server" 2>/dev/null || fail "$1: the server exited"
        tries=$((tries + 1))
        [ "$tries" -le 600 ] || fail "$1: not healthy after 60 s"
        sleep 0.1
    done
    password="$(sed -n 's/^  password   \([^ ]*\) .*/\1/p' "$log")"
    [ -n "$password" ] || fail "$1: the first start printed no owner password"
    "$py" - "$FASTPAD_PORT" "$password" <<'PY' || fail "$1: the app did not answer as it should"
import sys, httpx
base = f"http://127.0.0.1:{sys.argv[1]}"
with httpx.Client(base_url=base, timeout=10) as browser:
    signed_out = browser.get("/")  # the first note, kept in the browser before an account
    assert signed_out.status_code == 200 and '"signedIn": false' in signed_out.text, signed_out.status_code
    assert browser.get("/inbox").status_code == 303, "signed out, the app's other pages send you to sign in"
    signed_in = browser.post("/v1/session", json={"email": "owner@localhost", "password": sys.argv[2]})
    assert signed_in.status_code == 201, signed_in.text
    page = browser.get("/")
    assert page.status_code == 200 and "/static/" in page.text, page.status_code
PY
    [ "$(stat -c %u "$FASTPAD_DATA/fastpad.json")" = "$FASTPAD_UID" ] || [ "$(id -u)" != 0 ] \
        || fail "$1: the deployment is not the image user's"
    kill "$server"
    wait "$server" || true
    server=""
}

sh "$work/fastpad.sh" volume
first_start sqlite
grep -q '"database_url": "sqlite:' "$FASTPAD_DATA/fastpad.json" || fail "sqlite: not on SQLite"

if [ -n "$postgres_url" ]; then
    # compose.yaml's app: the same image, FASTPAD_DATABASE_URL naming the db service, its own volume.
    # The suite's throwaway PostgreSQL listens on a socket private to whoever runs the suite, so
    # this start runs as that user (the SQLite start above showed the image's uid at work).
    export FASTPAD_DATA="$work/data-postgres" FASTPAD_DATABASE_URL="$postgres_url" FASTPAD_UID="$(id -u)"
    sh "$work/fastpad.sh" volume
    first_start postgres
    grep -q '"database_url": "postgresql://' "$FASTPAD_DATA/fastpad.json" || fail "postgres: not on PostgreSQL"
fi
echo "container.sh: the image's steps work${postgres_url:+, on SQLite and on PostgreSQL}"
