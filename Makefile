# Two commands: `make demo` (verify a claim on the embedded default) and `make test`.
# Both create .venv on first use; nothing needs an API key or network beyond PyPI.
VENV ?= .venv
PY := $(VENV)/bin/python
CLAIM ?= The Eiffel Tower is located in Paris.
DEMO_PAGE ?= runs/demo/debate.html
export HF_HUB_OFFLINE := 1
export RAGAS_DO_NOT_TRACK := true
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true

.PHONY: demo test test-fast lint docs bench-speed bench-fusion bench-bm25 bench-encoder bench-cli milvus-server bench-scale bench-retrieval bench-limits bench-concurrent bench-busy

# llama.cpp is compiled here. A native build (-march=native) uses AMX tile instructions on
# CPUs that report them, and those fault in VMs that do not virtualise AMX (segfault on the
# first token): build the portable AVX2 variant instead. Without OpenMP, llama.cpp runs its
# own thread pool: with OpenMP every thread that calls the model gets a team of its own, and
# once there are more of those threads than cores (parallel debaters are served from several
# threads; torch shares the runtime) each team stops spinning and generation slowed from 11
# to 17 ms per token here. pip's wheel cache ignores CMAKE_ARGS, hence --no-cache-dir and a
# forced rebuild when this recipe changes.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF

$(VENV)/.installed: pyproject.toml constraints.txt Makefile
	@echo "first install: a venv in $(VENV), then torch (CPU), then llama.cpp compiled from source"
	@echo "(5-20 minutes on 2 cores: 19 min was measured on a busy machine), then the project"
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade "pip>=25,<27"
	$(VENV)/bin/pip install --quiet -c constraints.txt torch==2.13.0
	@echo "compiling llama.cpp (llama-cpp-python): the longest step; pip shows it below"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(VENV)/bin/pip install --progress-bar off --no-cache-dir \
		--force-reinstall --no-deps -c constraints.txt llama-cpp-python
	$(VENV)/bin/pip install --quiet -c constraints.txt -e ".[dev]"
	touch $@

# The default collection is built as a set-up step (once; a no-op when it exists), so the
# first claim's time is the claim's own. Ends by printing the path of the debate page it wrote.
demo: $(VENV)/.installed
	$(PY) -c "from factdebate.tools.retrieval.index import ensure_index; ensure_index('default')"
	$(VENV)/bin/factdebate verify "$(CLAIM)" --html "$(DEMO_PAGE)"

test: lint docs
	$(PY) -m pytest

test-fast: $(VENV)/.installed
	$(PY) -m pytest -m "not slow"

# Import contracts (pyproject.toml [tool.importlinter]): layers, method rooms apart, no cycles.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

# The documentation site (MkDocs, Material): diagrams, settings tables and the CLI reference are
# generated from the code at build time; strict, so a broken link or a warning fails the build.
docs: $(VENV)/.installed
	$(VENV)/bin/mkdocs build --strict --site-dir site

# Speed benchmark (minutes: fake-model rows first, then the embedded model and a SciFact index).
bench-speed: $(VENV)/.installed
	$(PY) -m benchmarks.speed

# Hybrid fusion tuned on SciFact train, dev reported (needs `factdebate bench-retrieval --dataset scifact` first).
bench-fusion: $(VENV)/.installed
	$(PY) -m benchmarks.fusion_tuning

# MiniLM fine-tuned on SciFact train, scored on held-out train claims (about 15 minutes;
# needs `factdebate bench-retrieval --dataset scifact` first). Nothing it trains is shipped.
bench-encoder: $(VENV)/.installed
	$(PY) -m benchmarks.encoder_tuning

# Every retrieval engine on SciFact dev, as debaters call it: BM25 in bm25s shards and BM25
# inside Milvus Lite (the same analysis), dense, hybrid, and Milvus's own analyzer (about 15
# minutes the first time: it embeds the corpus once; the indexes are kept for the next run).
bench-retrieval: $(VENV)/.installed
	$(VENV)/bin/factdebate bench-retrieval --dataset scifact --out runs/retrieval

# BM25 k1 and b tuned on SciFact train, dev reported (in memory; about 3 minutes).
bench-bm25: $(VENV)/.installed
	$(PY) -m benchmarks.bm25_tuning

# Tool-MAD calls and tokens per claim with the current prompts, replaying the recorded
# capable-model answers (../shared/recorded) through the fake provider (about a minute).
bench-prompts: $(VENV)/.installed
	$(PY) -m benchmarks.replay_costs
	$(PY) -m benchmarks.replay_escalation

# How fast `factdebate` refuses a typo (fresh processes, median wall and CPU time; seconds).
bench-cli: $(VENV)/.installed
	$(PY) -m benchmarks.cli_refusal

# A real Milvus standalone server for the `service` tests and `make bench-scale`: PyPI's
# `milvus` package (an embedded Milvus 2.3 server) in its own venv, apart from the project's
# pymilvus. Tests skip with a printed reason when this venv is missing or the server won't start.
MILVUS_VENV ?= .milvus-venv
$(MILVUS_VENV)/.installed:
	python3 -m venv $(MILVUS_VENV)
	$(MILVUS_VENV)/bin/pip install --quiet "milvus==2.3.5"
	touch $@

milvus-server: $(MILVUS_VENV)/.installed

# Ingest and store-path benchmark at scale (not a test; resumable, caches under runs/scale).
bench-scale: $(VENV)/.installed $(MILVUS_VENV)/.installed
	$(PY) -m benchmarks.scale

# Local bench vs `bench --server` on a live `langgraph dev` (fixed-latency fake model; ~1 minute).
bench-server: $(VENV)/.installed
	$(PY) -m benchmarks.server_bench

# Tool-MAD (200 claims) and CoT (500) against a rate-limited, faulty fake provider: verdicts,
# coverage, 429 share, rates against the limits, wall over the ideal (about 35 minutes).
bench-limits: $(VENV)/.installed
	$(PY) -m benchmarks.limits

# 1 and 10 Tool-MAD claims at once against a fixed-latency (0.5 s) fake provider: wall over the
# 13-call chain and CPU per call, beside LangChain's ChatOpenAI (about 3 minutes).
bench-concurrent: $(VENV)/.installed
	$(PY) -m benchmarks.concurrent_claims

# The demo claim on the embedded model idle, then beside two busy loops at nice 0: both times
# and the ratio (minutes; the default collection is built first when missing).
bench-busy: $(VENV)/.installed
	$(PY) -m benchmarks.busy_machine
