#!/usr/bin/env bash
# The switch's kill matrix (issue 21): `remodel online finalize` and
# `rollback` killed with SIGKILL at each rename (online_switch_rename) and
# at each state write of the switch (online_switch_note), by
# tests/peers/killat.sh (gdb), on FerretDB and mongo-java-server, with the
# sample's crm and two plans: dumps/plans/embed-tasks.json (two namespaces
# switched, four renames) and a two-step plan (crm.people changed by both
# steps: an intermediate result dropped once finalized). After each kill:
#  (a) every collection is where the plan's record says (its `switch`
#      journal, `finalized`): each namespace before, half-way through or
#      after its move, in the plan's order, the journal's count of renames
#      in place agreeing (one behind at most, the kill having come between
#      a rename and its note), no collection missing or extra, and every
#      document there: the originals byte for byte as restored, the results
#      byte for byte as `remodel run` makes them offline; `status` shows an
#      interrupted switch with the commands that finish and undo it;
#  (b) finalize again: exit 0, each rename done once (the killed run's and
#      this one's together: four), crm.people and crm.tasks remodel run's
#      result byte for byte, the originals kept under their backup names;
#  (c) rollback: exit 0, the originals back byte for byte; rollback again:
#      the results dropped, only people and tasks left, the plan forgotten.
# And the reverse: rollback (after a finalize) killed at each rename and
# each note, then finalize completes forward; killed again, rollback
# completes back. A killed finalize undone by rollback at once, and one
# killed in its checks (its probe collection renamed, not yet dropped).
# FerretDB (which keeps its data) stopped at a rename or note of finalize
# and started again 3 s later: finalize completes by itself or when run
# again. In place: rollback --in-place killed between restoring a document
# and deleting its backup (mongoc_collection_delete_one), and before a
# restore (mongoc_collection_replace_one): rollback again, exit 0, every
# document the original byte for byte (issue 21, item 9).
#
# Every kill point runs in-process on the in-memory server, in make check
# (build/tests/remodel-fault-matrix, tests/mem/matrix/matrix_killed.c:
# each rename and note is one of the server calls it kills at, the state
# judged as (a) here, then each way out). The default run here is a smoke
# on the real servers: on FerretDB with the first plan, finalize killed at
# a rename, rollback at a note then completed forward, finalize killed
# twice, the server stopped at one rename; on mongo-java-server a few
# points with the second; REMODEL_SWITCH_MATRIX=full (make
# online-switch-matrix) runs every point of both plans on both servers.
# REMODEL_SWITCH_ONLY='finalize_point embed online_switch_note 3' runs
# those commands alone (on REMODEL_SWITCH_KIND, default ferretdb), to
# replay one point.
#   REMODEL=build/remodel bash tests/cli/test_online_switch.sh
. "$(dirname "$0")/lib.sh"
# Not ONLINE_SHARE=1 (lib.sh, online_take): it stops its FerretDB mid-run and
# starts it again on its port.
use_peers "peers" || exit 0
if ! command -v gdb >/dev/null 2>&1; then
    fail "gdb" "not installed (scripts/install-deps.sh installs it)"
    exit 0
fi
S=$ROOT/dumps/sample
KILLAT=$ROOT/tests/peers/killat.sh
ONLINE=$(dirname "$REMODEL")/remodel-online
# remodel sets this before it execs remodel-online; run directly (and
# killed), remodel-online would leave libmongoc's /dev/shm/mongoc-PID behind
# (test_online_steps checks that a killed run leaves none).
export MONGOC_DISABLE_SHM=1
FULL=0
[ "${REMODEL_SWITCH_MATRIX:-}" == full ] && FULL=1
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms
t_start=$SECONDS t_lap=$SECONDS
# lap WHAT: the seconds since the last lap, on standard error.
lap() { echo "# $1: $((SECONDS - t_lap)) s" >&2; t_lap=$SECONDS; }

mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
cat >"$T/plans/twostep.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "tasks", "project": {"owner": 0}, "sort": {"due_date": 1}}},
  {"set": {"in": "crm.people", "fields": {"design": 2}}}
]}
EOF
cat >"$T/plans/fields.json" <<'EOF'
{"remodel": 1, "steps": [
  {"rename": {"in": "crm.people", "fields": {"phone": "phoneNumber"}}},
  {"set": {"in": "crm.people", "fields": {"tier": "basic", "address.country": "IS"}}},
  {"version": {"in": "crm.people", "value": 2}},
  {"unset": {"in": "crm.tasks", "fields": ["done"]}}
]}
EOF
# A shorter one for FerretDB, whose writes one by one are slow (each
# restore is a replace and a delete): two steps on crm.people's 98.
cat >"$T/plans/people.json" <<'EOF'
{"remodel": 1, "steps": [
  {"rename": {"in": "crm.people", "fields": {"phone": "phoneNumber"}}},
  {"set": {"in": "crm.people", "fields": {"tier": "basic"}}}
]}
EOF
for p in embed twostep; do
    "$REMODEL" run -q "$T/plans/$p.json" --from "$S" --to "$T/offline-$p.archive" --nsInclude 'crm.*'
