#!/usr/bin/env bash
# The cut-over window and its phases (issue 49), measured (make
# bench-online runs it after scripts/bench_online.sh). A benchmark, never
# a test: it reports, it never fails the build.
#   Usage: scripts/bench_cutover.sh [BUILD_DIR]
#
# On each test server started with its change log (FerretDB: oplog;
# mongo-java-server: change streams), at each scale of remodel-gen's crm
# (people, tasks), the documented flow of the embed plan: `run`, W
# application writes (half move a task to another owner, half retitle
# one), `finalize` without flags (the prepare, with the writes running:
# a sync, a sample verified, the renames probed, the window's estimate),
# W more writes, then `finalize --writes-stopped`. Its window is the one
# its closing line says; its phases are timed from the lines it prints as
# it goes (each stamped as it arrives):
#   before  the start to the drain: the lease, the plan's record, the checks
#   drain   the sync of the writes since the prepare ("drained ... in")
#   mark    the change log's point rollback starts from, recorded
#   switch  the renames, each with its journal entry (N renames)
#   confirm the change log read from the drain's point: nothing slipped in
#   rest    to the closing line: the key map and the journal dropped
# REMODEL_ONLINE_TRACE=1 in the environment shows every command of them.
# Writes the rows to BUILD/bench/cutover.md and between the "cutover"
# markers of BENCHMARKS.md (scripts/bench/section.py).
#   CUTOVER_RUNS     SERVER:SCALES each (default "java:3,30 ferretdb:3,30";
#                    FerretDB 1.x applies about 20 updates a second)
#   CUTOVER_WRITES=W the writes before the prepare and again before the
#                    window (default 100)
#   CUTOVER_MAX_WINDOW=D finalize's --max-window (default 0: no bound, so
#                    that every window is measured whole; FerretDB's is
#                    over the 10 s default at scale 3 already). A window
#                    finalize refuses is a row too, "refused"
#   BENCH_OUT=F      the report (default BENCHMARKS.md; "-": BUILD only)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
RUNS=${CUTOVER_RUNS:-java:3,30 ferretdb:3,30}
W=${CUTOVER_WRITES:-100}
MAXW=${CUTOVER_MAX_WINDOW:-0}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
log() { printf 'bench-cutover: %s\n' "$*" >&2; }

[ -x "$R" ] && [ -x "$GEN" ] && [ -x "$BUILD/remodel-online" ] ||
    { log "build $R, $GEN and remodel-online first (make all)"; exit 0; }
[ -f "$ROOT/tests/peers/env.sh" ] && . "$ROOT/tests/peers/env.sh"
[ -x "${MONGORESTORE:-}" ] || { log "mongorestore missing (tests/peers/install.sh)"; exit 0; }
python3 -c 'import pymongo' 2>/dev/null || { log "pymongo is needed"; exit 0; }
SERVER=$ROOT/tests/peers/server.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/remodel-bench-cutover.XXXXXX")
trap '"$SERVER" stop "$T/srv" >/dev/null 2>&1; rm -rf "$T"' EXIT
trap 'log interrupted; exit 0' INT TERM
ROWS=$T/rows
: >"$ROWS"

since() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$EPOCHREALTIME"; }
# writes N SEED: N writes to crm.tasks, half moving a task, half retitling one.
writes() {
    python3 - "$uri" "$1" "$2" <<'PY'
import sys, random, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
n, rnd = int(sys.argv[2]), random.Random(int(sys.argv[3]))
people = [d["_id"] for d in c.crm.people.find({}, {"_id": 1})]
tasks = [d["_id"] for d in c.crm.tasks.find({}, {"_id": 1})]
ops = []
for i in range(n):
    t = rnd.choice(tasks)
    if i % 2:
        ops.append(pymongo.UpdateOne({"_id": t}, {"$set": {"owner": rnd.choice(people)}}))
    else:
        ops.append(pymongo.UpdateOne({"_id": t}, {"$set": {"title": "bench %d" % i}}))
# One update a statement, as an application makes them; sent 50 a command.
for i in range(0, len(ops), 50):
    c.crm.tasks.bulk_write(ops[i:i + 50], ordered=False)
PY
}
# stamp: each line of standard input after the wall clock it arrived at.
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }

cat >"$T/embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}}}]}
EOF

