#!/usr/bin/env bash
# What an operator of the online mode sees (issue 34, "The change log's
# window" and "What operators missed"; docs/online.md), on
# mongo-java-server (change streams) alone (online_kind: the logic is
# remodel's own; test_online_changelog follows both servers' logs;
# REMODEL_TEST_BOTH=1 runs this suite on FerretDB too),
# started with its change log (FerretDB's small oplog below, on FerretDB):
#   - the progress line on a terminal (script(1)): N of TOTAL read (P%),
#     the rate and an ETA; nothing of it when stderr is a file;
#   - status: a running step's ETA is a duration, a stopped one's "-",
#     the pass not begun listed as pending;
#   - status: follow's lag in seconds (at least the time since the writes)
#     and its catch-up ETA ("-" before a round of follow applied events, a
#     duration at follow's rate after);
#   - verify names the first differing _ids (a person whose task changed,
#     a person deleted) and --differences FILE lists exactly them, one
#     canonical Extended JSON _id a line; a verify with nothing differing
#     writes the file empty; a directory is refused (exit 2); in place,
#     exactly the tasks a person's changed email left stale;
#   - the oplog's window (FerretDB): a 1 MiB oplog is too small for the
#     Atlas sample's 500-customer embed: run says so, naming how
#     FerretDB grows it (no replSetResizeOplog there: its capped oplog
#     made again larger), and status then shows the history lost; follow
#     says its point has aged past the oplog's history; the 64 MiB oplog
#     the test server has by default says nothing (nor java's, uncapped).
#   REMODEL=build/remodel bash tests/cli/test_online_operator.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "operator: external deployments are not started here (skipped)"; exit 0; }
command -v script >/dev/null || { fail "script(1) is needed (bsdutils)"; exit 0; }
S=$ROOT/dumps/sample
ATLAS=$(atlas_sample)
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
cat >"$T/plans/atlas.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "sample_analytics.accounts", "into": "sample_analytics.customers",
             "localField": "accounts", "foreignField": "account_id", "as": "accounts", "keepSource": true}}]}
EOF
P=$T/plans/embed.json
cat >"$T/plans/backfill.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner",
                   "fields": {"owner_email": "email"}}}]}
EOF

# tasks N WORD: the description of the first N tasks set to WORD.
tasks() {
    py 'for t in list(c.crm.tasks.find({}, {"_id": 1}).sort("_id", 1).limit(int(sys.argv[2]))):
    c.crm.tasks.update_one({"_id": t["_id"]}, {"$set": {"description": sys.argv[3]}})' "$1" "$2"
}
# row STATUS: the ETA of status's first row of that STATUS ($T/out).
row() { awk -v s="$1" '$4 == s { print $8; exit }' "$T/out"; }

