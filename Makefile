# vaultmem: `make demo` and `make test` are the two set-up commands (see README.md).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-all test-plugin bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The package itself needs no torch. The tests and benchmarks also run the reference
# runtime (the `torch` extra), so the CPU build of torch goes in first (it lies on this
# machine's disk): the extra's `torch>=2.1` is then satisfied and pip fetches no CUDA build.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,bench,torch]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# Two test processes (pytest-xdist), one a core of a 2-core machine, each given whole modules
# (--dist loadscope: a module's fixtures are built once), the longest modules first
# (--no-loadscope-reorder keeps the order tests/conftest.py gives them). `make test` samples
# the sweeps (fuzzed cases, kill points: tests/helpers/sweep.py); `make test-all` runs them in full.
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadscope --no-loadscope-reorder

# The plugin's part (test-plugin) runs beside pytest rather than after it: it mostly waits (on
# npm, on its daemon), time the two test processes leave free. Its output follows pytest's;
# `make test` fails if either part does.
test: install
	@log=$$(mktemp); \
	$(MAKE) --no-print-directory test-plugin >"$$log" 2>&1 & plugin=$$!; \
	trap 'kill $$plugin 2>/dev/null; rm -f "$$log"' INT TERM; \
	echo '$(PYTEST)'; $(PYTEST); tests=$$?; \
	wait $$plugin; plugin=$$?; \
	echo "--- make test-plugin (run beside pytest) ---"; cat "$$log"; rm -f "$$log"; \
	[ $$tests -eq 0 ] && [ $$plugin -eq 0 ]

# The Obsidian plugin (obsidian-plugin/): its tests run against a daemon of this checkout's
# vaultmem, then the release build, which must be the main.js committed beside it. Node 20 or
# later is needed; without it the plugin is skipped, saying so.
NODE_OK := $(shell node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' \
                   >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && echo yes)

test-plugin: install
ifeq ($(NODE_OK),yes)
	cd obsidian-plugin && npm ci --no-audit --no-fund --loglevel=error \
	  && VAULTMEM_BIN="$(CURDIR)/$(BIN)/vaultmem" npm test && npm run build
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && ! git diff --quiet -- obsidian-plugin/main.js; \
	then echo "obsidian-plugin/main.js is not the build of src/: commit the one npm run build wrote"; exit 1; fi
else
	@echo "obsidian-plugin: SKIPPED - Node.js 20 or later with npm is not installed (install it to test and build the plugin)"
endif

test-all: install
	VAULTMEM_TEST_FULL=1 $(PYTEST)

bench: install
	$(BIN)/python benchmarks/locomo.py ../shared/eval/locomo/locomo-dev.json --json benchmarks/results/locomo.json
	$(BIN)/python benchmarks/perf.py --notes 10000 --user-notes 10000 --encode-sample 4000 --json benchmarks/results/perf.json
	$(BIN)/python benchmarks/memquality.py ../shared/eval/memquality/*.json --json benchmarks/results/memquality.json

clean:
	rm -rf build .pytest_cache
