# protomesh: `make sim` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SCENARIO ?= scenarios/train_booking.yaml

.PHONY: install native wheel sim test fuzz bench lint schema clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip 'setuptools>=77'
	$(PY) -m pip install --quiet -e '.[test,dask,storm]'
	touch $(STAMP)

# The engine's per-event modules compiled with mypyc in place, beside their sources
# (sim/native: PROTOMESH_COMPILE=1 setup.py build_ext --inplace), rebuilt when a source of
# the engine changed; if the compiler fails, nothing compiled is left and the same engine
# runs as Python. `make wheel` builds the platform wheel that carries it (dist/).
NATIVE := sim/engine/native.json
$(NATIVE): $(STAMP) setup.py $(wildcard sim/engine/*.py) $(wildcard sim/native/*.py)
	$(PY) -m sim native build || echo "make: the compiled engine was not built: the pure-Python engine runs"

native: $(NATIVE)

wheel: $(STAMP)
	rm -rf build/lib* build/bdist*
	PROTOMESH_COMPILE=1 $(PY) -m pip wheel --quiet --no-deps --no-build-isolation -w dist .
	@ls dist/protomesh-*.whl

install: $(STAMP) $(NATIVE)

# `make sim` compares the scenario's routers (its replications, all cores) and prints
# where the report is (results/<scenario>/report.md).
sim: $(STAMP) $(NATIVE)
	$(PY) -m sim compare $(SCENARIO)

# The suite starts `python -m sim` a few hundred times: byte-compile the package first, so
# that no start compiles it again where PYTHONDONTWRITEBYTECODE keeps Python from caching.
# pytest runs with that variable cleared: each worker imports every test module, rewritten
# for its asserts, and may then keep them (the __pycache__ folders under tests/) for the
# next run instead of rewriting them all again (about 4 CPU s per worker and run).
PYTEST := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest

test: $(STAMP) $(NATIVE)
	$(PY) -m compileall -q sim benchmarks
	$(PYTEST) -q -n 2

# The default suite draws hypothesis's examples the same way every run; `make fuzz` runs
# it ROUNDS times with new random drawings (a failure prints the blob that reproduces it).
ROUNDS ?= 3
fuzz: $(STAMP) $(NATIVE)
	$(PY) -m compileall -q sim benchmarks
	for i in $$(seq $(ROUNDS)); do HYPOTHESIS_PROFILE=explore $(PYTEST) -q -n 2 -x || exit 1; done

bench: $(STAMP) $(NATIVE)
	$(PY) -m compileall -q sim benchmarks
	$(PYTEST) -q -m 'slow or bench' -p no:xdist
	$(PY) -m benchmarks.run

lint: $(STAMP)
	$(VENV)/bin/ruff check sim tests benchmarks
	$(VENV)/bin/ruff format --check sim tests benchmarks
	$(VENV)/bin/mypy

schema: $(STAMP)
	$(PY) -m sim schema > scenarios/protomesh.schema.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist sim/engine/_native sim/engine/*.so sim/engine/native.json
