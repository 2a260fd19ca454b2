# The two set-up commands of the README: `make demo` (main job) and `make test` (whole suite).
# Both install what they need (virtual environment, packages, ZooKeeper) through scripts/bootstrap.sh.
VENV ?= .venv

.PHONY: demo test bootstrap docs

bootstrap:
	@scripts/bootstrap.sh "$(VENV)"

demo: bootstrap
	$(VENV)/bin/zkconsumer demo

# The documentation site (docs/, mkdocs.yml) into site/: open site/index.html, no server or network needed.
# NO_MKDOCS_2_WARNING: Material for MkDocs prints a notice on every build (MkDocs 2 will not run it; Material's own
# end of life in May 2027, Zensical its successor reading the same mkdocs.yml). The docs extra pins MkDocs below 2 and
# Material below 10 (pyproject.toml), so the build does not change under it; the notice stays out of make test.
MKDOCS = NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs
docs: bootstrap
	$(MKDOCS) build --strict

# The tests also need a headless browser (the timeline page is checked in chromium): `test` installs it.
# Before the tests: ruff, the layers contract (import-linter, pyproject.toml), mypy on the package, and the docs site
# built strictly (mkdocs.yml: a broken link, a page left out of the nav or an unreadable docstring fails; not with
# --quiet, which hides the warnings that --strict counts).
# The tests: scripts/run_tests.sh (the Spark tests beside the others, see there).
# After them, the container pass: the server tests that matter for the Docker path once more, with ZooKeeper in a
# container of the project's own image on podman (scripts/containers.sh sets it up); where containers are not
# available it prints that it was skipped and why, and does not fail.
test:
	@scripts/bootstrap.sh "$(VENV)" test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(MKDOCS) build --strict
	@scripts/run_tests.sh "$(VENV)"
	@scripts/containers.sh test "$(VENV)"
