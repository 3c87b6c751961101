# Everything a fresh Debian/Ubuntu machine needs: `make demo` and `make test` install it all.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
APT_PACKAGES := libosmesa6 libgl1 libegl1 chromium gcc g++ python3-dev  # chromium: the live view's browser test; compilers, headers: the interface packages
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
comma := ,
# With ROS 2 sourced (ROS_DISTRO set) the system rclpy is used; otherwise ROS 2 Jazzy comes from PyPI.
EXTRAS := sim,bench,ml,train,viz,ray,dev,llm$(if $(ROS_DISTRO),,$(comma)ros)
# llama-cpp-python (the llm extra) compiles llama.cpp: portable CPU code (a -march=native build crashed on
# some virtual machines), no tests or examples; 4-10 minutes on two cores, then pip's wheel cache.
LLAMA_BUILD := CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc)
VENV_FLAGS := $(if $(ROS_DISTRO),--system-site-packages,)

# Headless CPU rendering, and ROS 2 discovery that never leaves this machine.
export MUJOCO_GL ?= osmesa
export PYOPENGL_PLATFORM ?= osmesa
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST

.PHONY: setup demo test test-stress docs-check bench lint clean llm llm-server

setup: $(STAMP)

$(STAMP): setup.py setup.cfg tools/build_interfaces.py $(wildcard interfaces/*/*/* interfaces/*/package.xml)
	@if command -v apt-get >/dev/null 2>&1; then \
	  missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	  $(PYTHON) -c "import ensurepip" >/dev/null 2>&1 || missing="$$missing python3-venv python3-pip"; \
	  if [ -n "$$missing" ]; then \
	    echo "installing system packages:$$missing"; \
	    $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	  fi; \
	else echo "apt-get not found: make sure OSMesa (libosmesa6) is installed for headless rendering"; fi
	$(PYTHON) -c "import sys; assert sys.version_info >= (3, 10), 'homiebot needs Python >= 3.10'"
	$(PYTHON) -m venv $(VENV_FLAGS) $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "torch==2.13.0"  # the CPU build; resolving plain torch would pull CUDA
	$(LLAMA_BUILD) $(BIN)/pip install -q -e ".[$(EXTRAS)]"
	$(if $(ROS_DISTRO),,$(BIN)/python tools/build_interfaces.py)  # homiebot_msgs, control_msgs, bosdyn_api_msgs: not on PyPI, built from interfaces/
	@touch $@

demo: $(STAMP)
	$(BIN)/homiebot run --task config/tasks/demo.yaml --config config/sim.yaml --seed 0 --out runs/demo --video
	@echo "homiebot is installed in .venv: 'source .venv/bin/activate' puts it on PATH (or call .venv/bin/homiebot)"

test: $(STAMP)
	$(BIN)/python -m pytest

# The flake hunt: the ROS 2 test modules 20 times over (hours), e.g. `make test-stress STRESS_ARGS="--rounds 3 --busy 2"`.
STRESS_ARGS ?= --rounds 20
test-stress: $(STAMP)
	$(BIN)/python benchmarks/stress_ros_tests.py $(STRESS_ARGS)

# The local language model (SmolLM2 through llama.cpp, docs/llm.md): `make setup` installs it; `make llm`
# installs it into a virtualenv made before, `make llm-server` serves it on 127.0.0.1:8080 until Ctrl-C.
llm: $(STAMP)
	$(LLAMA_BUILD) $(BIN)/pip install -q -e ".[llm]"

llm-server: $(STAMP)
	$(BIN)/python -m homiebot.llm_server

# Every command of the README's and docs' bash blocks, as shown, in fresh folders (tools/docs_check.yaml: what cannot run here).
docs-check: $(STAMP)
	$(BIN)/python tools/docs_check.py

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_core.py
	$(BIN)/python benchmarks/bench_eval.py
	$(BIN)/python benchmarks/bench_planners.py
	$(BIN)/python benchmarks/bench_ros.py
	$(BIN)/python benchmarks/bench_safety.py
	$(BIN)/python benchmarks/bench_viz.py

lint: $(STAMP)
	$(BIN)/ruff check homiebot test benchmarks tools
	$(BIN)/lint-imports
	$(BIN)/mypy homiebot/

clean:
	rm -rf $(VENV) runs build *.egg-info .pytest_cache
