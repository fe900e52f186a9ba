#!/usr/bin/env bash
# The build as a user or a packager meets it (issue 22, "Build"), on the
# build directory that holds $REMODEL (already built: nothing recompiles):
#  - a plain make runs no installer;
#  - a header's change rebuilds what includes it, not everything (-MMD);
#  - make install DESTDIR=... PREFIX=/usr puts the commands, the library,
#    the headers, the man pages and remodel.pc there; a program built with pkg-config's
#    flags from that remodel.pc links and computes the CRC-64 check value;
#    make uninstall leaves no file behind;
#  - without libmongoc, make builds the rest and names what it left out;
#    remodel (compile too) and the core name nothing of the driver.
#   REMODEL=build/remodel bash tests/cli/test_build.sh
. "$(dirname "$0")/lib.sh"
B=$(dirname "$REMODEL")
B=${B#"$ROOT"/} # as make names it there: the objects' .d files say build/...
# Another tree's build is not this one's to remake: make install and the
# build without libmongoc below would compile this tree's sources into
# it, next to objects of its own (a second worktree's binaries, so made,
# aborted in malloc).
case $B in
    /*) fail "the build under test is this tree's" "$(dirname "$REMODEL") is outside $ROOT"; exit 0 ;;
esac
mk() { make --no-print-directory -C "$ROOT" BUILD="$B" "$@"; }

out=$(mk -n all 2>&1)
expect_eq "make -n all: up to date, no installer run" \
    "$(grep -c 'install-deps' <<<"$out"):$(grep -c '^cc ' <<<"$out")" "0:0"

# -W: as if the header had just changed.
out=$(mk -n -W include/remodel/crc64.h all 2>&1)
objs=$(cd "$ROOT" && find "$B/common" "$B/migrate" -name "*.o" | wc -l)
n=$(grep -c '^cc .* -c ' <<<"$out")
expect_eq "crc64.h changed: crc64.c recompiled, not every object ($n of $objs)" \
    "$(grep -c 'common/base/crc64.c' <<<"$out"):$([ "$n" -gt 0 ] && [ "$n" -lt "$objs" ] && echo fewer)" "1:fewer"

D=$T/dest
mk -s install DESTDIR="$D" PREFIX=/usr >"$T/out" 2>"$T/err"
expect_eq "make install DESTDIR PREFIX=/usr: exit 0" "$?" 0
want="bin/remodel bin/remodel-online lib/libremodel.a lib/pkgconfig/remodel.pc
share/man/man1/remodel.1 share/man/man1/remodel-online.1 share/man/man5/remodel-plan.5"
for h in "$ROOT"/include/remodel/*.h; do want="$want include/remodel/$(basename "$h")"; done
got=$(cd "$D/usr" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')
expect_eq "... the commands, the library, remodel.pc, the man pages and every public header, nothing else" \
    "$got" "$(tr ' \n' '\n\n' <<<"$want" | grep . | sort | tr '\n' ' ')"
expect_eq "... remodel.pc names PREFIX" "$(grep -c '^prefix=/usr$' "$D/usr/lib/pkgconfig/remodel.pc")" 1
cat >"$T/crc.c" <<'EOF'
#include <stdio.h>
#include <remodel/crc64.h>
int main (void)
{
    printf ("%016llx\n", (unsigned long long) rm_crc64_update (0, "123456789", 9));
    return 0;
}
EOF
flags=$(PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/pkgconfig pkg-config --cflags --libs remodel)
# shellcheck disable=SC2086
cc -o "$T/crc" "$T/crc.c" $flags 2>"$T/err"
expect_eq "a program built with pkg-config --cflags --libs remodel: links, gives the CRC-64 check value" \
    "$("$T/crc" 2>&1)" "995dc9bbdf1939fa"
mk -s uninstall DESTDIR="$D" PREFIX=/usr >"$T/out" 2>"$T/err"
expect_eq "make uninstall: exit 0, no file left" "$?:$(find "$D" -type f | wc -l)" "0:0"

out=$(mk HAVE_MONGOC= all 2>&1)
expect_eq "without libmongoc: make exits 0, saying what it left out" \
    "$?:$(grep -c 'libmongoc-1.0 not found (pkg-config): build/remodel-online, the online companion, not built' <<<"$out")" "0:1"

# Layers: a file of common/sort compiled as make compiles one, but
# including the engine's private header (a layer above): refused.
cmd=$(mk -n -B "$B/common/sort/store.o" 2>/dev/null | grep '^cc .* -c common/sort/store.c' |
    sed 's/ -MMD -MP//; s/ -o .*//')
printf '#include "engine_impl.h"\nint x;\n' >"$T/leak.c"
printf '#include "sortkey.h"\n#include "bytes.h"\nint x;\n' >"$T/fine.c"
leak=$(cd "$ROOT" && eval "${cmd/common\/sort\/store.c/$T/leak.c} -o $T/leak.o" 2>&1)
fine=$(cd "$ROOT" && eval "${cmd/common\/sort\/store.c/$T/fine.c} -I$ROOT/common/sort -o $T/fine.o" 2>&1; echo "rc=$?")
expect_eq "a sort file including the engine's private header: refused by the compiler; its own layer's and base's found" \
    "$(grep -c 'engine_impl.h: No such file' <<<"$leak"):$(tail -n 1 <<<"$fine")" "1:rc=0"

# The same fence in shell-ext/: a file of its state layer compiled as
# make compiles one, including the batch layer's header (above it):
# refused; its own layer's and the connection's found.
if [ -n "$(pkg-config --exists libmongoc-1.0 && echo yes)" ]; then
    cmd=$(mk -n -B "$B/shell-ext/state/online_lease.o" 2>/dev/null |
        grep '^cc .* -c shell-ext/state/online_lease.c' | sed 's/ -MMD -MP//; s/ -o .*//')
    printf '#include "online_batch.h"\nint x;\n' >"$T/online_leak.c"
    printf '#include "online_state.h"\n#include "online.h"\nint x;\n' >"$T/online_fine.c"
    leak=$(cd "$ROOT" && eval "${cmd/shell-ext\/state\/online_lease.c/$T/online_leak.c} -o $T/online_leak.o" 2>&1)
    fine=$(cd "$ROOT" && eval "${cmd/shell-ext\/state\/online_lease.c/$T/online_fine.c} -o $T/online_fine.o" 2>&1; echo "rc=$?")
    expect_eq "a shell-ext/state file including the batch layer's header: refused by the compiler; its own layer's and the connection's found" \
        "$(grep -c 'online_batch.h: No such file' <<<"$leak"):$(tail -n 1 <<<"$fine")" "1:rc=0"
fi

# remodel compile is the offline binary's (issue 22: plan in, pipelines
# out): neither it nor the core (the compile layer included) names the
# driver, so both build where libmongoc is not installed.
expect_eq "remodel and the core: no libmongoc symbol, no mongoc header" \
    "$(nm -u "$REMODEL" | grep -c 'mongoc_'):$(cd "$ROOT" && grep -l '#include <mongoc' common/*/*.[ch] migrate/*.[ch] include/remodel/*.h | wc -l)" "0:0"
