# LegalMem: `make run` serves the product, `make test` runs the whole suite.
# Both create .venv and install the pinned requirements first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-fast install browser fonts redis manage bench clean-data backup restore

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

# Debian's chromium serves the browser tests (Playwright's own download does not work offline),
# with a CJK font for the screenshots they save.
browser: fonts
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "[legalmem] installing Debian's chromium for browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; }

# A CJK font: headless screenshots of Chinese pages (docs/my-memory-and-admin.md), and the scanned
# pages the document tests write in Chinese for OCR to read (docs/documents.md).
fonts:
	@fc-list :lang=zh 2>/dev/null | grep -q . || { \
	  echo "[legalmem] installing Debian's fonts-noto-cjk (Chinese pages and scans in the tests)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk) >/dev/null; }

# Debian's redis-server for the scale-out test (tests/site/test_scale_out.py starts its own on a
# free port, no persistence); `make run` does not need it (without REDIS_URL: one process).
redis:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "[legalmem] installing Debian's redis-server for the scale-out test"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server) >/dev/null; }

run: install
	$(PY) -m legalmem_site.launcher run

# The suite runs on TEST_WORKERS pytest-xdist workers, each with its own test database on the one
# embedded PostgreSQL (test_legalmem_gw0, _gw1, …); ARGS="-n 0" runs it in one process.
# `make test-fast` leaves out the slow kinds (pytest.ini's markers) for the edit–run loop;
# `make test` runs every test.
TEST_WORKERS ?= 2
SLOW_KINDS := browser or live_server or subprocess or cluster or end_to_end

test: install browser redis
	$(PY) -m legalmem_site.launcher test -n $(TEST_WORKERS) $(ARGS)

test-fast: install fonts
	$(PY) -m legalmem_site.launcher test -n $(TEST_WORKERS) -m "not ($(SLOW_KINDS))" $(ARGS)

# e.g. make manage ARGS="createsuperuser"
manage: install
	$(PY) -m legalmem_site.launcher manage $(ARGS)

# Backup and restore of the embedded database with the secret key (docs/records.md).
# make backup [FILE=path.tar]; make restore FILE=path.tar [FORCE=1] [JOURNAL=erasures.jsonl]
backup: install
	$(PY) -m legalmem_site.backup create $(FILE)

restore: install
	@test -n "$(FILE)" || { echo "usage: make restore FILE=path/to/backup.tar [FORCE=1]"; exit 2; }
	$(PY) -m legalmem_site.backup restore $(FILE) $(if $(FORCE),--force) $(if $(JOURNAL),--journal=$(JOURNAL))

# Benchmarks (speed and memory are measured here, not in tests); see bench/README.md.
BENCH_DATA := $(CURDIR)/var/bench
BENCH_MANAGE := LEGALMEM_DATA_DIR=$(BENCH_DATA) $(PY) -m legalmem_site.launcher manage
# `make bench` writes bench/RESULTS.md (ratios, load average, command); BENCH_ONLY=import,search… for a subset.
bench: install
	$(BENCH_MANAGE) migrate -v 0
	$(BENCH_MANAGE) shell -c "from bench.run_all import main; main()"

clean-data:
	@echo "This deletes every note in ./var. Run: rm -rf var" && false
