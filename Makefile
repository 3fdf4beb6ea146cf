# NASA top-level entry points. `make help` lists the targets.
SHELL := /bin/bash
MAKEFLAGS += --no-print-directory
.DEFAULT_GOAL := build

BUILD      ?= build
BUILD_TYPE ?= Release
JOBS       ?= 2
SEED       ?= 1
LAYERS     ?= 2000

# Debian 12 packages everything here needs; `make deps` installs the missing ones.
DEB_PACKAGES := build-essential cmake make ninja-build ccache pkg-config verilator yosys nextpnr-ice40 \
  fpga-icestorm libgtest-dev libgmock-dev libfmt-dev libspdlog-dev nlohmann-json3-dev \
  libcli11-dev zlib1g-dev libpng-dev libjpeg-dev libssl-dev libonnx-dev \
  libprotobuf-dev nodejs dataset-fashion-mnist libtorch-dev \
  gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf python3 clang libclang-rt-14-dev \
  openmpi-bin libopenmpi-dev

# Cheap presence check (no dpkg, no apt): when all of these exist, `deps` is not even run.
NEED_TOOLS := cmake make ninja c++ ccache pkg-config verilator yosys nextpnr-ice40 icepack \
  riscv64-unknown-elf-gcc python3 clang++ node npm mpirun mpicxx
NEED_FILES := /usr/include/gtest/gtest.h /usr/include/gmock/gmock.h /usr/include/fmt/core.h \
  /usr/include/spdlog/spdlog.h /usr/include/nlohmann/json.hpp /usr/include/CLI/CLI.hpp \
  /usr/include/zlib.h /usr/include/png.h /usr/include/jpeglib.h /usr/include/openssl/sha.h \
  /usr/include/onnx/onnx_pb.h \
  /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz \
  /usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfig.cmake

COSIM := $(BUILD)/bin/nasa-cosim

.PHONY: help deps need-deps configure build firmware test sim run bench docs-figures lint synth fpga prog fpga-area fpga-probe gen clean \
  fuzz fuzz-smoke sanitize

help:
	@echo "make deps    install missing Debian packages (apt-get; no-op when all are present)"
	@echo "make build   configure ($(BUILD)/, $(BUILD_TYPE)) and build everything"
	@echo "make test    build, then ctest (unit, gen_pkg_check, cosim, lint, synth_*), sanitize, fuzz-smoke"
	@echo "make run     the NAS job: build nasa, train + search + fine-tune + RTL check (runs/)"
	@echo "make bench   benchmarks: fusion on FBNet/Proxyless spaces, RTL efficiency, peers; BENCHMARKS.md"
	@echo "make docs-figures  rewrite every figure the docs quote from the command that measures it"
	@echo "make sim     build and run the cosim suite: SEED=$(SEED) LAYERS=$(LAYERS) NP=$(NP) (ranks)"
	@echo "make lint    verilator --lint-only -Wall of rtl/ for every configuration"
	@echo "make synth   yosys: synth_ice40 (fpga, up5k) and word-level synthesis (sim); build/synth/"
	@echo "make fpga    iCEBreaker bitstream: yosys + nextpnr-ice40 + icepack, build/fpga/report.json"
	@echo "make prog    flash the iCEBreaker (iceprog)"
	@echo "make fpga-area  LUT/FF/carry/EBR/DSP per module of the FPGA design: build/fpga/area.md"
	@echo "make fpga-probe  the MAC array on the board, with less and less host side: logic cells, Fmax"
	@echo "make gen     regenerate rtl/nasa_pkg.sv and the configuration views from hw_spec.h"
	@echo "make clean   remove $(BUILD)/"
	@echo "make sanitize  ASan+UBSan: unit/CLI tests + short cosim; TSan: parallel paths (build-asan/, build-tsan/)"
	@echo "make fuzz    libFuzzer, ASan, UBSan on every input parser: $(FUZZ_SECONDS) s each"
	@echo "make fuzz-smoke  the same, $(FUZZ_SMOKE_SECONDS) s each (CI); docs/reliability.md"

