# Each target creates its own virtual environment and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/toolform-rules: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/toolform-rules
	$(BIN)/toolform-rules demo

test: $(BIN)/toolform-rules
	$(BIN)/python -m pytest -q

bench: $(BIN)/toolform-rules
	$(BIN)/python bench/validate.py

clean:
	rm -rf $(VENV) build dist