done
# Each plan's results: the namespace's collection = its last step's result;
# the intermediate results a later step replaced.
declare -A MOVES DROPS
MOVES[embed]="tasks=1,people=1" DROPS[embed]=""
MOVES[twostep]="tasks=1,people=2" DROPS[twostep]="people=1"

# The checker: the collections of crm and the plan's record against what
# the state says, and every document against the originals and the offline
# result.
cat >"$T/check.py" <<'PYEOF'
"""check.py URI PLANID ORIG OFFLINE MOVES DROPS EXPECT PHASE

EXPECT: any (after a kill: any state the switch may leave), before
(originals live, results beside, no journal, not finalized), after (results
live, originals under backup names, finalized, no journal), gone (plan
forgotten, only the originals, nothing else in crm). PHASE: finalize (the
plan ran and was never finalized: its intermediates must be there until it
is) or rollback (finalized once: they are gone). Prints "ok: SUMMARY" or
the problems (exit 1)."""
import os
import sys
import bson
import pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
import rmlib

uri, pid, orig_path, off_path, moves_s, drops_s, expect, phase = sys.argv[1:9]
client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
raw = CodecOptions(document_class=RawBSONDocument)
crm = client.crm
bad = []


# ANY_ORDER=1: documents compared up to the order of their top-level
# fields (mongo-java-server's replace keeps the stored document's order,
# so an in-place restore there cannot give the original's bytes; MongoDB
# stores a replacement as given).
any_order = os.environ.get("ANY_ORDER") == "1"
son = CodecOptions(document_class=bson.SON)


def key(raw):
    if not any_order:
        return raw
    d = bson.decode(raw, codec_options=son)
    return bson.encode(bson.SON(sorted(d.items())), codec_options=son)


def by_id(docs):
    return {repr(bson.decode(bytes(d))["_id"]): key(bytes(d)) for d in docs}


orig = {ns: by_id(d) for ns, d in rmlib.read_archive(orig_path)[0].items()}
off = {ns: by_id(d) for ns, d in rmlib.read_archive(off_path)[0].items()}


def content(coll):
    return {repr(bson.decode(d.raw)["_id"]): key(d.raw)
            for d in crm.get_collection(coll, codec_options=raw).find()}


def same(coll, want, what):
    got = content(coll)
    if got != want:
        only_w = [k for k in want if k not in got]
        only_g = [k for k in got if k not in want]
        differ = [k for k in want if k in got and got[k] != want[k]]
        bad.append("crm.%s is not %s: %d documents, %d wanted; missing %d %s; extra %d %s; "
                   "differ %d %s" % (coll, what, len(got), len(want), len(only_w), only_w[:2],
                                     len(only_g), only_g[:2], len(differ), differ[:2]))
    return len(got)


colls = set(n for n in crm.list_collection_names() if not n.startswith("system."))
rec = client.remodel.plans.find_one({"_id": pid})
# finalize's probes (a collection named like a backup, renamed, dropped):
# one may be left by a finalize killed before its journal, never after a
# command that ran to its end.
probes = set(n for n in colls if n.endswith("_remodel_%s_probe" % pid) or
             n.endswith("_remodel_%s_probe2" % pid))
if expect == "any":
    colls -= probes
expected = {}
for m in moves_s.split(","):
    c, step = m.split("=")
    expected[c] = {"ns": "crm." + c, "db": "crm", "coll": c,
                   "result": "%s_remodel_%s_%s" % (c, pid, step),
                   "backup": "%s_remodel_%s_backup" % (c, pid), "original": True}
drops = ["%s_remodel_%s_%s" % tuple([d.split("=")[0], pid, d.split("=")[1]])
         for d in drops_s.split(",") if d]

if expect == "gone":
    if rec is not None:
        bad.append("the plan's record is still there: %r" % rec)
    if colls != set(expected):
        bad.append("crm holds %s, not only %s" % (sorted(colls), sorted(expected)))
    n = {c: same(c, orig["crm." + c], "the original") for c in expected if c in colls}
    print("bad: " + "\n  ".join(bad) if bad else "ok: gone, %s" % n)
    sys.stdout.flush()
    os._exit(1 if bad else 0)  # not waiting for pymongo's threads

if rec is None:
    print("bad: no record of plan %s in remodel.plans" % pid)
    sys.stdout.flush()
    os._exit(1)
