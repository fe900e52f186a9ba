# remodel: make builds build/remodel; make check runs every test; make demo
# runs the main job on the shipped sample dump. Missing Debian packages are
# installed first by scripts/install-deps.sh.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
# The offline tool needs no driver: libmongoc stays out of its link, since
# its load-time init leaves /dev/shm/mongoc-PID counters behind when a
# process dies, and a later process given the same PID then warns on stderr.
PKGS     = libbson-1.0 libarchive libzstd zlib
OPT     ?= -O2 -g
WARN     = -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -Wshadow -Wstrict-prototypes
# Recursive (=) so pkg-config runs only after the deps step installed it all.
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -Iinclude -Icommon \
             $(shell pkg-config --cflags $(PKGS)) $(CFLAGS) $(EXTRA_CFLAGS)
LIBS_ALL   = $(shell pkg-config --libs $(PKGS)) -lpthread -lm $(LDFLAGS) $(EXTRA_LDFLAGS)

LIB_SRC  = $(wildcard common/*.c)
CLI_SRC  = $(wildcard migrate/*.c)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
GEN_SRC  = $(wildcard dumps/generator/*.c)
HEADERS  = $(wildcard include/remodel/*.h common/*.h migrate/*.h tests/unit/*.h)

LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
GEN_OBJ  = $(GEN_SRC:%.c=$(BUILD)/%.o)

.PHONY: all deps check check-unit check-sanitize demo install clean bench dumps

all: $(BUILD)/remodel $(BUILD)/remodel-gen

deps:
	@scripts/install-deps.sh

$(BUILD)/%.o: %.c $(HEADERS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libremodel.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/remodel: $(CLI_OBJ) $(BUILD)/libremodel.a
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libremodel.a $(LIBS_ALL)

$(BUILD)/remodel-gen: $(GEN_OBJ) $(BUILD)/libremodel.a
	$(CC) $(CFLAGS_ALL) -o $@ $(GEN_OBJ) $(BUILD)/libremodel.a $(LIBS_ALL)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libremodel.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libremodel.a $(LIBS_ALL)

unit: $(UNIT_BIN)

# make build/bench_bsoncheck; build/bench_bsoncheck ARCHIVE [ROUNDS]
$(BUILD)/bench_bsoncheck: tests/bench/bench_bsoncheck.c $(BUILD)/libremodel.a $(HEADERS)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libremodel.a $(LIBS_ALL)

# Everything: unit tests, command-line and fixture tests, peer-tool tests,
# then the unit and fixture tests again under ASan and UBSan.
check: all unit
	@$(MAKE) --no-print-directory BUILD=build/sanitize \
	    OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    build/sanitize/remodel unit
	@tests/run.sh $(BUILD) build/sanitize

demo: all
	@scripts/demo.sh $(BUILD)

dumps: $(BUILD)/remodel-gen $(BUILD)/remodel
	@scripts/make-dumps.sh $(BUILD)

bench: all
	@scripts/bench.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/remodel
	install -m 755 $(BUILD)/remodel $(DESTDIR)$(PREFIX)/bin/remodel
	install -m 644 $(BUILD)/libremodel.a $(DESTDIR)$(PREFIX)/lib/libremodel.a
	install -m 644 include/remodel/*.h $(DESTDIR)$(PREFIX)/include/remodel/

clean:
	rm -rf build
