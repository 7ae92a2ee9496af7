# make run   - the controller on a simulated table (creates .venv if missing)
# make test  - ruff, mypy and the whole pytest suite (creates .venv if missing)
# make bench - benchmarks in bench/, written to bench/results.json
# make system-deps - (root) the Debian packages the tests use as real parts
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean system-deps

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/tablectl simulate

lint: $(STAMP)
	$(BIN)/ruff check fsm drivers controller tests bench
	$(BIN)/ruff format --check fsm drivers controller tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadgroup

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m bench

system-deps:
	bash .ci/system-deps

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