finalized = bool(rec.get("finalized"))
sw = rec.get("switch")
order = list(expected)
if sw is not None:
    jm = sw.get("moves", [])
    order = [m.get("coll") for m in jm]
    if sorted(order) != sorted(expected) or any(
            {k: m.get(k) for k in expected[m.get("coll")]} != expected[m.get("coll")]
            for m in jm if m.get("coll") in expected):
        bad.append("the journal's moves are %r, not %r" % (jm, list(expected.values())))
    jd = sorted(d.get("coll") for d in sw.get("drops", []))
    # A rollback journaled after a finished finalize has nothing to drop.
    if jd != sorted(drops) and not (jd == [] and sw.get("direction") == "rollback"):
        bad.append("the journal drops %s, not %s" % (jd, sorted(drops)))
    if sw.get("renames") != 2 * len(expected):
        bad.append("the journal counts %r renames, not %d" % (sw.get("renames"), 2 * len(expected)))
    if sw.get("direction") not in ("finalize", "rollback"):
        bad.append("the journal's direction is %r" % sw.get("direction"))

# Each namespace's move as the server shows it (online_switch.c, observe).
at = {}
for c in order:
    if c not in expected:
        continue
    e = expected[c]
    hc, hr, hb = c in colls, e["result"] in colls, e["backup"] in colls
    if hr and not hb and hc:
        at[c] = "before"
    elif hr and hb and not hc:
        at[c] = "half"
    elif not hr and hc and hb:
        at[c] = "after"
    else:
        bad.append("crm.%s is in no state of the switch: %s %s, %s %s, %s %s" % (
            c, c, "exists" if hc else "missing", e["result"], "exists" if hr else "missing",
            e["backup"], "exists" if hb else "missing"))
done = {"before": 0, "half": 1, "after": 2}
observed = sum(done[a] for a in at.values())
# In the plan's order (the journal's): the moves before the one under way
# are switched, those after it are not, whichever the direction.
ranks = [done[at[c]] for c in order if c in at]
if any(a < b for a, b in zip(ranks, ranks[1:])) or ranks.count(1) > 1:
    bad.append("the moves are not switched in order: %s" % [(c, at.get(c)) for c in order])
if sw is not None:
    renamed = sw.get("renamed")
    lag = observed - renamed if sw.get("direction") == "finalize" else renamed - observed
    if lag not in (0, 1):
        bad.append("the journal (%s) says %r renames in place, the server shows %d" % (
            sw.get("direction"), renamed, observed))
elif finalized and set(at.values()) != {"after"}:
    bad.append("finalized, no switch journaled, but the moves are %s" % at)
elif not finalized and set(at.values()) != {"before"}:
    bad.append("not finalized, no switch journaled, but the moves are %s" % at)
if finalized and sw is not None and set(at.values()) != {"after"} and sw.get("direction") == "finalize":
    bad.append("marked finalized while the moves are %s" % at)
if expect == "before" and (sw is not None or finalized or set(at.values()) != {"before"}):
    bad.append("not back before the switch: journal %r, finalized %s, moves %s" % (sw, finalized, at))
if expect == "after" and (sw is not None or not finalized or set(at.values()) != {"after"}):
    bad.append("not switched: journal %r, finalized %s, moves %s" % (sw, finalized, at))

# The intermediates: dropped only once the plan is marked finalized.
present = [d for d in drops if d in colls]
if phase == "finalize" and not finalized and len(present) != len(drops):
    bad.append("intermediate results %s gone before the plan was marked finalized" %
               sorted(set(drops) - set(present)))
if (phase == "rollback" or (finalized and sw is None)) and present:
    bad.append("intermediate results %s still there after the plan was finalized" % present)
wanted = set(present)
for c, a in at.items():
    e = expected[c]
    wanted |= {c, e["result"]} if a == "before" else {e["backup"], e["result"]} if a == "half" \
        else {c, e["backup"]}
if colls != wanted and not [b for b in bad if "no state" in b]:
    bad.append("crm holds %s, not %s" % (sorted(colls), sorted(wanted)))

# Every document: each original and each result complete, byte for byte.
counts = {}
for c, a in at.items():
    e = expected[c]
    o = c if a == "before" else e["backup"]
    r = c if a == "after" else e["result"]
    counts[c] = (same(o, orig[e["ns"]], "the original"), same(r, off[e["ns"]], "remodel run's result"))

line = "journal=%s renamed=%s renames=%s finalized=%s observed=%d moves=%s docs=%s probes=%s" % (
    sw.get("direction") if sw else "-", sw.get("renamed") if sw else "-",
    sw.get("renames") if sw else "-", finalized, observed,
    ",".join("%s:%s" % (c, at.get(c)) for c in order), counts, sorted(probes) or "-")
