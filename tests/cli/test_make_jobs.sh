#!/usr/bin/env bash
# make demo, demo-online and check build with the machine's cores (issue 52,
# trip 4: a fresh clone's make demo was a minute and a half of serial
# compiling), and a -j the caller gave wins. The build is a stand-in make
# that records its arguments, under make -n, which runs only the recipe
# lines that call $(MAKE): nothing real is installed, built or run here.
#   REMODEL=build/remodel bash tests/cli/test_make_jobs.sh
. "$(dirname "$0")/lib.sh"

cat >"$T/fake-make" <<'SH'
#!/bin/sh
echo "$*" >>"$FAKE_MAKE_LOG"
SH
chmod +x "$T/fake-make"
cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
# recipe TARGET [MAKE ARGS...]: the arguments of the first sub-make TARGET's
# recipe runs (its build).
recipe() {
    local target=$1; shift
    : >"$T/log"
    FAKE_MAKE_LOG=$T/log make -n -C "$ROOT" --no-print-directory "$@" MAKE="$T/fake-make" \
        BUILD="$T/nobuild" "$target" >/dev/null 2>&1
    head -n 1 "$T/log"
}
for target in demo demo-online check check-cli; do
    args=$(recipe "$target")
    case " $args " in
        *" -j$cores "*) pass "make $target: its build runs with -j$cores" ;;
        *) fail "make $target: its build runs with -j$cores" "the sub-make got: [$args]" ;;
    esac
    args=$(recipe "$target" JOBS=3)
    case " $args " in
        *" -j3 "*) pass "make $target JOBS=3: -j3" ;;
        *) fail "make $target JOBS=3: -j3" "the sub-make got: [$args]" ;;
    esac
done
# The caller's -j: no second one on top (the jobserver shares the caller's).
args=$(recipe demo -j2)
case " $args " in
    *" -j"[0-9]*) fail "make -j2 demo: the caller's -j wins" "the sub-make got: [$args]" ;;
    *) pass "make -j2 demo: the caller's -j wins" ;;
esac
exit 0
