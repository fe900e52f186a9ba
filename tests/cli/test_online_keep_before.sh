#!/usr/bin/env bash
# run --keep-before and rollback --carry-writes through a set that
# overwrote values and a delete (issue 65 item 2, issue 64 item 1), on
# FerretDB (its oplog) and mongo-java-server (change streams), side by
# side and --to-uri, judged by a Python oracle (pymongo's bson, not
# remodel) from what the servers held:
# - plan up sets shop.orders' status (some had one, of two types; others
#   none) and an added flag; plan del deletes the orders with x >= 40;
# - before finalize the application writes the sources (a value the set
#   overwrote changed, one removed, one added, a document deleted, one
#   inserted; for del, documents moved into and out of the filter, one
#   dropped changed, one dropped deleted), and sync keeps what the run
#   kept current;
# - after finalize it writes the new design (a status changed, its type
#   changed, removed; another field changed; a document deleted, one
#   inserted; for del, a dropped document's _id given a new document);
# - rollback --carry-writes exits 0, and the originals are what the
#   oracle computes from the sources at the switch (S) and the results
#   as the application left them (R): for up, per field the set writes,
#   the old value where R holds what the set made, R's where the
#   application changed it, removed where the document had none (a
#   document inserted since keeps a field some document had before the
#   run); for del, R with every document the delete dropped at the switch
#   given back, but where R holds its _id. Typed values, any field order;
# - killed (kill -9) at its first write of an original and as it reads
#   what the run kept, each after kills at the calls of that kind before,
#   the carry run again gives the oracle's documents too;
# - with follow instead of sync (side by side): follow runs while the
#   application writes the sources, and keeps what the run kept current:
#   stopped once it has the last write, finalize and rollback
#   --carry-writes give the oracle's originals as above;
# - without --keep-before, rollback offers no --carry-writes for either
#   plan and says that --keep-before would keep what it needs; with
#   --in-place, run --keep-before is refused.
# CI_KINDS: the servers (default "ferretdb java").
#   REMODEL=build/remodel bash tests/cli/test_online_keep_before.sh
. "$(dirname "$0")/lib.sh"
use_faulty || exit 1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "keep before: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/up.json" <<'EOF'
{"remodel": 1, "steps": [{"set": {"in": "shop.orders", "fields": {
  "status": {"$concat": ["S-", {"$toString": "$x"}]}, "flag": true}}}]}
EOF
cat >"$T/plans/del.json" <<'EOF'
{"remodel": 1, "steps": [{"delete": {"from": "shop.orders", "filter": {"x": {"$gte": 40}}}}]}
EOF

# seed: on $uri, 60 orders; status a string where i % 3, an int where
# also i % 5 == 0, none where i % 3 == 0.
seed() {
    py 'c.shop.drop_collection("orders")
docs = []
for i in range(60):
    d = {"_id": i, "x": i, "note": "o%d" % i}
    if i % 3:
        d["status"] = i if i % 5 == 0 else "s%d" % i
    docs.append(d)
c.shop.orders.insert_many(docs)'
}
# snap URI FILE: shop.orders on URI, a document a line (its bytes in hex).
snap() {
    uri=$1 py 'from bson.raw_bson import RawBSONDocument
raw = pymongo.MongoClient(sys.argv[1], directConnection=True, document_class=RawBSONDocument)
with open(sys.argv[2], "w") as f:
    for d in raw.shop.orders.find():
        print(d.raw.hex(), file=f)' "$2"
}
# The application's writes to the sources before finalize, for each plan.
PRE_UP='o = c.shop.orders
o.update_one({"_id": 1}, {"$set": {"x": 101}})
o.update_one({"_id": 2}, {"$set": {"status": "changed"}})
o.update_one({"_id": 4}, {"$unset": {"status": ""}})
o.update_one({"_id": 3}, {"$set": {"status": "now"}})
o.delete_one({"_id": 5})
o.insert_one({"_id": 100, "x": 100, "status": "fresh"})'
PRE_DEL='o = c.shop.orders
o.update_one({"_id": 1}, {"$set": {"x": 60}})
o.update_one({"_id": 41}, {"$set": {"x": 2}})
o.update_one({"_id": 42}, {"$set": {"y": 1}})
o.delete_one({"_id": 43})
o.insert_one({"_id": 300, "x": 99})'
# ... and to the new design after it.
POST_UP='o = c.shop.orders
o.update_one({"_id": 7}, {"$set": {"status": "app"}})
o.update_one({"_id": 8}, {"$set": {"x": 800}})
o.update_one({"_id": 10}, {"$unset": {"status": ""}})
o.delete_one({"_id": 11})
o.update_one({"_id": 14}, {"$set": {"flag": False}})
o.update_one({"_id": 16}, {"$set": {"status": 16}})
o.update_one({"_id": 6}, {"$set": {"status": "app6"}})
o.insert_one({"_id": 200, "x": 1, "status": "NEW", "flag": True})'
POST_DEL='o = c.shop.orders
o.insert_one({"_id": 44, "x": 1, "app": 1})
o.update_one({"_id": 0}, {"$set": {"z": 1}})
o.delete_one({"_id": 3})
o.insert_one({"_id": 500, "x": 1000})'

