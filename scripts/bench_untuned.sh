#!/usr/bin/env bash
# Issue 61's table on a dump the project neither wrote nor tuned on: TPC-H
# from tpchgen-cli (its package's generator; tests/peers/tpchgen.sh), loaded
# as mongoimport --headerline would type it (tests/transforms/tpch_dump.py:
# numbers as numbers, dates left as strings) and made one archive. Every
# command runs once a round, in turn, RUNS rounds, so that the commands of
# a round see the same load; a ratio is the median of the rounds' ratios:
#   analyze, embed (every order gets its lines), identity convert: against
#     the floor, cat of the archive plus sync of the copy;
#   a set of six expressions under a filter (scripts/bench/untuned_set.json:
#     a date string to a date and back to a string, a double to a string, a
#     rounding, a slice, a case change, a comparison): against convert, and
#     the same job by a Python script against it;
#   a set of one constant field against convert; $toString of a double,
#     $toDecimal and $round, each a set of one field, against the constant.
# A benchmark, never a test: it reports, it never fails the build.
#   scripts/bench_untuned.sh [BUILD]   UNTUNED_SCALE=S (TPC-H scale factor,
#   default 0.06: 360,000 lineitems, 90,000 orders, about 175 MB of BSON)
#   UNTUNED_RUNS=N (rounds, default 5); BENCH_OUT as scripts/bench_floor.sh
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel
SCALE=${UNTUNED_SCALE:-0.06}
RUNS=${UNTUNED_RUNS:-5}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}/untuned-$SCALE
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
PLANS=$ROOT/scripts/bench
log() { printf 'bench-untuned: %s\n' "$*" >&2; }

[ -x "$R" ] || { log "build $R first (make all)"; exit 0; }
[ -x /usr/bin/time ] || { log "/usr/bin/time (GNU time) is needed"; exit 0; }
mkdir -p "$CACHE"
# pymongo's bson both loads the CSV (tests/transforms/tpch_dump.py) and runs
# the by-hand row, so it is installed before the archive is generated.
python3 -c 'import bson, fastcrc, sys; sys.exit(0 if bson.has_c() else 1)' 2>/dev/null ||
    python3 -m pip install -q pymongo==4.10.1 fastcrc==0.5.0 >&2 || log "pymongo or fastcrc unavailable: no by-hand row"
IN=$CACHE/tpch.archive
if [ ! -f "$IN" ]; then
    log "generating TPC-H at scale $SCALE"
    GEN=$("$ROOT/tests/peers/tpchgen.sh") &&
        "$GEN" csv -s "$SCALE" --output-dir="$CACHE/csv" >/dev/null &&
        python3 "$ROOT/tests/transforms/tpch_dump.py" "$CACHE/csv" "$CACHE/dump" &&
        "$R" convert -q "$CACHE/dump" "$IN" || { log "generation failed"; rm -f "$IN"; exit 0; }
    rm -rf "$CACHE/csv" "$CACHE/dump"