# Installs only what is missing, quietly; apt-get update runs only when something is missing.
deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then \
	  echo "deps: all $(words $(DEB_PACKAGES)) packages present"; exit 0; \
	fi; \
	echo "deps: installing$$missing"; \
	sudo=""; if [ "$$(id -u)" != 0 ]; then sudo="sudo"; fi; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
	  && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	       --no-install-recommends $$missing >/dev/null \
	  && echo "deps: done"

need-deps:
	@ok=1; \
	for t in $(NEED_TOOLS); do command -v $$t >/dev/null 2>&1 || ok=0; done; \
	for f in $(NEED_FILES); do [ -e $$f ] || ok=0; done; \
	if [ $$ok = 0 ]; then $(MAKE) --no-print-directory deps; fi

# Configures once; later builds re-run cmake by themselves when a CMakeLists or hw_spec.h changes.
# The generator: $CMAKE_GENERATOR when set, else Ninja when present (`make deps` installs it), which
# compiles a target's sources while the libraries it links are still being built where Make's
# generator builds target after target (a cold build of `make run`'s part: 318 -> 253 s on 2
# cores). The build trees configured under `make test` (sanitizers, fuzzers, the standalone
# library's test) take the same. An existing build tree keeps the generator it has.
GENERATOR = $${CMAKE_GENERATOR:-$(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)}
configure: need-deps
	@if [ ! -f $(BUILD)/CMakeCache.txt ]; then \
	  echo "cmake -S . -B $(BUILD) -G \"$(GENERATOR)\" -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)"; \
	  cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=$(BUILD_TYPE); \
	fi

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# Benchmarks: regenerates bench/results.json and BENCHMARKS.md (the search-quality study alone
# takes about 60 minutes; BENCH_ARGS='--only fusion efficiency' runs some). BENCH_ARGS adds
# nasa-bench options; the CI-sized version is ctest bench_quick.
BENCH_ARGS ?=
bench: build
	$(BUILD)/bin/nasa-bench $(BENCH_ARGS)

# Rewrites every figure the docs quote from the command that measures it (docs/measurements.md,
# docs/figures.json): runs the quick commands itself, reads bench/results.json (`make bench`
# first when the benchmarks changed) and the board's build/fpga/report.json (`make fpga`).
docs-figures: build fpga
	python3 sw/tools/docs_figures.py update --root . --bin $(BUILD)/bin --build $(BUILD)

# iCEBreaker bitstream (fpga/build.sh): build/fpga/nasa_icebreaker.bin and report.json; fails when
# the design does not fit the UP5K or misses its clock. `make prog` flashes it (iceprog, a board
# on USB; never run in CI). Needs the host build: report.json's macs_per_cycle is measured on
# the board's cycle-exact model (nasa-bench).
fpga: build
	bash fpga/build.sh

prog: fpga
	iceprog build/fpga/nasa_icebreaker.bin

# Where the FPGA design's logic goes: LUT/FF/carry/EBR/DSP per module instance (fpga/area.sh ->
# build/fpga/area.md, area.json; the MAC array's blocks alone -> blocks.json; about 4 min).
fpga-area: firmware
	bash fpga/area.sh

# The MAC array in the board's dot-unit place, with the host side as built and taken away in
# steps (fpga/probe_array.py; docs/fpga.md "The floor"): logic cells and Fmax of each variant,
# build/fpga/probe/probe.json; about 3 min a variant. PROBE_ARGS: e.g. --seeds 1,2 --paths pw.
fpga-probe: firmware
	python3 fpga/probe_array.py $(PROBE_ARGS)

# NASA_MAKE_TEST=1: a test that finds a tool missing fails instead of skipping. Then the
# sanitizer runs and the fuzzing smoke (docs/reliability.md): CI runs all three.
test: build
	CMAKE_GENERATOR="$(GENERATOR)" NASA_MAKE_TEST=1 ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)
	$(MAKE) --no-print-directory sanitize
	$(MAKE) --no-print-directory fuzz-smoke

