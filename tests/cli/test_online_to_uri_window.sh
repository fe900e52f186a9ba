#!/usr/bin/env bash
# finalize --to-uri's window (issue 65 item 1), an application writing to
# the source the whole time, in both directions (FerretDB with its oplog
# to mongo-java-server, mongo-java-server with its change streams to
# FerretDB): the change log is the server's.
#  - run copies shop.other (untouched by the plan) and notes a point of
#    the source's log first; follow's rounds bring what the writer writes
#    to shop.other over from the log, not by copying it again;
#  - finalize without --writes-stopped, follow running: follow hands its
#    lease over; finalize prepares (each phase timed, the writes running),
#    says the window's estimate by phase, commits nothing;
#  - the writer stopped, finalize --writes-stopped --max-window 1ms:
#    refused at the estimate, exit 3, nothing committed, nothing dropped;
#  - finalize --writes-stopped: shop.other brought over from the source's
#    log (no namespace copied whole), "the writes were stopped for N",
#    committed; the destination equals `remodel run` offline over the
#    source's dump, byte for byte, shop.other too.
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_window.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
to_uri_setup "to-uri window"
to_uri_cleanup() { stop_writer; [ -n "${follower:-}" ] && kill "$follower" 2>/dev/null; true; }
seed() { seed_shop 200 600 300; }
# The application: updates, inserts and deletes of shop.other and of
# kids, until $T/stop exists.
start_writer() {
    rm -f "$T/stop" "$T/writing"
    uri=$SRC py 'import os, time
rnd, n = random.Random(5), 0
while not os.path.exists(sys.argv[2]):
    k = rnd.randrange(4)
    if k == 0:
        c.shop.other.update_one({"_id": rnd.randrange(300)}, {"$set": {"v": -n}})
    elif k == 1:
        c.shop.other.insert_one({"_id": 1000 + n, "v": n})
    elif k == 2:
        c.shop.other.delete_one({"_id": rnd.randrange(300)})
    else:
        c.shop.kids.update_one({"_id": 1000 + rnd.randrange(600)}, {"$set": {"x": -n}})
    n += 1
    if n == 20:
        open(sys.argv[3], "w").close()
    time.sleep(0.01)
print(n)' "$T/stop" "$T/writing" >"$T/writer.log" 2>&1 &
    writer_started
}
pair_field() { uri=$DST py 'd = c.remodel.pairs.find_one() or {}; print(d.get(sys.argv[2]))' "$1"; }

for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    d="$from->$to"
    pair_start "$from" "$to" || continue
    start_writer
    two run --batch-size 50
    expect_eq "$d: run --to-uri, the application writing (exit 0)" "$rc" "0"
    expect_eq "$d: ... a point of the source's log noted before the copy of shop.other" \
        "$(uri=$DST py 'print("copyPoint" in (c.remodel.pairs.find_one() or {}))')" "True"

    # ---- follow brings shop.other over from the log ----
    # Emptied first: the job's own redirection may come after the loop's
    # first look, which would then find the last direction's lines.
    : >"$T/follow.err"
    "$REMODEL" online follow "$P" --uri "$SRC" --to-uri "$DST" --pause 300ms \
        >/dev/null 2>"$T/follow.err" &
    follower=$!
    for ((w = 0, wend = SECONDS + 240; SECONDS < wend; w++)); do
        grep -q "follow: the copied namespaces: [0-9]* event(s)" "$T/follow.err" && break
        kill -0 "$follower" 2>/dev/null || break
        sleep 0.3
    done
    n=$(grep -c "follow: the copied namespaces: [0-9]* event(s) of the source's change log since the last copy" "$T/follow.err")
    expect_eq "$d: follow's rounds bring the writes to shop.other over from the source's log, not a whole copy" \
        "$([ "$n" -gt 0 ] && echo yes || echo "no: $(tail -c 400 "$T/follow.err")"):$(grep -c 'copied whole' "$T/follow.err")" "yes:0"

    # ---- the prepare, follow asked for its lease ----
    two finalize --sample 20
    expect_eq "$d: finalize without --writes-stopped, follow running: it prepares (exit 0), nothing committed" \
        "$rc $(pair_field committed)" "0 None"
    expect_message "$d: ... follow asked for the lease" "finalize: asking the follow of plan emb.json"
    expect_message "$d: ... the window estimated by phase" "finalize: the cut-over's window, estimated: about" \
        "the drain" "the verify" "the copied namespaces brought to the source's state" \
        "the confirmation" "the switch of the pair's record"
    wait "$follower"
    expect_eq "$d: ... follow handed the lease over and stopped (exit 0)" \
        "$?:$(grep -c 'stopped after [0-9]* rounds (finalize asked for the lease)' "$T/follow.err")" "0:1"
    follower=
    stop_writer

    est=$(sed -n "s/.*finalize: the cut-over's window, estimated: about \([^:]*\):.*/\1/p" "$T/err")
    # ---- over the bound: refused, nothing committed ----
    before=$(uri=$DST everything remodel)
    two finalize --writes-stopped --max-window 1ms
    expect_eq "$d: finalize --writes-stopped --max-window 1ms: refused at the estimate (exit 3)" "$rc" "3"
    expect_message "$d: ... saying so, nothing committed" "finalize: the window, estimated by the prepare" \
        "the writes would stay stopped past --max-window" "nothing committed"
    expect_eq "$d: ... the destination untouched, not committed" \
        "$(uri=$DST everything remodel) $(pair_field committed)" "$before None"

    # ---- the cut-over ----
    two finalize --writes-stopped --max-window 0
    expect_eq "$d: finalize --writes-stopped (exit 0)" "$rc" "0"
    expect_message "$d: ... shop.other from the source's log, the window said" \
        "finalize: the copied namespaces: " "event(s) of the source's change log since the last copy" \
        "0 namespace(s) copied whole" "finalize: the writes were stopped for"
    echo "# $d: estimated $est; $(grep -o 'the writes were stopped for [^ ]* [a-z]*' "$T/err")"
    uri=$SRC offline_run emb shop
    uri=$DST online_same "$d: the destination equals remodel run offline over the source's dump, byte for byte" \
        "$T/emb.archive" shop.parents=parents shop.kids=kids shop.other=other
    for s in "$T"/srv-*; do "$SERVER" stop "$s" >/dev/null 2>&1; done
done