print(("bad: " + "\n  ".join(bad) + "\n  state: " if bad else "ok: ") + line)
sys.stdout.flush()
os._exit(1 if bad else 0)
PYEOF

# restore KIND: a fresh server of that kind holding the sample's crm, and a
# mongodump of it (the originals); URI in $uri.
restore() {
    "$SERVER" stop "$T/$1" >/dev/null 2>&1
    rm -rf "$T/$1"
    online_start "$1" "$T/$1" || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet || { fail "$1: restore"; return 1; }
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$1-orig.archive" --quiet
}
# refill: crm and the state database dropped, the sample's crm restored
# again (as restore made it: the originals' dump stands).
refill() {
    pyrun -c 'import pymongo, sys, os
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=10000)
c.drop_database("crm"); c.drop_database("remodel"); os._exit(0)' "$uri"
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet || fail "$kind: restore again"
}
# plan_id PLAN: the plan's id on the server, from status ("plan: PATH (id ID)").
plan_id() {
    "$REMODEL" online status "$T/plans/$1.json" --uri "$uri" 2>/dev/null |
        sed -n 's/^plan: .* (id \(.*\))$/\1/p'
}
# prepare PLAN: the plan run side by side (its results made), its id in $pid.
prepare() {
    run_rm online run -q "$T/plans/$1.json" --uri "$uri" --create-indexes
    [ $rc == 0 ] || { fail "$kind: $1: online run" "$(cat "$T/err")"; return 1; }
    pid=$(plan_id "$1")
}
# online CMD PLAN ARGS...: remodel online CMD, output in $T/out, $T/err, status $rc.
online() { run_rm online "$1" "$T/plans/$2.json" --uri "$uri" "${@:3}"; }
# kat FUNCTION K CMD PLAN ARGS...: remodel-online CMD under killat, killed at
# the K-th call of FUNCTION; its status in $krc, its stderr in $T/kerr.
kat() {
    local bound=()
    # finalize's bound is wall-clock time, which a loaded machine passes.
    [ "$3" == finalize ] && bound=(--max-window 0)
    "$KILLAT" --timeout 600 -q --log "$T/klog" "$1" "$2" -- "$ONLINE" "$3" "$T/plans/$4.json" \
        --uri "$uri" "${@:5}" "${bound[@]}" >"$T/kout" 2>"$T/kerr"
    krc=$?
    [ $krc == 125 ] || [ $krc == 124 ] && echo "  killat: $(tail -n 5 "$T/kerr")" >&2
}
renamed_in() { grep -c '^remodel: renamed ' "$1"; }
# state NAME PLAN EXPECT PHASE: check.py's verdict, PASS or FAIL NAME; the
# summary in $summary.
state() {
    summary=$(pyrun "$T/check.py" "$uri" "$pid" "$T/$kind-orig.archive" "$T/offline-$2.archive" \
        "${MOVES[$2]}" "${DROPS[$2]}" "$3" "$4" 2>&1)
    if [ "${summary#ok: }" != "$summary" ]; then pass "$1"; else fail "$1" "$summary"; fi
}
# status_shows NAME PLAN: `online status` shows the switch check.py found
# ($summary): an interrupted one with the commands that finish and undo
# it, or none (and "finalized" as the record says).
status_shows() {
    local dir renamed renames fin want got
    dir=$(sed -n 's/.*journal=\([^ ]*\).*/\1/p' <<<"$summary" | tail -n 1)
    renamed=$(sed -n 's/.*renamed=\([^ ]*\).*/\1/p' <<<"$summary")
    renames=$(sed -n 's/.* renames=\([^ ]*\).*/\1/p' <<<"$summary")
    fin=$(sed -n 's/.*finalized=\([^ ]*\).*/\1/p' <<<"$summary")
    [ -n "$dir" ] || { fail "$1" "no state to compare with (the check above failed)"; return; }
    "$REMODEL" online status "$T/plans/$2.json" --uri "$uri" >"$T/status" 2>&1
    got=$(grep -E '^(switch:|  remodel online |mode:)' "$T/status")
    want="mode: side by side$([ "$fin" == True ] && echo "; finalized")"
    if [ "$dir" != - ]; then
        want="$want
switch: the $dir of the collections was interrupted after $renamed of $renames renames
  remodel online finalize $T/plans/$2.json --writes-stopped completes it; remodel online rollback $T/plans/$2.json undoes it"
    fi
    if [ "$got" == "$want" ]; then pass "$1"; else fail "$1" "status shows [$got], want [$want]"; fi
}

