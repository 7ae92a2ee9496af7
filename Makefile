# make run   - the controller on a simulated table (creates .venv if missing)
# make test  - ruff, mypy and the whole pytest suite (creates .venv if missing)
# make bench - benchmarks in bench/, written to build/bench/results.json; exit 1 naming any missed target
# make bench-record - the same, written to bench/results.json (the figures the README quotes)
# make stress - (root) power cuts, SIGKILLs, storage faults, a million bad frames, 10,000 rounds
# make stress-short - the same at a tenth of the counts (CI runs it after make test)
# make system-deps - (root) the Debian packages the tests use as real parts
# make rng-evidence - the RNG's evidence for a test lab: 10,000,000 draws' tests and dieharder
#              (about 7 minutes here; docs/rng.md); the report in docs/rng-evidence/
# make conformance - every "implemented" row of docs/conformance.md broken by its own mutant
#              (tests/conformance/mutants.py) in a copy of the tree, and its cited tests must fail;
#              prints the rows whose mutant survived, exit 1 if any (CI runs it; JOBS=2 for two
#              at once; docs/conformance.md "Every row can fail")
# make lock  - regenerate deploy/requirements.lock (hashes of every runtime dependency, uv)
# make wheelhouse - the locked wheels for a Pi (aarch64, Python 3.11) in build/wheelhouse
# make release - one release from the commit checked out (deploy/release.sh): build/release/VERSION
# make pi-vm - (root) the table on an arm64 Raspberry Pi stand-in VM (QEMU TCG, gpio-sim, systemd
#              as PID 1, deploy/install.sh for real, USB serial): build it (cached by content in
#              /var/cache/paigow-pi-vm), then run tests/pi against it
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := deploy/requirements.lock

.PHONY: run test lint typecheck pytest bench bench-record clean system-deps lock wheelhouse release \
	stress stress-short rng-evidence pi-vm conformance

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

# the journal under ./var/ of this checkout; the page on http://127.0.0.1:$(PORT)/ (PORT=8081 for
# another port: a port in use stops make run with a message, never plays without its page; a PORT
# in the environment is ignored)
PORT = 8080
run: $(RUNTIME)
	mkdir -p var
	$(BIN)/tablectl simulate --db $(CURDIR)/var/paigow-simulated.db --port $(PORT)

lock: $(STAMP)
	$(BIN)/python -m pip install --quiet 'uv>=0.5,<1'
	$(BIN)/python -m uv pip compile pyproject.toml --extra pi --generate-hashes --universal \
		--python-version 3.11 --quiet --custom-compile-command 'make lock' -o $(LOCK)

wheelhouse: $(STAMP)
	PYTHON=$(BIN)/python bash deploy/wheelhouse.sh build/wheelhouse

# the version from the git tag (untagged: a development build, said so); deploy/release.sh
release: $(RUNTIME)
	PYTHON=$(BIN)/python bash deploy/release.sh

# vulture: dead code (anything only the whitelist keeps must say why there)
lint: $(STAMP)
	$(BIN)/ruff check fsm drivers controller tests bench
	$(BIN)/ruff format --check fsm drivers controller tests bench
	$(BIN)/vulture fsm drivers controller tests bench vulture_whitelist.py

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadgroup

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m bench

bench-record: $(STAMP)
	$(BIN)/python -m bench --record

JOBS = 1
conformance: $(STAMP)
	$(BIN)/python -m tests.conformance -j $(JOBS)

stress: $(STAMP)
	$(BIN)/python -m tests.stress

stress-short: $(STAMP)
	$(BIN)/python -m tests.stress --scale 0.1

pi-vm: $(STAMP)
	PYTHON=$(CURDIR)/$(BIN)/python bash deploy/pi-vm/build.sh
	$(BIN)/pytest -p no:xdist -p no:cacheprovider -s --timeout 1200 -m pi_vm tests/pi

system-deps:
	bash .ci/system-deps

# heavy (dieharder): niced; on a shared machine run it under the suite's lock
rng-evidence: $(RUNTIME)
	nice -n 10 $(BIN)/tablectl rng evidence --out docs/rng-evidence --work build/rng-evidence

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
