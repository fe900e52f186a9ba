#!/usr/bin/env bash
# The pool's shared servers (issue 60; tests/run.sh, lib.sh's online_take):
# tests/run.sh on suites of its own (RUN_SUITES), one slot (RUN_JOBS=1):
#  - a suite that set ONLINE_SHARE=1 gets the slot's FerretDB, started
#    once: the next such suite has the same URI, and finds nothing the
#    first left (a database, listed or not, a collection in admin, a
#    user where the server keeps them, a file in FerretDB's data
#    directory), and the writer the first left running is gone;
#  - a suite that did not set it starts its own, as one run alone does;
#  - the run counts its starts ("N server starts, M of them shared") and
#    stops the shared server at its end;
#  - two slots (RUN_JOBS=2), three suites: two starts, not three.
#   REMODEL=build/remodel bash tests/cli/test_online_shared.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
RUN=$ROOT/tests/run.sh
S=$T/suites
mkdir -p "$S" "$T/rec"
: >"$T/timings"
# suite NAME SHARE BODY: a server suite that starts FerretDB as most do
# (online_start KIND DIR), ONLINE_SHARE=SHARE, then runs BODY; it writes
# its URI to $T/rec/NAME.
suite() {
    cat >"$S/$1.sh" <<EOF
#!/usr/bin/env bash
. "$ROOT/tests/cli/lib.sh"
use_peers peers || exit 0
trap '[ "\$BASHPID" != "\$\$" ] || { "\$SERVER" stop "\$T/ferretdb" >/dev/null 2>&1; rm -rf "\$T"; }' EXIT
ONLINE_SHARE=$2
R=$T/rec
online_start ferretdb "\$T/ferretdb" || exit 1
echo "\$uri" >"\$R/$1"
$3
echo "PASS $1"
EOF
}
# The first leaves what a suite may leave: a database of its own,
# remodel's state database, a collection in admin, a user (where the
# server has users), a database FerretDB does not list (its collection's
# name holds an ESC), and a writer still writing, its pid in $T/rec.
suite test_online_s1 1 'py "c.left.docs.insert_one({\"a\": 1}); c.remodel.plans.insert_one({\"p\": 1}); c.admin.left.insert_one({\"a\": 1}); c.hid[\"a\x1bb\"].insert_one({})
try:
    c.admin.command(\"createUser\", \"ann\", pwd=\"pw\", roles=[])
except pymongo.errors.OperationFailure:
    pass"
python3 -c "import pymongo, sys, time
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=10000)
while True:
    c.straggler.w.insert_one({})
    time.sleep(0.05)" "$uri" </dev/null >/dev/null 2>&1 &
echo $! >"$R/writer"
# The writer wrote before the suite ends (its first write within 120 s).
for ((i = 0; i < 1200; i++)); do
    [ "$(py "print(c.straggler.w.count_documents({}) > 0)")" == True ] && break
    sleep 0.1
done'
# The second sees none of it, once the writer is gone (killed before it
# started: the server's databases are then those online_take left).
suite test_online_s2 1 'w=$(cat "$R/writer" 2>/dev/null)
[ -n "$w" ] && [ -e "/proc/$w" ] && [ "$(sed "s/.*) //" "/proc/$w/stat" | cut -d" " -f1)" != Z ] &&
    echo "FAIL the first suite'"'"'s writer still runs"
py "names = sorted(set(c.list_database_names()) - {\"admin\", \"local\", \"config\"})
adm = [n for n in c.admin.list_collection_names() if not n.startswith(\"system.\")]
try:
    users = [u[\"user\"] for u in c.admin.command(\"usersInfo\", {\"forAllDBs\": True})[\"users\"]]
except pymongo.errors.OperationFailure:
    users = []
import os
d = sys.argv[2]
files = sorted(f for f in (os.listdir(d) if os.path.isdir(d) else []) if not f.startswith((\"admin.\", \"local.\", \"config.\")))
print(names, adm, users, files)" "${REMODEL_SHARED_DIR:-none}/ferretdb/data" >"$R/seen"'
# The third does not share: a server of its own.
suite test_online_s3 0 ''

runs() {
    RUN_SUITES=$S RUN_TIMINGS=$T/timings RUN_PARTS=online RUN_ONLY= RUN_RECORD= RUN_SHARE=1 "$@" >"$T/out" 2>"$T/err"
    rc=$?
    # A failed run's lines, for whoever reads this suite's failure.
    [ $rc == 0 ] || grep -E '^(FAIL|    )' "$T/out" | head -n 20 >&2
}
runs env RUN_JOBS=1 "$RUN" "$T/build"
expect_eq "one slot: the three suites pass" "$rc:$(tail -n 1 "$T/out")" "0:3 passed, 0 failed"
expect_eq "the second suite had the first one's server" "$(cat "$T/rec/test_online_s2")" "$(cat "$T/rec/test_online_s1")"
expect_eq "... and found no database, admin collection or user the first left" "$(cat "$T/rec/seen" 2>/dev/null)" "[] [] [] []"
if [ "$(cat "$T/rec/test_online_s3")" != "$(cat "$T/rec/test_online_s1")" ]; then
    pass "a suite without ONLINE_SHARE=1 had a server of its own"
else
    fail "a suite without ONLINE_SHARE=1 had a server of its own" "same URI $(cat "$T/rec/test_online_s3")"
fi
check "the run counts its starts: two, one shared" grep -qx 'tests/run.sh: 2 server starts, 1 of them shared' "$T/out"
port=$(sed 's|.*:\([0-9]*\)/$|\1|' "$T/rec/test_online_s1")
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "the shared server is stopped at the run's end" "port $port still answers"
else
    pass "the shared server is stopped at the run's end"
fi

# Alone, a suite that may share starts its own.
rm -f "$T/rec"/*
env -u REMODEL_SHARED_DIR -u REMODEL_SHARED_SUITE -u REMODEL_SHARED_OWNER REMODEL_SERVER_STARTS=$T/starts \
    bash "$S/test_online_s2.sh" >"$T/out" 2>"$T/err"
expect_eq "run alone, a suite that may share starts its own server" \
    "$(grep -c '^PASS' "$T/out"):$(grep -c "^ferretdb $T/.*/ferretdb$" "$T/starts")" "1:1"

# Two slots, three sharing suites: a start per slot.
rm -f "$S"/*
for n in a b c; do suite "test_online_p$n" 1 ''; done
runs env RUN_JOBS=2 "$RUN" "$T/build"
expect_eq "two slots, three suites: all pass" "$rc:$(tail -n 1 "$T/out")" "0:3 passed, 0 failed"
check "... on two servers started, both shared" grep -qx 'tests/run.sh: 2 server starts, 2 of them shared' "$T/out"
expect_eq "... two URIs among the three suites" "$(sort -u "$T/rec"/test_online_p* | grep -c .)" 2
