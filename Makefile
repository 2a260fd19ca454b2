# The two set-up commands of the README: `make demo` (main job) and `make test` (whole suite).
# Both install what they need (virtual environment, packages, ZooKeeper) through scripts/bootstrap.sh.
VENV ?= .venv

.PHONY: demo test bootstrap

bootstrap:
	@scripts/bootstrap.sh "$(VENV)"

demo: bootstrap
	$(VENV)/bin/zkconsumer demo

# The tests also need a headless browser (the timeline page is checked in chromium): `test` installs it.
# Before the tests: ruff, the layers contract (import-linter, pyproject.toml) and mypy on the package.
# The tests: scripts/run_tests.sh (the Spark tests beside the others, see there).
# After them, the container pass: the server tests that matter for the Docker path once more, with ZooKeeper in a
# container of the project's own image on podman (scripts/containers.sh sets it up); where containers are not
# available it prints that it was skipped and why, and does not fail.
test:
	@scripts/bootstrap.sh "$(VENV)" test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	@scripts/run_tests.sh "$(VENV)"
	@scripts/containers.sh test "$(VENV)"
