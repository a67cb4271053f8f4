# Each target creates its own virtual environment and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test corpora bench clean

$(BIN)/toolform-rules: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/toolform-rules
	$(BIN)/toolform-rules demo

# The public conformance corpora (JSON Schema Test Suite, BFCL), pinned in tools/corpora.py:
# downloaded once into .corpora/, verified on every run.
corpora: $(BIN)/toolform-rules
	$(BIN)/python tools/corpora.py fetch

test: corpora
	$(BIN)/python -m pytest -q -n auto --durations=10

# Validation against the reference, then every protocol (the 31 of the study, the 34 model-native
# formats) on 1 MB of each hostile shape, ✗ where over 0.25 s: about 2½ minutes on an idle 2-CPU machine.
bench: corpora
	$(BIN)/python bench/validate.py
	$(BIN)/python bench/hostile.py --sizes 1000000 --kind all

clean:
	rm -rf $(VENV) build dist .corpora
