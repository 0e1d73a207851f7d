# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-fast test-postgres test-s3 lint system-deps test-deps messages migrate demo clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	touch $@

$(VENV)/.test: requirements.txt requirements-test.txt harness/pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -r requirements-test.txt
	touch $@

system-deps:
	@sh scripts/system-deps.sh

messages: $(VENV)/.runtime
	$(BIN)/python manage.py compilemessages --ignore=.venv -v0

migrate: $(VENV)/.runtime messages
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py seed_demo

# E-mailed links point where this server listens (SITE_URL, unless set), and the e-mails
# themselves are printed in this terminal (the console backend, unless EMAIL_BACKEND is set).
run: system-deps demo
	@echo "Diligence on http://$(HOST):$(PORT)/ — demo logins are listed above."
	SITE_URL="$${SITE_URL:-http://$(HOST):$(PORT)}" $(BIN)/python manage.py runserver $(HOST):$(PORT)

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy apps config harness/diligence_harness

# axe-core (the accessibility checker the browser tests inject) comes from npm, pinned in
# package-lock.json; reinstalled whenever the lock file changes.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

test-deps: node_modules/.installed
	@sh scripts/system-deps.sh test

# Tests run in one process per CPU (pytest-xdist), each on its own copy of a test
# database migrated once (tests/database.py). Set PYTEST_WORKERS=0 to run in one process.
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS) --dist worksteal

# Every test: the domain tier and the whole-case tier (real signed PDFs, real harness
# runs, browsers, the route walk, fuzzing, migrations from scratch). The 25 slowest are
# listed at the end, to keep the suite's cost in view. The checks (ruff, the formatter,
# mypy, the migrations check) run beside the tests, while the test processes start and
# the test database is migrated, and print after them; either failing fails the target.
test: test-deps $(VENV)/.runtime $(VENV)/.test messages
	@mkdir -p var; \
	( $(MAKE) -s lint && $(BIN)/python manage.py makemigrations --check --dry-run ) \
		>var/checks.log 2>&1 & checks=$$!; \
	$(BIN)/python -m pytest $(XDIST) --durations=25 $(PYTEST_ARGS); tests=$$?; \
	wait $$checks; checked=$$?; \
	echo "== Checks: ruff, formatter, mypy, migrations =="; cat var/checks.log; \
	[ $$checked -eq 0 ] || echo "== The checks failed (exit $$checked) =="; \
	[ $$tests -eq 0 ] && [ $$checked -eq 0 ]

# The domain tier alone: what to run while changing code.
test-fast: $(VENV)/.runtime $(VENV)/.test messages
	$(BIN)/python -m pytest $(XDIST) -m "not whole_case" $(PYTEST_ARGS)

# The tests whose outcome depends on the database (locks, transactions, triggers,
# search, query plans), again on PostgreSQL.
POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test
test-postgres: $(VENV)/.runtime $(VENV)/.test messages
	DATABASE_URL=$(POSTGRES_URL) $(BIN)/python -m pytest $(XDIST) -m postgres tests $(PYTEST_ARGS)

# The tests that store, read back, alter and refuse files, run with the default storage
# in a bucket of a local S3-compatible server (moto, on 127.0.0.1, started by the tests).
S3_TESTS := tests/core/test_object_storage.py tests/core/test_stored_file_downloads.py \
	tests/evidence/test_object_storage.py tests/evidence/test_upload.py \
	tests/evidence/test_upload_worker.py tests/evidence/test_resend_race.py \
	tests/packets/test_object_storage.py tests/packets/test_issuing.py \
	tests/audit/test_exports.py tests/audit/test_rewind.py tests/acceptance/test_services.py \
	tests/assessments/test_services.py tests/contracts/test_waivers.py \
	tests/contracts/test_object_storage.py tests/costs/test_imports.py tests/assessments/test_views.py \
	tests/portal/test_vendor_documents.py tests/portal/test_review.py \
	tests/approvals/test_acceptance_documents.py

# Who may open a page or an endpoint is decided before any file is read: those tables of
# roles (and of visitors not signed in) ran in the step before and are not run again.
S3_SAME_ON_ANY_STORAGE := page_access or api_access or anonymous or without_a_role

test-s3: $(VENV)/.runtime $(VENV)/.test messages
	DILIGENCE_TEST_STORAGE=s3 $(BIN)/python -m pytest $(XDIST) $(S3_TESTS) \
		-k "not ($(S3_SAME_ON_ANY_STORAGE))" -p no:cacheprovider $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var staticfiles dist
