# cardtable: the two commands a newcomer needs are `make run` and `make test`.
# Everything installs into .venv from pinned versions (constraints.txt); nothing by hand.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed-stamp
SOURCES := services tools tests scripts examples

.PHONY: install proto proto-check proto-baseline run test test-fast browser lint format bench bench-engine bench-system bench-scoring clean lock

install: $(STAMP)

$(STAMP): pyproject.toml tools/pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]' -e './tools[containers]'
	@touch $(STAMP)

## Regenerate services/cardtable_api from proto/ (never edit the generated code by hand).
proto: install
	$(PY) scripts/generate_protos.py

## Generated code up to date, buf lint, and no breaking change against the last release's protos.
proto-check: install
	$(PY) scripts/proto_baseline.py check
	$(PY) scripts/generate_protos.py --check
	cd proto && ../$(BIN)/buf lint

## At a release only: make the protos as they are now the baseline proto-check compares against.
proto-baseline: install
	$(PY) scripts/proto_baseline.py cut

## Start real NATS JetStream + Postgres (embedded wheels, or NATS_URL / DATABASE_URL) and the services.
run: install
	$(BIN)/cardtable run

## The whole test suite against real servers (the command CI runs), on three workers, each with
## servers of its own: most tests wait on servers, so a third worker fills two cores' idle time.
## Timing-sensitive tests (marked alone) run with the other workers waiting.
test: install proto-check browser
	$(BIN)/pytest -n 3 --dist loadgroup

## The engine and the units, in-process: no server, no service process, no browser (two workers).
test-fast: install
	$(BIN)/pytest -n 2 --dist loadgroup -m "not slow and not services and not browser"

## Debian's chromium, headless, for the replay viewer's browser test: installed only when missing.
browser:
	@sh scripts/ensure_chromium.sh

lint: install proto-check
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/ruff format --check $(SOURCES)
	$(BIN)/mypy
	$(BIN)/mypy examples/python
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff check --fix $(SOURCES)
	$(BIN)/ruff format $(SOURCES)

bench: bench-engine bench-system bench-scoring

bench-system: install
	$(BIN)/cardtable bench --tables 40,80,160 --seconds 20 --out bench-results

bench-scoring: install
	$(BIN)/cardtable bench-scoring --games 10000 --json-out bench-results/scoring.json

bench-engine: install
	$(BIN)/cardtable bench-engine --seconds 25

## Re-pin every dependency to what is installed now (after changing pyproject.toml).
lock:
	$(PY) -m pip freeze --all --exclude-editable | grep -v -e '^cardtable' -e '^pip==' > constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