fi
# Outputs beside the input, on the disk, as the floor's copy.
WORK=$(mktemp -d "$CACHE/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
one() { # one NAME FIELDS-JSON: a plan of one set of lineitem
    printf '{"remodel": 1, "steps": [{"set": {"in": "tpch.lineitem", "fields": %s}}]}\n' "$2" >"$WORK/$1.json"
}
one const '{"k": 1}'
one tostring '{"s": {"$toString": "$l_extendedprice"}}'
one todecimal '{"d": {"$toDecimal": "$l_extendedprice"}}'
one round '{"r": {"$round": ["$l_extendedprice", 1]}}'
run="'$R' run -q"
to="--to '$WORK/out.archive'"
CMDS=(
    "floor|cat '$IN' > '$WORK/out.archive' && sync '$WORK/out.archive'"
    "convert|'$R' convert -q '$IN' '$WORK/out.archive'"
    "analyze|'$R' analyze -q --json '$IN' > '$WORK/an.json'"
    "embed|$run '$PLANS/untuned_embed.json' --from '$IN' $to"
    "set6|$run '$PLANS/untuned_set.json' --from '$IN' $to"
    "const|$run '$WORK/const.json' --from '$IN' $to"
    "tostring|$run '$WORK/tostring.json' --from '$IN' $to"
    "todecimal|$run '$WORK/todecimal.json' --from '$IN' $to"
    "round|$run '$WORK/round.json' --from '$IN' $to"
)
python3 -c 'import bson, fastcrc' 2>/dev/null &&
    CMDS+=("python|python3 '$PLANS/untuned_by_hand.py' '$IN' '$WORK/out.archive'")

# The script's output must be remodel's, document for document.
same="not compared"
if [ "${CMDS[-1]%%|*}" = python ]; then
    "$R" run -q "$PLANS/untuned_set.json" --from "$IN" --to "$WORK/remodel.archive" &&
        python3 "$PLANS/untuned_by_hand.py" "$IN" "$WORK/python.archive" &&
        if "$R" diff -q "$WORK/remodel.archive" "$WORK/python.archive" >"$WORK/diff" 2>&1; then
            same="the same documents as remodel's (remodel diff)"
        else
            same="DIFFERENT documents from remodel's: $(head -n3 "$WORK/diff" | tr '\n' ' ')"
        fi
    rm -f "$WORK/remodel.archive" "$WORK/python.archive"
fi

cat "$IN" >/dev/null # into the page cache
ROWS=$WORK/rows
: >"$ROWS"
for ((i = 1; i <= RUNS; i++)); do
    log "round $i of $RUNS"
    for c in "${CMDS[@]}"; do
        name=${c%%|*} cmd=${c#*|}
        rm -f "$WORK/out.archive" "$WORK/an.json"
        t0=$(date +%s%N)
        if /usr/bin/time -f '%U %S %M' -o "$WORK/time" bash -c "$cmd" >/dev/null 2>"$WORK/err"; then
            t1=$(date +%s%N)
            read -r u s k <"$WORK/time"
            echo "$i $name $(((t1 - t0) / 1000)) $u $s $k" >>"$ROWS"
        else
            log "$name failed: $(tail -n2 "$WORK/err" | tr '\n' ' ')"
        fi
    done
done

python3 - "$ROWS" "$RUNS" "$SCALE" "$(stat -c %s "$IN")" "$(uptime | sed 's/.*load average: //')" \
    "$same" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" >"$WORK/section" <<'PY'
import collections, datetime, statistics, sys
rows, runs, scale, size, load, same, rev = sys.argv[1:8]
t = collections.defaultdict(dict)  # name -> round -> (wall s, CPU s, RSS kB)
for line in open(rows):
    i, name, us, u, s, k = line.split()
    t[name][i] = (int(us) / 1e6, float(u) + float(s), int(k))
def ratio(a, b):
    # the median over the rounds where both ran of a's wall over b's
    r = [t[a][i][0] / t[b][i][0] for i in t[a] if i in t.get(b, {})]
    return statistics.median(r) if r else None
med = lambda name, j: statistics.median(v[j] for v in t[name].values())
print("(TPC-H by tpchgen-cli at scale %s, loaded as mongoimport types CSV, one archive of %.0f MB; "
      "%s rounds, each command once a round, in turn; %s, load average %s at the end, at %s; "
      "the floor, cat plus sync, %.3f s (%.2f CPU s); `make bench-untuned`; the by-hand output has %s)\n"
      % (scale, int(size) / 1e6, runs,
         datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), load, rev,
         med("floor", 0), med("floor", 1), same))
print("| row | wall s | CPU s | ratio (median of the rounds) | goal |\n|---|---:|---:|---:|---|")
table = [("analyze", "floor", True, "`analyze` vs the floor", ">= 35%"),
        ("embed", "floor", True, "embed (every order gets its lines) vs the floor", ">= 30%"),
        ("convert", "floor", True, "identity convert vs the floor", ">= 85%"),
        ("set6", "convert", True, "one `set` of six expressions under a filter vs identity convert", ">= 50%"),
        ("python", "set6", False, "the same job by a Python script (pymongo's `bson`) vs remodel", ">= 20x"),
        ("const", "convert", True, "one `set` of a constant vs identity convert", ""),
        ("tostring", "const", False, "`$toString` of a double vs a constant `set`", "<= 2.5x"),
        ("todecimal", "const", False, "`$toDecimal` vs a constant `set`", "<= 2.5x"),
        ("round", "const", False, "`$round` vs a constant `set`", "<= 2.5x")]
for a, b, share, what, goal in table:
    if a not in t or b not in t:
        print("| %s | failed | | | %s |" % (what, goal)); continue
    r = ratio(b, a) if share else ratio(a, b)
    shown = "%.0f%%" % (100 * r) if share else "%.2fx" % r
    if goal:
        g = float(goal.split()[1].rstrip("%x")) / (100 if goal.endswith("%") else 1)
        ok = r >= g if goal.startswith(">") else r <= g
        goal = "%s: %s" % (goal.replace(">=", "≥").replace("<=", "≤"), "met" if ok else "**missed**")
    print("| %s | %.3f | %.2f | %s | %s |" % (what, med(a, 0), med(a, 1), shown, goal))
PY
cat "$WORK/section"
python3 "$ROOT/scripts/bench/section.py" untuned "$WORK/section" "$OUT" "$BUILD"
exit 0
