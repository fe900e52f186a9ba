#!/usr/bin/env bash
# remodel online: the fenced lease and the plans' names on the server
# (issue 21, items 4, 7 and 8), on FerretDB and on mongo-java-server.
#  - A lease holder stalled by SIGSTOP past its lease's expiry (at a random
#    moment of its run): another process takes over (an in-place rollback,
#    or a side-by-side run and finalize); then SIGCONT: the stalled run
#    writes nothing more (every document the original byte for byte after
#    the rollback; no result collection recreated after finalize; the
#    state database as the winner left it) and exits non-zero saying it
#    lost its lease.
#  - Two runs started at the same instant against an expired lease of a
#    holder on another host: exactly one takes it (one new fence), the
#    other is refused (exit 2, "is being run by") and writes nothing.
#  - Skewed client clocks (faketime, when installed): a client an hour
#    ahead can't take a live run's lease; a holder an hour behind writes
#    the server's time into the lease; expires always in the server's time.
#  - A holder on this host whose process is gone (kill -9) is taken over at
#    once (the 30 s lease not waited for), status says "(gone)"; a live
#    local holder and another host's are not.
#  - Plan names that used to collide (v1.2.json and v1_2.json,
#    backup_x.json and x.json, "tasks (copy).json", "x(.json", a.json in two
#    directories) run side by side on the same data, each with its own
#    results and checkpoints (status, verify, finalize, rollback,
#    --restart of one leave the others' alone).
#   REMODEL=build/remodel bash tests/cli/test_online_lease.sh
# REMODEL_LEASE_TRIES (default 2) races and REMODEL_LEASE_STALLS (default
# 2: one in place, one side by side) stalls per server; make
# online-lease-campaign runs 20 and 10. The lease at every call of
# finalize (another command asking while it holds it) and finalize
# stalled past it at reads over its switch run in-process in make check
# (tests/mem/matrix/matrix_lease.c); these are the real servers' smoke.
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
# REMODEL_ONLINE_LEASE_MS is a hook of the tests' build only.
use_faulty || exit 1
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap 'exec 7>&- 8<&-; for p in $(jobs -p); do [ "$p" == "${HELPER_PID:-}" ] || kill -9 $p 2>/dev/null; done
"$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"' EXIT
export LC_ALL=C
TRIES=${REMODEL_LEASE_TRIES:-2}
STALLS=${REMODEL_LEASE_STALLS:-2}
# The stall and race tests' short lease (REMODEL_ONLINE_LEASE_MS): a run
# renews it every sixth of it and stops writing at two thirds unrenewed, so a
# loaded machine needs seconds to spare (3 s failed at a load of 50).
LEASE_MS=6000

# h COMMAND URI ARGS...: the helpers below, answered by one python3 process
# (a coprocess: pymongo loads once, not once a check). URI "-": no server.
cat >"$T/h.py" <<'PYEOF'
import datetime, json, socket, sys
import bson, pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

clients = {}

def server_now(c):
    try:
        r = c.admin.command("hello")
    except pymongo.errors.OperationFailure:
        r = c.admin.command("isMaster")
    return r["localTime"].replace(tzinfo=None)

def ms(t):
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)

def raw_docs(c, ns):
    db, coll = ns.split(".", 1)
    co = c.get_database(db, codec_options=CodecOptions(document_class=RawBSONDocument))
    return {repr(bson.decode(d.raw)["_id"]): d.raw.hex() for d in co[coll].find()}

