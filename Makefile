# The two README commands are `make run` and `make test`; everything else here serves them.
# Each target sets up what it needs (virtual environment, generated code, tools), so a fresh clone
# with Python 3.11+ and make needs nothing else.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := deploy/constraints.txt
BUF_VERSION := 1.75.0
BUF := .tools/buf/node_modules/.bin/buf
PYTEST_ARGS ?=
comma := ,

.PHONY: help setup run test test-cluster lint format protos bench clean image up down web

help:
	@echo "make run    start every service on loopback with embedded defaults (Ctrl-C stops them)"
	@echo "make test   lint (ruff, mypy, buf) and run the test suite but the whole-cluster tier (within 10 min)"
	@echo "make test-cluster  the whole-cluster tier: end-to-end, faults, rolling restart, containers (CI runs both)"
	@echo "make bench  run the benchmarks: every figure as a ratio (rate and CPU) to its floor in the same run"
	@echo "make protos regenerate libs/poker from protos/"
	@echo "make web    build the web client (web/dist, served by the gateway; needs npm)"
	@echo "make image  build the one container image with podman (IMAGE_BASE=registry: FROM python:3.12-slim)"
	@echo "make up     build the image and start the cluster with PostgreSQL and Redis (compose); make down stops it"

# One line per set-up step; a step's whole output only when it fails.
step = echo "setup: $(1)"; log=$$(mktemp); if ! { $(2); } >"$$log" 2>&1; then cat "$$log"; rm -f "$$log"; \
	echo "setup: FAILED: $(1) (its output is above)"; exit 1; fi; rm -f "$$log"

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	@$(call step,virtual environment in $(VENV),test -x $(BIN)/python || $(PYTHON) -m venv $(VENV))
	@$(call step,pip up to date,$(BIN)/python -m pip install --upgrade pip)
	@$(call step,the project and its pinned dependencies,$(BIN)/python -m pip install -c $(CONSTRAINTS) -e '.[dev$(comma)play]')
	@touch $(STAMP)
	@echo "setup: done"

setup: $(STAMP)

protos: $(STAMP)
	$(BIN)/python protos/generate.py

$(BUF):
	@if command -v npm >/dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix .tools/buf @bufbuild/buf@$(BUF_VERSION); \
	else echo "!!! npm not found: buf lint of protos/ is SKIPPED (install Node.js to run it) !!!"; fi

# The web client (web/): npm ci from the committed lock, then generate (buf + protoc-gen-es), type-check
# and bundle into web/dist, which the gateway serves. Without npm the page is SKIPPED, loudly.
WEB_STAMP := web/node_modules/.installed
WEB_SOURCES := $(shell find web/src web/build.mjs web/buf.gen.yaml web/tsconfig.json protos/poker -type f -not -path 'web/src/gen/*' 2>/dev/null)

$(WEB_STAMP): web/package.json web/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		$(call step,the web client's packages (npm ci),npm ci --prefix web --no-audit --no-fund --loglevel=error) && touch $@; \
	else echo "!!! npm not found: the web client is SKIPPED (install Node.js to build it) !!!"; fi

web/dist/index.html: $(WEB_STAMP) $(WEB_SOURCES)
	@if [ -f $(WEB_STAMP) ]; then $(call step,the web client (web/dist),npm run --prefix web build); fi

web: web/dist/index.html

lint: $(STAMP) $(BUF) web
	$(BIN)/ruff check libs services clients tests protos/generate.py
	$(BIN)/ruff format --check libs services clients tests protos/generate.py
	$(BIN)/mypy
	$(BIN)/lint-imports
	@if [ -x $(BUF) ]; then cd protos && ../$(BUF) lint && echo "buf lint: ok"; \
	else echo "!!! buf lint SKIPPED: no buf CLI (needs npm) !!!"; fi

format: $(STAMP)
	$(BIN)/ruff format libs services clients tests protos/generate.py
	$(BIN)/ruff check --fix libs services clients tests protos/generate.py

# The `poker` package (a PokerStars hand-history reader the export tests use) shares its import name
# with libs/poker, so it lives apart and runs in its own interpreter (tests/history/export_readers.py).
POKERSTARS_READER := .tools/pokerstars-reader/.installed
# Its dependencies but the `pathlib` and `configparser` backports it lists, which would shadow the
# standard library on that path.
POKERSTARS_READER_PACKAGES := poker 'setuptools<81' pytz lxml python-dateutil parsedatetime cached-property \
	click zope.interface attrs requests urllib3 idna certifi charset-normalizer

$(POKERSTARS_READER): $(CONSTRAINTS)
	@$(call step,the PokerStars reader of the export tests in .tools/pokerstars-reader,rm -rf .tools/pokerstars-reader && $(BIN)/python -m pip install --quiet --no-deps --target .tools/pokerstars-reader -c $(CONSTRAINTS) $(POKERSTARS_READER_PACKAGES))
	@touch $@

# The suite runs in TEST_WORKERS processes (pytest-xdist), each test file on one worker so its
# module-scoped servers start once (`--dist loadfile`). Every test is isolated (port 0, its own
# database or key prefix, its own temp dirs), so more workers only change the wall time; most tests
# wait on real clocks and servers, so more workers than cores pay off. TEST_WORKERS=0 runs serially.
TEST_WORKERS ?= 4

PYTEST = $(BIN)/pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

# `make test` leaves out the whole-cluster tier (tests marked `cluster`: the end-to-end, fault,
# partition, rolling-restart, observability, container and browser runs, the RPC fuzz of every
# method, the bots' soaks, the terminal client's session and `make run`'s longer runs: each a whole
# cluster of processes, some with Chromium); `make test-cluster` runs that tier alone. CI (.ci/run) runs both, one after
# the other, so nothing is dropped; `make test` stays within 10 minutes on a loaded 2-core machine.
test: lint $(POKERSTARS_READER)
	$(PYTEST) -m "not cluster" $(PYTEST_ARGS)

test-cluster: $(STAMP) $(POKERSTARS_READER)
	$(PYTEST) -m cluster $(PYTEST_ARGS)

# `make run BOTS=3`: also a few bot players at one table (BOTS_ROOM, default nlhe-gram-classic).
# Quiet by default (addresses, warnings, errors, a summary a minute); `make run VERBOSE=1`: every line.
run: $(STAMP) web
	$(BIN)/poker-cluster --data-dir data $(if $(BOTS),--bots $(BOTS)) $(if $(BOTS_ROOM),--bots-room $(BOTS_ROOM)) $(if $(VERBOSE),--verbose)

# Every bench adds its figures (each a ratio to its floor in the same run) to one summary, printed at the end.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e '.[dev,play,bench]'
	@summary=$$(mktemp); trap 'rm -f "$$summary"' EXIT; \
	for script in tests/bench/bench_*.py; do \
		echo "=== $$script"; POKER_BENCH_SUMMARY="$$summary" $(BIN)/python $$script || exit 1; done; \
	$(BIN)/python tests/bench/harness.py summary "$$summary"

# Deployment (docs/deploy.md). The Debian base is built from packages, so no registry is needed.
IMAGE_BASE ?= debian

image: web
	POKER_IMAGE_BASE=$(IMAGE_BASE) deploy/image/build.sh

up: image $(STAMP)
	deploy/compose.sh up

down:
	deploy/compose.sh down

clean:
	rm -rf .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist *.egg-info
	find . -name __pycache__ -type d -prune -not -path './.venv/*' -exec rm -rf {} +