# undo_all NAME PLAN: rollback (the originals back), rollback again (the
# results dropped, the plan forgotten).
undo_all() {
    online rollback "$2"
    expect_eq "$1: rollback: exit 0" "$rc" 0
    [ $rc == 0 ] || sed 's/^/  /' "$T/err" >&2
    state "$1: ... the originals back byte for byte, the results beside them" "$2" before rollback
    online rollback "$2"
    expect_eq "$1: rollback again: exit 0" "$rc" 0
    state "$1: ... the results dropped, only people and tasks left, the plan forgotten" "$2" gone rollback
}

# finalize_point PLAN FUNCTION K: the plan prepared, finalize killed at the
# K-th call of FUNCTION, then (a), (b), (c). Returns 3 once finalize ran to
# its end (fewer than K calls).
finalize_point() {
    local p=$1 f=$2 k=$3 n="$kind: $1: finalize killed at $2 #$3" before
    prepare "$p" || return 1
    kat "$f" "$k" finalize "$p" --writes-stopped
    if [ $krc == 3 ]; then
        expect_eq "$kind: $p: finalize under gdb, $f called $((k - 1)) times, not killed: exit 0, four renames" \
            "$(grep -o 'ran to its end (exit [0-9]*)' "$T/kerr"):$(renamed_in "$T/kerr")" "ran to its end (exit 0):4"
        state "$kind: $p: ... switched, remodel run's result byte for byte" "$p" after rollback
        undo_all "$kind: $p: ... then" "$p"
        return 3
    fi
    expect_eq "$n: killed" "$krc" 137
    before=$(renamed_in "$T/kerr")
    state "$n: every collection where the state says, every document there" "$p" any finalize
    status_shows "$n: status shows it" "$p"
    online finalize "$p" --writes-stopped
    expect_eq "$n: finalize again: exit 0, each rename done once" "$rc:$((before + $(renamed_in "$T/err")))" "0:4"
    [ $rc == 0 ] || sed 's/^/  /' "$T/err" >&2
    state "$n: ... the results live, remodel run's byte for byte, the originals kept" "$p" after rollback
    undo_all "$n: ..." "$p"
}

# probe_point PLAN: finalize killed in its checks before the journal, once
# the first namespace's probe collection is renamed (the third call of
# online_coll_drop would drop it): rollback at once leaves nothing behind;
# finalize completes.
probe_point() {
    local p=$1 n="$kind: $1: finalize killed at its probe (online_coll_drop #3)"
    prepare "$p" || return 1
    kat online_coll_drop 3 finalize "$p" --writes-stopped
    expect_eq "$n: killed" "$krc" 137
    state "$n: nothing renamed, every document there" "$p" any finalize
    online rollback "$p"
    expect_eq "$n, rollback at once: exit 0" "$rc" 0
    state "$n, rollback at once: ... the results dropped, the probe too, the plan forgotten" "$p" gone rollback
    pyrun -c 'import pymongo, sys, os
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=10000)
for n in c.crm.list_collection_names():
    if n.endswith("_probe") or n.endswith("_probe2"): c.crm.drop_collection(n)
os._exit(0)' "$uri"
    prepare "$p" || return 1
    kat online_coll_drop 3 finalize "$p" --writes-stopped
    online finalize "$p" --writes-stopped
    expect_eq "$n, finalize again: exit 0" "$rc" 0
    state "$n, finalize again: ... switched, the probe dropped" "$p" after rollback
    undo_all "$n: ..." "$p"
}

# twice_point CMD PLAN K1 K2: CMD (finalize, or rollback after a
# finalize) killed at note K1, run again and killed at note K2 (a state
# left by two interrupted runs), then (a); then run again to its end.
twice_point() {
    local c=$1 p=$2 n="$kind: $2: $1 killed at online_switch_note #$3, then again at #$4" phase=finalize
    prepare "$p" || return 1
    if [ $c == rollback ]; then
        online finalize "$p" --writes-stopped
        phase=rollback
    fi
    local args=()
    [ $c == finalize ] && args=(--writes-stopped)
    kat online_switch_note "$3" $c "$p" "${args[@]}"
    local k1=$krc
    kat online_switch_note "$4" $c "$p" "${args[@]}"
    expect_eq "$n: killed twice" "$k1:$krc" "137:137"
    state "$n: every collection where the state says, every document there" "$p" any $phase
    status_shows "$n: status shows it" "$p"
    if [ $c == rollback ]; then
        online rollback "$p"
        expect_eq "$n, then rollback: exit 0" "$rc" 0
        state "$n, then rollback: ... the originals back byte for byte" "$p" before rollback
        online rollback "$p"
        state "$n, then rollback again: ... the results dropped" "$p" gone rollback
    else
        online finalize "$p" --writes-stopped
        expect_eq "$n, then finalize: exit 0" "$rc" 0
        state "$n, then finalize: ... the results live, remodel run's byte for byte" "$p" after rollback
        undo_all "$n: ..." "$p"
    fi
}

# finalize_undo_point PLAN FUNCTION K: finalize killed at the K-th call,
# then rollback at once: the originals back.
finalize_undo_point() {
    local p=$1 f=$2 k=$3 n="$kind: $1: finalize killed at $2 #$3" before phase
    prepare "$p" || return 1
    kat "$f" "$k" finalize "$p" --writes-stopped
    expect_eq "$n: killed" "$krc" 137
    before=$(renamed_in "$T/kerr")
    state "$n: every collection where the state says, every document there" "$p" any finalize
    # Marked finalized before it was killed: its intermediates are gone.
    phase=finalize
    grep -q 'finalized=True' <<<"$summary" && phase=rollback
    online rollback "$p"
    expect_eq "$n, rollback at once: exit 0, each rename undone once" \
        "$rc:$(renamed_in "$T/err")" "0:$before"
    [ $rc == 0 ] || sed 's/^/  /' "$T/err" >&2
    if grep -q '^remodel: rollback: dropped ' "$T/err"; then
        # Nothing switched, nothing journaled: the results dropped, the plan forgotten.
        state "$n, rollback at once: ... nothing was switched: the results dropped, the plan forgotten" "$p" gone rollback
    else
        state "$n, rollback at once: ... the originals back byte for byte" "$p" before $phase
        online rollback "$p"
        state "$n, rollback at once: ... rollback again drops the results" "$p" gone rollback
    fi
}

# rollback_point PLAN FUNCTION K [forward|back|both]: the plan finalized;
# rollback killed at the K-th call of FUNCTION, then finalize completes
# forward (forward), or rollback completes back (back), or both: forward,
# killed again at the same point, then back. Returns 3 once rollback ran to
# its end (fewer than K calls). Leaves the plan finalized for the next point.
rollback_point() {
    local p=$1 f=$2 k=$3 how=${4:-both} n="$kind: $1: rollback killed at $2 #$3"
    kat "$f" "$k" rollback "$p"
    if [ $krc == 3 ]; then
        expect_eq "$kind: $p: rollback under gdb, $f called $((k - 1)) times, not killed: exit 0, four renames" \
            "$(grep -o 'ran to its end (exit [0-9]*)' "$T/kerr"):$(renamed_in "$T/kerr")" "ran to its end (exit 0):4"
        state "$kind: $p: ... the originals back byte for byte" "$p" before rollback
        online rollback "$p"
        state "$kind: $p: ... rollback again drops the results" "$p" gone rollback
        return 3
    fi
    expect_eq "$n: killed" "$krc" 137
    killed_state "$n" "$p"
    if [ $how != back ]; then
        rollback_forward "$n" "$p"
        [ $how == forward ] && return 0
        kat "$f" "$k" rollback "$p"
        n="$n again"
        expect_eq "$n: killed" "$krc" 137
        killed_state "$n" "$p"
    fi
    online rollback "$p"
    expect_eq "$n, then rollback: exit 0, four renames in all" "$rc:$((before + $(renamed_in "$T/err")))" "0:4"
    [ $rc == 0 ] || sed 's/^/  /' "$T/err" >&2
    state "$n, then rollback: ... the originals back byte for byte" "$p" before rollback
    # Finalized again for the next point (a full finalize: sync, verify, switch).
    online finalize "$p" --writes-stopped
    [ $rc == 0 ] || fail "$n: finalize for the next point" "$(cat "$T/err")"
}
# killed_state NAME PLAN: after a killed rollback, (a); the renames it did in $before.
killed_state() {
    before=$(renamed_in "$T/kerr")
    state "$1: every collection where the state says, every document there" "$2" any rollback
    status_shows "$1: status shows it" "$2"
}
# rollback_forward NAME PLAN: finalize after a killed rollback completes forward.
rollback_forward() {
    local fin
    fin=$(sed -n 's/.*journal=- .*finalized=True.*/yes/p' <<<"$summary" | tail -n 1)
    online finalize "$2" --writes-stopped
    if [ "$fin" == yes ]; then
        # Killed before its first note: the plan is finalized as it was.
        expect_eq "$1: finalize then: nothing to complete, it says finalized already (exit 2)" \
            "$rc:$(grep -c 'is finalized already' "$T/err")" "2:1"
    else
        expect_eq "$1: finalize then completes forward: exit 0, each undone rename redone once" \
            "$rc:$(renamed_in "$T/err")" "0:$before"
        [ $rc == 0 ] || sed 's/^/  /' "$T/err" >&2
    fi
    state "$1: ... the results live, remodel run's byte for byte, the originals kept" "$2" after rollback
}

alt() { if [ "$1" == alternate ]; then [ $(($2 % 2)) == 1 ] && echo forward || echo back; else echo "$1"; fi; }
# points LIST: "all" (1, 2, ... until the command runs to its end) or Ks.
# finalize_matrix PLAN FUNCTION LIST, rollback_matrix PLAN FUNCTION LIST.
finalize_matrix() {
    local k
    if [ "$3" == all ]; then
        for ((k = 1; k <= 40; k++)); do finalize_point "$1" "$2" $k; [ $? == 3 ] && break; done
        [ $k -le 40 ] || fail "$kind: $1: finalize: more than 39 calls of $2?"
        eval "calls_$2_$1=$((k - 1))"
        [ $2 == online_switch_rename ] &&
            expect_eq "$kind: $1: finalize calls online_switch_rename four times, once a rename" $((k - 1)) 4
    else
        for k in $3; do finalize_point "$1" "$2" $k; done
    fi
}
rollback_matrix() { # PLAN FUNCTION LIST [HOW]: HOW both, or alternate (forward at odd K, back at even)
    local k how=${4:-both}
    prepare "$1" || return 1
    online finalize "$1" --writes-stopped
    [ $rc == 0 ] || { fail "$kind: $1: finalize before the rollback matrix" "$(cat "$T/err")"; return 1; }
    if [ "$3" == all ]; then
        for ((k = 1; k <= 40; k++)); do
            rollback_point "$1" "$2" $k "$(alt "$how" $k)"
            [ $? == 3 ] && break
        done
        [ $k -le 40 ] || fail "$kind: $1: rollback: more than 39 calls of $2?"
    else
        for k in $3; do rollback_point "$1" "$2" $k "$(alt "$how" $k)"; done
        undo_all "$kind: $1: rollback matrix done:" "$1"
    fi
}