def answer(cmd, uri, args):
    if uri != "-" and uri not in clients:
        clients[uri] = pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
    c = clients.get(uri)
    st = c.remodel if c is not None else None
    if cmd == "host":
        return socket.gethostname()
    if cmd == "snap":  # NS FILE: the documents' bytes by _id
        json.dump(raw_docs(c, args[0]), open(args[1], "w"))
        return ""
    if cmd == "same":  # NS FILE: the documents now against the snapshot
        a, b = json.load(open(args[1])), raw_docs(c, args[0])
        differ = sum(1 for k in a if b.get(k) != a[k]) + sum(1 for k in b if k not in a)
        return "same %d" % len(a) if not differ else "%d of %d differ" % (differ, len(a))
    if cmd == "colls":  # DB: its collections, sorted, on one line
        return " ".join(sorted(c[args[0]].list_collection_names()))
    if cmd == "count":  # NS [FILTER]
        db, coll = args[0].split(".", 1)
        return str(c[db][coll].count_documents(json.loads(args[1]) if len(args) > 1 else {}))
    if cmd == "state":  # ID: the plan's state (record, checkpoints, lease, fences), a document a line
        ident = args[0]
        docs = [("plans", d) for d in st.plans.find({"_id": ident})] + \
               [("checkpoints", d) for d in st.checkpoints.find({"plan": ident}).sort("_id", 1)] + \
               [("leases", d) for d in st.leases.find({"_id": ident})] + \
               [("fences", d) for d in st.fences.find({"plan": ident}).sort("_id", 1)]
        return "\n".join("%s %s" % (n, json.dumps(d, sort_keys=True, default=str)) for n, d in docs)
    if cmd == "fake":  # ID OWNER SECONDS: OWNER took the lease (a new epoch, its fence), for SECONDS more of the server's time (<0: expired long ago)
        ident, owner, secs = args[0], args[1], float(args[2])
        top = st.fences.find_one({"plan": ident}, sort=[("epoch", -1)])
        lease = st.leases.find_one({"_id": ident}) or {}
        e = max(top["epoch"] if top else 0, lease.get("epoch", 0)) + 1
        now = datetime.datetime(2000, 1, 1) if secs < 0 else server_now(c)
        st.fences.insert_one({"_id": "%s#%d" % (ident, e), "plan": ident, "epoch": bson.Int64(e),
                              "owner": owner, "at": now})
        st.leases.update_one({"_id": ident}, {"$set": {"owner": owner, "epoch": bson.Int64(e),
                             "expires": now + datetime.timedelta(seconds=max(secs, 0))}}, upsert=True)
        return str(e)
    if cmd == "lease":  # ID: "owner epoch expires-minus-server-now-in-ms" ("-" for no owner)
        l = st.leases.find_one({"_id": args[0]}) or {}
        exp = l.get("expires")
        return "%s %s %s" % (l.get("owner") or "-", l.get("epoch", 0),
                             ms(exp) - ms(server_now(c)) if exp else "none")
    if cmd == "fences":  # ID: "epoch owner" a line
        return "\n".join("%s %s" % (f["epoch"], f.get("owner"))
                         for f in st.fences.find({"plan": args[0]}).sort("epoch", 1))
    if cmd == "epochs":  # ID: the epochs the plan's checkpoints carry, and how many checkpoints
        cps = list(st.checkpoints.find({"plan": args[0]}))
        return " ".join(str(e) for e in sorted({cp.get("epoch") for cp in cps})) + " %d" % len(cps)
    if cmd == "reset":  # ID NS: the plan's checkpoints forgotten, its result NS dropped
        db, coll = args[1].split(".", 1)
        st.checkpoints.delete_many({"plan": args[0]})
        c[db].drop_collection(coll)
        return ""
    if cmd == "reload":  # the crm and state databases dropped
        c.drop_database("remodel")
        c.drop_database("crm")
        return ""
    raise ValueError("unknown helper command " + cmd)

# One request a line (its words separated by \x1f), the answer's lines, then \x04.
for line in sys.stdin:
    words = line.rstrip("\n").split("\x1f")
    try:
        out = answer(words[0], words[1], words[2:])
    except Exception as e:
        out = "helper error: %s: %s" % (type(e).__name__, e)
    sys.stdout.write((out + "\n" if out else "") + "\x04\n")
    sys.stdout.flush()
PYEOF
# at T PROGRAM ARGS...: execs PROGRAM at the wall-clock instant T (two runs started together).
cat >"$T/at.py" <<'PYEOF'
import os, sys, time
time.sleep(max(0.0, float(sys.argv[1]) - time.time()))
os.execv(sys.argv[2], sys.argv[2:])
PYEOF
coproc HELPER { python3 -u "$T/h.py"; }
HELPER_PID=$!
# Plain descriptors (a coprocess's are closed in subshells, such as a pipeline's).
exec 7>&"${HELPER[1]}" 8<&"${HELPER[0]}"
h() {
    local IFS=$'\x1f' line
    printf '%s\n' "$*" >&7
    while IFS= read -r -t 120 line <&8; do
        [ "$line" == $'\x04' ] && return 0
        printf '%s\n' "$line"
    done
    echo "helper: no answer to $*"
}

