#!/usr/bin/env bash
# An extract's children with one _id (issue 34), judged by the real
# mongorestore: on the Atlas sample, accounts embedded into customers by the
# plan `remodel analyze` writes (one account is shared by two customers),
# then extracted back with childRefs: each account once (1,746 documents,
# 1,746 distinct _ids, the accounts' own bytes), restored with no failure
# into FerretDB and mongo-java-server; with parentRef (the copies differ by
# their parent) refused naming both customers, nothing written. And the
# reports: inspect and check --against name a namespace holding one _id
# twice, which mongorestore indeed fails on (in bounded memory too).
. "$(dirname "$0")/lib.sh"

use_peers peers-installed || exit 0
ATLAS=$(atlas_sample)
mkdir -p "$T/tmp"

# ids FILE.bson: "documents distinct-_ids", read by bsondump.
ids() {
    "$BSONDUMP" --quiet "$1" 2>/dev/null | python3 -c '
import json, sys
ids = [json.dumps(json.loads(l)["_id"], sort_keys=True) for l in sys.stdin if l.strip()]
print(len(ids), len(set(ids)))'
}
# restore KIND DUMP NS: mongorestore of NS into a fresh server of KIND; its
# log in $T/restore.log, its status in $rrc.
restore() {
    online_start "$1" "$T/srv-$1" || { rrc=99; return; }
    "$MONGORESTORE" --uri "$uri" --dir "$2" --nsInclude "$3" >"$T/restore.log" 2>&1
    rrc=$?
    "$SERVER" stop "$T/srv-$1" >/dev/null 2>&1
}

# --- the Atlas sample: embed, then extract with childRefs --------------------
run_rm analyze "$ATLAS" --ns 'sample_analytics.*' --plan-out "$T/embed.json" -q
expect_eq atlas-analyze "$rc" 0
grep -q '"keepSource" : true' "$T/embed.json"
expect_eq atlas-plan-embeds-accounts-keeping-them "$?" 0
run_rm run "$T/embed.json" --from "$ATLAS" --nsInclude 'sample_analytics.*' --to "$T/emb" -q
expect_eq atlas-embed "$rc" 0

# The account two customers hold, and those customers' _ids.
python3 - "$T/emb/sample_analytics/customers.bson" >"$T/shared" <<'PY'
import bson, sys, collections
held = collections.defaultdict(list)
for d in bson.decode_file_iter(open(sys.argv[1], "rb")):
    for a in d.get("accounts", []):
        held[a["_id"]].append(d["_id"])
for k, v in held.items():
    if len(v) > 1:
        print(k, *v)
PY
# Two accounts come twice (one shared, one of a duplicated account_id); the
# error names the one of the smallest _id.
read -r SHARED P1 P2 < <(sort "$T/shared")
expect_eq atlas-shared-accounts "$(wc -l <"$T/shared") ${#P2}" "2 24"

for style in childRefs both parentRef; do
    cat >"$T/x-$style.json" <<EOF2
{"remodel": 1, "steps": [{"extract": {"from": "sample_analytics.customers", "path": "accounts",
  "to": "sample_analytics.held", "style": "$style"}}]}
EOF2
done
for v in "" "--batch --memory 1K"; do
    n=childRefs${v:+-batch}
    rm -rf "$T/x"
    run_rm run "$T/x-childRefs.json" --from "$T/emb" --to "$T/x" -q --tmp "$T/tmp" $v
    expect_eq "$n-status" "$rc" 0
    expect_message "$n-warning" 'remodel: warning: step 1 (extract): 2 element(s) of "accounts" made a child already made from another (the same _id and contents): written once to sample_analytics.held'
    expect_eq "$n-each-account-once" "$(ids "$T/x/sample_analytics/held.bson")" "1746 1746"
    # The accounts' own documents, byte for byte (as a multiset).
    expect_eq "$n-the-accounts-bytes" \
        "$("$BSONDUMP" --quiet "$T/x/sample_analytics/held.bson" 2>/dev/null | sort | sha1sum)" \
        "$("$BSONDUMP" --quiet "$ATLAS/sample_analytics/accounts.bson" 2>/dev/null | sort | sha1sum)"
    expect_eq "$n-tmp-empty" "$(ls -A "$T/tmp")" ""
done

for kind in ferretdb java; do
    restore "$kind" "$T/x" 'sample_analytics.held'
    expect_eq "mongorestore-$kind-extracted" "$rrc" 0
    grep -q '1746 document(s) restored successfully. 0 document(s) failed to restore' "$T/restore.log"
    expect_eq "mongorestore-$kind-extracted-all-restored" "$?" 0
done

# The copies differ by their parent reference: refused, naming both.
for style in parentRef both; do
    rm -rf "$T/y"
    run_rm run "$T/x-$style.json" --from "$T/emb" --to "$T/y" -q --tmp "$T/tmp"
    expect_eq "$style-refused" "$rc" 1
    expect_message "$style-names-both-parents" \
        "remodel: error: $T/x-$style.json: step 1 (extract): two results for sample_analytics.held with one _id ({ \"_id\" : { \"\$oid\" : \"$SHARED\" } }, from the parents { \"_id\" : { \"\$oid\" : \"$P1\" } } and { \"_id\" : { \"\$oid\" : \"$P2\" } }, with different contents): stopping before either overwrites the other"
    expect_eq "$style-one-line" "$(wc -l <"$T/err")" 1
    expect_eq "$style-nothing-written" "$([ -e "$T/y" ] && echo y)$(ls -A "$T/tmp")" ""
done

# --- duplicate _ids reported ---------------------------------------------------
python3 "$ROOT/tests/transforms/mkdump.py" "$T/dup" '{
  "dup.a": [{"_id": 1}, {"_id": 2}, {"_id": 1.0, "x": 1}, {"_id": 2}, {"_id": 3}],
  "dup.b": [{"_id": 1}, {"_id": 2}],
  "dup.c": [{"_id": "x"}, {"_id": "x"}]}'
# The judge: mongorestore fails on them (goes on, exit 0, and counts them).
restore ferretdb "$T/dup" 'dup.*'
grep -q '6 document(s) restored successfully. 3 document(s) failed to restore' "$T/restore.log"
expect_eq mongorestore-fails-on-duplicate-ids "$?" 0

WANT='dup.a: 2 document(s) with an _id an earlier document of it has (the first: { "_id" : 1 }): mongorestore would fail on them (and 1 more namespace(s))'
for v in "" "--memory 1K"; do
    n=inspect${v:+-memory-1K}
    run_rm inspect "$T/dup" -q --tmp "$T/tmp" $v
    expect_eq "$n-status" "$rc" 1
    expect_message "$n-error" "remodel: error: $WANT"
    grep -F "problem: $WANT" "$T/out" >/dev/null
    expect_eq "$n-problem" "$?" 0
    expect_eq "$n-marks" "$(grep -o '^dup\.[a-z].*\[[0-9]* duplicate _id\]' "$T/out" | sed 's/ .*\[/ [/')" \
        "$(printf 'dup.a [2 duplicate _id]\ndup.c [1 duplicate _id]')"
    expect_eq "$n-tmp-empty" "$(ls -A "$T/tmp")" ""
done
run_rm inspect "$T/dup" -q --json
expect_eq inspect-json "$(python3 -c 'import json,sys
print([n["duplicateIds"] for n in json.load(open(sys.argv[1]))["namespaces"]])' "$T/out")" "[2, 0, 1]"
run_rm inspect "$T/x" -q
expect_eq inspect-extracted-clean "$rc $(grep -c 'duplicate _id' "$T/out")" "0 0"

# check --against: the plan's result, duplicates it keeps or makes.
echo '{"remodel": 1, "steps": [{"set": {"in": "dup.b", "fields": {"y": 1}}}]}' >"$T/set.json"
run_rm check "$T/set.json" --against "$T/dup" -q --memory 1K --tmp "$T/tmp"
expect_eq check-against-duplicates "$rc" 1
expect_message check-against-names-them "remodel: error: $T/set.json: $WANT"
echo '{"remodel": 1, "steps": [{"set": {"in": "sample_analytics.held", "fields": {"y": 1}}}]}' >"$T/set.json"
run_rm check "$T/set.json" --against "$T/x" -q
expect_eq check-against-clean "$rc" 0
run_rm check "$T/x-childRefs.json" --against "$T/emb" -q
expect_eq check-against-extract "$rc" 0
expect_message check-against-extract-warns 'written once to sample_analytics.held'
