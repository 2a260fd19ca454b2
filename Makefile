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

# The tests: scripts/test.sh (the install, the suite's time scale, the main run with the Spark run, the checks and
# the container pass beside it, and each pass's duration; see there). `make test SLOW=1` is the
# slow-machine mode: one core held busy by a CPU hog for the whole run (docs/development.md).
SLOW ?=
test:
	@ZKCONSUMER_TEST_SLOW="$${ZKCONSUMER_TEST_SLOW:-$(SLOW)}" scripts/test.sh "$(VENV)"
