# make run   - the controller on a simulated table (creates .venv if missing)
# make test  - ruff, mypy and the whole pytest suite (creates .venv if missing)
# make bench - benchmarks in bench/, written to bench/results.json
# make stress - (root) power cuts, SIGKILLs, storage faults, a million bad frames, 10,000 rounds
# make stress-short - the same at a tenth of the counts (CI runs it after make test)
# make system-deps - (root) the Debian packages the tests use as real parts
# make lock  - regenerate deploy/requirements.lock (hashes of every runtime dependency, uv)
# make wheelhouse - the locked wheels for a Pi (aarch64, Python 3.11) in build/wheelhouse
# make pi-vm - (root) the table on an arm64 Raspberry Pi stand-in VM (QEMU TCG, gpio-sim, systemd
#              as PID 1, deploy/install.sh for real, USB serial): build it (cached by content in
#              /var/cache/paigow-pi-vm), then run tests/pi against it
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := deploy/requirements.lock

.PHONY: run test lint typecheck pytest bench clean system-deps lock wheelhouse stress stress-short pi-vm

RUNTIME := $(VENV)/.runtime

# runtime dependencies exactly as locked (hashes checked) and the project (built with the locked
# setuptools): all `make run` needs, so a fresh clone shows the page in seconds
$(RUNTIME): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(RUNTIME)

# then the test extra (ruff, mypy, pytest, playwright, ...)
$(STAMP): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# the journal under ./var/ of this checkout; the page on http://127.0.0.1:8080/
run: $(RUNTIME)
	mkdir -p var
	$(BIN)/tablectl simulate --db $(CURDIR)/var/paigow-simulated.db --port 8080

lock: $(STAMP)
	$(BIN)/python -m pip install --quiet 'uv>=0.5,<1'
	$(BIN)/python -m uv pip compile pyproject.toml --extra pi --generate-hashes --universal \
		--python-version 3.11 --quiet --custom-compile-command 'make lock' -o $(LOCK)

wheelhouse: $(STAMP)
	PYTHON=$(BIN)/python bash deploy/wheelhouse.sh build/wheelhouse

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

stress: $(STAMP)
	$(BIN)/python -m tests.stress

stress-short: $(STAMP)
	$(BIN)/python -m tests.stress --scale 0.1

pi-vm: $(STAMP)
	PYTHON=$(CURDIR)/$(BIN)/python bash deploy/pi-vm/build.sh
	$(BIN)/pytest -p no:xdist -p no:cacheprovider -s --timeout 1200 -m pi_vm tests/pi

system-deps:
	bash .ci/system-deps

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
