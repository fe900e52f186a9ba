#!/usr/bin/env bash
# scripts/check_layers.sh itself (make check runs it on the build): fed
# objects compiled here from tiny C files laid out as common/ and
# shell-ext/ are, it passes a call down a layer and fails, naming the
# files and the function, on a call up a layer (shell-ext/'s layers above
# common/'s), on a circle of files, and on a source outside the layers.
#   REMODEL=build/remodel bash tests/cli/test_check_layers.sh
. "$(dirname "$0")/lib.sh"

# tree NAME FILE=CODE...: sources under $T/NAME/src, compiled into
# $T/NAME/build as make lays out its objects, with the Makefile's layers.
tree() {
    local d=$T/$1 f rel; shift
    mkdir -p "$d/src"
    grep '^CORE_DIRS\|^ONLINE_DIRS' "$ROOT/Makefile" >"$d/src/Makefile"
    for f in "$@"; do
        rel=${f%%=*}
        mkdir -p "$d/src/$(dirname "$rel")" "$d/build/$(dirname "$rel")"
        printf '%s\n' "${f#*=}" >"$d/src/$rel"
        cc -c -o "$d/build/${rel%.c}.o" "$d/src/$rel" || return 1
    done
}
# layers NAME: the script on tree NAME; output in $T/out, status in $rc.
layers() { "$ROOT/scripts/check_layers.sh" "$T/$1/build" "$T/$1/src" >"$T/out" 2>&1; rc=$?; }

tree down 'common/base/low.c=int low (void) { return 1; }' \
    'common/engine/high.c=int low (void); int high (void) { return low (); }'
layers down
expect_eq "engine calling base: passes, no FAIL line" "$rc:$(grep -c '^FAIL' "$T/out"):$(grep -c '^PASS' "$T/out")" "0:0:2"

tree up 'common/base/low.c=int high (void); int low (void) { return high (); }' \
    'common/engine/high.c=int high (void) { return 2; }'
layers up
expect_eq "base calling engine: fails, naming both files, their layers and the function" \
    "$rc:$(grep -c '^FAIL layers: upward call: common/base/low.c (layer base) uses high() of common/engine/high.c (layer engine)$' "$T/out")" "1:1"

tree circle 'common/engine/a.c=int b (void); int a (int n) { return n ? b () : 0; }' \
    'common/engine/b.c=int a (int); int b (void) { return a (0); }' \
    'common/engine/c.c=int a (int); int c (void) { return a (1); }'
layers circle
expect_eq "two files of one folder calling each other: fails, naming the circle's files (not the third) and each call" \
    "$rc:$(grep -c '^FAIL layers: circle of files: common/engine/a.c common/engine/b.c$' "$T/out"):$(grep -c '^    common/engine/a.c uses b() of common/engine/b.c$' "$T/out"):$(grep -c '^    common/engine/b.c uses a() of common/engine/a.c$' "$T/out")" \
    "1:1:1:1"

tree table 'common/engine/run.c=extern int (*const steps[]) (void); int run (void) { return steps[0] (); }' \
    'common/engine/table.c=int step (void); int (*const steps[]) (void) = { step };' \
    'common/engine/step.c=int run (void); int step (void) { return run (); }'
layers table
expect_eq "a circle through a table of functions: fails, naming the table" \
    "$rc:$(grep -c '^    common/engine/run.c uses steps of common/engine/table.c$' "$T/out")" "1:1"

tree online 'common/base/low.c=int low (void) { return 1; }' \
    'shell-ext/conn/online_conn.c=int low (void); int online_fail (void) { return low (); }' \
    'shell-ext/cmd/online_run.c=int online_fail (void); int online_run (void) { return online_fail (); }'
layers online
expect_eq "shell-ext: its commands calling its connection, which calls common/: passes" \
    "$rc:$(grep -c '^FAIL' "$T/out"):$(grep -c '^PASS' "$T/out")" "0:0:2"

tree online_up 'shell-ext/conn/online_conn.c=int online_run (void); int online_fail (void) { return online_run (); }' \
    'shell-ext/cmd/online_run.c=int online_run (void) { return 1; }'
layers online_up
expect_eq "shell-ext: its connection calling its commands: fails, naming both files and their layers" \
    "$rc:$(grep -c '^FAIL layers: upward call: shell-ext/conn/online_conn.c (layer shell-ext/conn) uses online_run() of shell-ext/cmd/online_run.c (layer shell-ext/cmd)$' "$T/out")" "1:1"

tree core_up 'common/report/high.c=int online_run (void); int high (void) { return online_run (); }' \
    'shell-ext/cmd/online_run.c=int online_run (void) { return 1; }'
layers core_up
expect_eq "common/ calling shell-ext/: fails as a call up" \
    "$rc:$(grep -c '^FAIL layers: upward call: common/report/high.c (layer report) uses online_run() of shell-ext/cmd/online_run.c (layer shell-ext/cmd)$' "$T/out")" "1:1"

tree stray 'shell-ext/conn/online_conn.c=int online_fail (void) { return 1; }'
echo 'int online_new (void) { return 1; }' >"$T/stray/src/shell-ext/online_new.c"
mkdir -p "$T/stray/src/shell-ext/misc" && echo 'int m;' >"$T/stray/src/shell-ext/misc/m.c"
layers stray
expect_eq "a .c file directly in shell-ext/, or in a folder that is no layer: fails, naming each" \
    "$rc:$(grep -c '^FAIL layers: not in a layer.s folder (the Makefile.s CORE_DIRS, ONLINE_DIRS): shell-ext/online_new.c shell-ext/misc/m.c$' "$T/out")" "1:1"

tree stale 'common/base/low.c=int low (void) { return 1; }' 'common/engine/high.c=int high (void) { return 1; }'
rm "$T/stale/src/common/engine/high.c"
cp "$T/stale/build/common/base/low.o" "$T/stale/build/common/base/gone.o"
mkdir -p "$T/stale/src/common/sort" && echo 'int s;' >"$T/stale/src/common/sort/new.c"
layers stale
expect_eq "an object whose source is gone: not read; a source not built: fails, naming it" \
    "$rc:$(grep -c 'gone\|high' "$T/out"):$(grep -c '^FAIL layers: not built in .*: common/sort/new.c$' "$T/out")" "1:0:1"