# restore KIND: a fresh server of that kind holding the sample's crm.*; URI in $uri.
restore() {
    [ "$1" == external ] || { "$SERVER" stop "$T/$1" >/dev/null 2>&1; rm -rf "$T/$1"; }
    online_start "$1" "$T/$1" || return 1
    reload
}
# reload: the sample's crm.* again, the state database dropped.
reload() {
    h reload "$uri"
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
}
# wait_holder PID ID: until the lease of plan ID names process PID (false after 120 s, or when PID ended).
wait_holder() {
    local w
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        case "$(h lease "$uri" "$2")" in *":$1:"*) return 0 ;; esac
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# wait_exit PID SECONDS: waits for background PID to end; its status in $wrc (999: still running, killed).
wait_exit() {
    local w
    for ((w = 0; w < $2 * 10; w++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; wrc=999
    else
        wait "$1"; wrc=$?
    fi
}
# rand_sleep LO HI: sleeps between LO and HI tenths of a second.
rand_sleep() { sleep "$(awk -v t=$(($1 + RANDOM % ($2 - $1 + 1))) 'BEGIN { printf "%.1f", t / 10 }')"; }

mkdir -p "$T/p"
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.tasks", "fields": {"flag": "stalled"}}}]}' >"$T/p/stall.json"
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"raced": 1}}}]}' >"$T/p/race.json"
echo '{"remodel": 1, "steps": [{"unset": {"in": "crm.people", "fields": ["phone"]}}]}' >"$T/p/hold.json"
STALL_ID=$(plan_id "$T/p/stall.json")
RACE_ID=$(plan_id "$T/p/race.json")
HOLD_ID=$(plan_id "$T/p/hold.json")
HOST=$(h host -)

# stall KIND I MODE: a run of stall.json (MODE inplace or side) stopped with
# SIGSTOP at a random moment; another process takes over once its lease
# expired; then SIGCONT.
stall() {
    local kind=$1 i=$2 mode=$3 a w what part flags=
    [ "$mode" == inplace ] && flags=--in-place
    what="$kind: stall $i ($([ "$mode" == inplace ] && echo in place || echo side by side))"
    # The sample as restored (a failed iteration's leftovers reloaded).
    [ "$(h same "$uri" crm.tasks "$T/tasks.orig"):$(h colls "$uri" crm)" == "same 1000:people tasks" ] || reload
    REMODEL_ONLINE_LEASE_MS=$LEASE_MS "$REMODEL" online run $flags "$T/p/stall.json" --uri "$uri" \
        --batch-size 10 --pause-ms 30 >/dev/null 2>"$T/a.err" &
    a=$!
    if ! wait_holder $a "$STALL_ID"; then
        fail "$what: the run takes the lease" "$(h lease "$uri" "$STALL_ID"); $(cat "$T/a.err")"
        kill -9 $a 2>/dev/null; wait $a 2>/dev/null; return
    fi
    read -r owner epoch left <<<"$(h lease "$uri" "$STALL_ID")"
    expect_eq "$what: REMODEL_ONLINE_LEASE_MS=$LEASE_MS: the lease expires within $LEASE_MS ms of the server's time" \
        "$(awk -v l="$left" -v m=$LEASE_MS 'BEGIN { print (l > 0 && l <= m) }')" 1
    # Stopped at a random moment after its first checkpoint.
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        [ "$(h epochs "$uri" "$STALL_ID" | awk '{ print $NF }')" != 0 ] && break
        sleep 0.1
    done
    rand_sleep 0 10
    kill -STOP $a
    # Still its lease: refused until it expires.
    REMODEL_ONLINE_LEASE_MS=$LEASE_MS run_rm online run $flags "$T/p/stall.json" --uri "$uri"
    expect_eq "$what: while its lease lasts, another run is refused (exit 2)" "$rc" 2
    expect_message "$what: ... naming the stalled holder" "is being run by $HOST:$a:"
    if [ "$mode" == inplace ]; then
        expect_eq "$what: the stalled run had changed documents, their originals in remodel.backup.$STALL_ID.1" \
            "$(h count "$uri" "remodel.backup.$STALL_ID.1" | awk '{ print ($1 > 0) }')" 1
        # The takeover: an in-place rollback, once the lease expired.
        for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
            REMODEL_ONLINE_LEASE_MS=$LEASE_MS run_rm online rollback --in-place "$T/p/stall.json" --uri "$uri"
            [ $rc != 2 ] && break
            sleep 0.25
        done
        expect_eq "$what: a rollback takes the expired lease over and restores every document" \
            "$rc:$(h same "$uri" crm.tasks "$T/tasks.orig")" "0:same 1000"
    else
        for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
            REMODEL_ONLINE_LEASE_MS=$LEASE_MS run_rm online run -q "$T/p/stall.json" --uri "$uri"
            [ $rc != 2 ] && break
            sleep 0.25
        done
        expect_eq "$what: another run takes the expired lease over and completes" "$rc:$(cat "$T/err")" "0:"
        REMODEL_ONLINE_LEASE_MS=$LEASE_MS run_rm online finalize -q "$T/p/stall.json" --uri "$uri" --writes-stopped
        expect_eq "$what: ... then finalize" "$rc:$(h colls "$uri" crm)" \
            "0:people tasks tasks_remodel_${STALL_ID}_backup"
        expect_eq "$what: ... the live crm.tasks is the result" \
            "$(h count "$uri" crm.tasks '{"flag": "stalled"}')" 1000
    fi
    h state "$uri" "$STALL_ID" >"$T/state.before"
    h snap "$uri" crm.tasks "$T/tasks.now"
    kill -CONT $a
    wait_exit $a 30
    if ((wrc != 0 && wrc != 999)); then pass "$what: resumed, the stalled run stops: exit non-zero"
    else fail "$what: resumed, the stalled run stops: exit non-zero" "exit $wrc (999: still running after 30 s)"; fi
    if grep -qE "lost its lease|lease was not renewed" "$T/a.err"; then
        pass "$what: ... saying it lost its lease"
    else
        fail "$what: ... saying it lost its lease" "$(tail -3 "$T/a.err")"
    fi
    expect_eq "$what: ... having written no document" "$(h same "$uri" crm.tasks "$T/tasks.now")" "same 1000"
    if [ "$mode" == inplace ]; then
        expect_eq "$what: ... nor any backup" "$(h count "$uri" "remodel.backup.$STALL_ID.1")" 0
    else
        expect_eq "$what: ... nor recreated its result collection" "$(h colls "$uri" crm)" \
            "people tasks tasks_remodel_${STALL_ID}_backup"
    fi
    h state "$uri" "$STALL_ID" >"$T/state.after"
    for part in "checkpoints leases fences" plans; do
        if diff <(grep -E "^(${part// /|}) " "$T/state.before") <(grep -E "^(${part// /|}) " "$T/state.after") \
            >"$T/state.diff"; then
            pass "$what: ... nor anything in the state database's $part"
        else
            fail "$what: ... nor anything in the state database's $part" "$(grep '^[<>]' "$T/state.diff")"
        fi
    done
    if [ "$mode" == side ]; then
        run_rm online rollback -q "$T/p/stall.json" --uri "$uri"
        expect_eq "$what: rollback then swaps the originals back, byte for byte" \
            "$rc:$(h same "$uri" crm.tasks "$T/tasks.orig")" "0:same 1000"
        run_rm online rollback -q "$T/p/stall.json" --uri "$uri"
        expect_eq "$what: ... and a second rollback drops the results" \
            "$rc:$(h colls "$uri" crm)" "0:people tasks"
    fi
}