# oracle PLAN S0 S R OUT: the originals rollback --carry-writes should
# leave (OUT, a document a line as sorted typed fields), from the sources
# before the run (S0), at the switch (S) and the results as the
# application left them (R); a check of the results at the switch first
# when R0 is given as $5 (exit 1 and why where the run was wrong).
oracle() {
    python3 - "$@" <<'EOF'
import sys, bson
def load(p):
    return {d["_id"]: d for d in (bson.decode(bytes.fromhex(l.strip())) for l in open(p) if l.strip())}
def typed(v):
    return bson.encode({"v": v}).hex()
def line(d):
    return " ".join("%s=%s" % (k, typed(d[k])) for k in sorted(d))
plan, s0, s, r = sys.argv[1], load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
def made(d):
    # what the set makes of a source document
    return {"status": "S-%d" % d["x"], "flag": True}
def dropped(d):
    return isinstance(d.get("x"), (int, float)) and d["x"] >= 40
if len(sys.argv) > 6:
    r0 = load(sys.argv[6])
    want = {}
    for i, d in s.items():
        if plan == "up":
            want[i] = dict(d, **made(d))
        elif not dropped(d):
            want[i] = d
    if {i: line(d) for i, d in r0.items()} != {i: line(d) for i, d in want.items()}:
        print("the results at the switch are not the plan's", sorted(set(r0) ^ set(want))[:5],
              [(i, r0[i], want[i]) for i in r0 if i in want and line(r0[i]) != line(want[i])][:3])
        sys.exit(1)
out = {}
if plan == "up":
    had = {f for d in s0.values() for f in ("status", "flag") if f in d}
    for i, d in r.items():
        e = dict(d)
        for f in ("status", "flag"):
            if i in s and f in s[i]:
                if f in e and typed(e[f]) == typed(made(s[i])[f]):
                    e[f] = s[i][f]
            elif i in s or f not in had:
                e.pop(f, None)
        out[i] = e
else:
    out = dict(r)
    for i, d in s.items():
        if dropped(d) and i not in r:
            out[i] = d
with open(sys.argv[5], "w") as f:
    for i in sorted(out, key=repr):
        print(repr(i), line(out[i]), file=f)
EOF
}
# typed FILE: shop.orders on $uri as the oracle writes its documents.
typed() {
    snap "$uri" "$1.raw"
    python3 - "$1.raw" "$1" <<'EOF'
import sys, bson
def typed(v):
    return bson.encode({"v": v}).hex()
docs = [bson.decode(bytes.fromhex(l.strip())) for l in open(sys.argv[1]) if l.strip()]
with open(sys.argv[2], "w") as f:
    for d in sorted(docs, key=lambda d: repr(d["_id"])):
        print(repr(d["_id"]), " ".join("%s=%s" % (k, typed(d[k])) for k in sorted(d)), file=f)
EOF
}
# same NAME WANT GOT: pass when the two files are equal, else fail with
# the first lines that differ.
same() {
    if cmp -s "$2" "$3"; then pass "$1"; else fail "$1" "$(diff "$2" "$3" | head -n 6 | cut -c1-300)"; fi
}

# switched NAME PLAN POST: after finalize, the application's writes POST
# to the target, and the oracle's verdict on the results at the switch
# (NAME.r0) and after POST (NAME.r).
switched() {
    local name=$1 plan=$2 post=$3
    snap "$DST" "$T/$name.r0"
    uri=$DST py "$post"
    snap "$DST" "$T/$name.r"
    oracle "$plan" "$T/$name.s0" "$T/$name.s" "$T/$name.r" "$T/$name.want" "$T/$name.r0" >"$T/oracle.err"
    expect_eq "$name: ... the results at the switch are the plan's of the sources then (oracle)" \
        "$?:$(cat "$T/oracle.err")" "0:"
}