# server_stop_point PLAN FUNCTION K: FerretDB stopped at the K-th call of
# FUNCTION in finalize (from gdb, the process held there), finalize let go
# on; the server started again on its port 3 s later. finalize completes
# by itself, or run again.
server_stop_point() {
    local p=$1 f=$2 k=$3 n="$kind: $1: the server stopped at $2 #$3 of finalize" port restarter frc
    prepare "$p" || return 1
    port=${uri##*:}; port=${port%/}
    rm -f "$T/stopped"
    (
        for ((w = 0; w < 1800; w++)); do [ -e "$T/stopped" ] && break; sleep 0.1; done
        sleep 3
        REMODEL_SERVER_OWNER=$$ PEERS_SERVER_PORT=$port "$SERVER" start "$T/$kind" ferretdb >/dev/null 2>"$T/restart.err"
    ) &
    restarter=$!
    "$KILLAT" --timeout 600 -q --exec "\"$SERVER\" stop \"$T/$kind\" >/dev/null 2>&1; touch \"$T/stopped\"" \
        "$f" "$k" -- "$ONLINE" finalize "$T/plans/$p.json" --uri "$uri" --writes-stopped --max-window 0 --retry-for 60 \
        >"$T/kout" 2>"$T/kerr"
    frc=$?
    wait $restarter
    expect_eq "$n: stopped there (the server down, then up again on its port)" \
        "$([ -e "$T/stopped" ] && echo stopped):$(cat "$T/$kind/uri" 2>/dev/null)" "stopped:$uri"
    if [ $frc == 0 ]; then
        pass "$n: finalize retried and completed by itself (exit 0)"
        echo "  ($n: $(grep -c 'retrying in' "$T/kerr") retries)" >&2
    else
        echo "  finalize stopped with exit $frc: $(grep -v '^remodel: renamed' "$T/kerr" | tail -n 2)" >&2
        online finalize "$p" --writes-stopped --retry-for 60
        expect_eq "$n: finalize stopped (exit $frc); run again: exit 0" "$rc" 0
        [ $rc == 0 ] || sed 's/^/  /' "$T/err" >&2
    fi
    state "$n: ... the results live, remodel run's byte for byte, the originals kept" "$p" after rollback
    undo_all "$n: ..." "$p"
}

# inplace_point PLAN FUNCTION K: on the sample's crm restored again (so
# every document as the originals' dump has it), the plan's field steps run --in-place,
# rollback --in-place killed at the K-th call of FUNCTION, then rollback
# again; K 0: no kill.
inplace_point() {
    local p=$1 f=$2 k=$3 n="$kind: in place ($1): rollback killed at $2 #$3" steps
    [ $k == 0 ] && n="$kind: in place ($1), no kill"
    steps=$(grep -c '"in": ' "$T/plans/$p.json")
    refill
    run_rm online run -q --in-place "$T/plans/$p.json" --uri "$uri"
    [ $rc == 0 ] || { fail "$n: online run --in-place" "$(cat "$T/err")"; return 1; }
    pid=$(plan_id "$p")
    if [ $k != 0 ]; then
        kat "$f" "$k" rollback "$p" --in-place
        expect_eq "$n: killed" "$krc" 137
    fi
    online rollback "$p" --in-place
    expect_eq "$n: rollback$([ $k != 0 ] && echo " again"): exit 0, nothing left" \
        "$rc:$(grep -c ' 0 left$' "$T/err"):$(grep -c 'left$' "$T/err")" "0:$steps:$steps"
    [ $rc == 0 ] || sed 's/^/  /' "$T/err" >&2
    if [ $kind == java ]; then
        ANY_ORDER=1 state "$n: ... every document the original (its fields in the order mongo-java-server's replace keeps)" embed gone rollback
    else
        state "$n: ... every document the original, byte for byte" embed gone rollback
    fi
}

# Which points: everything in the full matrix; by default, every point
# with the first plan on FerretDB, a few on mongo-java-server.
if [ -n "${REMODEL_SWITCH_ONLY:-}" ]; then
    kind=${REMODEL_SWITCH_KIND:-ferretdb}
    restore $kind && eval "$REMODEL_SWITCH_ONLY"
    exit 0
fi
for kind in $(online_kinds); do
    [ $kind == external ] && { echo "# the kill matrix needs local servers (gdb, restarts): skipped on $kind" >&2; continue; }
    restore $kind || continue
    first=0
    [ $kind == ferretdb ] && first=1
    if [ $FULL == 1 ]; then
        for p in embed twostep; do
            for f in online_switch_rename online_switch_note; do
                finalize_matrix $p $f all
                rollback_matrix $p $f all
                lap "$kind: $p: finalize and rollback killed at each $f"
            done
            for ((k = 1; k <= ${calls_online_switch_rename_embed:-4}; k++)); do
                finalize_undo_point $p online_switch_rename $k
            done
            for ((k = 1; k <= ${calls_online_switch_note_embed:-7}; k++)); do
                finalize_undo_point $p online_switch_note $k
            done
            probe_point $p
            for c in finalize rollback; do
                twice_point $c $p 3 2
                twice_point $c $p 4 3
                twice_point $c $p 5 2
            done
            lap "$kind: $p: finalize killed, then rollback at once; killed twice"
        done
    elif [ $first == 1 ]; then
        # A smoke of each kind of point: every point runs in-process
        # (test_online_fault_matrix.sh), where each rename and note is a
        # server call killed at.
        finalize_matrix embed online_switch_rename "3"
        rollback_matrix embed online_switch_note "3" forward
        twice_point finalize embed 3 2
        lap "$kind: embed: finalize, rollback killed; killed twice"
    else
        finalize_matrix twostep online_switch_note "4"
        rollback_matrix twostep online_switch_rename "3" back
        finalize_undo_point twostep online_switch_rename 3
        lap "$kind: twostep: a few kill points"
    fi

    # The server stopped at a rename or a note of finalize (FerretDB keeps
    # its data across a restart; mongo-java-server does not).
    if [ $kind == ferretdb ]; then
        if [ $FULL == 1 ]; then
            for p in embed twostep; do
                for ((k = 1; k <= ${calls_online_switch_rename_embed:-4}; k++)); do
                    server_stop_point $p online_switch_rename $k
                done
                for ((k = 1; k <= ${calls_online_switch_note_embed:-7}; k++)); do
                    server_stop_point $p online_switch_note $k
                done
            done
        else
            server_stop_point embed online_switch_rename 3
        fi
        lap "$kind: the server stopped in finalize"
    fi

    # In place: between restoring a document and deleting its backup (the
    # first of the step before the last, and in the full matrix the first
    # and last of each step and after them all), and before a restore.
    # (FerretDB takes a minute a run and rollback of fields: two points there.)
    if [ $FULL == 1 ] && [ $kind == ferretdb ]; then
        inplace_point fields mongoc_collection_delete_one 1000
        inplace_point fields mongoc_collection_replace_one 1001
        lap "$kind: in place, fields"
    elif [ $FULL == 1 ]; then
        inplace_point fields - 0
        for k in 1 1000 1001 1294 1295; do inplace_point fields mongoc_collection_delete_one $k; done
        for k in 1 500 1001; do inplace_point fields mongoc_collection_replace_one $k; done
        lap "$kind: in place, fields"
    fi
    inplace_point people - 0
    inplace_point people mongoc_collection_delete_one 99
    [ $FULL == 1 ] && for k in 1 98 196 197; do inplace_point people mongoc_collection_delete_one $k; done
    lap "$kind: in place, people"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
echo "# test_online_switch: $((SECONDS - t_start)) s ($([ $FULL == 1 ] && echo full || echo default) matrix)" >&2
