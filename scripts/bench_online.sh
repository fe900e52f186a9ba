#!/usr/bin/env bash
# Online-mode benchmark (make bench-online). A benchmark, never a test: it
# reports, it never fails the build. Usage: scripts/bench_online.sh [BUILD_DIR]
#
# On each test server (FerretDB, mongo-java-server; tests/peers/server.sh),
# in a temporary directory: mongorestore of exactly the namespaces a step
# reads, timed, then `remodel online run` of an embed (side by side), an
# extract (side by side) and a denormalize backfill (--in-place) at each
# batch size, each with fresh state and its targets dropped afterwards; at
# batch size 1000 also a --dry-run of each (reads and computes, writes
# nothing). It prints a Markdown table, a row a server and step, and
# writes it to BUILD/bench/online.md and between the "online" markers of
# BENCHMARKS.md.
#   SCALE=N          remodel-gen --scale of the side-by-side steps' data
#                    (default 10: 980 people, 10,000 tasks)
#   INPLACE_SCALE=N  the same for the in-place backfill (default 1: 1,200 log
#                    messages, 20 hosts). Small, because both test servers
#                    scan the whole collection for each conditional replace
#                    of an in-place batch (BENCHMARKS.md, "Online mode").
#   BENCH_SERVERS    default "ferretdb java"
#   BENCH_BATCHES    default "100 1000 5000"
#   BENCH_STEPS      default "embed extract denormalize" (a subset measures
#                    only those: with BENCH_OUT=-, to leave BENCHMARKS.md as it is)
#   BENCH_CACHE=D    where the generated dump is cached
#                    (default ${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench)
#   BENCH_OUT=F      the report (default BENCHMARKS.md; "-": BUILD only)
#   BENCH_TSV=F      the raw rows also copied to F (server, kind, step, batch,
#                    wall s, read, written, client CPU s, server CPU s), for
#                    comparing two builds round by round (BENCHMARKS.md,
#                    "Online mode": before and after issue 53)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${SCALE:-10}
INPLACE_SCALE=${INPLACE_SCALE:-1}
SERVERS=${BENCH_SERVERS:-ferretdb java}
BATCHES=${BENCH_BATCHES:-100 1000 5000}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
TIME=/usr/bin/time
BENCH_NAME=bench-online
. "$ROOT/scripts/bench_online_lib.sh"

# ---- the datasets, generated once and cached; DOCS[scale:ns] its counts
declare -A DOCS
for sc in "$SCALE" "$INPLACE_SCALE"; do
    d=$CACHE/online-scale-$sc/dump
    if [ ! -f "$d/prelude.json" ]; then
        log "generating scale $sc into $d"
        mkdir -p "$CACHE/online-scale-$sc"
        "$GEN" --out "$d" --scale "$sc" --seed 1 --force >/dev/null || { log "generation failed"; exit 0; }
    fi
    while read -r ns n; do DOCS[$sc:$ns]=$n; done < <("$R" inspect --json "$d" | python3 -c '
import json, sys
for n in json.load(sys.stdin)["namespaces"]:
    print(n["db"] + "." + n["collection"], n["documents"])')
done
dump_of() { # STEP: the scale its data comes from
    if [ "$1" == denormalize ]; then echo "$INPLACE_SCALE"; else echo "$SCALE"; fi
}

# ---- the plans; each run gets its own plan name, so its own state and targets
mkdir -p "$T/plans"
plan() { # STEP TAG: writes $T/plans/STEP-TAG.json
    local f=$T/plans/$1-$2.json
    case $1 in
    embed) cat >"$f" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}}]}
EOF
    ;;
    extract) cat >"$f" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "crm.people", "path": "addresses", "to": "crm.addresses",
               "style": "parentRef", "parentField": "person_id", "ordinalField": "n"}}]}
EOF
    ;;
    # In place: each run fills its own field, so every run changes every
    # document (a second backfill of the same field would change nothing).
    denormalize) cat >"$f" <<EOF
{"remodel": 1, "steps": [
  {"denormalize": {"in": "logging.logmsg", "from": "logging.hosts", "localField": "host",
                   "fields": {"host_ip_$2": "ipaddr", "dc_$2": "datacenter"}}}]}
EOF
    ;;
    esac
    echo "$f"
}
# The namespaces each step reads (the mongorestore it is compared with).
declare -A NSS=([embed]="crm.people crm.tasks" [extract]="crm.people"
                [denormalize]="logging.logmsg logging.hosts")
STEPS=${BENCH_STEPS:-embed extract denormalize}

