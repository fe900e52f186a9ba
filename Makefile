# remodel: make builds build/remodel (and build/remodel-online where
# libmongoc is installed); make check runs every test; make demo runs the
# main job on the shipped sample dump. make deps installs the missing Debian
# packages (scripts/install-deps.sh); check, demo and demo-online call it
# first, a plain make does not.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
# The offline tool needs no driver: libmongoc stays out of its link, since
# its load-time init leaves /dev/shm/mongoc-PID counters behind when a
# process dies, and a later process given the same PID then warns on stderr.
PKGS     = libbson-1.0 libarchive libzstd zlib libpcre2-8
OPT     ?= -O2 -g
WARN     = -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -Wshadow -Wstrict-prototypes
# The core's layers, each a folder of common/ (README.md, "Layout"), lowest
# first (cli, the option layer, needs only base: it sits right above it);
# their private headers are included by bare name. A layer sees its
# own and those of the layers below it, never one above (the compiler
# refuses the leak); the programs see only include/ and their own folder;
# the unit tests see every layer (they test the internals).
CORE_DIRS = base cli bson dump sort expr query accum engine compile analyze report
CORE_INC  = $(CORE_DIRS:%=-Icommon/%)
# layers_upto L,DIRS,ROOT: -IROOT/D for each of DIRS up to L.
layers_upto = $(if $(filter $(1),$(firstword $(2))),-I$(3)/$(1),-I$(3)/$(firstword $(2)) $(call layers_upto,$(1),$(wordlist 2,99,$(2)),$(3)))
$(foreach L,$(CORE_DIRS),$(eval $(BUILD)/common/$(L)/%.o: LAYER_INC = $(call layers_upto,$(L),$(CORE_DIRS),common)))
# Graphviz's libraries lay out and draw the pictures of --report
# (common/report/report_svg.c, the only file that includes them): without
# them the rest builds, --report says it is missing, and make says so.
GV_PKGS      = libgvc libcgraph
HAVE_GRAPHVIZ = $(shell pkg-config --exists $(GV_PKGS) && echo yes)
GV_LIBS      = $(if $(HAVE_GRAPHVIZ),$(shell pkg-config --libs $(GV_PKGS)))
$(BUILD)/common/report/report_svg.o: GV_CFLAGS = $(if $(HAVE_GRAPHVIZ),-DREMODEL_HAVE_GRAPHVIZ $(shell pkg-config --cflags $(GV_PKGS)))
# Recursive (=) so pkg-config runs only after the deps step installed it all.
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -Iinclude $(LAYER_INC) \
             $(shell pkg-config --cflags $(PKGS)) $(GV_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
LIBS_ALL   = $(shell pkg-config --libs $(PKGS)) -lpthread -lm $(LDFLAGS) $(EXTRA_LDFLAGS)

LIB_SRC  = $(wildcard common/*/*.c) $(if $(TOY),tests/toy/step_toy.c)
# The online companion: the only program that links libmongoc. Its
# layers, each a folder of shell-ext/ (shell-ext/README.md), lowest first,
# all above the core's (it sees the core through include/ only), fenced
# as the core's are: a layer includes its own private header and those of
# the layers below it, never one above (scripts/check_layers.sh checks
# the calls).
ONLINE_DIRS = conn state batch follow cmd
# The fault layer (shell-ext/conn/online_fault.c) goes into test programs
# only (build/tests/fault/, the in-process matrix); remodel-online has
# online_fault_off.c in its place.
FAULT_SRC  = shell-ext/conn/online_fault.c
ONLINE_SRC = $(filter-out $(FAULT_SRC),$(wildcard $(ONLINE_DIRS:%=shell-ext/%/*.c)))
$(foreach L,$(ONLINE_DIRS),$(eval $(BUILD)/shell-ext/$(L)/%.o: LAYER_INC = $(call layers_upto,$(L),$(ONLINE_DIRS),shell-ext)))
HAVE_MONGOC = $(shell pkg-config --exists libmongoc-1.0 && echo yes)
# The online program's unit tests and fuzz harness see every layer's header.
ONLINE_INC = $(ONLINE_DIRS:%=-Ishell-ext/%)
CLI_SRC  = $(wildcard migrate/*.c)
# The online program's unit tests (tests/unit/test_online_*.c) link its
# objects and libmongoc: built only where libmongoc is.
UNIT_SRC = $(filter-out $(if $(HAVE_MONGOC),,tests/unit/test_online_%),$(wildcard tests/unit/test_*.c))
GEN_SRC  = $(wildcard dumps/generator/*.c)
HEADERS  = $(wildcard include/remodel/*.h common/*/*.h migrate/*.h shell-ext/*/*.h tests/unit/*.h)
# Each object's headers, as the compiler found them (-MMD): a header's
# change rebuilds what includes it, and only that.
DEPFLAGS = -MMD -MP

LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
GEN_OBJ  = $(GEN_SRC:%.c=$(BUILD)/%.o)
ONLINE_OBJ = $(ONLINE_SRC:%.c=$(BUILD)/%.o)
FAULT_OBJ  = $(FAULT_SRC:%.c=$(BUILD)/%.o)
MONGOC_LIBS = $(shell pkg-config --libs libmongoc-1.0)

.PHONY: FORCE all online-missing graphviz-missing deps unit toy dtoa-campaign check sanitize-build check-timings check-unit check-cli check-online demo demo-online install uninstall man \
        clean bench dumps fuzz replays online-crashes online-lease-campaign online-rollback-inplace online-switch-matrix \
        bench-online bench-to-uri-window bench-server-side bench-analyze bench-floor bench-guard bench-operators bench-rescan bench-untuned ci-loaded

# The online companion is the only program that needs libmongoc: without
# it the rest builds, and make says what is missing.
ONLINE_BIN  = $(if $(HAVE_MONGOC),$(BUILD)/remodel-online $(FAULTY_BIN),online-missing)
# remodel and remodel-online with the fault layer, for the suites that
# inject faults (REMODEL_ONLINE_FAULT; tests/cli/lib.sh's faulty_remodel):
# remodel runs the remodel-online beside it.
FAULTY_BIN  = $(BUILD)/tests/fault/remodel $(BUILD)/tests/fault/remodel-online

# The in-memory server the online suites may run against (tests/mem/,
# docs/tests.md "The in-memory server"): a test program, built with the
# rest so that every suite finds it, never linked into remodel.
MEM_SRC = $(wildcard tests/mem/*.c)
MEM_BIN = $(BUILD)/tests/remodel-memsrv
# The fault matrix in-process (tests/mem/matrix/): the online program's
# main and objects driven against the in-memory server, run by
# tests/cli/test_online_fault_matrix.sh; a test program, never installed.
MATRIX_SRC = $(wildcard tests/mem/matrix/*.c)
MATRIX_BIN = $(if $(HAVE_MONGOC),$(BUILD)/tests/remodel-fault-matrix)

all: $(BUILD)/remodel $(BUILD)/remodel-gen $(ONLINE_BIN) $(MEM_BIN) $(MATRIX_BIN) $(if $(HAVE_GRAPHVIZ),,graphviz-missing)

FORCE:

online-missing:
	@echo "make: libmongoc-1.0 not found (pkg-config): build/remodel-online, the online companion, not built; make deps installs it (libmongoc-dev)" >&2

graphviz-missing:
	@echo "make: libgvc and libcgraph not found (pkg-config): build/remodel built without --report; make deps installs them (libgraphviz-dev)" >&2

# Rebuilt when Graphviz comes or goes (make deps installed it since).
$(BUILD)/common/report/report_svg.o: $(BUILD)/graphviz-$(if $(HAVE_GRAPHVIZ),yes,no)
$(BUILD)/graphviz-%:
	@mkdir -p $(BUILD) && rm -f $(BUILD)/graphviz-* && touch $@

deps:
	@scripts/install-deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) -c $< -o $@

$(BUILD)/libremodel.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/remodel: $(CLI_OBJ) $(BUILD)/libremodel.a
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libremodel.a $(GV_LIBS) $(LIBS_ALL)

$(BUILD)/shell-ext/%.o: shell-ext/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) $(shell pkg-config --cflags libmongoc-1.0) -c $< -o $@

$(BUILD)/remodel-online: $(ONLINE_OBJ) $(BUILD)/libremodel.a
	$(CC) $(CFLAGS_ALL) -o $@ $(ONLINE_OBJ) $(BUILD)/libremodel.a $(shell pkg-config --libs libmongoc-1.0) $(LIBS_ALL)

$(BUILD)/tests/fault/remodel-online: $(filter-out %/online_fault_off.o,$(ONLINE_OBJ)) $(FAULT_OBJ) $(BUILD)/libremodel.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(filter-out %/online_fault_off.o,$(ONLINE_OBJ)) $(FAULT_OBJ) $(BUILD)/libremodel.a \
	    $(shell pkg-config --libs libmongoc-1.0) $(LIBS_ALL)
# A hard link, not a symbolic one: remodel finds remodel-online beside the
# path it was run by (/proc/self/exe), which a symbolic link resolves.
$(BUILD)/tests/fault/remodel: $(BUILD)/remodel
	@mkdir -p $(dir $@)
	ln -f $< $@

# The online program but its main, for its unit tests and fuzz harness.
$(BUILD)/libremodel-online.a: $(filter-out %/online_main.o,$(ONLINE_OBJ))
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/remodel-gen: $(GEN_OBJ) $(BUILD)/libremodel.a
	$(CC) $(CFLAGS_ALL) -o $@ $(GEN_OBJ) $(BUILD)/libremodel.a $(LIBS_ALL)

$(BUILD)/tests/%: LAYER_INC = $(CORE_INC)
$(BUILD)/tests/toy/%.o: LAYER_INC = $(CORE_INC)
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libremodel.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) -o $@ $< $(BUILD)/libremodel.a $(GV_LIBS) $(LIBS_ALL)
$(MEM_BIN): LAYER_INC = $(CORE_INC)
$(MEM_BIN): $(MEM_SRC) $(wildcard tests/mem/*.h) $(BUILD)/libremodel.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/mem -o $@ $(MEM_SRC) $(BUILD)/libremodel.a $(LIBS_ALL)
# Its main is the online program's own, renamed in a copy of its object;
# its sleeps go through the matrix's (--wrap: a retry's backoff shortened).
$(BUILD)/tests/matrix/online_main_entry.o: $(BUILD)/shell-ext/cmd/online_main.o
	@mkdir -p $(dir $@)
	objcopy --redefine-sym main=remodel_online_main $< $@
$(BUILD)/tests/remodel-fault-matrix: $(MATRIX_SRC) tests/mem/matrix/matrix.h $(BUILD)/tests/matrix/online_main_entry.o $(FAULT_OBJ) \
                                     $(BUILD)/libremodel-online.a $(BUILD)/libremodel.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(shell pkg-config --cflags libmongoc-1.0) -Itests/mem/matrix -o $@ $(MATRIX_SRC) \
	    $(BUILD)/tests/matrix/online_main_entry.o $(FAULT_OBJ) $(BUILD)/libremodel-online.a $(BUILD)/libremodel.a \
	    -Wl,--wrap=online_sleep_ms $(MONGOC_LIBS) $(LIBS_ALL)
$(BUILD)/tests/test_online_%: tests/unit/test_online_%.c $(BUILD)/libremodel-online.a $(BUILD)/libremodel.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) $(ONLINE_INC) $(shell pkg-config --cflags libmongoc-1.0) -o $@ $< \
	    $(BUILD)/libremodel-online.a $(BUILD)/libremodel.a $(MONGOC_LIBS) $(LIBS_ALL)

# pkg-config's description of the installed library and headers (the
# library is static only, so what it links is required outright), made
# anew each time: it holds PREFIX.
$(BUILD)/remodel.pc: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: remodel' 'Description: MongoDB schema migrations over mongodump output (the core of remodel)' \
	    'Version: 0.1' 'Requires: $(PKGS)' 'Libs: -L$${libdir} -lremodel -lpthread -lm' \
	    'Cflags: -I$${includedir}' >$@

unit: $(UNIT_BIN)

# The test build with a toy step (tests/toy/step_toy.c and its row, under
# REMODEL_TOY_STEP) in build/toy: tests/cli/test_toy_step.sh. Unoptimized:
# the define reaches nearly every file, so this is a whole second build,
# and its suite tests what the tables pick up, never speed (-O0 compiles
# in two thirds of the CPU time of -O2).
toy:
	@$(MAKE) --no-print-directory BUILD=build/toy TOY=1 OPT="-O0 -g" EXTRA_CFLAGS=-DREMODEL_TOY_STEP \
	    build/toy/remodel $(if $(HAVE_MONGOC),build/toy/remodel-online)

# make build/bench_bsoncheck; build/bench_bsoncheck ARCHIVE [ROUNDS]
$(BUILD)/bench_bsoncheck: tests/bench/bench_bsoncheck.c $(BUILD)/libremodel.a
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) -o $@ $< $(BUILD)/libremodel.a $(LIBS_ALL)

# Fuzz harnesses (tests/fuzz/): one per parser, each a LLVMFuzzerTestOneInput.
# A corpus is NAME:HARNESS; the reader harness runs over four corpora.
# The online harnesses (what a server answers; --config's file) are built
# where libmongoc is.
ONLINE_HARNESSES = online config
FUZZ_HARNESSES = reader dir plan metadata $(if $(HAVE_MONGOC),$(ONLINE_HARNESSES))
FUZZ_CORPORA   = archive:reader bson:reader tar:reader compressed:reader dir:dir plan:plan metadata:metadata \
                 $(if $(HAVE_MONGOC),online:online config:config)
FUZZ_SECONDS  ?= 60
REPLAY_BIN     = $(FUZZ_HARNESSES:%=$(BUILD)/fuzz-replay/%)

# The replay drivers: each harness linked with tests/fuzz/replay.c (no
# libFuzzer needed), built under ASan and UBSan by `make check`.
$(BUILD)/fuzz-replay/%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/libremodel.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/fuzz -o $@ tests/fuzz/fuzz_$*.c tests/fuzz/replay.c $(BUILD)/libremodel.a $(LIBS_ALL)

$(ONLINE_HARNESSES:%=$(BUILD)/fuzz-replay/%): $(BUILD)/fuzz-replay/%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/libremodel-online.a $(BUILD)/libremodel.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/fuzz $(ONLINE_INC) $(shell pkg-config --cflags libmongoc-1.0) -o $@ tests/fuzz/fuzz_$*.c \
	    tests/fuzz/replay.c $(BUILD)/libremodel-online.a $(BUILD)/libremodel.a $(MONGOC_LIBS) $(LIBS_ALL)

replays: $(REPLAY_BIN)

# make fuzz [FUZZ_SECONDS=N]: libFuzzer (clang from Debian, installed by
# scripts/install-deps.sh --fuzz) on every corpus for N seconds each; new
# inputs are added to tests/fuzz/corpus/NAME, crashes saved in
# tests/fuzz/crashes/NAME (commit both: the replay in make check runs them).
fuzz:
	@scripts/install-deps.sh --fuzz
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang \
	    OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined" build/fuzz/libremodel.a \
	    $(if $(HAVE_MONGOC),build/fuzz/libremodel-online.a)
	@for h in $(FUZZ_HARNESSES); do \
	    online=; case " $(ONLINE_HARNESSES) " in *" $$h "*) ;; *) false ;; esac && online="$(ONLINE_INC) $$(pkg-config --cflags libmongoc-1.0) build/fuzz/libremodel-online.a $(MONGOC_LIBS)"; \
	    clang -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined -Iinclude $(CORE_INC) -Itests/fuzz \
	        $$(pkg-config --cflags $(PKGS)) -o build/fuzz/fuzz_$$h tests/fuzz/fuzz_$$h.c $$online build/fuzz/libremodel.a \
	        $$(pkg-config --libs $(PKGS)) -lpthread -lm || exit 1; \
	done
	@scripts/fuzz.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_CORPORA)

# The builds under check, demo and demo-online use every core: a fresh
# clone's first make demo was a minute and a half of serial compiling. A -j
# of the caller's own (make -j4 demo: it shows in MAKEFLAGS when the recipe
# runs) wins; JOBS=N sets the count.
JOBS ?= $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
PAR   = $(if $(filter -j% --jobserver%,$(MAKEFLAGS)),,-j$(JOBS))

# Everything: unit tests, command-line and fixture tests, peer-tool tests,
# then the unit and fixture tests again under ASan and UBSan, and the fuzz
# corpus and crash inputs replayed under them.
# make check T=NAME runs only the suites whose name holds NAME (T=online:
# every test_online*); check-unit, check-cli and check-online run a part.
# The suites that start a server run two at a time (RUN_JOBS=1 make check:
# one after another; docs/tests.md, "How long").
# The sanitizer build is made by tests/run.sh (RUN_SANITIZE_BUILD), beside
# the first server suites, which mostly wait: not before every suite.
check: deps
	@$(MAKE) $(PAR) --no-print-directory all unit
	@RUN_ONLY="$(T)" RUN_SANITIZE_BUILD=sanitize-build tests/run.sh $(BUILD) build/sanitize

# The tree under ASan and UBSan that make check runs the sanitizer suites on.
sanitize-build:
	@$(MAKE) $(PAR) --no-print-directory BUILD=build/sanitize \
	    OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    build/sanitize/remodel unit replays

# make check, then each suite's seconds lowered or added in tests/timings.txt
# (commit it): the server suites start longest first by it, and a suite
# far over its figure fails (docs/tests.md, "How long").
check-timings:
	@RUN_RECORD=1 $(MAKE) --no-print-directory check

check-unit: deps
	@$(MAKE) $(PAR) --no-print-directory all unit
	@RUN_PARTS=unit RUN_ONLY="$(T)" tests/run.sh $(BUILD)

check-cli: deps
	@$(MAKE) $(PAR) --no-print-directory all
	@RUN_PARTS=cli RUN_ONLY="$(T)" tests/run.sh $(BUILD)

# The suites that start a server (tests/cli/test_online*, test_compile*,
# test_servers).
check-online: deps
	@$(MAKE) $(PAR) --no-print-directory all
	@RUN_PARTS=online RUN_ONLY="$(T)" tests/run.sh $(BUILD)

# The shortest digits of a double and $toDecimal against their printf
# oracles over SCALE (default 20) times make check's random doubles.
dtoa-campaign: unit
	@REMODEL_DTOA_SCALE=$${SCALE:-20} $(BUILD)/tests/test_dtoa

# The online mode's kill -9 campaign: many random kills per server, client-
# and server-side (make check replays four, and three server-side).
online-crashes: all
	@REMODEL=$(BUILD)/remodel REMODEL_ONLINE_CRASHES=$${CRASHES:-50} bash tests/cli/test_online.sh
	@REMODEL=$(BUILD)/remodel REMODEL_ONLINE_CRASHES=$${CRASHES:-50} bash tests/cli/test_online_steps.sh
	@REMODEL=$(BUILD)/remodel REMODEL_ONLINE_CRASHES=$${CRASHES:-50} bash tests/cli/test_compile.sh

# The switch's kill matrix in full (tests/cli/test_online_switch.sh): finalize
# and rollback killed at every rename and state write of two plans on both
# servers, FerretDB stopped at each, in place at more points (make check
# replays a part of it). Fails when any check does.
online-switch-matrix: all
	@REMODEL=$(BUILD)/remodel REMODEL_SWITCH_MATRIX=full bash tests/cli/test_online_switch.sh | tee $(BUILD)/online-switch-matrix.log
	@! grep -q '^FAIL ' $(BUILD)/online-switch-matrix.log

# The fault layer's matrix in full (tests/cli/test_online_fault_matrix.sh):
# every server call of finalize and of rollback cut before and after it is
# sent and killed at it, in-process on the in-memory server
# (tests/mem/matrix/, as make check), and every call cut on both real
# servers (FAULT_MATRIX=full: make check's part there only); every call
# of a carry (test_online_fault_carry.sh) on both servers. Fails when any
# check does.
online-fault-matrix: all
	@{ REMODEL=$(BUILD)/remodel REMODEL_FAULT_MATRIX=$${FAULT_MATRIX:-full-real} bash tests/cli/test_online_fault_matrix.sh; \
	   for t in fault_carry to_uri_kill; do REMODEL=$(BUILD)/remodel REMODEL_FAULT_MATRIX=full bash tests/cli/test_online_$$t.sh; done; } | tee $(BUILD)/online-fault-matrix.log
	@! grep -q '^FAIL ' $(BUILD)/online-fault-matrix.log

# .ci/run three times in a row on a clean clone of HEAD beside two busy
# CPU workers (stress-ng), stopping at the first failure: no check may
# depend on timing under load (docs/tests.md, "Under load"). RUNS and BUSY
# change the counts; each run's log is kept in build/ci-loaded/.
ci-loaded:
	@scripts/ci_loaded.sh $${RUNS:-3} $${BUSY:-2}

# The online lease's campaign: on each server, 20 runs racing for an
# expired lease and 10 holders stalled by SIGSTOP past it (make check runs
# 2 and 2; the in-process matrix stalls finalize at each of its reads).
online-lease-campaign: all
	@REMODEL=$(BUILD)/remodel REMODEL_LEASE_TRIES=$${TRIES:-20} REMODEL_LEASE_STALLS=$${STALLS:-10} bash tests/cli/test_online_lease.sh

# In-place rollback under a seeded writer and a kill matrix
# (tests/cli/test_online_rollback_inplace.sh) on both servers, five seeds
# each (make check runs one seed on each). Fails when any check does.
online-rollback-inplace: all
	@REMODEL=$(BUILD)/remodel RI_TRIAL_KINDS="ferretdb java" RI_SEEDS="$${SEEDS:-1 2 3 4 5}" bash tests/cli/test_online_rollback_inplace.sh | tee $(BUILD)/online-rollback-inplace.log
	@! grep -q '^FAIL ' $(BUILD)/online-rollback-inplace.log

# The cut-over's bound on FerretDB at remodel-gen scale 20, its oplog as
# slow as it is there (tests/cli/test_online_window_ferret.sh; make check
# runs scale 1, the oplog's reads slowed by a test hook). Fails when any
# check does.
online-window-ferret: all
	@REMODEL=$(BUILD)/remodel WF_SCALE=$${SCALE:-20} bash tests/cli/test_online_window_ferret.sh | tee $(BUILD)/online-window-ferret.log
	@! grep -q '^FAIL ' $(BUILD)/online-window-ferret.log

demo: deps
	@$(MAKE) $(PAR) --no-print-directory all
	@scripts/demo.sh $(BUILD)

# The online companion end to end against a throwaway local FerretDB.
demo-online: deps
	@$(MAKE) $(PAR) --no-print-directory all
	@scripts/demo_online.sh $(BUILD)

dumps: $(BUILD)/remodel-gen $(BUILD)/remodel
	@scripts/make-dumps.sh $(BUILD)

bench: all
	@scripts/bench.sh $(BUILD)
	@scripts/bench_floor.sh $(BUILD)
	@scripts/bench_expr.sh $(BUILD)
	@scripts/bench_untuned.sh $(BUILD)

# Issue 48's row: a set of six expressions and a filter on the 1M-task
# archive, against identity convert and a Python script (BENCHMARKS.md,
# "Expressions").
bench-expr: all
	@scripts/bench_expr.sh $(BUILD)

# Issue 61's table on TPC-H, a dump no one here wrote or tuned on: analyze,
# embed and convert against the floor, a set of expressions against convert
# and a Python script, operators against a constant set (BENCHMARKS.md,
# "On a dump not tuned on").
bench-untuned: all
	@scripts/bench_untuned.sh $(BUILD)

# Issue 61's per-operator table: every catalogue operator's `set` against a
# constant `set`, in instructions (callgrind); docs/performance.md, "Operators".
bench-operators: all
	@BENCH_OUT=docs/performance.md scripts/bench_operators.sh $(BUILD)

# Issue 39's rows: embed, analyze, convert, summarize and bucketize against
# cat plus sync of the same archive (BENCHMARKS.md, "At the floor").
bench-floor: all
	@scripts/bench_floor.sh $(BUILD)

# The floor rows and the expression row for HEAD against BASE=COMMIT (by
# default the merge base with main, else HEAD~1), each built in its own
# tree, run in turn; fails on a row over 10% slower (GUARD_MAX). Not in
# make check (BENCHMARKS.md, "Against a base").
bench-guard:
	@scripts/bench_guard.sh $(BUILD)

# remodel analyze's MB/s next to remodel inspect's (BENCHMARKS.md, "remodel analyze").
bench-analyze: all
	@scripts/bench_analyze.sh $(BUILD)

# --server-side against client-side online mode (BENCHMARKS.md, "Server-side mode").
bench-server-side: all
	@tests/peers/install.sh >/dev/null
	@scripts/bench_server_side.sh $(BUILD)

# The online mode against the test servers, next to mongorestore (BENCHMARKS.md, "Online mode",
# "The cut-over window", "Online memory", "Online workers", "Between deployments", "The window
# between deployments"). Each script writes its figures to $(BUILD)/bench/NAME.md and replaces its
# own section of BENCHMARKS.md.
bench-online: all
	@tests/peers/install.sh >/dev/null
	@scripts/bench_online.sh $(BUILD)
	@scripts/bench_cutover.sh $(BUILD)
	@scripts/bench_online_memory.sh $(BUILD)
	@scripts/bench_online_workers.sh $(BUILD)
	@scripts/bench_to_uri.sh $(BUILD)
	@scripts/bench_to_uri_window.sh $(BUILD)

# A sync's rescan against the run (issue 65; BENCHMARKS.md, "Online
# mode"): BASE=COMMIT's binary and this tree's in turn.
bench-rescan: all
	@tests/peers/install.sh >/dev/null
	@scripts/bench_rescan.sh $(BUILD)

# finalize --to-uri's window alone (BENCHMARKS.md, "The window between deployments"): both
# directions at scales 3 and 30, an application writing (WINDOW_DIRS, WINDOW_SCALES, WINDOW_WRITES).
bench-to-uri-window: all
	@tests/peers/install.sh >/dev/null
	@scripts/bench_to_uri_window.sh $(BUILD)

# The man pages, from docs/*.md by scripts/md2man.awk (POSIX awk: no pandoc).
MAN_PAGES = $(BUILD)/man/remodel.1 $(BUILD)/man/remodel-online.1 $(BUILD)/man/remodel-plan.5

man: $(MAN_PAGES)

$(BUILD)/man/%.1: docs/%.1.md scripts/md2man.awk
	@mkdir -p $(dir $@)
	awk -f scripts/md2man.awk $< >$@.tmp && mv $@.tmp $@

$(BUILD)/man/%.5: docs/%.5.md scripts/md2man.awk
	@mkdir -p $(dir $@)
	awk -f scripts/md2man.awk $< >$@.tmp && mv $@.tmp $@

PUBLIC_HEADERS = $(notdir $(wildcard include/remodel/*.h))

install: all $(BUILD)/remodel.pc $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/remodel
	install -m 755 $(BUILD)/remodel $(DESTDIR)$(PREFIX)/bin/remodel
	$(if $(HAVE_MONGOC),install -m 755 $(BUILD)/remodel-online $(DESTDIR)$(PREFIX)/bin/remodel-online)
	install -m 644 $(BUILD)/libremodel.a $(DESTDIR)$(PREFIX)/lib/libremodel.a
	install -m 644 $(BUILD)/remodel.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/remodel.pc
	install -m 644 include/remodel/*.h $(DESTDIR)$(PREFIX)/include/remodel/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 644 $(BUILD)/man/remodel.1 $(BUILD)/man/remodel-online.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(BUILD)/man/remodel-plan.5 $(DESTDIR)$(PREFIX)/share/man/man5/

# What install put there, and nothing else (the include folder only once
# empty).
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/remodel $(DESTDIR)$(PREFIX)/bin/remodel-online \
	    $(DESTDIR)$(PREFIX)/lib/libremodel.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/remodel.pc \
	    $(PUBLIC_HEADERS:%=$(DESTDIR)$(PREFIX)/include/remodel/%) \
	    $(DESTDIR)$(PREFIX)/share/man/man1/remodel.1 $(DESTDIR)$(PREFIX)/share/man/man1/remodel-online.1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5/remodel-plan.5
	-rmdir $(DESTDIR)$(PREFIX)/include/remodel 2>/dev/null

clean:
	rm -rf build

# The headers each object and program was built from (DEPFLAGS).
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
