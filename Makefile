# Every target creates .venv when it is missing and installs the project with its extras.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check bench lint typecheck clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "simclock needs Python >= 3.11; run: make PYTHON=python3.11 ...")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mujoco]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m simclock.cli._demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck
	$(BIN)/lint-imports
	$(BIN)/simclock-lint .

test: check
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	@for f in benchmarks/[!_]*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
