# The two set-up commands of the README: `make demo` (main job) and `make test` (whole suite).
# Both install what they need (virtual environment, packages, ZooKeeper) through scripts/bootstrap.sh.
VENV ?= .venv

.PHONY: demo test bootstrap

bootstrap:
	@scripts/bootstrap.sh "$(VENV)"

demo: bootstrap
	$(VENV)/bin/zkconsumer demo

test: bootstrap
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest
