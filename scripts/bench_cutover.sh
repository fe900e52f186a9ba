#!/usr/bin/env bash
# The cut-over with a change log (issue 23), measured (make bench-online
# runs it after scripts/bench_online.sh). A benchmark, never a test: it
# reports, it never fails the build. Usage: scripts/bench_cutover.sh [BUILD_DIR]
#
# On each test server started with its change log (FerretDB: oplog;
# mongo-java-server: change streams), for each scale of remodel-gen's crm
# (people, tasks) and each number N of pending changes: the embed plan run
# side by side, then N application writes (half move a task to another
# owner, half change a task's title), then
#   - `remodel online sync`: its wall seconds and the documents it read;
#   - `verify --sample 1000`: the sample verified ahead of the cut-over
#     (follow verifies one every 10 minutes), its wall seconds;
#   - N more writes, then `finalize --writes-stopped`: its wall seconds,
#     which is the time the writes stay stopped, and the drain part of it
#     (its own line; it verifies no sample, one having been verified),
#     the window as its closing line says it and the documents it read
#     whole for checksums in it;
# and, per server at the smallest scale, `follow` under a writer of W
# writes as fast as one client makes them: the events a second it applied
# (events over the time from the first write until its lag is none).
# It replaces the "## Online cut-over" section of BENCHMARKS.md.
#   CUTOVER_RUNS     what to run, SERVER:SCALES:PENDING each (default
#                    "java:1,10,30:100,10000 ferretdb:1,10,30:100 ferretdb:1:10000":
#                    FerretDB 1.x takes minutes for 10,000 updates at scale
#                    10, each one scanning its collection)
#   BENCH_OUT=F      the report (default BENCHMARKS.md; "-" prints only)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
RUNS=${CUTOVER_RUNS:-java:1,10,30:100,10000 ferretdb:1,10,30:100 ferretdb:1:10000}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
log() { printf 'bench-cutover: %s\n' "$*" >&2; }

[ -x "$R" ] && [ -x "$GEN" ] && [ -x "$BUILD/remodel-online" ] ||
    { log "build $R, $GEN and remodel-online first (make all)"; exit 0; }
[ -f "$ROOT/tests/peers/env.sh" ] && . "$ROOT/tests/peers/env.sh"
[ -x "${MONGORESTORE:-}" ] || { log "mongorestore missing (tests/peers/install.sh)"; exit 0; }
SERVER=$ROOT/tests/peers/server.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/remodel-bench-cutover.XXXXXX")
trap 'for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
ROWS=$T/rows
: >"$ROWS"

now() { date +%s.%N; }
since() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }
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

cat >"$T/embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}}}]}
EOF

