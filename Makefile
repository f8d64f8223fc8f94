# mguard.h - build, test and run everything.
#   make run        build and run every example
#   make test       unit tests (cmocka) + strict compile checks (C99 gcc/clang, C++)
#                   + docs check, packaging test; one line per suite
#   make sanitize   the tests under ASan + UBSan
#   make valgrind   the tests under valgrind memcheck
#   make tsan       the threaded tests under ThreadSanitizer, a long stress run
#   make mutate     mutation testing of mguard.h (several minutes, see below)
#   make check-mutants  every mutant still matches and compiles (a few minutes)
#   make bench      benchmarks (ratios against raw stb_ds, same run)
#   make bench-threads  thread-safe contexts vs the default context and GLib
#   make bench-ab   an older mguard.h (BASE=<git rev>) against the current
#                   one, same run, with a noise band (a few minutes)
#   make docs       docs/api.md from mguard.h (make test checks it is current)
#   make install    mguard.h, mguard.pc, CMake package (PREFIX=/usr/local, DESTDIR)
# Missing stb_ds or cmocka are installed with apt-get when run as root;
# otherwise the Makefile stops with the command to run.

CC      ?= cc
CXX     ?= c++
BUILD   ?= build
STB_CFLAGS := $(shell pkg-config --cflags stb 2>/dev/null || echo -I/usr/include/stb)
WARN    := -Wall -Wextra -Wpedantic -Werror
CSTD    := -std=c99
CFLAGS  ?= -O1 -g
ALL_CFLAGS = $(CSTD) $(WARN) $(CFLAGS) -I. $(STB_CFLAGS)
TEST_LIBS := -lcmocka -pthread

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/%,$(TEST_SRCS)) $(BUILD)/test_differential_shipped
EXAMPLE_SRCS := $(filter-out examples/lua_guard.c,$(wildcard examples/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/ex_%,$(EXAMPLE_SRCS))
HDR := mguard.h

.PHONY: all deps run test check-compile sanitize valgrind tsan bench bench-plot bench-ir bench-cache bench-targets bench-threads bench-threads-ir bench-ab clean
all: $(TEST_BINS) $(EXAMPLE_BINS)

# ---- dependencies -------------------------------------------------------
DEPS_STAMP := $(BUILD)/.deps
deps: $(DEPS_STAMP)
$(DEPS_STAMP):
	@mkdir -p $(BUILD)
	@sh tests/deps.sh stb cmocka
	@touch $@

# ---- tests --------------------------------------------------------------
$(BUILD)/mguard_impl.o: tests/mguard_impl.c tests/introspect.h $(HDR) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The suites themselves are built without optimisation (TEST_OPT): they
# compile in half the time, and the implementation they test, in
# mguard_impl.o, keeps CFLAGS (-O1 by default; the sanitizer flags too).
TEST_OPT ?= -O0
$(BUILD)/test_%: tests/test_%.c $(wildcard tests/*.h) $(BUILD)/mguard_impl.o $(HDR) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) $(TEST_OPT) $< $(BUILD)/mguard_impl.o -o $@ $(TEST_LIBS)
# The differential test builds its own implementation, where an object two
# entries of a cache share already has a hub (mguard.h's MGUARD__HUB_AFTER)
# and the first group is matched by SWAR on x86-64 too (MGUARD__NO_SSE2).
$(BUILD)/mguard_impl_hub1.o: tests/mguard_impl.c tests/introspect.h $(HDR) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) -DMGUARD__HUB_AFTER=1 -DMGUARD__NO_SSE2 -c $< -o $@
$(BUILD)/test_differential: tests/test_differential.c $(wildcard tests/*.h) $(BUILD)/mguard_impl_hub1.o $(HDR) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) $(TEST_OPT) $< $(BUILD)/mguard_impl_hub1.o -o $@ $(TEST_LIBS)
# ... and once more against the shipped build (hubs from the 9th slot, the
# first group matched by SSE2 where the compiler offers it).
$(BUILD)/test_differential_shipped: tests/test_differential.c $(wildcard tests/*.h) $(BUILD)/mguard_impl.o $(HDR) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) $(TEST_OPT) $< $(BUILD)/mguard_impl.o -o $@ $(TEST_LIBS)

# The builds and checks run as parallel jobs (JOBS, default: the number of
# CPUs; each part's output kept together), then the unit binaries one by
# one (tests/run_tests.sh): every binary runs, even after one failed; one
# line per suite, the full output of a failing one only, then the failures
# and a last line "N passed, N failed"; make test fails if there was any.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
.PHONY: test-parts test-more
test-parts: $(TEST_BINS) $(BUILD)/complexity check-compile check-docs check-reference
test: | $(DEPS_STAMP)
	@$(MAKE) --no-print-directory -j$(JOBS) -Otarget test-parts
	@sh tests/run_tests.sh $(BUILD) $(HDR) $(TEST_BINS)

# The slower whole-build checks, kept out of make test so it stays fast
# (CI runs both): the optional parts left out in every combination, the
# unit suites again as a 32-bit program, the Lua example, and the consumer
# built copied into a tree, through make install, pkg-config and CMake.
test-more: | $(DEPS_STAMP)
	@$(MAKE) --no-print-directory -j$(JOBS) -Otarget check-parts test32 check-lua check-packaging
	@echo "test-more: passed"

# The unit suites again as a 32-bit program (gcc -m32: size_t and pointers
# of 32 bits), when gcc-multilib and Debian's libcmocka-dev:i386 are
# installed (CI installs them) and the kernel runs 32-bit programs;
# otherwise skipped, saying so. Built at -O0:
# this run checks word sizes; the 64-bit run checks the optimised build.
M32_BINS := $(patsubst $(BUILD)/%,$(BUILD)/m32/%,$(TEST_BINS))
.PHONY: test32
test32: | $(DEPS_STAMP)
	@mkdir -p $(BUILD)/m32; \
	if ! printf 'int main(void) { return 0; }\n' | $(CC) -m32 -xc - -o $(BUILD)/m32/probe 2>/dev/null || ! ./$(BUILD)/m32/probe 2>/dev/null; then \
	    echo "test32: skipped: this machine cannot build or run a 32-bit program (gcc-multilib; a kernel with 32-bit support)"; \
	elif printf '#include <cmocka.h>\n' | $(CC) -m32 -xc - -fsyntax-only -include stdarg.h -include stddef.h -include setjmp.h 2>/dev/null && \
	    test -e /usr/lib/i386-linux-gnu/libcmocka.so; then \
	    $(MAKE) -s --no-print-directory BUILD=$(BUILD)/m32 CC="$(CC) -m32" CFLAGS="-O0" $(M32_BINS) || exit 1; \
	    failed=""; for t in $(M32_BINS); do ./$$t >$$t.log 2>&1 || { cat $$t.log; failed="$$failed $$t"; }; done; \
	    if [ -n "$$failed" ]; then echo "test32: FAILED:$$failed"; exit 1; fi; \
	    echo "test32: $(words $(M32_BINS)) unit suites pass as a 32-bit program"; \
	else echo "test32: skipped: no 32-bit cmocka (apt-get install gcc-multilib libcmocka-dev:i386 after dpkg --add-architecture i386)"; fi

# The header must compile without a warning as strict C99 with gcc and
# clang, and as C++11, both the API part and the implementation part.
# Every public function must go through the lock layer (check_locked.sh)
# and be called by the fuzzer's decoder (check_fuzz_coverage.sh).
check-compile: | $(DEPS_STAMP)
	@sh tests/check_compile.sh "$(BUILD)/compile" "$(STB_CFLAGS)"
	@sh tests/check_locked.sh
	@sh tests/check_fuzz_coverage.sh

# MGUARD_NO_SCOPE/NO_DYN/NO_LEDGER/NO_CACHE in every combination (16), strictly compiled
# and run (tests/check_parts.sh); make part-sizes prints design.md's table.
.PHONY: check-parts part-sizes
check-parts: | $(DEPS_STAMP)
	@sh tests/check_parts.sh "$(BUILD)/parts" "$(STB_CFLAGS)"
part-sizes: | $(DEPS_STAMP)
	@sh tests/check_parts.sh --sizes "$(BUILD)/parts" "$(STB_CFLAGS)"

# docs/api.md is generated from mguard.h (make docs, tests/gen_api.py):
# check-reference fails, printing the diff, when the committed file is not;
# every log call's arguments match its code's format (tests/check_log_formats.py).
.PHONY: check-reference docs
check-reference:
	@command -v python3 >/dev/null 2>&1 || sh tests/deps.sh python3
	@python3 tests/gen_api.py --check
	@python3 tests/mutate.py --check
	@python3 tests/check_log_formats.py "$(BUILD)/logfmt" "$(STB_CFLAGS)"
docs:
	@command -v python3 >/dev/null 2>&1 || sh tests/deps.sh python3
	@python3 tests/gen_api.py >docs/api.md.tmp && mv docs/api.md.tmp docs/api.md
	@echo "docs/api.md generated from mguard.h"

# ---- sanitizers and valgrind --------------------------------------------
sanitize: | $(DEPS_STAMP)
	$(MAKE) BUILD=$(BUILD)/san CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    TEST_LIBS="-lcmocka -pthread -fsanitize=address,undefined" $(patsubst $(BUILD)/%,$(BUILD)/san/%,$(TEST_BINS))
	@set -e; for t in $(patsubst $(BUILD)/%,$(BUILD)/san/%,$(TEST_BINS)); do echo "== $$t"; \
	    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./$$t; done
	@echo "sanitizers clean"

valgrind: $(TEST_BINS)
	@command -v valgrind >/dev/null || sh tests/deps.sh valgrind
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; \
	    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible ./$$t; done
	@echo "valgrind clean"

# ---- threads ------------------------------------------------------------
# tests/test_threads.c under ThreadSanitizer (clang, -O1 -g), its two stress
# tests TSAN_ITERS iterations per thread long; any report fails the run.
TSAN_CC    ?= clang
TSAN_ITERS ?= 100000
$(BUILD)/tsan/test_threads: tests/test_threads.c tests/common.h tests/mguard_impl.c $(HDR) | $(DEPS_STAMP)
	@mkdir -p $(BUILD)/tsan
	$(TSAN_CC) $(CSTD) $(WARN) -O1 -g -fsanitize=thread -I. $(STB_CFLAGS) tests/mguard_impl.c $< -o $@ -lcmocka -pthread

tsan: $(BUILD)/tsan/test_threads
	MGUARD_THREADS_ITERS=$(TSAN_ITERS) TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" ./$<
	@echo "tsan clean"

# ---- examples -----------------------------------------------------------
$(BUILD)/ex_%: examples/%.c $(HDR) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) $< -o $@ -lm

run: $(EXAMPLE_BINS)
	@set -e; for e in $(EXAMPLE_BINS); do echo "== $$e"; ./$$e; echo; done
	@$(MAKE) --no-print-directory run-lua

# ---- benchmarks ---------------------------------------------------------
# One run, same keys, against raw stb_ds, GLib, Abseil's flat_hash_map
# (bench/peer_absl.cc) and Python 3 (bench/bench_py.py, a co-process sampled
# in the same rounds). Every sample >= 20 ms; systems in a random order per
# round; the table gives medians, min-max and ratios taken per round.
#   make bench               5 samples (3 at 1M keys): 13-20 minutes here (shared)
#   make bench BENCH_QUICK=1 3 samples, up to 100K keys: 1-3 minutes
#   make bench BENCH_FULL=1  11 samples (5 at 1M)
#   make bench-plot        PNG charts from build/bench.tsv into docs/img/
#   make bench-ir          callgrind instruction counts of every core row
#   make bench-cache       instructions, D1 and last-level misses per operation
#                          (callgrind's cache simulation), weak-table rows at
#                          1M keys: CACHE_N=, CACHE_SYS=, CACHE_SIM= override
#   make bench-targets     issue 24's targets in one table, PASS/FAIL (3-5 min
#                          here; BENCH_QUICK=1: timings up to 100K, 2-3 min)
# Output: build/bench-samples.tsv (every sample), build/bench.tsv (medians,
# for the charts), the table on stdout (python3 bench/tsv2md.py).
# The benchmark alone is built with gnu99: stb_ds's hmput/hmget need typeof.
BENCH_CFLAGS = -std=gnu99 -Wall -Wextra -O2 -DNDEBUG -I. $(STB_CFLAGS) \
    $(shell pkg-config --cflags glib-2.0 gobject-2.0 2>/dev/null)
BENCH_ABSL_LIBS = $(shell pkg-config --libs absl_hash absl_raw_hash_set 2>/dev/null)
BENCH_LIBS = $(shell pkg-config --libs glib-2.0 gobject-2.0 2>/dev/null) $(BENCH_ABSL_LIBS) -lm -pthread
BENCH_STAMP := $(BUILD)/.bench-deps
$(BENCH_STAMP): | $(DEPS_STAMP)
	@sh tests/deps.sh pkgconf
	@pkg-config --exists glib-2.0 gobject-2.0 || sh tests/deps.sh libglib2.0-dev
	@pkg-config --exists absl_hash absl_raw_hash_set || sh tests/deps.sh libabsl-dev
	@command -v g++ >/dev/null 2>&1 || sh tests/deps.sh g++
	@command -v python3 >/dev/null 2>&1 || sh tests/deps.sh python3
	@touch $@

$(BUILD)/peer_absl.o: bench/peer_absl.cc | $(BENCH_STAMP)
	g++ -std=c++17 -Wall -Wextra -O2 -DNDEBUG $$(pkg-config --cflags absl_hash absl_raw_hash_set) -c $< -o $@

$(BUILD)/bench: bench/bench.c $(BUILD)/peer_absl.o $(HDR) | $(BENCH_STAMP)
	$(CC) $(BENCH_CFLAGS) -c $< -o $(BUILD)/bench.o
	g++ $(BUILD)/bench.o $(BUILD)/peer_absl.o -o $@ $(BENCH_LIBS)

bench: $(BUILD)/bench
	./$(BUILD)/bench --py bench/bench_py.py --tsv $(BUILD)/bench-samples.tsv
	python3 bench/tsv2md.py --write-tsv $(BUILD)/bench.tsv $(BUILD)/bench-samples.tsv

bench-plot: | $(BENCH_STAMP)
	@command -v gnuplot >/dev/null 2>&1 || sh tests/deps.sh gnuplot-nox
	@test -f $(BUILD)/bench.tsv || $(MAKE) bench
	@mkdir -p docs/img
	gnuplot -e "tsv='$(BUILD)/bench.tsv'; out='docs/img'" bench/plot.gp
	@echo "charts written to docs/img/"

bench-ir: $(BUILD)/bench
	@command -v valgrind >/dev/null 2>&1 || sh tests/deps.sh valgrind
	valgrind --tool=callgrind --callgrind-out-file=$(BUILD)/callgrind.out ./$(BUILD)/bench --ir > $(BUILD)/ir-ops.tsv
	@sh bench/ir.sh $(BUILD)/callgrind.out $(BUILD)/ir-ops.tsv | tee $(BUILD)/ir.txt

# The cache simulation of cachegrind, run through callgrind so that every
# ir_* function's figures are inclusive (valgrind 3.19's cachegrind has no
# start/stop requests, and cg_annotate is exclusive per function). The
# simulated caches are fixed (valgrind's own detection reads a 512 MB
# direct-mapped LL on this VM): the machine's L1d, and a 32 MiB LL.
CACHE_N ?= 1000000
CACHE_SYS ?= mguard,absl
CACHE_SIM ?= --I1=32768,8,64 --D1=32768,8,64 --LL=33554432,16,64
bench-cache: $(BUILD)/bench
	@command -v valgrind >/dev/null 2>&1 || sh tests/deps.sh valgrind
	valgrind --tool=callgrind --cache-sim=yes $(CACHE_SIM) --callgrind-out-file=$(BUILD)/callgrind-cache.out \
	    ./$(BUILD)/bench --ir --ir-n $(CACHE_N) --sys $(CACHE_SYS) > $(BUILD)/cache-ops.tsv
	@python3 bench/ir_cache.py $(BUILD)/callgrind-cache.out $(BUILD)/cache-ops.tsv --tsv $(BUILD)/cache.tsv | tee $(BUILD)/cache.txt

# Issue 24's verdict: the timed rows it names (100K and 1M keys, against
# absl; death against GLib; the cache rows), the memory rows (counted by the
# allocators, 100K and 1M), bench-cache's figures at 1M keys, then one
# table (bench/targets.py). BENCH_QUICK=1: timings at up to 100K keys, 3
# samples (the memory and callgrind figures stay at 1M).
TARGET_ROWS = get_hit,get_miss,set_new,overwrite,remove,death_t1,death_t4,death_t16,death_t1_u10k,cache_get_hit,cache_inval,handwired_inval
bench-targets: $(BUILD)/bench
	./$(BUILD)/bench --no-py $(if $(filter-out 0,$(BENCH_QUICK)),--quick) --rows $(TARGET_ROWS) --sys mguard,glib,absl --tsv $(BUILD)/targets-samples.tsv
	./$(BUILD)/bench --no-py --mem-only --max-n 1000000 --tsv $(BUILD)/targets-mem.tsv
	@$(MAKE) --no-print-directory bench-cache
	@echo
	@python3 bench/targets.py --samples $(BUILD)/targets-samples.tsv --mem $(BUILD)/targets-mem.tsv --cache $(BUILD)/cache.tsv | tee $(BUILD)/targets.txt

# Thread-safe contexts against the default context (with and without the
# lock layer, same run), GLib (GHashTable + GMutex, GWeakRef) and raw stb_ds,
# with 1, 2 and 4 threads, never more than the online cores (bench/bench_threads.c).
# gnu99: stb_ds's hmput needs typeof.
#   make bench-threads               quick run
#   make bench-threads BENCH_FULL=1  more and longer samples
#   make bench-threads-ir            instructions per call (callgrind)
BENCH_THREADS_SRCS := bench/bench_threads.c bench/bench_threads_base.c
$(BUILD)/bench_threads: $(BENCH_THREADS_SRCS) bench/bench_threads_ops.h $(HDR) | $(DEPS_STAMP)
	@pkg-config --exists glib-2.0 gobject-2.0 || sh tests/deps.sh pkgconf libglib2.0-dev
	$(CC) -std=gnu99 -Wall -Wextra -O2 -DNDEBUG -I. $(STB_CFLAGS) $$(pkg-config --cflags glib-2.0 gobject-2.0) \
	    $(BENCH_THREADS_SRCS) -o $@ $$(pkg-config --libs glib-2.0 gobject-2.0) -pthread -lm

bench-threads: $(BUILD)/bench_threads
	./$(BUILD)/bench_threads

# Instructions per call, default context with and without the lock layer.
bench-threads-ir: $(BUILD)/bench_threads
	@command -v valgrind >/dev/null || sh tests/deps.sh valgrind
	@sh bench/ir_threads.sh $(BUILD)/bench_threads

# Old header against new (docs/performance.md, "Old header against new"):
# bench/bench_ab.c compiled against BASE's mguard.h (git show) and against
# the work tree's, the two linked into one program (MGUARD_STATIC copies)
# that takes their samples in turn; bench/ab.py runs it AB_ROUNDS times and
# prints per row both medians, new/old and the range of the rounds, and
# flags a row where every round says slower (or faster). A few minutes.
#   make bench-ab                    BASE: the newest tag, else HEAD~20
#   make bench-ab BASE=origin/main   a branch against where main is now
#   make bench-ab BASE=HEAD          A/A: the noise of this machine
#   AB_ROUNDS=9  AB_QUICK=1 (shorter samples)  AB_WALL=1 (wall clock)
#   AB_PIN=<cpu> (taskset)
BASE      ?= $(shell git describe --tags --abbrev=0 2>/dev/null || \
                 (git rev-parse -q --verify HEAD~20 >/dev/null && echo HEAD~20) || \
                 git rev-list --max-parents=0 HEAD)
AB_ROUNDS ?= 9
AB_PIN    ?=
AB_QUICK  ?=
AB_WALL   ?=
AB_DIR    := $(BUILD)/ab
# -falign-functions=64: the two copies of a function start at the same
# offset in a cache line, so code placement alone does not set a row apart
# (without it an A/A run had rows 15% apart in every round).
AB_CFLAGS  = -std=gnu99 -Wall -Wextra -Wno-unused-function -O2 -DNDEBUG -falign-functions=64
bench-ab: | $(DEPS_STAMP)
	@command -v python3 >/dev/null 2>&1 || sh tests/deps.sh python3
	@rm -rf $(AB_DIR) && mkdir -p $(AB_DIR)/old $(AB_DIR)/new
	git show $(BASE):mguard.h > $(AB_DIR)/old/mguard.h
	cp mguard.h $(AB_DIR)/new/mguard.h
	python3 bench/ab.py names $(AB_DIR)/old/mguard.h > $(AB_DIR)/old/bench_ab_names.h
	python3 bench/ab.py names $(AB_DIR)/new/mguard.h > $(AB_DIR)/new/bench_ab_names.h
	$(CC) $(AB_CFLAGS) -DAB_SIDE=old -I$(AB_DIR)/old $(STB_CFLAGS) -c bench/bench_ab.c -o $(AB_DIR)/old.o
	$(CC) $(AB_CFLAGS) -DAB_SIDE=new -I$(AB_DIR)/new $(STB_CFLAGS) -c bench/bench_ab.c -o $(AB_DIR)/new.o
	$(CC) $(AB_CFLAGS) $(STB_CFLAGS) bench/bench_ab_main.c $(AB_DIR)/old.o $(AB_DIR)/new.o -o $(AB_DIR)/bench_ab -lm
	@python3 bench/ab.py run --rounds $(AB_ROUNDS) $(if $(AB_PIN),--pin $(AB_PIN)) $(if $(AB_QUICK),--quick) $(if $(AB_WALL),--wall) \
	    --old-name "$(BASE) ($$(git rev-parse --short $(BASE)))" \
	    --new-name "mguard.h of the work tree (HEAD $$(git rev-parse --short HEAD)$$(git diff --quiet HEAD -- mguard.h || echo ', modified'))" \
	    --raw $(AB_DIR)/rounds.tsv --table $(AB_DIR)/table.txt $(AB_DIR)/bench_ab

# ---- ecosystem: docs check, packaging, the Lua example ------------------
.PHONY: check-docs check-packaging check-lua run-lua
# Every C block in README.md and docs/*.md marked <!-- mguard:program -->
# must compile strictly and run (docs/contributing.md).
check-docs: | $(DEPS_STAMP)
	@CC="$(CC)" sh tests/check_docs.sh "$(BUILD)/docs" "$(STB_CFLAGS)"

# A consumer built copied into a tree, via pkg-config after make install,
# and via CMake (skipped when cmake is missing).
check-packaging: | $(DEPS_STAMP)
	@sh tests/deps.sh pkgconf
	@CC="$(CC)" MAKE="$(MAKE)" sh tests/test_packaging.sh

# examples/lua_guard.c needs Lua 5.4 (Debian liblua5.4-dev), installed by
# tests/deps.sh when we can; without it the Lua parts are skipped, saying so.
LUA_EXAMPLE := $(BUILD)/ex_lua_guard
LUA_MISSING := Lua 5.4 is not installed and cannot be installed here (apt-get install liblua5.4-dev)
$(LUA_EXAMPLE): examples/lua_guard.c $(HDR) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) $$(pkg-config --cflags lua5.4) $< -o $@ $$(pkg-config --libs lua5.4) -lm

run-lua:
	@if sh tests/deps.sh lua pkgconf; then $(MAKE) -s --no-print-directory $(LUA_EXAMPLE) && \
	    echo "== $(LUA_EXAMPLE)" && ./$(LUA_EXAMPLE) examples/lua_guard.lua; \
	else echo "== $(LUA_EXAMPLE) skipped: $(LUA_MISSING)"; fi

check-lua:
	@if sh tests/deps.sh lua pkgconf; then $(MAKE) -s --no-print-directory $(LUA_EXAMPLE) && \
	    sh tests/test_lua_guard.sh $(LUA_EXAMPLE); \
	else echo "test_lua_guard: skipped: $(LUA_MISSING)"; fi

# ---- install ------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=/staging]: the header, mguard.pc
# for pkg-config and the CMake package files (find_package(mguard CONFIG)).
# Nothing is compiled; CMake is not needed. make uninstall removes them.
PREFIX     ?= /usr/local
INCLUDEDIR ?= $(PREFIX)/include
PCDIR      ?= $(PREFIX)/share/pkgconfig
CMAKEDIR   ?= $(PREFIX)/share/cmake/mguard
VERSION    := $(shell sed -n 's/.*MGUARD_VERSION_STRING "\(.*\)"/\1/p' $(HDR))
.PHONY: install uninstall
install:
	install -d "$(DESTDIR)$(INCLUDEDIR)" "$(DESTDIR)$(PCDIR)" "$(DESTDIR)$(CMAKEDIR)"
	install -m 644 $(HDR) "$(DESTDIR)$(INCLUDEDIR)/mguard.h"
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' mguard.pc.in > "$(DESTDIR)$(PCDIR)/mguard.pc"
	chmod 644 "$(DESTDIR)$(PCDIR)/mguard.pc"
	install -m 644 cmake/mguardConfig.cmake cmake/mguard-stb.cmake "$(DESTDIR)$(CMAKEDIR)/"
	sed -e 's|@VERSION@|$(VERSION)|g' cmake/mguardConfigVersion.cmake.in > "$(DESTDIR)$(CMAKEDIR)/mguardConfigVersion.cmake"
	chmod 644 "$(DESTDIR)$(CMAKEDIR)/mguardConfigVersion.cmake"

uninstall:
	rm -f "$(DESTDIR)$(INCLUDEDIR)/mguard.h" "$(DESTDIR)$(PCDIR)/mguard.pc"
	rm -f "$(DESTDIR)$(CMAKEDIR)/mguardConfig.cmake" "$(DESTDIR)$(CMAKEDIR)/mguard-stb.cmake" \
	    "$(DESTDIR)$(CMAKEDIR)/mguardConfigVersion.cmake"
	-rmdir "$(DESTDIR)$(CMAKEDIR)" 2>/dev/null

# ==== reliability targets (issue 6) =====================================
#   make fuzz          libFuzzer differential target, FUZZ_SECONDS (60) long
#   make stress        10M objects across 64 tables; figures, not timings;
#                      then make complexity
#   make complexity    every Cost: line of mguard.h checked at n and 8n
#                      (tests/complexity.c; a few minutes; make test runs
#                      its quick form, allocator calls only)
#   make lint          cppcheck + clang-tidy (.clang-tidy) on mguard.h
#   make fault-sites   every allocation site of mguard.h and how often the
#                      fault-injection workloads reach it (gcov)
#   make mutate        mutation testing: each mutant of tests/mutate.py put
#                      into mguard.h in turn, the unit binaries must catch it
#                      (several minutes: not part of make test)
.PHONY: fuzz stress complexity lint fault-sites mutate check-mutants
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -std=c99 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_DEPS    := tests/fuzz_decoder.h tests/model.h tests/json_check.h $(HDR)

$(BUILD)/fuzz/fuzz_mguard: tests/fuzz_mguard.c $(FUZZ_DEPS) | $(DEPS_STAMP)
	@sh tests/have_fuzzer.sh || sh tests/deps.sh clang libclang-rt-14-dev
	@mkdir -p $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -I. $(STB_CFLAGS) $< -o $@

# New inputs go to $(BUILD)/fuzz/corpus; tests/corpus (the seeds and the
# regression inputs) is read only. A finding is written to $(BUILD)/fuzz/.
# tests/fuzz.dict: operations that open a surface and extreme arguments;
# FUZZ_MAX_LEN bytes per input (a header and up to ~400 operations).
FUZZ_MAX_LEN ?= 2048
fuzz: $(BUILD)/fuzz/fuzz_mguard
	@mkdir -p $(BUILD)/fuzz/corpus
	./$(BUILD)/fuzz/fuzz_mguard -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -dict=tests/fuzz.dict -max_len=$(FUZZ_MAX_LEN) \
	    -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus tests/corpus

$(BUILD)/stress: tests/stress.c $(HDR) | $(DEPS_STAMP)
	$(CC) -std=c99 -Wall -Wextra -Wpedantic -O2 -DNDEBUG -I. $(STB_CFLAGS) $< -o $@

stress: $(BUILD)/stress $(BUILD)/complexity
	./$(BUILD)/stress
	@$(MAKE) --no-print-directory complexity

# Every public function with a Cost: line has a row (check_complexity.py);
# each row's loop timed at n and 8n must grow as its promise says.
$(BUILD)/complexity: tests/complexity.c $(HDR) | $(DEPS_STAMP)
	$(CC) -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -DNDEBUG -I. $(STB_CFLAGS) $< -o $@

complexity: $(BUILD)/complexity
	@command -v python3 >/dev/null 2>&1 || sh tests/deps.sh python3
	@python3 tests/check_complexity.py $(HDR) $(BUILD)/complexity
	./$(BUILD)/complexity

lint: | $(DEPS_STAMP)
	@command -v cppcheck >/dev/null || sh tests/deps.sh cppcheck
	@command -v clang-tidy >/dev/null || sh tests/deps.sh clang-tidy
	@sh tests/lint.sh "$(BUILD)/lint" "$(STB_CFLAGS)"

fault-sites: | $(DEPS_STAMP)
	@sh tests/fault_sites.sh "$(BUILD)/cov" "$(STB_CFLAGS)"

# MUTATE_JOBS builds and test binaries at once; MUTATE_ONLY=id,id runs only
# those mutants (docs/contributing.md, "Mutation testing").
MUTATE_JOBS ?= 2
MUTATE_ONLY ?=
check-mutants: | $(DEPS_STAMP)
	@command -v python3 >/dev/null 2>&1 || sh tests/deps.sh python3
	@CC="$(CC)" python3 tests/mutate.py -j $(MUTATE_JOBS) --check --compile
mutate: | $(DEPS_STAMP)
	@command -v python3 >/dev/null 2>&1 || sh tests/deps.sh python3
	@CC="$(CC)" python3 tests/mutate.py -j $(MUTATE_JOBS) $(if $(MUTATE_ONLY),--only $(MUTATE_ONLY))

clean:
	rm -rf $(BUILD)
