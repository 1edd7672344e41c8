# Userbench: `make run` serves the demo, `make test` runs the whole suite.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# The first interpreter that is at least 3.12 (Django 6 refuses older ones).
PYTHON := $(shell for p in python3.13 python3.12 python3; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then \
	echo $$p; break; fi; done)
# `make run` writes this once; config/settings.py reads it whenever it turns DEBUG on.
LOCAL_ENV := .env
PYTEST_WORKERS ?= 2
XDIST := $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist load)
# The suites write bytecode even where the environment says not to: otherwise every pytest worker
# rewrites every test module's assertions again (about 7 s each) and every server, worker and
# command a test starts compiles the project again. It goes to __pycache__ (git-ignored).
SUITE := env -u PYTHONDONTWRITEBYTECODE
# A failure's traceback without each frame's whole source: the failing line and its error come
# first in a long log, not after a browser test's hundred lines of listing.
TRACEBACK := --tb=short

.PHONY: run test lint lint-fix typecheck test-sqlite test-postgres test-browser install browser messages bench clean

install: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-test.txt
	@if [ -z "$(PYTHON)" ]; then \
		echo "Userbench needs Python 3.12 or newer; none of python3.13, python3.12, python3 is. Install one (e.g. pyenv install 3.13.0) and run make again." >&2; \
		exit 1; fi
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	@touch $@

run: install $(LOCAL_ENV)
	@$(PY) manage.py migrate --noinput -v 0
	@$(PY) manage.py seed_demo
	@scripts/serve-demo $(PY)

# Development settings for this checkout only (git-ignored, never read with DEBUG off): after
# `make run`, `.venv/bin/python manage.py <command>` needs no variable typed by hand.
$(LOCAL_ENV): | install
	@scripts/write-local-env $(PY) $@

# Lint first, then the type checker and the three suites side by side: a suite spends much of its
# time waiting on the servers and worker processes it starts, so two cores serve them all at
# once. Each suite also runs in PYTEST_WORKERS processes (pytest-xdist, `--dist load`:
# tests go out in pytest-django's order, so a process runs its database tests before its
# transactional ones, whose flush would remove what the migrations seeded); `make test
# PYTEST_WORKERS=0` runs each suite in one process. Each stage's output is printed whole as it
# ends (--output-sync), and `make test` fails if any stage failed (-k lets the others finish
# first). The SQLite and browser stages share one migrated test database through a folder of
# their own (USERBENCH_TEST_SHARED, tests/migrated_once.py), removed afterwards, also when a stage
# fails or Ctrl-C stops the run.
test: lint
	@shared=$$(mktemp -d); trap 'rm -rf "$$shared"' EXIT; \
	USERBENCH_TEST_SHARED=$$shared $(MAKE) --no-print-directory -j 4 -k --output-sync=target typecheck test-sqlite test-postgres test-browser

# ruff.toml: lint (pyflakes, import order, bugbear, Django rules) and the formatter's check.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy.ini: django-stubs and djangorestframework-stubs over the packages (not tests or migrations).
typecheck: install
	@echo "== Type check (mypy)"
	$(VENV)/bin/mypy

lint-fix: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test-sqlite: install
	@echo "== SQLite"
	$(SUITE) -u DATABASE_URL $(PY) -m pytest --ignore=tests/e2e -p no:playwright $(TRACEBACK) $(XDIST)

# Runs only when DATABASE_URL points at PostgreSQL (.ci/run starts one and sets it). Every test
# that touches the database runs here again; the ones that never reach one (pure statistics,
# parsing, the architecture checks, subprocesses on SQLite files of their own) ran in the SQLite
# stage and would only repeat it (tests/conftest.py: --database-tests-only).
test-postgres: install
	@if [[ "$${DATABASE_URL:-}" == postgres* ]]; then \
		echo "== PostgreSQL: $${DATABASE_URL%%@*}@..."; \
		$(SUITE) $(PY) -m pytest --ignore=tests/e2e -p no:playwright --database-tests-only $(TRACEBACK) $(XDIST); \
	else echo "== PostgreSQL suite skipped: DATABASE_URL is not a postgres:// URL (.ci/run sets one)."; fi

test-browser: install browser
	@echo "== Browser (Chromium)"
	$(SUITE) -u DATABASE_URL DJANGO_ALLOW_ASYNC_UNSAFE=true $(PY) -m pytest tests/e2e $(TRACEBACK) $(XDIST)

# Playwright drives Debian's Chromium in the build it uses for headless runs (browsers cannot be
# downloaded here; tests/e2e/conftest.py); the Chinese pages need a CJK font.
browser:
	@command -v chromium-headless-shell >/dev/null 2>&1 || scripts/apt-install chromium-headless-shell
	@fc-list 2>/dev/null | grep -qi 'Noto.*CJK' || scripts/apt-install fonts-noto-cjk

# Each app keeps its own catalogue in <app>/locale; the project one covers config/ and templates/.
APPS := curation judging annotation
messages: install
	DEBUG=1 $(PY) manage.py makemessages -l zh_Hans --ignore=.venv --ignore=tests --ignore=bench $(addprefix --ignore=,$(APPS))
	set -e; for app in $(APPS); do (cd $$app && DJANGO_SETTINGS_MODULE=config.settings DEBUG=1 PYTHONPATH=.. ../$(PY) -P -m django makemessages -l zh_Hans); done
	DEBUG=1 $(PY) manage.py compilemessages --ignore=.venv

# Side-by-side measurements (see bench/README.md); not part of `make test`.
bench: install
	@set -e; for script in bench/bench_*.py; do echo "== $$script"; $(PY) $$script; done

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm staticfiles
