# The commands of the README, each doing its own set-up.
#   make demo   build the demo leaderboard and serve it on http://127.0.0.1:8000/
#   make test   the quick suite: unit tests and one demo build end to end
#   make test-all  every test (slow, browser, embed, test_all too), one worker process per core
#   make lint   check the code with ruff (lint and format), as CI does before the tests
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= test
PORT ?= 8000

.PHONY: demo test test-all lint site

# One marker per set of extras: .installed-test, .installed-test,harness (make test-all adds the harnesses).
$(VENV)/.installed-%: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -U pip
	$(PY) -m pip install -q --disable-pip-version-check -e ".[$*]"
	touch $@

site: $(VENV)/.installed-$(EXTRAS)
	$(VENV)/bin/dualboard build

demo: site
	$(VENV)/bin/dualboard serve --port $(PORT) --open

test: $(VENV)/.installed-$(EXTRAS)
	$(PY) -m pytest $(PYTEST_ARGS)

# Also the tests marked slow, browser, embed and test_all (long simulations, logs made with the real Inspect AI
# and lm-eval), spread over one process per core; a test module runs whole in one of them (its fixtures once).
test-all: $(VENV)/.installed-$(EXTRAS),harness
	$(PY) -m pytest --test-all -n auto --dist loadfile $(PYTEST_ARGS)

# Settings in pyproject.toml ([tool.ruff]). Fix findings with `ruff check --fix` and `ruff format`.
lint: $(VENV)/.installed-$(EXTRAS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