# race KIND I: two runs at one instant against an expired lease held by another host.
race() {
    local kind=$1 i=$2 e t a b first second w got what="$1: race $2"
    h reset "$uri" "$RACE_ID" "crm.people_remodel_${RACE_ID}_1"
    e=$(h fake "$uri" "$RACE_ID" otherhost:1:1 -1)
    # The winner waits, paused, holding the lease, until the loser is judged.
    run_rm online pause -q "$T/p/race.json" --uri "$uri"
    t=$(awk -v now="$EPOCHREALTIME" 'BEGIN { printf "%.3f", now + 0.5 }')
    # (python3 execs remodel, which execs remodel-online: $! is the run's PID)
    REMODEL_ONLINE_LEASE_MS=$LEASE_MS python3 "$T/at.py" "$t" "$REMODEL" online run \
        "$T/p/race.json" --uri "$uri" --batch-size 20 >/dev/null 2>"$T/r1.err" &
    a=$!
    REMODEL_ONLINE_LEASE_MS=$LEASE_MS python3 "$T/at.py" "$t" "$REMODEL" online run \
        "$T/p/race.json" --uri "$uri" --batch-size 20 >/dev/null 2>"$T/r2.err" &
    b=$!
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
        kill -0 $a 2>/dev/null && kill -0 $b 2>/dev/null || break
        sleep 0.1
    done
    sleep 0.5
    if ! kill -0 $a 2>/dev/null && kill -0 $b 2>/dev/null; then
        first=$a second=$b
    elif ! kill -0 $b 2>/dev/null && kill -0 $a 2>/dev/null; then
        first=$b second=$a
    else
        fail "$what: exactly one of two runs takes the expired lease" \
            "alive: $(kill -0 $a 2>/dev/null && echo a) $(kill -0 $b 2>/dev/null && echo b); $(cat "$T/r1.err" "$T/r2.err")"
        kill -9 $a $b 2>/dev/null; wait $a $b 2>/dev/null
        run_rm online resume -q "$T/p/race.json" --uri "$uri"
        return
    fi
    wait $first; wrc=$?
    local lerr=$T/r1.err werr=$T/r2.err
    [ $first == $b ] && lerr=$T/r2.err werr=$T/r1.err
    expect_eq "$what: the loser is refused (exit 2)" "$wrc" 2
    sed -n 's/.* is being run by \([^(]*\) (.*/\1/p' "$lerr" | sed "s/$HOST:[0-9]*:[0-9]*/the winner/" >>"$T/race.how"
    if grep -q "is being run by" "$lerr"; then pass "$what: ... saying the plan is being run by another"
    else fail "$what: ... saying the plan is being run by another" "$(cat "$lerr")"; fi
    # The fences since the fake holder's: exactly one more, the winner's.
    got=$(h fences "$uri" "$RACE_ID" | awk -v e=$e '$1 >= e { split($2, o, ":"); print $1, o[1] ":" o[2] }' | tr '\n' '|')
    expect_eq "$what: one new epoch (fence), the winner's" "$got" "$e otherhost:1|$((e + 1)) $HOST:$second|"
    case "$(h lease "$uri" "$RACE_ID")" in
        "$HOST:$second:"*" $((e + 1)) "*) pass "$what: the lease names the winner, at that epoch" ;;
        *) fail "$what: the lease names the winner, at that epoch" "$(h lease "$uri" "$RACE_ID")" ;;
    esac
    run_rm online resume -q "$T/p/race.json" --uri "$uri"
    wait_exit $second 60
    expect_eq "$what: the winner completes (exit 0)" "$wrc" 0
    expect_eq "$what: every checkpoint of the winner's epoch; each person's result once" \
        "$(h epochs "$uri" "$RACE_ID"):$(h count "$uri" "crm.people_remodel_${RACE_ID}_1" '{"raced": 1}')" \
        "$((e + 1)) 1:98"
    [ -s "$werr" ] && grep -v "^remodel: step\|^remodel: capture: \|^remodel: throttle: replication lag not available\|paused\|resumed" "$werr" | grep -q . &&
        fail "$what: the winner says nothing amiss" "$(cat "$werr")"
}