# flow NAME PLAN PRE POST CMD...: on the source ($SRC) and where the
# results are ($DST: the same server side by side), CMD PLAN (run_rm's
# words: online, or two for --to-uri) through run --keep-before, the
# writes PRE, a sync, finalize and the writes POST; the oracle's want in
# $T/NAME.want; the carry left to the caller.
flow() {
    local name=$1 plan=$2 pre=$3 post=$4
    shift 4
    uri=$SRC seed
    snap "$SRC" "$T/$name.s0"
    "$@" run "$plan" --keep-before -q
    expect_eq "$name: run --keep-before (exit 0)" "$rc:$(cat "$T/err")" "0:"
    uri=$SRC py "$pre"
    "$@" sync "$plan" -q
    expect_eq "$name: ... the writes to the sources synced (exit 0)" "$rc" "0"
    snap "$SRC" "$T/$name.s"
    "$@" finalize "$plan" --writes-stopped -q
    expect_eq "$name: ... finalized (exit 0)" "$rc" "0"
    switched "$name" "$plan" "$post"
}
side() { run_rm online "$1" "$T/plans/$2.json" --uri "$SRC" "${@:3}"; }

# flow_follow NAME PLAN PRE POST: as flow side by side, with follow
# instead of sync: follow runs while the application writes PRE and a
# last order (_id 999), stopped (SIGINT) once that order's result is in
# the target, so that what the run kept is follow's to keep current.
flow_follow() {
    local name=$1 plan=$2 pre=$3 post=$4 fp frc i
    uri=$SRC seed
    snap "$SRC" "$T/$name.s0"
    side run "$plan" --keep-before -q
    expect_eq "$name: run --keep-before (exit 0)" "$rc:$(cat "$T/err")" "0:"
    "$REMODEL" online follow "$T/plans/$plan.json" --uri "$SRC" --pause 200ms -q \
        >"$T/follow.out" 2>"$T/follow.err" &
    fp=$!
    for ((i = 0; i < 600; i++)); do
        side status "$plan"
        grep -q '^follow: round' "$T/out" && break
        kill -0 $fp 2>/dev/null || break
        sleep 0.2
    done
    uri=$SRC py "$pre
o.insert_one({'_id': 999, 'x': 1, 'status': 'last'})"
    for ((i = 0; i < 1200; i++)); do
        [ "$(uri=$SRC py 'print(c.shop[[n for n in c.shop.list_collection_names() if n.startswith("orders_remodel_")][0]].count_documents({"_id": 999}))')" = 1 ] && break
        kill -0 $fp 2>/dev/null || break
        sleep 0.2
    done
    kill -INT $fp 2>/dev/null
    wait $fp
    frc=$?
    expect_eq "$name: ... follow while the application wrote, stopped once it had the last write (exit 0)" \
        "$frc:$i" "0:$([ "$i" -lt 1200 ] && echo "$i")"
    snap "$SRC" "$T/$name.s"
    side finalize "$plan" --writes-stopped -q
    expect_eq "$name: ... finalized (exit 0)" "$rc" "0"
    switched "$name" "$plan" "$post"
}
# carried NAME PLAN WHAT: rollback --carry-writes of PLAN (exit 0, the
# carry said), then the sources the oracle's ($T/NAME.want).
carried() {
    side rollback "$2" --carry-writes
    expect_eq "$1: rollback --carry-writes (exit 0)" \
        "$rc:$(grep -c 'rollback: carried back into shop.orders' "$T/err")" "0:1"
    uri=$SRC typed "$T/got"
    same "$1: the originals are the oracle's: $3" "$T/$1.want" "$T/got"
}
two() { run_rm online "$1" "$T/plans/$2.json" --uri "$SRC" --to-uri "$DST" "${@:3}"; }

# killed SPEC CMD...: CMD rollback --carry-writes held at SPEC's call (the
# fault layer's delay) and killed there (kill -9); $held: whether it was.
killed() {
    local spec=$1 p w
    shift
    rm -f "$T/flog"
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/ferr"
    REMODEL_ONLINE_FAULT=$spec:delay=60000 REMODEL_ONLINE_FAULT_LOG=$T/flog "$@" \
        >"$T/fout" 2>"$T/ferr" &
    p=$!
    held=
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        grep -q "^remodel-online: fault layer: call" "$T/ferr" 2>/dev/null &&
            grep -q "^[0-9]* ${spec%%:*} ${spec##*:} " "$T/flog" 2>/dev/null && { held=1; break; }
        kill -0 $p 2>/dev/null || break
        sleep 0.05
    done
    kill -9 $p 2>/dev/null
    wait $p 2>/dev/null
}

# kill_at NAME KIND PREFIX CMD...: CMD killed at the first call of KIND
# (counted by the fault layer) whose collection starts with PREFIX, tried
# call by call; each try before it killed the command at an earlier call
# of KIND, which the next try does again. A try that got further (past
# the renames, say) numbers the calls anew: where its log shows such a
# call before the one it was killed at, the next try takes that one.
kill_at() {
    local name=$1 k=$2 prefix=$3 n m target=
    shift 3
    for ((n = 1; n <= 60; n++)); do
        killed "$k:$n" "$@"
        [ -n "$held" ] || break
        target=$(awk -v k="$k" -v n="$n" '$2 == k && $3 == n {print $4; exit}' "$T/flog")
        [[ "$target" == "$prefix"* ]] && break
        m=$(awk -v k="$k" -v p="$prefix" '$2 == k && index($4, p) == 1 {print $3; exit}' "$T/flog")
        [ -n "$m" ] && n=$((m - 1))
    done
    expect_eq "$name: rollback --carry-writes killed (kill -9) at a $k of $prefix*" \
        "${held:+held}:${target:0:${#prefix}}" "held:$prefix"
}

for kind in ${CI_KINDS:-ferretdb java}; do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    SRC=$uri DST=$uri

    # ---- without --keep-before: no --carry-writes offered, --keep-before said ----
    for plan in up del; do
        uri=$SRC seed
        side run $plan -q && side finalize $plan --writes-stopped -q
        uri=$DST py 'c.shop.orders.update_one({"_id": 0}, {"$set": {"z": 1}})'
        side rollback $plan
        expect_eq "$kind: $plan without --keep-before: rollback refused (exit 2), offering no --carry-writes, saying --keep-before would keep what it needs" \
            "$rc:$(grep -c 'carries them back into the originals' "$T/err"):$(grep -c 'cannot carry them back for this plan' "$T/err"):$(grep -c 'a run with --keep-before keeps it for rollback --carry-writes' "$T/err")" \
            "2:0:1:1"
        side rollback $plan --discard-writes-after-switch -q && side rollback $plan --discard-writes-after-switch -q
        expect_eq "$kind: ... discarded (exit 0)" "$rc" "0"
    done
    side run up --keep-before --in-place
    expect_eq "$kind: run --keep-before --in-place: refused, its backups keep every original" \
        "$rc:$(grep -c 'an in-place run keeps every document it changes in its backup already' "$T/err")" "2:1"

    # ---- side by side ----
    for plan in up del; do
        [ $plan = up ] && pre=$PRE_UP post=$POST_UP || pre=$PRE_DEL post=$POST_DEL
        flow "$kind: $plan" $plan "$pre" "$post" side
        side rollback $plan
        expect_eq "$kind: $plan: rollback offers --carry-writes (exit 2)" \
            "$rc:$(grep -c 'carries them back into the originals' "$T/err")" "2:1"
        # killed at its first write of an original, then as it reads what
        # the run kept (each carry starts over: it reads it again), then
        # run again (below)
        kill_at "$kind: $plan" "$([ $plan = up ] && echo update || echo insert)" orders \
            "$REMODEL" online rollback "$T/plans/$plan.json" --uri "$SRC" --carry-writes
        kill_at "$kind: $plan" find kept_ "$REMODEL" online rollback "$T/plans/$plan.json" --uri "$SRC" --carry-writes
        carried "$kind: $plan" $plan "the application's writes kept, what the plan overwrote or dropped given back"
        # (a carry completed after a kill drops the results at once)
        rc=0
        [ "$(py 'print(len(c.shop.list_collection_names()))')" = 1 ] || side rollback $plan -q
        expect_eq "$kind: $plan: then no result, nothing the run kept" \
            "$rc:$(py 'print(sorted(c.shop.list_collection_names()), [n for n in c.remodel.list_collection_names() if n.startswith("kept_")])')" \
            "0:['orders'] []"
    done

    # ---- follow keeps what the run kept current ----
    for plan in up del; do
        [ $plan = up ] && pre=$PRE_UP post=$POST_UP || pre=$PRE_DEL post=$POST_DEL
        flow_follow "$kind: follow: $plan" $plan "$pre" "$post"
        carried "$kind: follow: $plan" $plan "what follow kept current given back"
        [ "$(py 'print(len(c.shop.list_collection_names()))')" = 1 ] || side rollback $plan -q
    done

    # ---- --to-uri, to the other server ----
    [ "$kind" = java ] && other=ferretdb || other=java
    online_start "$other" "$T/srv-dst-$other" 0 changelog || continue
    DST=$uri
    for plan in up del; do
        [ $plan = up ] && pre=$PRE_UP post=$POST_UP || pre=$PRE_DEL post=$POST_DEL
        flow "$kind->$other: $plan" $plan "$pre" "$post" two
        two rollback $plan --carry-writes
        expect_eq "$kind->$other: $plan: rollback --carry-writes (exit 0)" \
            "$rc:$(grep -c 'rollback: carried back into shop.orders on the source' "$T/err")" "0:1"
        uri=$SRC typed "$T/got"
        same "$kind->$other: $plan: the source is the oracle's" "$T/$kind->$other: $plan.want" "$T/got"
        two rollback $plan --discard-writes-after-switch -q
        uri=$DST py 'c.shop.drop_collection("orders")'
    done
    "$SERVER" stop "$T/srv-dst-$other" >/dev/null 2>&1
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
