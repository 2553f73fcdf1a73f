# Every target creates .venv when it is missing and installs the project with its extras.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-thorough test-pure check docs bench lint typecheck native dist clean mutation

# The compiled core (C-NATIVE-1): rebuilt in place when one of its sources is newer
# than the manifest the last build wrote (pure fallback with one line if it cannot).
# NATIVE_SRC repeats pyproject's [tool.simclock.native] modules, on this one line
# (tests/test_native.py::test_C_NATIVE_1_one_module_list parses it and compares).
NATIVE_SRC := simclock/core/_entry.py simclock/core/_heap.py simclock/core/_heapclock.py simclock/core/_kernels.py simclock/core/_mcap_records.py simclock/core/_phases.py simclock/core/_sample.py simclock/core/_sender.py
NATIVE_MANIFEST := simclock/core/_compiled.json

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "simclock needs Python >= 3.11; run: make PYTHON=python3.11 ...")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@$(BIN)/python -m simclock.core
	touch $(STAMP)

$(NATIVE_MANIFEST): $(NATIVE_SRC) | $(STAMP)
	$(BIN)/python build_native.py

native: $(STAMP)
	$(BIN)/python build_native.py
	@$(BIN)/python -m simclock.core

demo: $(STAMP) $(NATIVE_MANIFEST)
	$(BIN)/python -m simclock.cli._demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck
	$(BIN)/lint-imports
	$(BIN)/simclock-lint .
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The documentation site (mkdocs.yml, pages in docs/), built into site/ (git-ignored).
# Its examples are executed by tests/test_docs_examples.py, not here.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	@echo "docs: open $(CURDIR)/site/index.html"

# The tests run on every core and one more (pytest-xdist; PYTEST_WORKERS=0 for one
# process), a file per worker at a time so that a module's fixtures are built once. The
# extra worker runs while others wait on drivers, compilers and reply deadlines: on the
# 2-core machine, 3 workers take 424 s where 2 take 514 s (the same tests).
PYTEST_WORKERS ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1 )))
# make test: Hypothesis's bounded, derandomised ci profile (60 fixed examples a property).
# make test-thorough: the deep run, 1000 random examples a property, and every self-check
# backend through the wire protocol as well (the wire_full mark).
HYPOTHESIS_PROFILE ?= ci
export HYPOTHESIS_PROFILE
PYTEST_MARKS ?= not wire_full

test: check $(NATIVE_MANIFEST)
	@$(BIN)/python -m simclock.core
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m "$(PYTEST_MARKS)"
	$(MAKE) --no-print-directory test-pure

test-thorough:
	$(MAKE) --no-print-directory test HYPOTHESIS_PROFILE=thorough PYTEST_MARKS="wire_full or not wire_full"

# The pure-Python build of the core on the same clauses: HeapSimClock's conformance
# suite, its oracle state machine, and the session's phases on the golden traces
# (skipped when the main run was pure already); the recorder's records and the bus sender.
test-pure: $(STAMP)
	@if $(BIN)/python -c 'import simclock, sys; sys.exit(0 if simclock.COMPILED else 1)'; then \
		SIMCLOCK_PURE=1 $(BIN)/python -m simclock.core && \
		SIMCLOCK_PURE=1 $(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadfile \
			tests/test_native.py \
			tests/test_conformance_heap.py tests/test_sec1_simclock.py \
			tests/test_fingerprints_golden.py tests/test_devices.py tests/test_session.py \
			tests/test_sender.py tests/test_kernels.py tests/test_recording_records.py tests/test_sec3_bus.py \
			"tests/test_state_machine.py::test_C_ADV_1_C_ADV_5_C_TIE_1_C_PER_2_C_CAN_1_C_ERR_1_state_machine_matches_oracle" \
			"tests/test_state_machine.py::test_C_CAN_4_schedule_cancel_churn_keeps_heap_bounded_and_matches_oracle"; \
	else echo "test-pure: the core is pure Python already, the main run covered it"; fi

bench: $(STAMP) $(NATIVE_MANIFEST)
	@for f in benchmarks/[!_]*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# Mutation testing of the scheduling core and the reference clock with the conformance
# suite (docs/conformance.md, "Mutation testing"); not part of `make test`. A whole
# campaign is hours on 2 cores: MUTANTS=N runs a random sample of N (0: every mutant);
# MUTATION_JOBS=J mutants at once (each is two whole conformance reports).
MUTANTS ?= 80
MUTATION_SEED ?= 43
MUTATION_JOBS ?= 1

mutation: $(STAMP)
	$(BIN)/python conformance/mutation/campaign.py --sample $(MUTANTS) --seed $(MUTATION_SEED) \
		--jobs $(MUTATION_JOBS) --out mutation-results.jsonl

# A release: the sdist and the wheel in dist/, checked by twine (docs/packaging.md).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/python -m twine check --strict dist/*

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis build dist site
	rm -f simclock/core/*.so $(NATIVE_MANIFEST)