# took WHAT: how long since the last, on stderr.
took() { echo "# $kind: $1: $((SECONDS - t0)) s" >&2; t0=$SECONDS; }

for kind in ${REMODEL_LEASE_KINDS:-$(online_kinds)}; do
    restore $kind || { fail "$kind: restore"; continue; }
    h snap "$uri" crm.tasks "$T/tasks.orig"
    t0=$SECONDS

    # 1. Stalled holders, alternately in place and side by side.
    for ((i = 1; i <= STALLS; i++)); do
        if ((i % 2)); then stall $kind $i inplace; else stall $kind $i side; fi
    done

    took stalls

    # 2. Races for an expired lease.
    run_rm online run -q "$T/p/race.json" --uri "$uri"
    expect_eq "$kind: race.json runs (its record made)" "$rc:$(cat "$T/err")" "0:"
    : >"$T/race.how"
    for ((i = 1; i <= TRIES; i++)); do race $kind $i; done
    echo "# $kind: the losers were refused as being run by: $(sort "$T/race.how" | uniq -c | xargs)" >&2
    # Renewed by time, not by batch: a run paused for longer than its lease keeps it.
    h reset "$uri" "$RACE_ID" "crm.people_remodel_${RACE_ID}_1"
    run_rm online pause -q "$T/p/race.json" --uri "$uri"
    REMODEL_ONLINE_LEASE_MS=$LEASE_MS "$REMODEL" online run -q "$T/p/race.json" --uri "$uri" \
        >/dev/null 2>"$T/a.err" &
    a=$!
    if wait_holder $a "$RACE_ID"; then
        sleep $((LEASE_MS * 3 / 2000))
        read -r owner epoch left <<<"$(h lease "$uri" "$RACE_ID")"
        expect_eq "$kind: a run paused $((LEASE_MS * 3 / 2000)) s keeps its ${LEASE_MS} ms lease (renewed by time)" \
            "$(awk -v o="$owner" -v l="$left" -v a=":$a:" -v m=$LEASE_MS 'BEGIN { print (index(o, a) > 0 && l > 0 && l <= m) }')" 1
        REMODEL_ONLINE_LEASE_MS=$LEASE_MS run_rm online run -q "$T/p/race.json" --uri "$uri"
        expect_eq "$kind: ... another run still refused (exit 2)" "$rc" 2
    else
        fail "$kind: the paused run takes the lease" "$(cat "$T/a.err")"
    fi
    run_rm online resume -q "$T/p/race.json" --uri "$uri"
    wait_exit $a 30
    expect_eq "$kind: ... resumed, it completes" "$wrc:$(cat "$T/a.err")" "0:"

    took races

    # 3. Clocks: expires in the server's time; skewed clients can't both hold it.
    reload
    REMODEL_ONLINE_LEASE_MS=999 "$REMODEL" online run --in-place "$T/p/hold.json" --uri "$uri" \
        --batch-size 1 --pause-ms 300 >/dev/null 2>"$T/a.err" &
    a=$!
    if wait_holder $a "$HOLD_ID"; then
        # Paused, it holds the lease (renewed by time) until killed below:
        # running on, it could end before the skewed client asks (it did at
        # a load of 8, with 2 documents a batch).
        run_rm online pause -q "$T/p/hold.json" --uri "$uri"
        read -r owner epoch left <<<"$(h lease "$uri" "$HOLD_ID")"
        expect_eq "$kind: the lease's expires is the server's time plus 30 s (REMODEL_ONLINE_LEASE_MS=999 ignored)" \
            "$(awk -v l="$left" 'BEGIN { print (l > 20000 && l <= 30500) }')" 1
        run_rm online status "$T/p/hold.json" --uri "$uri"
        expect_eq "$kind: status names the live holder (not gone)" \
            "$(grep -c "^lease: held by $HOST:$a:[0-9]* (epoch" "$T/out")" 1
        expect_eq "$kind: ... its seconds left the server's" \
            "$(sed -n 's/^lease: held by [^ ]* (epoch [0-9]*), for \([0-9]*\) s more.*/\1/p' "$T/out" | awk '{ print ($1 >= 20 && $1 <= 31) }')" 1
        if command -v faketime >/dev/null; then
            faketime -f '+1h' "$REMODEL" online run --in-place "$T/p/hold.json" --uri "$uri" >/dev/null 2>"$T/err"
            rc=$?
            expect_eq "$kind: a client an hour ahead can't take a live run's lease (exit 2)" "$rc" 2
            expect_message "$kind: ... naming the holder" "is being run by $HOST:$a:"
        else
            fail "$kind: faketime" "not installed (scripts/install-deps.sh installs it)"
        fi
    else
        fail "$kind: hold.json takes the lease" "$(cat "$T/a.err")"
    fi
    kill -9 $a 2>/dev/null; wait $a 2>/dev/null
    if command -v faketime >/dev/null; then
        reload
        faketime -f '-1h' "$REMODEL" online run --in-place "$T/p/hold.json" --uri "$uri" --batch-size 2 \
            --pause-ms 300 >/dev/null 2>"$T/a.err" &
        a=$!
        holder=
        for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
            holder=$(h lease "$uri" "$HOLD_ID" | awk '$1 != "-" { split($1, o, ":"); print o[2] }')
            [ -n "$holder" ] && break
            sleep 0.1
        done
        read -r owner epoch left <<<"$(h lease "$uri" "$HOLD_ID")"
        # No holder seen: what the run an hour behind said (or that it runs).
        [ -n "$holder" ] || echo "  the run an hour behind (pid $a, $(kill -0 $a 2>/dev/null && echo running ||
            echo ended)) said: $(tail -n 5 "$T/a.err")" >&2
        # The owner's last field is the holder's start by its own clock: an hour behind.
        expect_eq "$kind: faketime -1h: the holder's clock is an hour behind" \
            "$(awk -v o="${owner##*:}" -v now="$EPOCHREALTIME" 'BEGIN { d = now * 1000 - o - 3600000; print (d > -60000 && d < 60000) }')" 1
        expect_eq "$kind: a holder an hour behind: the lease's expires in the server's time" \
            "$(awk -v l="$left" 'BEGIN { print (l > 20000 && l <= 30500) }')" 1
        run_rm online run --in-place "$T/p/hold.json" --uri "$uri"
        expect_eq "$kind: ... and a client on time can't take it (exit 2)" "$rc" 2
        expect_message "$kind: ... naming the holder" "is being run by $HOST:$holder:"
        [ -n "$holder" ] && kill -9 "$holder" 2>/dev/null
        kill -9 $a 2>/dev/null; wait $a 2>/dev/null
    fi

    took clocks

    # 4. A local holder whose process is gone is taken over at once: its
    # lease of 600 s, far beyond a run on a loaded machine.
    reload
    REMODEL_ONLINE_LEASE_MS=600000 "$REMODEL" online run --in-place "$T/p/hold.json" --uri "$uri" --batch-size 2 --pause-ms 300 \
        >/dev/null 2>"$T/a.err" &
    a=$!
    wait_holder $a "$HOLD_ID" || fail "$kind: hold.json takes the lease" "$(cat "$T/a.err")"
    kill -9 $a; wait $a 2>/dev/null
    run_rm online status "$T/p/hold.json" --uri "$uri"
    if grep -q "^lease: held by $HOST:$a:[0-9]* (gone)" "$T/out" || ! grep -q "^lease:" "$T/out"; then
        pass "$kind: after kill -9, status shows the holder gone"
    else
        fail "$kind: after kill -9, status shows the holder gone" "$(cat "$T/out")"
    fi
    s0=$SECONDS
    run_rm online run -q --in-place "$T/p/hold.json" --uri "$uri"
    expect_eq "$kind: run again at once: it takes the dead holder's 600 s lease over and completes" \
        "$rc:$(cat "$T/err"):$(h count "$uri" crm.people '{"phone": {"$exists": true}}')" "0::0"
    expect_eq "$kind: ... without waiting for it to expire" "$((SECONDS - s0 < 300))" 1
    # Not so a live holder on this host, nor one on another host.
    for owner in "$HOST:$$:1" "otherhost:1:1"; do
        h fake "$uri" "$HOLD_ID" "$owner" 30 >/dev/null
        run_rm online run -q --in-place "$T/p/hold.json" --uri "$uri"
        expect_eq "$kind: a holder $owner (its lease unexpired): refused (exit 2)" "$rc" 2
        expect_message "$kind: ... naming it" "is being run by $owner"
    done
    sleep 100 & gone=$!; kill -9 $gone; wait $gone 2>/dev/null
    h fake "$uri" "$HOLD_ID" "$HOST:$gone:1" 30 >/dev/null
    run_rm online status "$T/p/hold.json" --uri "$uri"
    expect_eq "$kind: a holder on this host whose PID is gone: status says so" \
        "$(grep -c "^lease: held by $HOST:$gone:1 (gone)" "$T/out")" 1
    run_rm online run -q --in-place "$T/p/hold.json" --uri "$uri"
    expect_eq "$kind: ... and a run takes it over at once" "$rc:$(cat "$T/err")" "0:"

    took "dead holders"

    # 5. Names that used to collide: each plan its own results and checkpoints.
    reload
    rm -rf "$T/n"; mkdir -p "$T/n/d1" "$T/n/d2"
    plans=("$T/n/v1.2.json" "$T/n/v1_2.json" "$T/n/backup_x.json" "$T/n/x.json" \
           "$T/n/tasks (copy).json" "$T/n/x(.json" "$T/n/d1/a.json" "$T/n/d2/a.json")
    labels=(v1 v1 backup_x x copy paren a1 a2)
    ids=()
    for ((k = 0; k < ${#plans[@]}; k++)); do
        printf '{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"by": "%s"}}}, {"version": {"in": "crm.people", "value": 2}}]}\n' \
            "${labels[k]}" >"${plans[k]}"
        ids[k]=$(plan_id "${plans[k]}")
    done
    ok=
    for ((k = 0; k < ${#plans[@]}; k++)); do
        run_rm online run -q "${plans[k]}" --uri "$uri"
        [ "$rc:$(cat "$T/err")" == "0:" ] || ok="$ok [$(basename "${plans[k]}"): $rc $(cat "$T/err")]"
    done
    expect_eq "$kind: names: eight plans of colliding names run side by side on the same data" "$ok" ""
    want="people tasks"
    # The set and the version fuse into one pass (issue 49): one result each.
    for id in "${ids[@]}"; do want="$want people_remodel_${id}_2"; done
    want=$(printf '%s\n' $want | LC_ALL=C sort | xargs)
    got=$(h colls "$uri" crm)
    expect_eq "$kind: names: each plan's own result collections, none shared" "$got" "$want"
    ok=
    for ((k = 0; k < ${#plans[@]}; k++)); do
        for ((m = 0; m < ${#plans[@]}; m++)); do
            case " $got " in *" people_remodel_${ids[m]}_backup "*) ok="$ok [${ids[k]} result is ${ids[m]}'s backup]" ;; esac
        done
        n=$(h count "$uri" "crm.people_remodel_${ids[k]}_2" "{\"by\": \"${labels[k]}\", \"schemaVersion\": {\"\$exists\": true}}")
        [ "$n" == 98 ] || ok="$ok [$(basename "${plans[k]}"): $n of 98 with its own values]"
    done
    expect_eq "$kind: names: each holds the 98 people with its own plan's values; no result is a backup's name" "$ok" ""
    ok=
    for ((k = 0; k < ${#plans[@]}; k++)); do
        run_rm online status "${plans[k]}" --uri "$uri"
        got="$rc:$(awk '/^[0-9]/ { print $1, $2, $3, $4, $5, $6 }' "$T/out" | tr '\n' '|'):$(sed -n 's/^plan: .* (id \(.*\))$/\1/p' "$T/out")"
        [ "$got" == "0:1-2 set crm.people done 98 98|:${ids[k]}" ] ||
            ok="$ok [$(basename "${plans[k]}"): $got $(cat "$T/err")]"
    done
    expect_eq "$kind: names: status of each shows its own fused pass and id, parentheses and all" "$ok" ""
    ok=
    for ((k = 0; k < ${#plans[@]}; k++)); do
        run_rm online verify "${plans[k]}" --uri "$uri"
        [ $rc == 0 ] && grep -q "every result as the sources make it" "$T/err" ||
            ok="$ok [$(basename "${plans[k]}"): $rc $(cat "$T/err")]"
    done
    expect_eq "$kind: names: verify of each passes" "$ok" ""
    # finalize x.json: its backup name is not backup_x.json's result.
    run_rm online finalize -q "$T/n/x.json" --uri "$uri" --writes-stopped
    expect_eq "$kind: names: finalize x.json" \
        "$rc:$(h count "$uri" crm.people '{"by": "x"}'):$(h count "$uri" "crm.people_remodel_${ids[3]}_backup")" "0:98:98"
    expect_eq "$kind: names: ... backup_x.json's results untouched" \
        "$(h count "$uri" "crm.people_remodel_${ids[2]}_2" '{"by": "backup_x"}')" 98
    run_rm online rollback -q "$T/n/x.json" --uri "$uri"
    run_rm online rollback -q "$T/n/x.json" --uri "$uri"
    want2=$(printf '%s\n' $want | grep -v "_${ids[3]}_" | xargs)
    expect_eq "$kind: names: rolled back twice, x.json's results gone, the others' there" \
        "$rc:$(h count "$uri" crm.people '{"by": {"$exists": true}}'):$(h colls "$uri" crm)" "0:0:$want2"
    run_rm online rollback -q "$T/n/v1.2.json" --uri "$uri"
    want3=$(printf '%s\n' $want2 | grep -v "_${ids[0]}_" | xargs)
    expect_eq "$kind: names: rollback of v1.2.json leaves v1_2.json's results" \
        "$rc:$(h colls "$uri" crm):$(h count "$uri" "crm.people_remodel_${ids[1]}_2")" "0:$want3:98"
    run_rm online status "$T/n/v1_2.json" --uri "$uri"
    expect_eq "$kind: names: ... and its checkpoint" "$(grep -c '^[0-9].* done ' "$T/out")" 1
    sed -i 's/"a1"/"a1-new"/' "$T/n/d1/a.json"
    run_rm online run -q --restart "$T/n/d1/a.json" --uri "$uri"
    expect_eq "$kind: names: --restart of d1/a.json rewrites its own results" \
        "$rc:$(h count "$uri" "crm.people_remodel_${ids[6]}_2" '{"by": "a1-new"}')" "0:98"
    expect_eq "$kind: names: ... d2/a.json's untouched" \
        "$(h count "$uri" "crm.people_remodel_${ids[7]}_2" '{"by": "a2"}')" 98
    run_rm online verify "$T/n/d2/a.json" --uri "$uri"
    expect_eq "$kind: names: ... and still verified" "$rc" 0
    took names
done
