# Quickstart targets. Each sets up .venv on first use (torch first, from this machine's CPU wheel).
PY := .venv/bin/python
VENV_STAMP := .venv/.mlir_sym-installed

.PHONY: demo test lit pytest bench venv clean

$(VENV_STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh
	touch $@

venv: $(VENV_STAMP)

demo: $(VENV_STAMP)      ## the main job: compile a transformer block with dynamic shapes
	$(PY) -m mlir_sym.demo

lit: $(VENV_STAMP)
	PATH=$(CURDIR)/.venv/bin:$$PATH .venv/bin/lit -sv test/

pytest: $(VENV_STAMP)
	$(PY) -m pytest -q test/python test/gpu

test: lit pytest          ## all tests: lit (dialect, passes, conversions, tools) + pytest (end to end vs eager; GPU kernels emulated on the CPU; GPU runs skip without one)

bench: $(VENV_STAMP)
	$(PY) benchmarks/bench_cpu.py --quick

clean:
	rm -rf build .pytest_cache
