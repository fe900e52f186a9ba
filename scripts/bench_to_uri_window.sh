#!/usr/bin/env bash
# finalize --to-uri's window (issue 65), measured (make bench-to-uri-window;
# make bench-online runs it after scripts/bench_to_uri.sh). A benchmark,
# never a test: it reports, it never fails the build.
#   Usage: scripts/bench_to_uri_window.sh [BUILD_DIR]
#
# For each direction, a source started with its change log (FerretDB:
# oplog; mongo-java-server: change streams) holding remodel-gen's crm
# (people, tasks; tasks.owner indexed, as the embed needs) and blog.posts,
# which the plan does not write (the run copies it), and an empty
# destination of the other vendor; at each scale, the documented flow of
# the embed (tasks into people, as scripts/bench_to_uri.sh's plan):
# `run --to-uri`, W application writes (to crm.tasks and blog.posts:
# see writes below),
# `finalize --to-uri` (the prepare, the writes running: its estimate by
# phase), W more writes, then `finalize --to-uri --writes-stopped`. Each
# row: the prepare's estimate and its phases, the estimate finalize held
# against --max-window, the window its closing line says ("the writes
# were stopped for N"), its wall time, and how the copied namespaces were
# brought to the source's state (events of the change log, or copied
# whole). The destination's people and posts are counted against the
# source's (a row says where they differ).
# Writes the rows to BUILD/bench/to-uri-window.md and between the
# "to-uri-window" markers of BENCHMARKS.md (scripts/bench/section.py).
#   WINDOW_DIRS      the directions (default "ferretdb:java java:ferretdb")
#   WINDOW_SCALES    remodel-gen --scale of each row (default "3 30")
#   WINDOW_WRITES=W  the writes before the prepare and again before the
#                    window (default 100)
#   WINDOW_MAX=D     finalize's --max-window (default 0: no bound, so that
#                    every window is measured whole); a window finalize
#                    refuses is a row too, "refused"
#   BENCH_CACHE=D    where the generated dumps are cached (as bench_cutover.sh)
#   BENCH_OUT=F      the report (default BENCHMARKS.md; "-": BUILD only)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
DIRS=${WINDOW_DIRS:-ferretdb:java java:ferretdb}
SCALES=${WINDOW_SCALES:-3 30}
W=${WINDOW_WRITES:-100}
MAXW=${WINDOW_MAX:-0}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
TIME=/usr/bin/time
SERVERS="src dst"
BENCH_NAME=bench-to-uri-window
. "$ROOT/scripts/bench_online_lib.sh"
LOAD0=$(uptime | sed 's/.*load average: //')

P=$T/embed.json
cat >"$P" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner",
             "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}}]}
EOF

