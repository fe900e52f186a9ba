#!/usr/bin/env bash
# From one deployment to another (issue 54), measured (make bench-online
# runs it after the other online benchmarks). A benchmark, never a test:
# it reports, it never fails the build.
#   Usage: scripts/bench_to_uri.sh [BUILD_DIR]
#
# For each direction, a source started with its change log (FerretDB:
# oplog; mongo-java-server: change streams) holding remodel-gen's crm
# (people, tasks; tasks.owner indexed, as the embed needs) and an empty
# destination of the other vendor, each round, on a destination emptied
# before each command:
#   copy     `mongodump --archive | mongorestore --archive` of crm from the
#            source into the destination: what moving without reshaping costs
#   run      `remodel online run PLAN --uri SRC --to-uri DEST` of the embed
#            (tasks into people, as tests/cli/test_online_to_uri.sh's plan):
#            the copy while the application would still write
#   finalize `remodel online finalize PLAN --uri SRC --to-uri DEST
#            --writes-stopped --max-window 0`: the cut-over (a last sync and
#            verify, the indexes, the intermediates dropped: the results
#            have their final names from the start); its own figure is the
#            one its closing line says ("in N ms")
#   run -w2  the run again with --workers 2 (each worker its own two
#            connections), on a destination emptied
# docs/s: the source's documents over the wall time. The rows go to
# BUILD/bench/to-uri.md and between the "to-uri" markers of BENCHMARKS.md
# (scripts/bench/section.py).
#   TOURI_DIRS     the directions (default "ferretdb:java java:ferretdb")
#   TOURI_SCALE=N  remodel-gen --scale (default 10: 980 people, 10,000 tasks)
#   TOURI_ROUNDS=N rounds, each command once a round, the median said
#                  (default 3)
#   BENCH_CACHE=D  where the generated dump is cached (as bench_online.sh)
#   BENCH_OUT=F    the report (default BENCHMARKS.md; "-": BUILD only)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
DIRS=${TOURI_DIRS:-ferretdb:java java:ferretdb}
SCALE=${TOURI_SCALE:-10}
ROUNDS=${TOURI_ROUNDS:-3}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
TIME=/usr/bin/time
SERVERS="src dst"
BENCH_NAME=bench-to-uri
. "$ROOT/scripts/bench_online_lib.sh"
[ -x "${MONGODUMP:-}" ] || { log "mongodump missing (tests/peers/install.sh)"; exit 0; }

DUMP=$CACHE/online-scale-$SCALE/dump
if [ ! -f "$DUMP/prelude.json" ]; then
    log "generating scale $SCALE into $DUMP"
    mkdir -p "$CACHE/online-scale-$SCALE"
    "$GEN" --out "$DUMP" --scale "$SCALE" --seed 1 --force >/dev/null || { log "generation failed"; exit 0; }
fi

mkdir -p "$T/plans"
P=$T/plans/embed-tasks.json
cat >"$P" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}}]}
EOF

pyq() { python3 -c "import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
$2" "$1" "${@:3}"; }
# empty URI: the destination as new (crm and remodel's state dropped)
empty() { pyq "$1" 'c.drop_database("crm"); c.drop_database("remodel")'; }

RES=$T/results.tsv
: >"$RES"
# result DIRECTION KIND ROUND WALL_S DOCS [OWN_MS]
result() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:--}" >>"$RES"; }

# timed NAME CMD...: runs CMD, its standard error in $T/err; the wall
# seconds in $wall; false when it failed (said).
timed() {
    local name=$1 t0; shift
    t0=$(now)
    if ! "$@" >"$T/out" 2>"$T/err"; then
        log "$dir: $name failed: $(tail -n2 "$T/err")"
        return 1
    fi
    wall=$(sub "$(now)" "$t0")
}
# copy: mongodump of the source's crm into mongorestore on the destination,
# through a pipe (--archive), indexes and all; false when either failed.
# mongo-java-server lists its indexes with the legacy "ns" field, which
# FerretDB refuses (mongorestore's --convertLegacyIndexes keeps it): then
# every document is restored and the index is not, which is noted and the
# copy timed all the same (remodel's copy of the index leaves "ns" out).
copy() {
    "$MONGODUMP" --uri "$SRC" --db crm --archive --quiet | "$MONGORESTORE" --uri "$DST" --archive
    local st=("${PIPESTATUS[@]}")
    [ "${st[0]}" == 0 ] || return 1
    [ "${st[1]}" == 0 ] && return 0
    grep -q 'Index option "ns" is unknown' "$T/err" && grep -q ' 0 document(s) failed' "$T/err" || return 1
    grep -qx "$dir" "$T/ns-refused" 2>/dev/null || echo "$dir" >>"$T/ns-refused"
}

