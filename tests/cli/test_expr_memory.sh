#!/usr/bin/env bash
# One document's expression values are bounded as a whole (issue 62, item
# 3; common/expr/expr_value.c): by --memory where given, 512 MiB
# otherwise. A plan past it fails with exit 1 and one message naming the
# step (number and kind), the namespace, the document's _id, the field
# and the operator, offline, in `check --against` and online (FerretDB and
# mongo-java-server). Loops give their scratch back iteration by
# iteration: a $reduce building a 16 MB string by 250 appends of 64 KiB
# (2 GB if every accumulator were kept) is computed under --memory 64M
# with its peak RSS below 400 MB.
#   REMODEL=build/remodel bash tests/cli/test_expr_memory.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/plans"

python3 - "$T" <<'EOF'
import json, sys
t = sys.argv[1]
json.dump({"t.c": [{"_id": 7, "a": 1}, {"_id": 8, "a": 2}]}, open(t + "/spec.json", "w"))
def plan(name, expr):
    json.dump({"remodel": 1, "steps": [
        {"version": {"in": "t.c", "value": 2}},
        {"set": {"in": "t.c", "fields": {"n": expr}}}]}, open(t + "/plans/%s.json" % name, "w"))
# the issue's: 1 KiB appended 16,000 times
plan("kib", {"$strLenBytes": {"$reduce": {"input": {"$range": [0, 16000]}, "initialValue": "",
                                           "in": {"$concat": ["$$value", "k" * 1024]}}}})
# an array of 1 MiB strings, 1,000 of them asked for: past 64 MiB at the 21st or so
plan("mib", {"$size": {"$let": {"vars": {"k": "m" * 65536}, "in": {"$reduce": {
    "input": {"$range": [0, 1000]}, "initialValue": [],
    "in": {"$concatArrays": ["$$value", [{"$concat": ["$$k"] * 16}]]}}}}}})
# 16 MB by 250 appends of 64 KiB
plan("big", {"$strLenBytes": {"$reduce": {"input": {"$range": [0, 250]}, "initialValue": "",
                                           "in": {"$concat": ["$$value", "b" * 65536]}}}})
# the same through $map: 250 strings of 64 KiB, each made in scratch given back
plan("map", {"$size": {"$map": {"input": {"$range": [0, 250]},
                                "in": {"$concat": ["b" * 32768, "c" * 32768]}}}})
EOF
python3 "$ROOT/tests/transforms/mkdump.py" "$T/in" "@$T/spec.json" ||
    { fail "the source dump" "mkdump failed"; exit 0; }

# n of every document of the result: "7:N 8:N".
values() {
    "$REMODEL" show "$1" --ns t.c 2>/dev/null |
        python3 -c 'import json, sys
print(" ".join("%s:%s" % (d["_id"], d.get("n")) for d in map(json.loads, sys.stdin)))' 2>/dev/null
}

# peak RSS of a command in KiB, into $T/peak (GNU time, else the kernel's
# VmHWM read by a wrapper that waits on the command).
peak() {
    if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then
        /usr/bin/time -o "$T/peak" -f %M "$@" >"$T/out" 2>"$T/err"
        rc=$?
        tail -n 1 "$T/peak" >"$T/peak.1" && mv "$T/peak.1" "$T/peak"
    else
        python3 - "$T/peak" "$@" >"$T/out" 2>"$T/err" <<'EOF'
import os, sys, time
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
hwm = 0
while True:
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmHWM:"):
                hwm = max(hwm, int(line.split()[1]))
    except OSError:
        pass
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.01)
open(sys.argv[1], "w").write("%d\n" % hwm)
sys.exit(os.waitstatus_to_exitcode(status))
EOF
        rc=$?
    fi
}

# past the bound: exit 1, the message once, nothing written
for c in "mib:64M:64 MiB:\$reduce" "kib:16M:16 MiB:"; do
    IFS=: read -r name mem shown op <<<"$c"
    rm -rf "$T/out-$name"
    run_rm run "$T/plans/$name.json" --from "$T/in" --to "$T/out-$name" --memory "$mem"
    expect_eq "$name --memory $mem: exit 1" "$rc" 1
    expect_message "$name --memory $mem: the step, _id, field and operator named" \
        "step 2 (set): t.c: document { \"_id\" : 7 }: field \"n\": $op" \
        "this document's expression values pass $shown of memory (the bound of --memory)"
    expect_eq "$name --memory $mem: said once" "$(grep -c 'pass .* of memory' "$T/err")" 1
    if [ -e "$T/out-$name" ]; then fail "$name --memory $mem: nothing written" "$(ls "$T/out-$name")"
    else pass "$name --memory $mem: nothing written"; fi
done
# the operator that passed it: the array the reduce accumulates
expect_message "mib: the reduce named" "\$reduce: this document's expression values pass"

# check --against reports every document's failure and goes on
run_rm check "$T/plans/mib.json" --against "$T/in" --memory 64M
expect_eq "check --against: exit 1" "$rc" 1
expect_message "check --against: both documents named" \
    'fails: step 2 (set): t.c: document { "_id" : 7 }: field "n": $reduce: this document' \
    'fails: step 2 (set): t.c: document { "_id" : 8 }: field "n": $reduce: this document' \
    "2 document(s) fail the plan's expressions"

# within the bound: the values, in bounded memory
for name in big map; do
    rm -rf "$T/out-$name"
    peak "$REMODEL" run "$T/plans/$name.json" --from "$T/in" --to "$T/out-$name" --memory 64M --quiet
    expect_eq "$name --memory 64M: exit 0" "$rc" 0
    kb=$(cat "$T/peak" 2>/dev/null)
    if [ -n "$kb" ] && [ "$kb" -gt 0 ] && [ "$kb" -lt 409600 ]; then pass "$name --memory 64M: peak RSS ${kb} KiB < 400 MB"
    else fail "$name --memory 64M: peak RSS" "got [${kb}] KiB, want below 409600; $(head -c 300 "$T/err")"; fi
done
expect_eq "big: 16,384,000 bytes" "$(values "$T/out-big")" "7:16384000 8:16384000"
expect_eq "map: 250 strings" "$(values "$T/out-map")" "7:250 8:250"
# without --memory (512 MiB) too
rm -rf "$T/out-big"
run_rm run "$T/plans/big.json" --from "$T/in" --to "$T/out-big"
expect_eq "big, default bound: exit 0" "$rc" 0
expect_eq "big, default bound: the values" "$(values "$T/out-big")" "7:16384000 8:16384000"

# online: the same engine (common/engine/batchstep.c), the same refusal
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "online: external deployments are not used here (skipped)"; exit 0; }
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
for kind in ferretdb java; do
    online_start "$kind" "$T/srv-$kind" || continue
    python3 - "$uri" <<'EOF' 2>"$T/err" || { fail "$kind: the documents" "$(cat "$T/err")"; continue; }
import pymongo, sys
c = pymongo.MongoClient(sys.argv[1])
c.t.c.drop()
c.t.c.insert_many([{"_id": 7, "a": 1}, {"_id": 8, "a": 2}])
EOF
    run_rm online run "$T/plans/mib.json" --uri "$uri" --memory 64M
    expect_eq "$kind: online run --memory 64M: exit 1" "$rc" 1
    expect_message "$kind: online run: the step, _id, field and operator named" \
        "step 2 (set)" "_id" "field \"n\": \$reduce: this document's expression values pass 64 MiB of memory (the bound of --memory)"
done