pyq() { python3 -c "import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
$2" "$1" "${@:3}"; }
# writes N SEED: N writes to the source, a quarter each: a task moved to
# another owner, a task retitled (the embed's result changes), a blog post
# updated, a blog post inserted (blog.posts is copied by the run, the plan
# does not write it); one update a statement, as an application makes
# them, sent 50 a command.
writes() {
    pyq "$SRC" 'import random
n, rnd = int(sys.argv[2]), random.Random(int(sys.argv[3]))
people = [d["_id"] for d in c.crm.people.find({}, {"_id": 1})]
tasks = [d["_id"] for d in c.crm.tasks.find({}, {"_id": 1})]
posts = [d["_id"] for d in c.blog.posts.find({}, {"_id": 1})]
ops = {"tasks": [], "posts": []}
for i in range(n):
    k = i % 4
    if k == 0:
        ops["tasks"].append(pymongo.UpdateOne({"_id": rnd.choice(tasks)}, {"$set": {"owner": rnd.choice(people)}}))
    elif k == 1:
        ops["tasks"].append(pymongo.UpdateOne({"_id": rnd.choice(tasks)}, {"$set": {"title": "bench %d" % i}}))
    elif k == 2:
        ops["posts"].append(pymongo.UpdateOne({"_id": rnd.choice(posts)}, {"$inc": {"views": 1}}))
    else:
        ops["posts"].append(pymongo.InsertOne({"title": "bench %d" % i, "views": 0}))
for coll, db in (("tasks", c.crm), ("posts", c.blog)):
    for i in range(0, len(ops[coll]), 50):
        db[coll].bulk_write(ops[coll][i:i + 50], ordered=False)' "$1" "$2"
}
# two CMD ARGS...: remodel online CMD of the plan from SRC to DST, its
# standard error in $T/CMD.err, its status in $rc, its wall seconds in $wall.
two() {
    local t0=$EPOCHREALTIME
    "$R" online "$1" "$P" --uri "$SRC" --to-uri "$DST" "${@:2}" >/dev/null 2>"$T/$1.err"
    rc=$?
    wall=$(sub "$EPOCHREALTIME" "$t0")
}

ROWS=$T/rows
: >"$ROWS"
for dir in $DIRS; do
    from=${dir%%:*} to=${dir##*:}
    for sc in $SCALES; do
        d=$CACHE/online-scale-$sc/dump
        if [ ! -f "$d/prelude.json" ]; then
            mkdir -p "$CACHE/online-scale-$sc"
            "$GEN" --out "$d" --scale "$sc" --seed 1 --force >/dev/null || { log "generation failed"; exit 0; }
        fi
        for s in src dst; do "$SERVER" stop "$T/$s" >/dev/null 2>&1; rm -rf "${T:?}/$s"; done
        SRC=$(REMODEL_SERVER_OWNER=$$ PEERS_OPLOG_BYTES=1073741824 "$SERVER" start "$T/src" "$from" changelog 2>"$T/err") ||
            { log "$dir: the source did not start: $(tail -n2 "$T/err")"; continue 2; }
        DST=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$T/dst" "$to" 2>"$T/err") ||
            { log "$dir: the destination did not start: $(tail -n2 "$T/err")"; continue 2; }
        "$MONGORESTORE" --uri "$SRC" --dir "$d" --nsInclude 'crm.*' --nsInclude 'blog.posts' \
            --noIndexRestore --quiet 2>"$T/err" ||
            { log "$dir: mongorestore of the source failed: $(tail -n2 "$T/err")"; continue; }
        pyq "$SRC" 'c.crm.tasks.create_index("owner")'
        docs=$(pyq "$SRC" 'print(sum(c[d][n].estimated_document_count() for d, n in
    (("crm", "people"), ("crm", "tasks"), ("blog", "posts"))))')
        log "$dir scale $sc ($docs documents), $W writes before the prepare and again before the window"
        two run -q
        [ "$rc" == 0 ] || { log "$dir: run failed: $(tail -n2 "$T/run.err")"; continue; }
        run_s=$wall
        writes "$W" 1
        two finalize --max-window "$MAXW"
        [ "$rc" == 0 ] || { log "$dir: the prepare failed: $(tail -n2 "$T/finalize.err")"; continue; }
        mv "$T/finalize.err" "$T/prep.err"
        prep_s=$wall
        writes "$W" 2
        two finalize --writes-stopped --max-window "$MAXW"
        # 3: stopped before the commit, past --max-window (a row, "refused").
        [ "$rc" == 0 ] || [ "$rc" == 3 ] || { log "$dir: finalize failed: $(tail -n2 "$T/finalize.err")"; continue; }
        [ -n "${WINDOW_KEEP_LOGS:-}" ] && mkdir -p "$BUILD/bench" &&
            for f in prep finalize; do cp "$T/$f.err" "$BUILD/bench/to-uri-window-${dir/:/-}-$sc-$f.log"; done
        check=ok
        if [ "$rc" == 0 ]; then
            # What the commit must hold: the embed's people and the copied
            # blog.posts, as many as on the source (the writes inserted posts).
            count='print(c.crm.people.count_documents({}), c.blog.posts.count_documents({}))'
            a=$(pyq "$SRC" "$count") b=$(pyq "$DST" "$count")
            [ "$a" == "$b" ] || check="the destination holds $b people and posts, the source $a"
        fi
        python3 - "$T/prep.err" "$T/finalize.err" "$rc" "$dir" "$sc" "$docs" "$run_s" "$prep_s" "$wall" "$check" \
            >>"$ROWS" <<'PY' || log "$dir: finalize's lines not found: $(tail -n3 "$T/finalize.err")"
import re, sys
prep, fin, rc, d, sc, docs, run_s, prep_s, fin_s, check = sys.argv[1:11]
def secs(s):
    v, unit = s.split()
    return float(v) / (1000 if unit == "ms" else 1)
PHASES = (r"about (\S+ m?s): the drain (\S+ m?s), the verify (\S+ m?s) \([^)]*\), the copied namespaces "
          r"brought to the source's state (\S+ m?s), the confirmation (\S+ m?s), the switch of the pair's "
          r"record (\S+ m?s)")
def find(path, pat):
    for line in open(path):
        m = re.search(pat, line)
        if m:
            return m
    return None
m = find(prep, "the cut-over's window, estimated: " + PHASES)
if not m:
    sys.exit(1)
est = ["%.2f" % secs(g) for g in m.groups()]
held = find(fin, "the window, estimated by the prepare: " + PHASES)
held = "%.2f" % secs(held.group(1)) if held else "none"
copies = find(fin, r"finalize: the copied namespaces: (.*)")
copies = copies.group(1) if copies else "-"
m = re.match(r"(\d+) event\(s\) of the source's change log since the last copy, (\d+) document\(s\) rewritten(.*)", copies)
if m:
    copies = "%s events, %s rewritten%s" % (m.group(1), m.group(2), "; new ones copied whole" if m.group(3) else "")
m = find(fin, r"committed on .*?, (\d+) namespace\(s\) copied whole")
whole = m.group(1) if m else "-"
m = find(fin, r"the writes were stopped for (\S+ m?s)")
window = "%.2f" % secs(m.group(1)) if m else ("refused" if rc == "3" else "?")
print("\t".join([d, sc, docs, run_s, prep_s] + est + [held, window, fin_s, copies, whole, check]))
PY
        tail -n 1 "$ROWS" >&2
    done
done
for s in src dst; do "$SERVER" stop "$T/$s" >/dev/null 2>&1; done

python3 - "$ROWS" "$W" "$MAXW" "$LOAD0" "$(uptime | sed 's/.*load average: //')" >"$T/section" <<'PY'
import sys, time
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
w, maxw, load0, load1 = sys.argv[2:6]
names = {"ferretdb": "FerretDB", "java": "mongo-java-server"}
print("(%s, load average %s at the start, %s at the end; %s writes before the prepare and again before "
      "the window, --max-window %s; one run a row, seconds; `make bench-to-uri-window`)\n"
      % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load0, load1, w, maxw))
print("| source → destination | scale | documents | run s | prepare s | estimate: total (drain, verify, "
      "copies, confirm, record) | window s | finalize s | the copied namespaces at the cut-over | "
      "copied whole | command |")
print("|---|---:|---:|---:|---:|---|---:|---:|---|---:|---|")
for r in rows:
    d, sc, docs, run_s, prep_s = r[:5]
    est, held, window, fin_s, copies, whole, check = r[5:11], r[11], r[12], r[13], r[14], r[15], r[16]
    a, b = d.split(":")
    if held != est[0]:
        copies += "; finalize held %s" % held
    if check != "ok":
        copies += "; **%s**" % check
    print("| %s → %s | %s | %s | %s | %s | %s (%s) | **%s** | %s | %s | %s | `WINDOW_DIRS=%s WINDOW_SCALES=%s "
          "scripts/bench_to_uri_window.sh` |" % (names.get(a, a), names.get(b, b), sc, docs, run_s, prep_s,
                                                 est[0], ", ".join(est[1:]), window, fin_s, copies, whole, d, sc))
PY
cat "$T/section"
python3 "$ROOT/scripts/bench/section.py" to-uri-window "$T/section" "$OUT" "$BUILD"
exit 0
