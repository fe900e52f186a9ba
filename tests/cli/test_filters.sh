#!/usr/bin/env bash
# A step's "filter" and a join's "match" (issue 48, part 4; remodel/plan.h):
# for each step kind, a plan with a filter (and a match for the joins) run
# over the sample dump through the one-pass path, the batch path (--batch)
# and the external sort-merge (--memory 1K), which must give the same
# documents; then the documents themselves checked against the input: the
# selected ones changed as the step says, every other one byte for byte as
# it was (`show` lines), the summary's counts right. Also: a query that
# fails stops the run naming the document, and "match" on a step that
# takes none is refused.
#   REMODEL=build/remodel bash tests/cli/test_filters.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/dumps/sample
plan() { printf '%s' "$2" >"$T/$1.json"; }
show() { "$REMODEL" show "$1" --ns "$2"; }
for ns in crm.people crm.tasks iot.readings; do show "$S" $ns >"$T/in.$ns"; done

# runs NAME NS...: the plan NAME.json run in every mode (exit 0, nothing
# said), each mode's documents of each NS the same as the one-pass path's
# ($T/NAME.NS: its `show` lines), and the summary of a dry run in
# $T/NAME.rows.
runs() {
    local n=$1 mode extra ns; shift
    for mode in one-pass --batch --memory=1K; do
        extra=; [ $mode = one-pass ] || extra=${mode/=/ }
        run_rm run -q $extra "$T/$n.json" --from "${SRC:-$S}" --to "$T/$n$mode.archive"
        expect_eq "$n ($mode): runs" "$rc:$(cat "$T/err")" "0:"
    done
    for ns in "$@"; do
        show "$T/${n}one-pass.archive" $ns >"$T/$n.$ns"
        for mode in --batch --memory=1K; do
            show "$T/$n$mode.archive" $ns >"$T/$n.$ns$mode"
            check "$n: $ns: $mode gives the one-pass path's documents" cmp -s "$T/$n.$ns" "$T/$n.$ns$mode"
        done
    done
    run_rm run "$T/$n.json" --from "${SRC:-$S}" --dry-run
    cp "$T/out" "$T/$n.rows"
}
row() { awk -v ns="$1" '$1 == ns { $1 = ""; print substr($0, 2) }' "$T/$2.rows"; }

# The checks over `show` lines (the documents as JSON, in order): each
# prints "ok" or what is wrong.
cat >"$T/chk.py" <<'PY'
import json, sys
T = sys.argv[1]
def lines(path):
    with open(path) as f:
        return [l.rstrip("\n") for l in f]
def docs(path):
    return [json.loads(l) for l in lines(path)]
def oid(v):
    return v["$oid"] if isinstance(v, dict) and "$oid" in v else v
people_l, tasks_l = lines(T + "/in.crm.people"), lines(T + "/in.crm.tasks")
people, tasks = [json.loads(l) for l in people_l], [json.loads(l) for l in tasks_l]
active = {oid(p["_id"]) for p in people if p.get("active") is True}
bad = []
def expect(cond, what):
    if not cond and len(bad) < 5:
        bad.append(what)
def same_but(a, b, added):
    """b is a with the fields `added` (a dict) set: those replaced where
    they stand or appended, every other field as it was, in its place."""
    want = dict(a)
    for k, v in added.items():
        want[k] = v
    return list(b.items()) == list(want.items())

def embed(n):
    out_p, out_t = lines(T + "/%s.crm.people" % n), lines(T + "/%s.crm.tasks" % n)
    taken = set()
    expect(len(out_p) == len(people_l), "people: %d out of %d" % (len(out_p), len(people_l)))
    for a_l, b_l in zip(people_l, out_p):
        a, b = json.loads(a_l), json.loads(b_l)
        if a.get("active") is not True:
            expect(a_l == b_l, "a person the filter leaves out changed: " + b_l[:200])
            continue
        kids = sorted((t for t in tasks if oid(t["owner"]) == oid(a["_id"]) and t.get("done") is False),
                      key=lambda t: oid(t["_id"]))
        taken |= {oid(t["_id"]) for t in kids}
        proj = [{k: v for k, v in t.items() if k != "owner"} for t in kids]
        expect(same_but(a, b, {"tasks": proj, "n": len(kids)}), "person %s: got %s" % (oid(a["_id"]), b_l[:300]))
    left = [l for l, t in zip(tasks_l, tasks) if oid(t["_id"]) not in taken]
    expect(out_t == left, "tasks: %d out, want the %d no parent took, as they were" % (len(out_t), len(left)))
    print("ok" if not bad else "; ".join(bad), len(taken), len(left))

def summarize(n):
    out_p = lines(T + "/%s.crm.people" % n)
    expect(lines(T + "/%s.crm.tasks" % n) == tasks_l, "tasks changed")
    for a_l, b_l in zip(people_l, out_p):
        a, b = json.loads(a_l), json.loads(b_l)
        if a.get("active") is not True:
            expect(a_l == b_l, "a person the filter leaves out changed: " + b_l[:200])
            continue
        kids = [t for t in tasks if oid(t["owner"]) == oid(a["_id"]) and t.get("done") is False]
        want = {"open": len(kids), "prio": sum(t["priority"] for t in kids if isinstance(t.get("priority"), int))}
        expect(same_but(a, b, want), "person %s: got %s" % (oid(a["_id"]), b_l[:300]))
    print("ok" if not bad else "; ".join(bad))

def denormalize(n):
    out_t = lines(T + "/%s.crm.tasks" % n)
    expect(lines(T + "/%s.crm.people" % n) == people_l, "people changed")
    found = {oid(p["_id"]): p for p in people if p.get("active") is True}
    copied = missed = 0
    for a_l, b_l in zip(tasks_l, out_t):
        a, b = json.loads(a_l), json.loads(b_l)
        if a.get("done") is not False:
            expect(a_l == b_l, "a task the filter leaves out changed: " + b_l[:200])
            continue
        p = found.get(oid(a["owner"]))
        # found: its email copied (none when it has none); not: null
        want = {} if p is not None and "email" not in p else {"owner_email": p["email"] if p else None}
        copied += bool(want) and p is not None
        missed += p is None
        expect(same_but(a, b, want), "task %s: got %s" % (oid(a["_id"]), b_l[:300]))
    expect(len(out_t) == len(tasks_l), "tasks: %d out of %d" % (len(out_t), len(tasks_l)))
    print("ok" if not bad else "; ".join(bad), copied, missed)

def extract(n):
    out_p, out_a = lines(T + "/%s.crm.people" % n), docs(T + "/%s.crm.addresses" % n)
    kids = []
    for a_l, b_l in zip(people_l, out_p):
        a, b = json.loads(a_l), json.loads(b_l)
        if a.get("active") is not True:
            expect(a_l == b_l, "a person the filter leaves out changed: " + b_l[:200])
            continue
        mine = [c for c in out_a if c["parent_id"] == a["_id"]]
        expect([{k: v for k, v in c.items() if k not in ("_id", "parent_id")} for c in mine] == a.get("addresses", []),
               "person %s: its children %s" % (oid(a["_id"]), mine))
        if "addresses" in a:
            expect(same_but(a, b, {"addresses": [c["_id"] for c in mine]}), "person %s: got %s" % (oid(a["_id"]), b_l[:300]))
        kids += mine
    expect(len(kids) == len(out_a), "%d children, %d of active people" % (len(out_a), len(kids)))
    print("ok" if not bad else "; ".join(bad), len(out_a))

def bucketize(n, keep):
    readings_l = lines(T + "/in.iot.readings")
    readings = [json.loads(l) for l in readings_l]
    out_r, buckets = lines(T + "/%s.iot.readings" % n), docs(T + "/%s.iot.buckets" % n)
    sel = {"s1", "s2"}
    want_left = readings_l if keep == "keep" else [l for l, r in zip(readings_l, readings) if r.get("sensor_id") not in sel]
    expect(out_r == want_left, "readings: %d left, want %d, as they were" % (len(out_r), len(want_left)))
    expect(all(b["sensor_id"] in sel for b in buckets), "a bucket of a reading the filter leaves out")
    got = sorted(json.dumps(dict(m, sensor_id=b["sensor_id"]), sort_keys=True) for b in buckets for m in b["measurements"])
    want = sorted(json.dumps(r, sort_keys=True) for r in readings if r.get("sensor_id") in sel)
    expect(got == want, "the buckets hold %d readings, want the %d selected" % (len(got), len(want)))
    expect(sum(b["count"] for b in buckets) == len(want), "counts")
    print("ok" if not bad else "; ".join(bad), len(want), len(out_r))

def unbucketize(n, keep):
    all_b = lines(T + "/all.iot.buckets")
    out_b, back = lines(T + "/%s.iot.buckets" % n), lines(T + "/%s.iot.back" % n)
    want_b = all_b if keep == "keep" else [l for l in all_b if json.loads(l)["sensor_id"] != "s1"]
    expect(out_b == want_b, "buckets: %d left, want %d, as they were" % (len(out_b), len(want_b)))
    s1 = [l for l in lines(T + "/in.iot.readings") if json.loads(l).get("sensor_id") == "s1"]
    expect(sorted(back) == sorted(s1), "%d readings back, want the %d of s1 byte for byte" % (len(back), len(s1)))
    print("ok" if not bad else "; ".join(bad), len(back), len(out_b))

f = globals()[sys.argv[2]]
f(*sys.argv[3:])
PY
chk() { python3 "$T/chk.py" "$T" "$@"; }
JOIN='"from": "crm.tasks", "localField": "_id", "foreignField": "owner"'
ACTIVE='"filter": {"active": true}'
OPEN='"match": {"done": false}'

# --- embed: the filter picks the parents, the match the children ----------------
plan embed "{\"remodel\": 1, \"steps\": [{\"embed\": {$JOIN, \"into\": \"crm.people\", \"as\": \"tasks\", \"countAs\": \"n\", \"project\": {\"owner\": 0}, $ACTIVE, $OPEN}}]}"
runs embed crm.people crm.tasks
set -- $(chk embed embed)
expect_eq "embed: the active people take their open tasks, the others are as they were; the rest of the tasks stay" "$1" ok
expect_eq "embed: the summary counts what was embedded and what stayed" \
    "$(row crm.people embed) / $(row crm.tasks embed)" "98 98 $2 0 0 0 0 0 / 1000 $3 0 $3 0 0 0 0"
# keepSource: every task stays, the same ones embedded
plan embedk "{\"remodel\": 1, \"steps\": [{\"embed\": {$JOIN, \"into\": \"crm.people\", \"as\": \"tasks\", \"countAs\": \"n\", \"project\": {\"owner\": 0}, \"keepSource\": true, $ACTIVE, $OPEN}}]}"
runs embedk crm.people crm.tasks
check "embed, keepSource: the people as without it" cmp -s "$T/embedk.crm.people" "$T/embed.crm.people"
check "embed, keepSource: every task as it was" cmp -s "$T/embedk.crm.tasks" "$T/in.crm.tasks"
# a match taking no child: every active person gets [], nothing is refused
# (the check that a join matched something counts what the queries took)
plan embed0 "{\"remodel\": 1, \"steps\": [{\"embed\": {$JOIN, \"into\": \"crm.people\", \"as\": \"tasks\", $ACTIVE, \"match\": {\"done\": \"never\"}}}]}"
run_rm run -q "$T/embed0.json" --from "$S" --to "$T/embed0.archive"
expect_eq "embed, a match taking no child: runs" "$rc:$(cat "$T/err")" "0:"
expect_eq "embed, a match taking no child: the active people get [], the tasks stay" \
    "$(show "$T/embed0.archive" crm.people | grep -c '"tasks":\[\]'):$(show "$T/embed0.archive" crm.tasks | wc -l)" \
    "$(grep -c '"active":true' "$T/in.crm.people"):1000"

# --- summarize: the filter picks the parents, the match what is accumulated -----
plan sum "{\"remodel\": 1, \"steps\": [{\"summarize\": {\"into\": \"crm.people\", $JOIN, \"fields\": {\"open\": {\"\$count\": {}}, \"prio\": {\"\$sum\": \"\$priority\"}}, $ACTIVE, $OPEN}}]}"
runs sum crm.people crm.tasks
expect_eq "summarize: the active people get their open tasks' summary, the others are as they were" "$(chk summarize sum)" ok

# --- denormalize: the filter picks the documents of in, the match what is found --
plan den '{"remodel": 1, "steps": [{"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner", "fields": {"owner_email": "email"}, "onMissing": "null", "filter": {"done": false}, "match": {"active": true}}}]}'
runs den crm.tasks crm.people
set -- $(chk denormalize den)
expect_eq "denormalize: the open tasks get their active owner's email (null for the others: onMissing), the rest as they were" "$1" ok
expect_eq "denormalize: MISSED counts the references the match left without a document" "$(row crm.tasks den)" "1000 1000 0 0 0 0 $3 0"
plan denk '{"remodel": 1, "steps": [{"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner", "fields": {"owner_email": "email"}, "onMissing": "keep", "filter": {"done": false}, "match": {"active": true}}}]}'
runs denk crm.tasks
expect_eq "denormalize, onMissing keep: a reference to a person the match leaves out is left as it is" \
    "$(python3 -c 'import sys
a = open(sys.argv[1]).read().splitlines(); b = open(sys.argv[2]).read().splitlines()
print(sum(x != y for x, y in zip(a, b)), sum("owner_email" in y for y in b))' "$T/in.crm.tasks" "$T/denk.crm.tasks")" "$2 $2"

# --- extract: the filter picks the documents whose array is taken apart ---------
plan ext '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "crm.addresses", "style": "both", "filter": {"active": true}}}]}'
runs ext crm.people crm.addresses
set -- $(chk extract ext)
expect_eq "extract: the active people's addresses become children, the others keep theirs as they were" "$1" ok
expect_eq "extract: EXTRACTED counts their children only" "$(row crm.addresses ext)" "0 $2 0 0 0 $2 0 0 (new)"

# --- bucketize: the filter picks the readings bucketed; the others stay ---------
BUCK='"from": "iot.readings", "to": "iot.buckets", "timeField": "ts", "metaField": "sensor_id", "granularity": "hours"'
plan buck "{\"remodel\": 1, \"steps\": [{\"bucketize\": {$BUCK, \"filter\": {\"sensor_id\": {\"\$in\": [\"s1\", \"s2\"]}}}}]}"
runs buck iot.readings iot.buckets
set -- $(chk bucketize buck drop)
expect_eq "bucketize: the readings of s1 and s2 in buckets; iot.readings keeps exactly the others, as they were" "$1" ok
expect_eq "bucketize: the summary: readings in, those left out, the bucketed ones" "$(row iot.readings buck)" "1600 $3 0 0 0 0 0 0"
plan buckk "{\"remodel\": 1, \"steps\": [{\"bucketize\": {$BUCK, \"keepSource\": true, \"filter\": {\"sensor_id\": {\"\$in\": [\"s1\", \"s2\"]}}}}]}"
runs buckk iot.readings iot.buckets
expect_eq "bucketize, keepSource: the same buckets, every reading stays" "$(chk bucketize buckk keep | cut -d' ' -f1)" ok
check "bucketize, keepSource: the buckets as without it" cmp -s "$T/buckk.iot.buckets" "$T/buck.iot.buckets"

# --- unbucketize: the filter picks the buckets unpacked; the others stay --------
plan all "{\"remodel\": 1, \"steps\": [{\"bucketize\": {$BUCK}}]}"
run_rm run -q "$T/all.json" --from "$S" --to "$T/buckets"
show "$T/buckets" iot.buckets >"$T/all.iot.buckets"
UNB='"from": "iot.buckets", "to": "iot.back", "timeField": "ts", "metaField": "sensor_id", "filter": {"sensor_id": "s1"}'
plan unb "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {$UNB, \"keepSource\": false}}]}"
SRC=$T/buckets runs unb iot.buckets iot.back
expect_eq "unbucketize: the buckets of s1 give their readings back byte for byte; iot.buckets keeps the others as they were" \
    "$(chk unbucketize unb drop | cut -d' ' -f1)" ok
# keepSource (the default here): the one-pass path's stage
plan unbk "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {$UNB}}]}"
SRC=$T/buckets runs unbk iot.buckets iot.back
expect_eq "unbucketize, keepSource (one pass): the same readings back, every bucket stays" \
    "$(chk unbucketize unbk keep | cut -d' ' -f1)" ok

# --- a filter or a match that fails stops the run, naming the document ----------
FAIL='{"$expr": {"$toInt": "$name"}}'
FAILT='{"$expr": {"$toInt": "$description"}}'
# fails NAME PLAN STRING...: every mode exits 1 with one line holding every
# STRING, and writes nothing.
fails() {
    local n=$1 mode extra; printf '%s' "$2" >"$T/$n.json"; shift 2
    for mode in one-pass --batch --memory=1K; do
        extra=; [ $mode = one-pass ] || extra=${mode/=/ }
        run_rm run -q $extra "$T/$n.json" --from "${SRC:-$S}" --to "$T/$n-fail.archive"
        expect_eq "$n ($mode): exit 1, one line" "$rc:$(grep -c . "$T/err")" "1:1"
        expect_message "$n ($mode): names the step, the document and the query" "$@"
        expect_eq "$n ($mode): writes nothing" "$(ls -A "$T" | grep -c -e "$n-fail" -e '\.remodel-')" 0
    done
}
fails embed-filter "{\"remodel\": 1, \"steps\": [{\"embed\": {$JOIN, \"into\": \"crm.people\", \"as\": \"tasks\", \"filter\": $FAIL}}]}" \
    'step 1 (embed): crm.people: document { "_id" : { "$oid" : "4effa2006e278b470a2e7f05" } }: filter: $toInt'
fails embed-match "{\"remodel\": 1, \"steps\": [{\"embed\": {$JOIN, \"into\": \"crm.people\", \"as\": \"tasks\", \"match\": $FAILT}}]}" \
    'step 1 (embed): crm.tasks: document { "_id" : { "$oid" : "51a97eb475586ac5db168439" } }: match: $toInt'
fails sum-match "{\"remodel\": 1, \"steps\": [{\"summarize\": {\"into\": \"crm.people\", $JOIN, \"fields\": {\"n\": {\"\$count\": {}}}, \"match\": $FAILT}}]}" \
    'step 1 (summarize): crm.tasks: document { "_id" : { "$oid" : "51a97eb475586ac5db168439" } }: match: $toInt'
fails den-filter "{\"remodel\": 1, \"steps\": [{\"denormalize\": {\"in\": \"crm.tasks\", \"from\": \"crm.people\", \"localField\": \"owner\", \"fields\": {\"e\": \"email\"}, \"filter\": $FAILT}}]}" \
    'step 1 (denormalize): crm.tasks: document { "_id" : { "$oid" : "51a97eb475586ac5db168439" } }: filter: $toInt'
fails den-match "{\"remodel\": 1, \"steps\": [{\"denormalize\": {\"in\": \"crm.tasks\", \"from\": \"crm.people\", \"localField\": \"owner\", \"fields\": {\"e\": \"email\"}, \"match\": $FAIL}}]}" \
    'step 1 (denormalize): crm.people: document { "_id" : { "$oid" : "4effa2006e278b470a2e7f05" } }: match: $toInt'
fails ext-filter "{\"remodel\": 1, \"steps\": [{\"extract\": {\"from\": \"crm.people\", \"path\": \"addresses\", \"to\": \"crm.addresses\", \"style\": \"both\", \"filter\": $FAIL}}]}" \
    'step 1 (extract): crm.people: document { "_id" : { "$oid" : "4effa2006e278b470a2e7f05" } }: filter: $toInt'