followed=" "
for spec in $RUNS; do
    IFS=: read -r kind scales pending <<<"$spec"
    for sc in ${scales//,/ }; do
        d=$CACHE/online-scale-$sc/dump
        if [ ! -f "$d/prelude.json" ]; then
            mkdir -p "$CACHE/online-scale-$sc"
            "$GEN" --out "$d" --scale "$sc" --seed 1 --force >/dev/null || { log "generation failed"; exit 0; }
        fi
        for n in ${pending//,/ }; do
            dir=$T/srv-$kind
            "$SERVER" stop "$dir" >/dev/null 2>&1
            rm -rf "$dir"
            uri=$(PEERS_OPLOG_BYTES=1073741824 "$SERVER" start "$dir" "$kind" changelog) ||
                { log "$kind: no server"; continue 2; }
            "$MONGORESTORE" --uri "$uri" --dir "$d" --nsInclude 'crm.people' --nsInclude 'crm.tasks' \
                --noIndexRestore --quiet
            docs=$(python3 -c 'import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
print(c.crm.people.estimated_document_count() + c.crm.tasks.estimated_document_count())' "$uri")
            log "$kind scale $sc ($docs documents), $n pending"
            t0=$(now)
            "$R" online run "$T/embed.json" --uri "$uri" --create-indexes -q || { log "run failed"; continue; }
            run_s=$(since "$t0")
            writes "$n" 1
            t0=$(now)
            "$R" online sync "$T/embed.json" --uri "$uri" 2>"$T/sync.err"
            sync_s=$(since "$t0")
            sync_read=$(sed -n 's/.*change log: .* \([0-9]*\) read,.*/\1/p' "$T/sync.err")
            # The sample verified ahead, while the application still
            # writes (as follow does every 10 minutes): not in the window.
            t0=$(now)
            "$R" online verify "$T/embed.json" --uri "$uri" --sample 1000 -q ||
                log "verify --sample found differences: finalize verifies its own"
            sample_s=$(since "$t0")
            writes "$n" 2
            t0=$(now)
            "$R" online finalize "$T/embed.json" --uri "$uri" --writes-stopped 2>"$T/fin.err" ||
                { log "finalize failed: $(tail -n 1 "$T/fin.err")"; continue; }
            fin_s=$(since "$t0")
            drain_s=$(sed -n 's/.*drained the change log\( and verified\)\{0,1\} in \([0-9.]*\) s.*/\2/p' "$T/fin.err")
            # The window as finalize says it, and what it read whole in it
            # for checksums (a remodel before issue 34's says no count).
            win_s=$(sed -n 's/.*the writes were stopped for \([0-9.]*\) s .*/\1/p' "$T/fin.err")
            whole=$(sed -n 's/.*; \([0-9]*\) documents read whole for checksums in it)$/\1/p' "$T/fin.err")
            echo "$kind $sc $docs $n $run_s $sync_s ${sync_read:-?} $sample_s $fin_s ${drain_s:-?} ${win_s:-?} ${whole:-?}" >>"$ROWS"
        done
    done
    # follow under a writer, at the smallest scale, once a server
    [[ $followed == *" $kind "* ]] && continue
    followed="$followed$kind "
    sc=${scales%%,*}
    dir=$T/srv-$kind
    "$SERVER" stop "$dir" >/dev/null 2>&1
    rm -rf "$dir"
    uri=$(PEERS_OPLOG_BYTES=1073741824 "$SERVER" start "$dir" "$kind" changelog) || continue
    "$MONGORESTORE" --uri "$uri" --dir "$CACHE/online-scale-$sc/dump" --nsInclude 'crm.people' \
        --nsInclude 'crm.tasks' --noIndexRestore --quiet
    "$R" online run "$T/embed.json" --uri "$uri" --create-indexes -q
    "$R" online follow "$T/embed.json" --uri "$uri" --pause 100ms -q &
    fp=$!
    t0=$(now)
    writes 5000 3
    write_s=$(since "$t0")
    for i in $(seq 1 600); do
        "$R" online status "$T/embed.json" --uri "$uri" 2>/dev/null | grep -q '^lag: none' && break
        sleep 0.2
    done
    caught_s=$(since "$t0")
    kill -TERM $fp
    wait $fp
    echo "follow $kind $sc 5000 $write_s $caught_s" >>"$ROWS"
    "$SERVER" stop "$dir" >/dev/null 2>&1
done

python3 - "$ROWS" "$OUT" <<'PYEOF'
import sys, time, os
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
out = sys.argv[2]
t = ["| server | scale | documents | pending changes | run s | sync s | sync read | sample verified ahead s | finalize s (writes stopped) | of which drain s | window s (finalize's line) | read whole in it |",
     "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
f = ["| server | scale | writes | writer s | caught up after s | events/s applied |", "|---|---:|---:|---:|---:|---:|"]
for r in rows:
    if r[0] == "follow":
        f.append("| %s | %s | %s | %s | %s | %.0f |" % (r[1], r[2], r[3], r[4], r[5], int(r[3]) / float(r[5])))
    else:
        t.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % tuple(r))
print("\n".join(t)); print(); print("\n".join(f))
if out == "-":
    sys.exit(0)
doc = open(out).read() if os.path.exists(out) else "# Benchmarks\n"
head, sep, rest = doc.partition("\n## Online cut-over\n")
tail = ("\n## " + rest.split("\n## ", 1)[1]) if sep and "\n## " in rest else ""
# A later notes paragraph is kept, as bench_online.sh keeps its own.
section = rest.split("\n## ", 1)[0] if sep else ""
i = section.find("\n### Where the time goes\n")
notes = section[i:].rstrip("\n") + "\n" if i >= 0 else ""
sec = ["", "## Online cut-over", "",
       "Generated by `scripts/bench_cutover.sh` (`make bench-online`); one run.", "",
       "- date: " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
       "- the embed plan (`crm.tasks` into `crm.people`) on `remodel-gen --scale S --seed 1`, each server started "
       "with its change log (FerretDB's oplog, mongo-java-server's change streams), fresh for each row. After the "
       "run, N application writes (half move a task to another owner, so two people change; half retitle one), then "
       "`sync` (its wall seconds; \"sync read\": the documents it read, from its `change log:` line), then "
       "`verify --sample 1000`, the sample verified ahead (as `follow` does every 10 minutes), while the application "
       "may still write; then N more writes and `finalize --writes-stopped`, whose wall seconds are the time the "
       "writes stay stopped; then its drain (no sample verified: one was, ahead), the rest being the "
       "lease, the renames and the confirmation from the log; the last two: the window as `finalize`'s closing line "
       "says it, and the documents it read whole for checksums in it.",
       "", "\n".join(t), "",
       "`follow` under one client writing 5,000 updates as fast as it can (scale %s): the time from the first write "
       "until `status` shows no lag, and the events a second that makes:" % (rows[0][1] if rows else "?"),
       "", "\n".join(f), ""]
open(out, "w").write(head.rstrip("\n") + "\n" + "\n".join(sec) + notes + tail)
print("wrote the Online cut-over section of " + out, file=sys.stderr)
PYEOF
exit 0
