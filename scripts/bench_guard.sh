#!/usr/bin/env bash
# make bench-guard (issue 60): the floor rows of BENCHMARKS.md for HEAD and
# for a base commit side by side, failing on a row over 10% slower. Not
# part of make check: it builds two trees and runs for minutes, and a
# timing is no test (docs/tests.md).
#   scripts/bench_guard.sh [BUILD]      (make bench-guard BASE=COMMIT)
#   BASE=C         the commit to compare with (default: the merge base of
#                  HEAD and main when that is not HEAD itself, else HEAD~1)
#   NEW=C          the commit under test (default HEAD; a commit, never the
#                  work tree: commit first)
#   GUARD_RUNS=N   counted runs of each binary a row (default 5), after one
#                  run of each not counted
#   GUARD_MAX=P    the largest slowdown allowed, in percent (default 10)
#   GUARD_BY=cpu   judge by CPU seconds (user + system, all threads; the
#                  default: on a shared machine the wall follows the load,
#                  the CPU seconds the work) or wall
#   FLOOR_SCALE=N  remodel-gen --scale of the inputs (default 1000, as
#                  scripts/bench_floor.sh, whose cache it shares)
#   BENCH_OUT=F    a report whose "guard" markers' section is replaced
#                  (default "-": only BUILD/bench/guard.md)
# Each commit is exported by git archive into BENCH_CACHE/guard/SHA/ and
# built there with the Makefile's default -O2 (once: a later run reuses
# the build). The rows: convert (identity), embed, analyze --json,
# summarize and bucketize of scripts/bench_floor.sh, and the expression
# row of scripts/bench_expr.sh, each with HEAD's plans on the same input.
# The two binaries run in turn, the order swapped every pair (base, new,
# new, base, ...: each takes the first place, after the other's run, as
# often). A row's change is the median of the pairs' ratios, new over
# base: each pair saw the same load. Outputs go to a tmpfs when there is
# one. Exits 1 naming each row over GUARD_MAX (both medians), 2 when a
# commit cannot be exported or built, 0 otherwise; a row the base cannot
# run (a step it does not have) is shown, not judged.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUNS=${GUARD_RUNS:-5}
MAX=${GUARD_MAX:-10}
BY=${GUARD_BY:-cpu}
SCALE=${FLOOR_SCALE:-1000}
BENCH=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
CACHE=$BENCH/floor-$SCALE
OUT=${BENCH_OUT:--}
PLANS=$ROOT/scripts/bench
log() { printf 'bench-guard: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

case $RUNS in [1-9] | [1-9][0-9]) ;; *) die "GUARD_RUNS is 1 to 99, not $RUNS" ;; esac
case $MAX in [0-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;; *) die "GUARD_MAX is a whole percent, not $MAX" ;; esac
case $BY in cpu | wall) ;; *) die "GUARD_BY is cpu or wall, not $BY" ;; esac
git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || die "$ROOT is not a git checkout: no commits to build"

new=$(git -C "$ROOT" rev-parse --verify -q "${NEW:-HEAD}^{commit}") || die "NEW=${NEW:-HEAD} is not a commit"
if [ -n "${BASE:-}" ]; then
    base=$(git -C "$ROOT" rev-parse --verify -q "$BASE^{commit}") || die "BASE=$BASE is not a commit"
    how="BASE=$BASE"
else
    base=$(git -C "$ROOT" merge-base "$new" main 2>/dev/null)
    how="the merge base of HEAD and main"
    if [ -z "$base" ] || [ "$base" == "$new" ]; then
        base=$(git -C "$ROOT" rev-parse --verify -q "$new~1^{commit}") || die "HEAD has no parent: give BASE=COMMIT"
        how="HEAD~1"
    fi
fi
[ "$base" != "$new" ] || die "BASE and NEW are the same commit ($new)"
short() { git -C "$ROOT" log -1 --format='%h' "$1"; }
log "base $(short "$base") ($how), new $(short "$new")"