for dir in $DIRS; do
    from=${dir%%:*} to=${dir##*:}
    for s in src dst; do "$SERVER" stop "$T/$s" >/dev/null 2>&1; done
    SRC=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/src" "$from" changelog 2>"$T/err") ||
        { log "$dir: the source did not start: $(tail -n2 "$T/err")"; continue; }
    DST=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/dst" "$to" 2>"$T/err") ||
        { log "$dir: the destination did not start: $(tail -n2 "$T/err")"; continue; }
    "$MONGORESTORE" --uri "$SRC" --dir "$DUMP" --nsInclude 'crm.*' --noIndexRestore --quiet 2>"$T/err" ||
        { log "$dir: mongorestore of the source failed: $(tail -n2 "$T/err")"; continue; }
    pyq "$SRC" 'c.crm.tasks.create_index("owner")'
    docs=$(pyq "$SRC" 'print(sum(c.crm[n].estimated_document_count() for n in ("people", "tasks")))')
    people=$(pyq "$SRC" 'print(c.crm.people.estimated_document_count())')
    for ((r = 1; r <= ROUNDS; r++)); do
        empty "$DST"
        timed "mongodump | mongorestore" copy && result "$dir" copy "$r" "$wall" "$docs"
        empty "$DST"
        timed "online run" "$R" online run "$P" --uri "$SRC" --to-uri "$DST" -q || continue
        result "$dir" run "$r" "$wall" "$docs"
        timed "finalize" "$R" online finalize "$P" --uri "$SRC" --to-uri "$DST" --writes-stopped \
            --max-window 0 || continue
        # "finalize: plan P committed on HOST in N ms: ..."
        own=$(sed -n 's/.*finalize: plan .* committed on .* in \([0-9]*\) ms.*/\1/p' "$T/err" | tail -n1)
        got=$(pyq "$DST" 'print(c.crm.people.count_documents({}))')
        [ "$got" == "$people" ] || log "$dir: round $r: the destination holds $got people, not $people"
        pyq "$DST" 'print("owner_1" in c.crm.tasks.index_information())' | grep -q True ||
            echo "$dir" >>"$T/idx-missing"
        result "$dir" finalize "$r" "$wall" "$docs" "${own:--}"
        empty "$DST"
        timed "online run --workers 2" "$R" online run "$P" --uri "$SRC" --to-uri "$DST" -q \
            --workers 2 && result "$dir" run2 "$r" "$wall" "$docs"
        log "$dir: round $r: copy, run, finalize: $(awk -F'\t' -v r="$r" -v d="$dir" '$1 == d && $3 == r { printf "%s s ", $4 }' "$RES")"
    done
    empty "$DST"
    for s in src dst; do "$SERVER" stop "$T/$s" >/dev/null 2>&1; done
done

# ---- the report: medians, BUILD/bench/to-uri.md and the "to-uri"
# markers of BENCHMARKS.md (scripts/bench/section.py)
python3 - "$RES" "$SCALE" "$ROUNDS" "$(uptime | sed 's/.*load average: //')" >"$T/section" <<'PYEOF'
import statistics, sys, time
res, scale, rounds, load = sys.argv[1:5]
rows = [l.rstrip("\n").split("\t") for l in open(res) if l.strip()]
def of(d, kind, col=3):
    return [float(r[col]) for r in rows if r[0] == d and r[1] == kind and r[col] != "-"]
def med(v, f="%.2f"):
    return f % statistics.median(v) if v else "—"
def span(v):
    return "%.2f–%.2f" % (min(v), max(v)) if v else "—"
print("(%s, load average %s at the end; scale %s: crm's people and tasks; `make bench-online`, "
      "median of %s rounds, the range after it)\n" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                     load, scale, rounds))
print("| source → destination | documents | dump \\| restore s | docs/s | `online run --to-uri` s | docs/s "
      "| vs dump \\| restore | `--workers 2` s | docs/s | `finalize --writes-stopped` s | its own ms |")
print("|---|---:|---|---:|---|---:|---:|---|---:|---|---:|")
names = {"ferretdb": "FerretDB (oplog)", "java": "mongo-java-server (change streams)"}
for d in dict.fromkeys(r[0] for r in rows):
    f, t = d.split(":")
    copy, run, fin, own = of(d, "copy"), of(d, "run"), of(d, "finalize"), of(d, "finalize", 5)
    run2 = of(d, "run2")
    docs = next(int(r[4]) for r in rows if r[0] == d)
    crate = docs / statistics.median(copy) if copy else 0
    rrate = docs / statistics.median(run) if run else 0
    r2rate = docs / statistics.median(run2) if run2 else 0
    print("| %s → %s | %d | %s (%s) | %.0f | %s (%s) | %.0f | %s | %s (%s) | %.0f | %s (%s) | %s |" % (
        names.get(f, f), names.get(t, t).split(" (")[0], docs, med(copy), span(copy), crate,
        med(run), span(run), rrate, "%.0f%%" % (100 * rrate / crate) if crate and rrate else "—",
        med(run2), span(run2), r2rate, med(fin), span(fin), med(own, "%.0f")))
PYEOF
[ -s "$T/ns-refused" ] && printf '\nmongorestore into FerretDB from mongo-java-server: every document restored, the index on tasks.owner refused (mongo-java-server lists it with the legacy "ns" field, which FerretDB does not take)%s.\n' \
    "$([ -s "$T/idx-missing" ] || echo "; remodel's finalize copied it")" >>"$T/section"
cat "$T/section"
python3 "$ROOT/scripts/bench/section.py" to-uri "$T/section" "$OUT" "$BUILD"
exit 0
