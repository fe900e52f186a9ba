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
# nothing). It prints a Markdown table and replaces the "## Online mode"
# section of BENCHMARKS.md (everything above it is kept).
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
#   BENCH_OUT=F      the report (default BENCHMARKS.md; "-" prints only)
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

# ---- the report
MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -g | awk '/^Mem:/{print $2}') GiB RAM"
python3 - "$RES" "$OUT" "$SCALE" "$MACHINE" "mongorestore $("$MONGORESTORE" --version | head -n1 | sed "s/.*version: //")" "$INPLACE_SCALE" <<'PYEOF'
import sys, time
res, out, scale, machine, mrversion, iscale = sys.argv[1:7]
rows = [l.rstrip("\n").split("\t") for l in open(res) if l.strip()]
NAMES = {"embed": "embed crm.tasks → crm.people (side by side)",
         "extract": "extract crm.people.addresses (side by side)",
         "denormalize": "denormalize hosts → logmsg (--in-place)"}
restore = {(r[0], r[2]): r for r in rows if r[1] == "restore"}
def f(x, d=0):
    return "{:,.{}f}".format(float(x), d)
def rate(r):
    return float(r[5]) / float(r[4]) if float(r[4]) > 0 else 0.0
t = ["| server | step | batch size | docs read | docs written | wall s | docs/s | vs mongorestore | target (issue) |",
     "|---|---|---:|---:|---:|---:|---:|---:|---|"]
for r in rows:
    if r[1] != "online":
        continue
    rs = restore.get((r[0], r[2]))
    if r[4] == "FAIL":
        t.append("| %s | %s | %s | — | — | failed | — | — | — |" % (r[0], NAMES[r[2]], r[3]))
        continue
    pct = 100 * rate(r) / rate(rs) if rs else 0
    target = "—"
    if r[3] == "1000" and r[2] != "denormalize":
        target = "≥ 50%%: %s" % ("met" if pct >= 50 else "**missed: %.0f%%, needs %.1f× faster**" % (pct, 50 / pct))
    t.append("| %s | %s | %s | %s | %s | %s | %s | %.0f%% | %s |" % (
        r[0], NAMES[r[2]], f(r[3]), f(r[5]), f(r[6]), r[4], f(rate(r)), pct, target))
m = ["| server | namespaces restored | documents | wall s | docs/s | server CPU s |",
     "|---|---|---:|---:|---:|---:|"]
NSS = {"embed": "crm.people, crm.tasks", "extract": "crm.people", "denormalize": "logging.logmsg, logging.hosts"}
for r in rows:
    if r[1] == "restore":
        m.append("| %s | %s | %s | %s | %s | %s |" % (r[0], NSS[r[2]], f(r[5]), r[4], f(rate(r)), r[8]))
w = ["| server | step | wall s | dry-run wall s | writes (wall − dry run) | remodel-online CPU s | server CPU s | server CPU s, dry run |",
     "|---|---|---:|---:|---:|---:|---:|---:|"]
dry = {(r[0], r[2]): r for r in rows if r[1] == "dry-run" and r[4] != "FAIL"}
for r in rows:
    if r[1] == "online" and r[3] == "1000" and r[4] != "FAIL":
        d = dry.get((r[0], r[2]))
        dw = float(d[4]) if d else float("nan")
        w.append("| %s | %s | %s | %s | %.0f%% | %s | %s | %s |" % (
            r[0], r[2], r[4], d[4] if d else "—", 100 * (float(r[4]) - dw) / float(r[4]),
            r[7], r[8], d[8] if d else "—"))
table = "\n".join(t)
print(table)
print()
print("\n".join(w))
if out == "-":
    sys.exit(0)
try:
    doc = open(out).read()
except FileNotFoundError:
    doc = "# Benchmarks\n"
# Keep everything above the section; a later notes paragraph is kept too.
head, sep, rest = doc.partition("\n## Online mode\n")
old_notes = ""
if sep:
    i = rest.find("\n### Where the time goes\n")
    if i >= 0:
        old_notes = rest[i:].split("\n## ", 1)[0]
sec = ["", "## Online mode", "",
       "Generated by `scripts/bench_online.sh` (`make bench-online`); numbers below are from one run of it.", "",
       "- date: " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
       "- machine: " + machine + "; the server, mongorestore and remodel share its cores",
       "- datasets: `remodel-gen --scale %s --seed 1` for the side-by-side steps and `--scale %s` for the in-place "
       "backfill (dump directories); servers: FerretDB 1.x (SQLite backend) and mongo-java-server (in memory), each "
       "started empty in a temporary directory (`tests/peers/server.sh`). The scales are small because both servers' "
       "costs grow with the collection's size for each write (see below); larger ones (`SCALE=N INPLACE_SCALE=N`) "
       "take hours on FerretDB" % (scale, iscale),
       "- method: wall seconds of each command. mongorestore (%s, default options, `--noIndexRestore`) restores exactly "
       "the namespaces the step reads; its docs/s is documents restored per second. Then each `remodel online run` "
       "starts with fresh state (its own plan name) and its side-by-side targets are dropped after it; the join's index "
       "is built before, untimed. docs/s is documents read from the driving collection (summed over the step's passes: "
       "embed reads the parents, then the children for the orphans, so it reads every document of both collections "
       "once as a driving range) per wall second; \"vs mongorestore\" is that rate over mongorestore's. The in-place "
       "backfill fills a new field pair in every run, so every run changes every document." % mrversion,
       "", table, "",
       "mongorestore, the reference:", "", "\n".join(m), "",
       "At batch size 1000, a `--dry-run` of the same step (reads the ranges and their partners and computes, writes "
       "nothing) and the CPU seconds of each side:", "", "\n".join(w), ""]
open(out, "w").write(head.rstrip("\n") + "\n" + "\n".join(sec) + old_notes.rstrip("\n") + "\n")
print("wrote the Online mode section of " + out, file=sys.stderr)
PYEOF
exit 0