# build SHA: its remodel and remodel-gen, built once into
# BENCH/guard/SHA/src/build; prints that directory.
build() {
    local sha=$1 dir=$BENCH/guard/$1
    if [ ! -x "$dir/src/build/remodel" ] || [ ! -x "$dir/src/build/remodel-gen" ]; then
        rm -rf "$dir" && mkdir -p "$dir/src" || return 1
        git -C "$ROOT" archive "$sha" | tar -x -C "$dir/src" || { log "git archive of $sha failed"; return 1; }
        log "building $(short "$sha") in $dir/src (log: $dir/make.log)"
        make -C "$dir/src" -j"$(nproc 2>/dev/null || echo 2)" --no-print-directory BUILD=build \
            build/remodel build/remodel-gen >"$dir/make.log" 2>&1 || {
            log "$(short "$sha") does not build here (today's libraries?): $(grep -m1 -E 'error|Error' "$dir/make.log")"
            return 1
        }
    fi
    echo "$dir/src/build"
}
B=$(build "$base") || die "the base $(short "$base") could not be built"
N=$(build "$new") || die "the new commit $(short "$new") could not be built"
# The four builds used last are kept, the older removed.
touch "$BENCH/guard/$base" "$BENCH/guard/$new"
ls -dt "$BENCH"/guard/*/ | tail -n +5 | while read -r d; do rm -rf "$d"; done

# The inputs, made as scripts/bench_floor.sh and scripts/bench_expr.sh
# make them (the same cache), by the new commit's programs.
mkdir -p "$CACHE"
CRM=$CACHE/crm.archive ALL=$CACHE/all.archive DUE=$CACHE/crm-due-s.archive
gen() { # SCALE ARCHIVE [convert options]
    local s=$1 a=$2; shift 2
    [ -f "$a" ] && return
    log "generating scale $s into $a"
    "$N/remodel-gen" --out "$CACHE/gen" --scale "$s" --seed 1 --force >/dev/null &&
        "$N/remodel" convert -q "$CACHE/gen" "$CACHE/new-${a##*/}" "$@" && mv "$CACHE/new-${a##*/}" "$a" ||
        die "generating $a failed"
    rm -rf "$CACHE/gen"
}
gen "$SCALE" "$CRM" --nsInclude 'crm.*'
gen $((SCALE / 5)) "$ALL"
[ -f "$DUE" ] || { "$N/remodel" run -q "$PLANS/expr_prep.json" --from "$CRM" --to "$CACHE/new-${DUE##*/}" &&
    mv "$CACHE/new-${DUE##*/}" "$DUE"; } ||
    die "preparing $DUE failed"

tmp=/dev/shm
[ -d "$tmp" ] && [ -w "$tmp" ] || tmp=$CACHE
WORK=$(mktemp -d "$tmp/remodel-guard.XXXXXX") || die "no temporary directory in $tmp"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
export TMPDIR=$WORK

# once BUILD CMD: one run of CMD with BUILD/remodel for '$R'; "wall cpu
# rss_kB", or "FAIL" (its error kept in WORK/err). The CPU seconds are
# the kernel's, of the whole process tree, to the microsecond (wait4's
# rusage): GNU time's hundredths are 8% of a 0.13 s convert, near the
# 10% judged.
once() {
    rm -rf "$WORK/out" && mkdir "$WORK/out"
    python3 - "${2//"'\$R'"/"'$1/remodel'"}" "$WORK/err" <<'PY'
import os, subprocess, sys, time
err = open(sys.argv[2], "w")
t0 = time.perf_counter()
p = subprocess.Popen(["bash", "-c", sys.argv[1]], stdout=subprocess.DEVNULL, stderr=err)
_, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter() - t0
print("FAIL" if status else f"{wall:.4f} {ru.ru_utime + ru.ru_stime:.4f} {ru.ru_maxrss}")
PY
}
ROWS=$WORK/rows
: >"$ROWS"
: >"$WORK/why"
# side WHICH BUILD: one run of the row's command (row's locals), its
# first error line kept in WORK/why (WHICH, the row, the line) when it fails.
side() {
    local r
    r=$(once "$2" "$cmd")
    [ "$r" != FAIL ] || printf '%s\t%s\t%s\n' "$1" "$name" \
        "$(grep -m1 . "$WORK/err" | sed "s|$ROOT/||g; s|$CACHE/|CACHE/|g" | cut -c1-160)" >>"$WORK/why"
    echo "$r"
}
# row NAME INPUT CMD: RUNS pairs of runs, each line "NAME base new" of
# "wall cpu rss" triples (or FAIL) into ROWS.
row() {
    local name=$1 in=$2 cmd=$3 i a b
    cat "$in" >/dev/null
    log "$name: $cmd"
    once "$B" "$cmd" >/dev/null
    once "$N" "$cmd" >/dev/null
    for ((i = 0; i < RUNS; i++)); do
        if ((i % 2)); then
            b=$(side new "$N") a=$(side base "$B")
        else
            a=$(side base "$B") b=$(side new "$N")
        fi
        printf '%s\t%s\t%s\n' "$name" "$a" "$b" >>"$ROWS"
    done
}
O=$WORK/out
row "convert (identity)" "$CRM" "'\$R' convert -q '$CRM' '$O/out.archive'"
row "run embed tasks into people" "$CRM" "'\$R' run -q '$PLANS/embed.json' --from '$CRM' --to '$O/out.archive'"
row "analyze --json" "$CRM" "'\$R' analyze --json '$CRM' > '$O/an.json'"
row "run summarize logmsg into hosts" "$ALL" "'\$R' run -q '$PLANS/summarize.json' --from '$ALL' --to '$O/out.archive'"
row "run bucketize iot.readings" "$ALL" "'\$R' run -q '$PLANS/bucketize.json' --from '$ALL' --to '$O/out.archive'"
row "run of ten expressions and a filter" "$DUE" "'\$R' run -q '$PLANS/expr.json' --from '$DUE' --to '$O/out.archive'"