for spec in $RUNS; do
    IFS=: read -r kind scales <<<"$spec"
    for sc in ${scales//,/ }; do
        d=$CACHE/online-scale-$sc/dump
        if [ ! -f "$d/prelude.json" ]; then
            mkdir -p "$CACHE/online-scale-$sc"
            "$GEN" --out "$d" --scale "$sc" --seed 1 --force >/dev/null || { log "generation failed"; exit 0; }
        fi
        "$SERVER" stop "$T/srv" >/dev/null 2>&1
        rm -rf "$T/srv"
        uri=$(PEERS_OPLOG_BYTES=1073741824 "$SERVER" start "$T/srv" "$kind" changelog) ||
            { log "$kind: no server"; continue 2; }
        "$MONGORESTORE" --uri "$uri" --dir "$d" --nsInclude 'crm.people' --nsInclude 'crm.tasks' \
            --noIndexRestore --quiet
        docs=$(python3 -c 'import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
print(c.crm.people.estimated_document_count() + c.crm.tasks.estimated_document_count())' "$uri")
        log "$kind scale $sc ($docs documents), $W writes before the prepare and the window"
        "$R" online run "$T/embed.json" --uri "$uri" --create-indexes -q || { log "run failed"; continue; }
        writes "$W" 1
        t0=$EPOCHREALTIME
        "$R" online finalize "$T/embed.json" --uri "$uri" --max-window "$MAXW" 2>"$T/prep.err" ||
            { log "prepare failed: $(tail -n 1 "$T/prep.err")"; continue; }
        prep_s=$(since "$t0")
        est=$(sed -n 's/.*window, estimated: about \([0-9.]*\) s.*/\1/p' "$T/prep.err")
        writes "$W" 2
        t0=$EPOCHREALTIME
        { "$R" online finalize "$T/embed.json" --uri "$uri" --writes-stopped --max-window "$MAXW" \
            2>&1 >/dev/null; echo "exit $?"; } | stamp >"$T/fin.log"
        # 3: stopped before the switch, past --max-window (a row, "refused").
        grep -q ' exit [03]$' "$T/fin.log" || { log "finalize failed: $(tail -n 2 "$T/fin.log" | head -n 1)"; continue; }
        [ -n "${REMODEL_ONLINE_TRACE:-}" ] && cp "$T/fin.log" "$BUILD/bench-cutover-$kind-$sc.log"
        python3 - "$T/fin.log" "$t0" "$kind" "$sc" "$docs" "$W" "$prep_s" "${est:-?}" >>"$ROWS" <<'PY' ||
import re, sys
log, t0, kind, sc, docs, w, prep, est = sys.argv[1:9]
t0 = float(t0)
at = {}          # the first (or, for renames, the last) time each mark was said
renames = 0
drain = window = "?"
for line in open(log):
    ts, _, text = line.rstrip("\n").partition(" ")
    ts = float(ts)
    if text.startswith("remodel: renamed "):
        renames += 1
        at["switch"] = ts
    for mark, pat in (("before", "remodel: finalize: with the writes "),
                      ("before", "remodel: finalize: the window, estimated by the prepare"),
                      ("drain", "remodel: finalize: drained the change log"),
                      ("mark", "remodel: finalize: the change log's point before the switch"),
                      ("confirm", "remodel: finalize: the change log shows no write"),
                      ("rest", "remodel: finalize: the writes were stopped for ")):
        if text.startswith(pat):
            at[mark] = ts
    m = re.match(r"remodel: sync: change log: (\d+) events? .*?(\d+) read", text)
    if m:
        drain = "%s events, %s read" % m.groups()
    m = re.match(r"remodel: finalize: the writes were stopped for ([0-9.]+) s", text)
    if m:
        window = m.group(1)
    if text == "exit 3":
        window = "refused after %.1f" % (ts - t0)
# Each phase runs from the previous mark to its own; one not said counts 0.
prev, cols = t0, []
for mark in ("before", "drain", "mark", "switch", "confirm", "rest"):
    t = at.get(mark, prev)
    cols.append("%.2f" % (t - prev))
    prev = t
print("\t".join([kind, sc, docs, w, prep, est, window] + cols + [str(renames), drain]))
PY
            log "the window's lines not found: $(tail -n 3 "$T/fin.log")"
        tail -n 1 "$ROWS" >&2
    done
done
"$SERVER" stop "$T/srv" >/dev/null 2>&1

python3 - "$ROWS" "$(uptime | sed 's/.*load average: //')" >"$T/section" <<'PY'
import sys, time
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("(%s, load average %s at the end; `make bench-online`, one run a row; seconds)\n"
      % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), sys.argv[2]))
print("| server | scale | documents | prepare s | estimate s | window s | before | drain | mark "
      "| switch (renames) | confirm | rest | the drain read | command |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
for kind, sc, docs, w, prep, est, win, b, dr, mk, sw, cf, rest, n, read in rows:
    print("| %s | %s | %s | %s | %s | **%s** | %s | %s | %s | %s (%s) | %s | %s | %s | "
          "`CUTOVER_RUNS=%s:%s scripts/bench_cutover.sh` |"
          % (kind, sc, docs, prep, est, win, b, dr, mk, sw, n, cf, rest, read, kind, sc))
PY
cat "$T/section"
python3 "$ROOT/scripts/bench/section.py" cutover "$T/section" "$OUT" "$BUILD"
exit 0