# ASan+UBSan (unit and CLI tests, a short cosim) and TSan (the thread-parallel paths) builds in
# build-asan/ and build-tsan/; any report fails (tb/sanitize.sh).
sanitize: need-deps
	CMAKE_GENERATOR="$(GENERATOR)" JOBS=$(JOBS) bash tb/sanitize.sh asan
	CMAKE_GENERATOR="$(GENERATOR)" JOBS=$(JOBS) bash tb/sanitize.sh tsan

# The NAS job on its default (the fmnist-mb14 Fashion-MNIST supernet): deps -> build (only the
# `nasa` binary) -> nasa run (train or reuse the supernet, search, test, fine-tune, RTL check).
# Results go to runs/<name>/ (a new directory every run); RUN_ARGS adds `nasa run` options.
RUN_ARGS ?=
run:
	@t0=$$(date +%s); $(MAKE) --no-print-directory need-deps; t1=$$(date +%s); \
	echo "make run: deps $$((t1 - t0)) s"; \
	$(MAKE) --no-print-directory configure && cmake --build $(BUILD) -j$(JOBS) --target nasa || exit 1; \
	t2=$$(date +%s); echo "make run: build $$((t2 - t1)) s"; \
	$(BUILD)/bin/nasa run $(RUN_ARGS) || exit 1; \
	t3=$$(date +%s); echo "make run: deps $$((t1 - t0)) s, build $$((t2 - t1)) s, nasa run $$((t3 - t2)) s, total $$((t3 - t0)) s"

# NP=N runs each suite on N ranks (mpirun, docs/mpi.md): the items split over the ranks, one table.
NP ?= 1
COSIM_RUN = $(if $(filter-out 1,$(NP)),mpirun -np $(NP) --oversubscribe --bind-to none $(COSIM),$(COSIM))
sim: build
	$(COSIM_RUN) --suite all --seed $(SEED) --layers $(LAYERS) --table
	$(COSIM_RUN) --suite all --programs --seed $(SEED) --layers $$(( $(LAYERS) / 10 > 0 ? $(LAYERS) / 10 : 1 )) --table
	$(COSIM_RUN) --suite all --chains --seed $(SEED) --layers $$(( $(LAYERS) / 10 > 0 ? $(LAYERS) / 10 : 1 )) --table

# The controller's firmware (fpga/fw/): its ROM image is part of the up5k core and board RTL.
firmware: configure
	cmake --build $(BUILD) -j$(JOBS) --target nasa_fw

lint: firmware
	synth/lint.sh

synth: firmware
	NASA_SYNTH_OUT=$(abspath $(BUILD))/synth synth/synth.sh

# Builds only the generator (one source file, compiled directly: no CMake configure, which would
# verilate the RTL against the stale package), then regenerates the tree.
gen: need-deps
	@mkdir -p $(BUILD)/gen
	c++ -std=c++20 -O1 -Isw/base/include sw/tools/gen_pkg.cpp -lfmt -o $(BUILD)/gen/nasa-gen-pkg
	$(BUILD)/gen/nasa-gen-pkg --write-tree .

clean:
	rm -rf $(BUILD)

# Fuzzing (fuzz/, docs/reliability.md "Fuzzing"): every input parser under libFuzzer with ASan and
# UBSan, in a clang build of its own (build-fuzz/), two targets at a time: each FUZZ_SECONDS, then
# on until FUZZ_MIN_EXECS executions (17-22 min in all on 2 cores); fuzz-smoke is CI's run of a
# few seconds each (about 30 s with a warm ccache). Both fail on a crash, leak, out-of-memory or
# hang and print a table of executions and coverage. FUZZ_TARGETS="spec idx" runs only those.
FUZZ_SECONDS ?= 240
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_MIN_EXECS ?= 1000000
FUZZ_TARGETS ?=
fuzz: need-deps
	CMAKE_GENERATOR="$(GENERATOR)" FUZZ_MIN_EXECS=$(FUZZ_MIN_EXECS) fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: need-deps
	CMAKE_GENERATOR="$(GENERATOR)" fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)