python3 - "$ROWS" "$WORK/why" "$WORK/section" "$WORK/verdicts" "$(short "$base")" "$(short "$new")" "$how" "$RUNS" "$MAX" "$BY" \
    "$SCALE" "$(uptime | sed 's/.*load average: //')" "make bench-guard${BASE:+ BASE=$BASE}" <<'EOF'
import datetime, statistics, sys
rows, why_file, section, verdicts, base, new, how, runs, mx, by, scale, load, cmd = sys.argv[1:14]
why = {}
for line in open(why_file):
    side, name, msg = line.rstrip("\n").split("\t", 2)
    why.setdefault((side, name), msg.replace("|", "\\|"))
mx = float(mx)
k = 1 if by == "cpu" else 0
by_row = {}
for line in open(rows):
    name, a, b = line.rstrip("\n").split("\t")
    p = lambda s: None if s == "FAIL" else tuple(float(x) for x in s.split())
    by_row.setdefault(name, []).append((p(a), p(b)))
med = statistics.median
L = [f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, load average {load} at the end; "
     f"base {base} ({how}), new {new}; crm-only archive at scale {scale}, whole dump at scale {int(scale) // 5}; "
     f"medians of {runs} runs each, interleaved; judged by {'CPU' if k else 'wall'} seconds, the median of "
     f"the pairs' ratios; `{cmd}`)", "",
     "| row | base wall s | new wall s | base CPU s | new CPU s | new/base | verdict |",
     "|---|---:|---:|---:|---:|---:|---|"]
V = []
for name, pairs in by_row.items():
    A = [a for a, _ in pairs if a]
    Bn = [b for _, b in pairs if b]
    both = [(a, b) for a, b in pairs if a and b and a[k] > 0]
    fmt = lambda xs, i: ("%.3f" % med(x[i] for x in xs)) if xs else "failed"
    cells = [fmt(A, 0), fmt(Bn, 0), fmt(A, 1), fmt(Bn, 1)]
    if len(Bn) < len(pairs):
        ratio, verdict = "—", f"**the new commit failed**: {why.get(('new', name), '')}"
        V.append(f"{name}: the new commit failed to run it: {why.get(('new', name), '')}")
    elif not A:
        ratio, verdict = "—", f"not judged, the base cannot run it: {why.get(('base', name), '')}"
    else:
        r = med(b[k] / a[k] for a, b in both)
        ratio = f"{r:.2f}"
        if r > 1 + mx / 100:
            verdict = f"**slower by {100 * (r - 1):.0f}%: over {mx:.0f}%**"
            V.append(f"{name}: {100 * (r - 1):.0f}% slower ({'CPU' if k else 'wall'} s: base median "
                     f"{med(a[k] for a in A):.3f}, new median {med(b[k] for b in Bn):.3f}; over {mx:.0f}%)")
        else:
            verdict = f"within {mx:.0f}%"
    L.append(f"| {name} | " + " | ".join(cells) + f" | {ratio} | {verdict} |")
open(section, "w").write("\n".join(L) + "\n")
open(verdicts, "w").write("".join(v + "\n" for v in V))
EOF
cat "$WORK/section"
python3 "$ROOT/scripts/bench/section.py" guard "$WORK/section" "$OUT" "$BUILD"
if [ -s "$WORK/verdicts" ]; then
    sed 's/^/FAIL bench-guard: /' "$WORK/verdicts"
    exit 1
fi
echo "PASS bench-guard: no row over $MAX% slower than $(short "$base")"
exit 0