fails buck-filter "{\"remodel\": 1, \"steps\": [{\"bucketize\": {$BUCK, \"filter\": {\"\$expr\": {\"\$toInt\": \"\$sensor_id\"}}}}]}" \
    'step 1 (bucketize): iot.readings: document { "_id" : { "$oid" : "661c6e0bbf3edb3ea7ed168d" } }: filter: $toInt'
SRC=$T/buckets fails unb-filter "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.back\", \"timeField\": \"ts\", \"metaField\": \"sensor_id\", \"filter\": {\"\$expr\": {\"\$toInt\": \"\$sensor_id\"}}}}]}" \
    'step 1 (unbucketize): iot.buckets: document {' 'filter: $toInt'

# check --against asks every document first: how many fail, the first named
plan both "{\"remodel\": 1, \"steps\": [{\"embed\": {$JOIN, \"into\": \"crm.people\", \"as\": \"tasks\", \"filter\": $FAIL, \"match\": $FAILT}}]}"
run_rm check "$T/both.json" --against "$S"
expect_eq "check --against: exits 1 after every document" "$rc:$(grep -c '^remodel: warning: fails: step 1 (embed)' "$T/err")" "1:5"
expect_message "check --against: every person and every task counted (filter and match)" \
    "$T/both.json: 1098 document(s) fail the plan's expressions or filters"
plan ext-check "{\"remodel\": 1, \"steps\": [{\"extract\": {\"from\": \"crm.people\", \"path\": \"addresses\", \"to\": \"crm.addresses\", \"style\": \"both\", \"filter\": $FAIL}}]}"
run_rm check "$T/ext-check.json" --against "$S"
expect_message "check --against, extract: every person counted" "98 document(s) fail the plan's expressions or filters"

# --- a filter leaving out documents that lack the field it compares: a warning --
plan lack '{"remodel": 1, "steps": [{"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner", "fields": {"owner_email": "email"}, "filter": {"priority": {"$lt": 2}}}}]}'
missing_prio=$(grep -vc '"priority"' "$T/in.crm.tasks")
for mode in one-pass --batch --memory=1K; do
    extra=; [ $mode = one-pass ] || extra=${mode/=/ }
    run_rm run -q $extra "$T/lack.json" --from "$S" --to "$T/lack$mode.archive"
    expect_eq "a filter comparing a field some lack ($mode): runs, and says how many it left out so" "$rc:$(cat "$T/err")" \
        "0:remodel: warning: step 1 (denormalize): filter: $missing_prio document(s) lack \"priority\", which the filter compares, and so were left as they were (a comparison such as \$lt never matches a missing field: to take them too, add {\"priority\": {\"\$exists\": false}} in an \$or)"
done
plan lack2 "{\"remodel\": 1, \"steps\": [{\"summarize\": {\"into\": \"crm.tasks\", \"from\": \"crm.people\", \"localField\": \"owner\", \"foreignField\": \"_id\", \"fields\": {\"n\": {\"\$count\": {}}}, \"filter\": {\"priority\": {\"\$lt\": 2}}}}]}"
for mode in one-pass --memory=1K; do
    extra=; [ $mode = one-pass ] || extra=${mode/=/ }
    run_rm run -q $extra "$T/lack2.json" --from "$S" --to "$T/lack2$mode.archive"
    expect_message "the same from a join's parents ($mode), counted once each" "step 1 (summarize): filter: $missing_prio document(s) lack \"priority\""
done

# --- "match" only where a step joins ----------------------------------------------
for st in '"extract": {"from": "crm.people", "path": "addresses", "to": "crm.addresses", "style": "both"' \
          "\"bucketize\": {$BUCK" '"set": {"in": "crm.people", "fields": {"x": 1}'; do
    op=${st#\"}; op=${op%%\"*}
    plan m "{\"remodel\": 1, \"steps\": [{$st, \"match\": {\"a\": 1}}}]}"
    run_rm check "$T/m.json"
    expect_eq "$op: \"match\" is refused at plan load" "$rc" 2
    expect_message "$op: \"match\": an unknown key, named" "step 1 ($op): \"match\": unknown key"
done