pyq() { python3 -c "import pymongo, sys
c = pymongo.MongoClient(sys.argv[1])
$1" "$uri" "${@:2}"; }


RES=$T/results.tsv
: >"$RES"
# result SERVER KIND STEP BATCH WALL READ WRITTEN CLIENT_CPU SERVER_CPU
result() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RES"; }

# restore STEP: mongorestore of the namespaces STEP reads, timed. extract
# reads crm.people, which embed's restore brought already: it is restored
# again under another database, timed, and dropped.
restore() {
    local step=$1 ns args=() n=0 t0 t1 c0 c1 sc
    sc=$(dump_of "$step")
    for ns in ${NSS[$step]}; do
        args+=(--nsInclude "$ns"); n=$((n + DOCS[$sc:$ns]))
    done
    [ "$step" == extract ] && args+=(--nsFrom crm.people --nsTo benchx.people)
    c0=$(cpu "$spid"); t0=$(now)
    "$MONGORESTORE" --uri "$uri" --dir "$CACHE/online-scale-$sc/dump" "${args[@]}" --noIndexRestore --quiet 2>"$T/err" ||
        { log "$kind: mongorestore ($step) failed: $(tail -n2 "$T/err")"; return 1; }
    t1=$(now); c1=$(cpu "$spid")
    [ "$step" == extract ] && pyq 'c.drop_database("benchx")'
    result "$kind" restore "$step" - "$(sub "$t1" "$t0")" "$n" "$n" - "$(sub "$c1" "$c0")"
    log "$kind: mongorestore ${NSS[$step]}: $n documents in $(sub "$t1" "$t0") s"
}

# online STEP BATCH [--dry-run]: one timed `remodel online run`, fresh state.
online() {
    local step=$1 batch=$2 dry=${3:-} tag f t0 t1 c0 c1 read written ucpu kindof=online
    tag=b$batch${dry:+d}
    f=$(plan "$step" "$tag")
    local args=(--batch-size "$batch" --create-indexes)
    [ "$step" == denormalize ] && args+=(--in-place)
    [ -n "$dry" ] && { args+=(--dry-run); kindof=dry-run; }
    c0=$(cpu "$spid"); t0=$(now)
    if ! "$TIME" -f '%U %S' -o "$T/time" "$R" online run "$f" --uri "$uri" "${args[@]}" \
        >/dev/null 2>"$T/err"; then
        log "$kind: $step batch $batch${dry:+ dry-run} failed: $(grep -v '^Command exited' "$T/err" | tail -n2)"
        result "$kind" "$kindof" "$step" "$batch" FAIL - - - -
        return 0
    fi
    t1=$(now); c1=$(cpu "$spid")
    # "remodel: step 1 (embed) crm.people: N read, M written", one per pass
    read -r read written < <(sed -n 's/^remodel: step .*: \([0-9]*\) read, \([0-9]*\) .*/\1 \2/p' "$T/err" |
        awk '{ r += $1; w += $2 } END { print r + 0, w + 0 }')
    ucpu=$(awk 'END { printf "%.2f", $1 + $2 }' "$T/time")
    result "$kind" "$kindof" "$step" "$batch" "$(sub "$t1" "$t0")" "$read" "$written" "$ucpu" "$(sub "$c1" "$c0")"
    log "$kind: $step batch $batch${dry:+ dry-run}: $read read, $written written in $(sub "$t1" "$t0") s"
    # Fresh state for the next run, and the side-by-side targets dropped.
    pyq '
c.drop_database("remodel")
for db in ("crm", "logging"):
    for n in c[db].list_collection_names():
        if ".remodel." in n:
            c[db].drop_collection(n)'
}

for kind in $SERVERS; do
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
    uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/$kind" "$kind" 2>"$T/err") ||
        { log "$kind: the server did not start: $(tail -n2 "$T/err")"; continue; }
    spid=$(cat "$T/$kind/pid")
    ok=1
    for step in $STEPS; do restore "$step" || ok=0; done
    [ $ok == 1 ] || { "$SERVER" stop "$T/$kind"; continue; }
    # The joins' indexes, built here untimed (mongorestore's are not
    # restored either: --noIndexRestore).
    pyq 'c.crm.tasks.create_index("owner"); c.logging.hosts.create_index("_id")'
    for step in $STEPS; do
        for b in $BATCHES; do online "$step" "$b"; done
        online "$step" 1000 --dry-run
    done
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done

# ---- the report: compact figures, BUILD/bench/online.md and the "online"
# markers of BENCHMARKS.md (scripts/bench/section.py)
python3 - "$RES" "$SCALE" "$INPLACE_SCALE" "$(uptime | sed 's/.*load average: //')" >"$T/section" <<'PYEOF'
import sys, time
res, scale, iscale, load = sys.argv[1:5]
rows = [l.rstrip("\n").split("\t") for l in open(res) if l.strip()]
NAMES = {"embed": "embed crm.tasks → crm.people", "extract": "extract crm.people.addresses",
         "denormalize": "denormalize hosts → logmsg (--in-place)"}
restore = {(r[0], r[2]): r for r in rows if r[1] == "restore"}
dry = {(r[0], r[2]): r for r in rows if r[1] == "dry-run" and r[4] != "FAIL"}
def rate(r):
    return float(r[5]) / float(r[4]) if r[4] != "FAIL" and float(r[4]) > 0 else 0.0
print("(%s, load average %s at the end; scale %s, in place %s; `make bench-online`, one run each)\n"
      % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load, scale, iscale))
print("| server | step | docs read, written | wall s by batch size | docs/s by batch size "
      "| vs mongorestore at 1,000 | dry run s at 1,000 | CPU s at 1,000: client, server | mongorestore s |")
print("|---|---|---:|---|---|---:|---:|---|---:|")
steps = []
for r in rows:
    if r[1] == "online" and (r[0], r[2]) not in steps:
        steps.append((r[0], r[2]))
for kind, step in steps:
    runs = [r for r in rows if r[1] == "online" and r[0] == kind and r[2] == step]
    ok = [r for r in runs if r[4] != "FAIL"]
    at = {r[3]: r for r in ok}
    rs, d = restore.get((kind, step)), dry.get((kind, step))
    one = at.get("1000")
    vs = "%.0f%%" % (100 * rate(one) / rate(rs)) if one and rs and rate(rs) else "—"
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        kind, NAMES[step], "%s, %s" % (ok[0][5], ok[0][6]) if ok else "—",
        " / ".join("%s: %s" % (r[3], r[4]) for r in runs),
        " / ".join("%.0f" % rate(r) for r in ok), vs, d[4] if d else "—",
        "%s, %s" % (one[7], one[8]) if one else "—", rs[4] if rs else "—"))
PYEOF
[ -n "${BENCH_TSV:-}" ] && cp "$RES" "$BENCH_TSV"
cat "$T/section"
python3 "$ROOT/scripts/bench/section.py" online "$T/section" "$OUT" "$BUILD"
exit 0