for kind in $(online_kind java); do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    py 'c.crm.tasks.create_index("owner")'

    # A throttled run on a terminal, stopped by SIGINT after a while:
    # status saw it running with an ETA, then stopped with none. Its
    # first pass lasts about 15 s (49 batches, 300 ms apart), so the
    # SIGINT lands in it. A rate (and so an ETA) is shown once the
    # batches' own time reaches 100 ms: with batches of 10 mongo-java-
    # server's whole pass took about that, the ETA came at its end and
    # the polls missed it (the SIGINT then landed in the second pass).
    script -qec "$REMODEL online run $P --uri $uri --batch-size 2 --pause 300ms" /dev/null \
        >"$T/tty" 2>&1 &
    runner=$!
    got=
    for ((i = 0; i < 80; i++)); do
        sleep 0.25
        run_rm online status "$P" --uri "$uri"
        got=$(row running)
        # (- until the batches' time makes a rate: 100 ms)
        [[ $got =~ ^[0-9]+s$ ]] && break
    done
    if [[ $got =~ ^[0-9]+s$ ]]; then pass "$kind: status: a running step's ETA is a duration ($got)"
    else fail "$kind: status: a running step's ETA is a duration" "got [$got]: $(cat "$T/out")"; fi
    # A few more batches, each a progress line with its rate.
    sleep 1.5
    # The run, by the pid its lease names (HOST:PID:START).
    holder=$(sed -n 's/^lease: held by [^:]*:\([0-9]*\):.*/\1/p' "$T/out")
    [ -n "$holder" ] && kill -INT "$holder"
    wait "$runner"
    run_rm online status "$P" --uri "$uri"
    expect_eq "$kind: status: a stopped step's ETA is -, not 0s" "$(row stopped)" "-"
    # The pass not begun has a row of its own: a run stopped between
    # passes must not read as finished.
    expect_eq "$kind: status: the pass not begun listed as pending" \
        "$(awk '$4 == "pending" { print $1, $2, $3, $5, $6, $8 }' "$T/out")" "1 embed/2 crm.tasks 0 0 -"
    # Each batch's line: read of the count (98 people), a percentage, the
    # rate and the time left; cleared before the next.
    re=$'\e\[Kremodel: step 1 \(embed\) crm\.people: [0-9]+ of 98 read \([0-9]+%\), [0-9]+ written, [0-9]+/s, ETA [0-9]+:[0-9][0-9]'
    lines=$(tr '\r' '\n' <"$T/tty" | grep -aEc "$re")
    if [ "$lines" -ge 3 ]; then pass "$kind: the progress line on a terminal: of 98 read, %, rate, ETA ($lines lines)"
    else fail "$kind: the progress line on a terminal: of 98 read, %, rate, ETA" "$(tr '\r' '\n' <"$T/tty" | tail -n 4 | cat -v)"; fi
    # The rest, to a file: the pass's lines, no meter.
    run_rm online run "$P" --uri "$uri" --batch-size 100
    expect_eq "$kind: not a terminal: no meter, exit 0" \
        "$rc:$(grep -c 'ETA\|%' "$T/err"):$(grep -c 'crm.tasks: 1000 read, [0-9]* written$' "$T/err")" "0:0:1"
    if [ $kind == java ]; then
        expect_eq "java: its oplog is not capped: nothing said of its window" \
            "$(grep -c 'oplog is too small' "$T/err")" 0
    else
        expect_eq "ferretdb: a 64 MiB oplog (the test server's default): nothing said of its window" \
            "$(grep -c 'oplog is too small' "$T/err")" 0
    fi

    # Follow's lag: 30 writes, 2 s old, before any round of follow.
    tasks 30 first
    sleep 2
    run_rm online status "$P" --uri "$uri"
    got=$(grep '^lag' "$T/out")
    re='^lag: (at most )?([0-9]+) s: 30 events \(30 documents\) after the recorded point, taken [0-9]+ s ago; catch-up ETA - \(no round of follow has applied an event yet\)$'
    if [[ $got =~ $re ]] && [ "${BASH_REMATCH[2]}" -ge 2 ]; then
        pass "$kind: status: the lag in seconds (${BASH_REMATCH[2]}), no catch-up ETA before follow"
    else fail "$kind: status: the lag in seconds, no catch-up ETA before follow" "got [$got]"; fi
    : >"$T/follow.err"
    "$REMODEL" online follow "$P" --uri "$uri" --pause 200ms 2>"$T/follow.err" &
    follower=$!
    for ((i = 0; i < 40; i++)); do
        sleep 0.25
        grep -q 'change log: 30 events' "$T/follow.err" && break
    done
    kill -INT "$follower"
    wait "$follower"
    tasks 20 second
    run_rm online status "$P" --uri "$uri"
    got=$(grep '^lag' "$T/out")
    re="^lag: (at most )?[0-9]+ s: 20 events \(20 documents\) after the recorded point, taken [0-9]+ s ago; catch-up ETA [0-9]+s at follow's [0-9]+ events/s$"
    if [[ $got =~ $re ]]; then pass "$kind: status: after follow's rounds, the catch-up ETA at its rate"
    else fail "$kind: status: after follow's rounds, the catch-up ETA at its rate" "got [$got]"; fi

    # verify: a person whose task changed (results of a stale round), and
    # a person with no task deleted (a result no source makes).
    owner=$(py 'print(c.crm.tasks.find_one({}, sort=[("_id", 1)])["owner"])')
    lone=$(py 'o = set(c.crm.tasks.distinct("owner"))
print(next(p["_id"] for p in c.crm.people.find({}, {"_id": 1}).sort("_id", 1) if p["_id"] not in o))')
    "$REMODEL" online sync -q "$P" --uri "$uri"
    tasks 1 third
    py 'import bson
c.crm.people.delete_one({"_id": bson.ObjectId(sys.argv[2])})' "$lone"
    echo old >"$T/diffs.txt"
    run_rm online verify "$P" --uri "$uri" --differences "$T/diffs.txt"
    line=$(tail -n 1 "$T/err")
    want=$(printf '{"$oid":"%s"}\n{"$oid":"%s"}' "$owner" "$lone" | sort)
    expect_eq "$kind: verify --differences: exactly the person changed and the one deleted, one canonical _id a line" \
        "$rc:$(sort "$T/diffs.txt")" "1:$want"
    re="^remodel: verify: plan embed.json: 2 result\(s\) differ, the first: \{\"\\\$oid\":\"[0-9a-f]{24}\"\} in crm.people, \{\"\\\$oid\":\"[0-9a-f]{24}\"\} in crm.people; their 2 _id\(s\) in $T/diffs.txt$"
    if [[ $line =~ $re ]] && [[ $line == *"$owner"* ]] && [[ $line == *"$lone"* ]]; then
        pass "$kind: verify's line names the first differing _ids and the file"
    else fail "$kind: verify's line names the first differing _ids and the file" "got [$line]"; fi
    run_rm online verify "$P" --uri "$uri" --differences "$T"
    expect_eq "$kind: verify --differences DIR: refused, exit 2, the list as it was" \
        "$rc:$(grep -c 'a directory' "$T/err"):$(wc -l <"$T/diffs.txt")" "2:1:2"
    "$REMODEL" online sync -q "$P" --uri "$uri"
    run_rm online verify "$P" --uri "$uri" --differences "$T/diffs.txt"
    expect_eq "$kind: after a sync: verify exit 0, the file replaced, empty" \
        "$rc:$(wc -c <"$T/diffs.txt"):$(ls -A "$T" | grep -c remodel-)" "0:0:0"
    # In place: the tasks of a person whose email changed are stale.
    run_rm online run "$T/plans/backfill.json" --uri "$uri" --in-place
    who=$(py 'print(c.crm.tasks.find_one({"owner": {"$ne": None}}, sort=[("_id", 1)])["owner"])')
    py 'import bson
c.crm.people.update_one({"_id": bson.ObjectId(sys.argv[2])}, {"$set": {"email": "new@example.net"}})' "$who"
    want=$(py 'import bson
for t in c.crm.tasks.find({"owner": bson.ObjectId(sys.argv[2])}, {"_id": 1}): print("{\"$oid\":\"%s\"}" % t["_id"])' "$who" | sort)
    run_rm online verify "$T/plans/backfill.json" --uri "$uri" --differences "$T/stale.txt"
    expect_eq "$kind: in place: verify --differences lists exactly the stale tasks ($(echo "$want" | wc -l))" \
        "$rc:$(sort "$T/stale.txt")" "1:$want"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done

# The oplog's window: the Atlas sample's embed through a 1 MiB oplog.
if PEERS_OPLOG_BYTES=1048576 online_start ferretdb "$T/srv-small" 0 changelog; then
    "$MONGORESTORE" --uri "$uri" --dir="$ATLAS" --nsInclude 'sample_analytics.*' \
        --noIndexRestore --quiet
    run_rm online run "$T/plans/atlas.json" --uri "$uri" --create-indexes
    re='^remodel: capture: the oplog is too small for this run: it keeps 1\.0 MB \(about [0-9]+s of history at the [0-9.]+ MB/s it holds now\), and the copy writes about [0-9.]+ MB of results to it over about [0-9]+s \(500 documents at about [0-9]+/s\): its start point would roll off before the copy ends, and every sync then rescans everything; grow it first: FerretDB has no replSetResizeOplog: make its capped oplog again, larger, before the run \(its history is lost\): db\.getSiblingDB\("local"\)\.oplog\.rs\.drop\(\); db\.getSiblingDB\("local"\)\.createCollection\("oplog\.rs", \{capped: true, size: 990000000\}\) \(bytes\)$'
    # Found by its words, not its line: under load other notes (a slow
    # batch, the throttle) may come before it.
    got=$(grep -m 1 '^remodel: capture: the oplog' "$T/err")
    if [ "$rc" == 0 ] && [[ $got =~ $re ]]; then pass "ferretdb, 1 MiB oplog: run says it is too small, naming how FerretDB grows it (exit 0)"
    else fail "ferretdb, 1 MiB oplog: run says it is too small, naming how FerretDB grows it (exit 0)" "rc $rc, got [$got]"; fi
    for ((wend = SECONDS + 120; SECONDS < wend; )); do
        run_rm online status "$T/plans/atlas.json" --uri "$uri"
        grep -q '^history lost' "$T/out" && break
        sleep 0.5
    done
    expect_eq "ferretdb, 1 MiB oplog: as said, the point rolled off (status: history lost)" \
        "$(grep -c '^history lost' "$T/out")" 1
    # Follow first rescans what rolled off and verifies a sample, which a
    # loaded machine stretches past 40 s (CI saw it): the line is waited
    # for as long as follow runs, up to 3 minutes (no timing is checked).
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/err"
    timeout --foreground -s INT 180 "$REMODEL" online follow "$T/plans/atlas.json" --uri "$uri" 2>"$T/err" &
    follower=$!
    for ((i = 0; i < 720; i++)); do
        sleep 0.25
        grep -q 'remodel: follow: the recorded point' "$T/err" && break
        kill -0 "$follower" 2>/dev/null || break
    done
    kill -INT "$follower" 2>/dev/null
    wait "$follower"
    # Status said the point rolled off, so follow says so, not how long
    # it has left (which a just-truncated oplog's size would misstate).
    re='^remodel: follow: the recorded point is [0-9]+s old, older than the oplog.s first entry: it rolled off, and follow rescans first; grow the oplog: FerretDB has no replSetResizeOplog: make its capped oplog again, larger, before the run \(its history is lost\): db\.getSiblingDB\("local"\)\.oplog\.rs\.drop\(\); db\.getSiblingDB\("local"\)\.createCollection\("oplog\.rs", \{capped: true, size: [0-9]+\}\) \(bytes\)$'
    got=$(grep -m 1 'remodel: follow: the recorded point' "$T/err")
    if [[ $got =~ $re ]]; then pass "ferretdb, 1 MiB oplog: follow says its point rolled off, naming how FerretDB grows it"
    else fail "ferretdb, 1 MiB oplog: follow says its point rolled off, naming how FerretDB grows it" "got [$(head -c 600 "$T/err")]"; fi
fi
