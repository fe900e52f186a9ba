#!/usr/bin/env bash
# remodel compile --format views (issue 63): for each namespace a plan
# changed, the `create` command of a view over the new collections giving
# back the old documents.
# - without a server: one line per view, in the plan's order; the
#   namespaces no pipeline gives back exactly (a set, an embed with a
#   filter) named with the step and the reason, and no line for them; a
#   --server-version without $unionWith refuses the view that needs it;
# - on mongo-java-server, holding `remodel run`'s output of the plan over
#   the sample dump: each view's pipeline (its $unionWith stages run as
#   their own aggregates: the server has neither views nor $unionWith,
#   tests/transforms/views_same.py) gives back the dump's namespace,
#   document for document, typed-equal; an embed of crm.tasks (with the
#   orphans), one plan of embed, extract, rename, denormalize and
#   bucketize, a rename of the children before an embed (its inverse
#   inside the orphans' $unionWith too), and an extract of arrays whose
#   elements' _ids are in no order (they come back in the array's order); a wrong value in an
#   embedded child is caught;
# - --format validators: a collMod per namespace the plan writes fields to
#   (moderate; warn, or --action error), the types the steps decide, or
#   with --against the output dump those analyze counts; every output
#   document satisfies its validator (tests/transforms/validators_check.py:
#   the server has no $jsonSchema), and a task whose done is made a
#   string in one parent's array does not.
#   REMODEL=build/remodel bash tests/cli/test_compile_views.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
C=$ROOT/tests/transforms/cases/views
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
export PYTHONPATH=$ROOT/tests/transforms

# views NAME PLAN ARGS...: the views in $T/NAME.views, stderr in $T/err.
views() { local n=$1 p=$2; shift 2; "$REMODEL" compile "$p" --format views "$@" >"$T/$n.views" 2>"$T/err"; rc=$?; }
# The views' names and what they read, a line each.
names() { python3 -c "import sys; from bson import json_util
for l in open(sys.argv[1]):
    c = json_util.loads(l)
    print(c['db'], c['command']['create'], c['command']['viewOn'])" "$T/$1.views"; }

# ---- compile's output, no server ----
views crm "$ROOT/dumps/plans/embed-tasks.json" --canonical
expect_eq "views: an embed exits 0, nothing on stderr" "$rc:$(cat "$T/err")" "0:"
expect_eq "views: the children and the parents, each over the parents" "$(names crm)" \
    "crm tasks_before people
crm people_before people"
expect_eq "views: the children unwound, the reference given back, the orphans added" \
    "$(python3 -c "import sys; from bson import json_util
c = json_util.loads(open(sys.argv[1]).readline())['command']['pipeline']
print([list(s)[0] for s in c], c[1]['\$replaceRoot']['newRoot'], c[2]['\$unionWith'])" "$T/crm.views")" \
    "['\$unwind', '\$replaceRoot', '\$unionWith'] {'\$mergeObjects': ['\$tasks', {'owner': '\$_id'}]} {'coll': 'tasks', 'pipeline': []}"
views crm-shell "$ROOT/dumps/plans/embed-tasks.json"
expect_eq "views: the default output is mongosh's syntax, the same commands" \
    "$(wc -l <"$T/crm-shell.views"):$(grep -c '"\$numberInt"' "$T/crm-shell.views")" "2:0"

views composite "$C/composite.json" --canonical
expect_eq "views: a plan of five steps, a view per namespace it changed, in the plan's order" \
    "$(names composite)" "blog comments_before posts
blog posts_before posts
logging logmsg_before logmsg
iot readings_before buckets"
expect_eq "views: the denormalized copies projected away" \
    "$(sed -n 3p "$T/composite.views" | python3 -c "import sys; from bson import json_util
print(json_util.loads(sys.stdin.read())['command']['pipeline'])")" \
    "[{'\$project': {'hostname': 0, 'dc': 0}}]"

views refused "$C/refused.json" --canonical
expect_eq "views: refused namespaces exit 0 and print no view" "$rc:$(names refused)" \
    "0:blog posts_before posts
school courses_before courses"
expect_message "views: a set and a filtered embed named with the step and the reason" \
    "remodel: compile: no view of crm.people: step 1 (set): set wrote computed values over the old ones" \
    "remodel: compile: no view of blog.comments: step 2 (embed): with a filter or match the children left in the source cannot be told apart"
expect_eq "views: the parents of the filtered embed still have theirs" \
    "$(grep -c '"posts_before"' "$T/refused.views")" 1
views old "$ROOT/dumps/plans/embed-tasks.json" --canonical --server-version 4.2
expect_message "views --server-version 4.2: the orphans need \$unionWith" \
    "no view of crm.tasks: step 1 (embed): the view needs \$unionWith (MongoDB 4.4) to add crm.tasks's documents"
expect_eq "views --server-version 4.2: the parents' view only" "$(names old)" "crm people_before people"
views q "$C/refused.json" --quiet
expect_eq "views --quiet: the refusals not named" "$(cat "$T/err")" ""

# ---- mongo-java-server: the views give the dump back ----
online_start java "$T/java" || exit 0
# same NAME PLAN: the plan run offline over the sample, restored (the
# collections it leaves replacing theirs), its views compared with the
# sample.
same() {
    local n=$1 plan=$2
    rm -rf "$T/out-$n"
    "$REMODEL" run "$plan" --from "$S" --to "$T/out-$n" --format dir >"$T/run" 2>&1 ||
        { fail "$n: remodel run" "$(tail -3 "$T/run")"; return; }
    "$MONGORESTORE" --uri "$uri" --dir "$T/out-$n" --drop >"$T/restore" 2>&1 ||
        { fail "$n: restore" "$(tail -3 "$T/restore")"; return; }
    if python3 "$ROOT/tests/transforms/views_same.py" "$uri" "$S" "$T/$n.views" >"$T/same-$n" 2>&1; then
        pass "$n: every view gives back the dump's namespace ($(tr '\n' ';' <"$T/same-$n"))"
    else
        fail "$n: every view gives back the dump's namespace" "$(cat "$T/same-$n")"
    fi
}
same crm "$ROOT/dumps/plans/embed-tasks.json"
same composite "$C/composite.json"
# A rename of the children before the embed: its inverse applies to the
# unwound children and, inside the $unionWith, to the orphans.
"$REMODEL" compile "$C/union.json" --format views --canonical >"$T/union.views" 2>"$T/err"
expect_eq "views: a stage after a \$unionWith goes before it and into its pipeline" \
    "$(python3 -c "import sys; from bson import json_util
p = json_util.loads(open(sys.argv[1]).readline())['command']['pipeline']
print([list(s)[0] for s in p], [list(s)[0] for s in p[-1]['\$unionWith']['pipeline']])" "$T/union.views")" \
    "['\$unwind', '\$replaceRoot', '\$replaceRoot', '\$unionWith'] ['\$replaceRoot']"
same union "$C/union.json"
# An extract's elements come back in their order, not their _ids': orders
# whose lines have _ids in no order and values of several types; an order
# without lines, one whose lines are null (both left as they were).
python3 - "$T/shop" <<'PY'
import sys, bson, rmlib
from bson.int64 import Int64
orders = []
for i in range(30):
    o = {"_id": i, "customer": "c%d" % (i % 7)}
    if i % 10 == 3:
        pass
    elif i % 10 == 4:
        o["lines"] = None
    else:
        o["lines"] = [{"_id": (i * 37 + k * 11) % 101 + 1000 * i, "sku": "s%d" % k,
                       "qty": [1, Int64(2), 2.5, None][k % 4]} for k in range(i % 5 + 1)]
    o["total"] = bson.Decimal128("%d.10" % i)
    orders.append(o)
rmlib.write_dump(sys.argv[1], {"shop.orders": orders})
PY
"$REMODEL" compile "$C/extract.json" --format views --canonical >"$T/extract.views" 2>"$T/err"
S=$T/shop same extract "$C/extract.json"

# The comparison catches a wrong child: one embedded task's done flag made
# a string in the output.
"$MONGORESTORE" --uri "$uri" --dir "$T/out-crm" --nsInclude 'crm.*' --drop >"$T/restore" 2>&1
python3 - "$uri" <<'PY'
import sys, pymongo
db = pymongo.MongoClient(sys.argv[1]).crm
p = db.people.find_one({"tasks.0": {"$exists": True}})
db.people.update_one({"_id": p["_id"]}, {"$set": {"tasks.0.done": "yes"}})
PY
python3 "$ROOT/tests/transforms/views_same.py" "$uri" "$S" "$T/crm.views" >"$T/same-bad" 2>&1
rc=$?
expect_eq "views: a child changed in the new design is a difference, named" \
    "$rc:$(grep -c '^crm.tasks: 1000 documents from the view, 1000 in the dump: 1 differ' "$T/same-bad")" "1:1"

# ---- --format validators ----
# vals NAME PLAN ARGS...: the validators in $T/NAME.val.
vals() { local n=$1 p=$2; shift 2; "$REMODEL" compile "$p" --format validators "$@" >"$T/$n.val" 2>"$T/err"; rc=$?; }
# jv NAME EXPR: EXPR over the validators' lines (l: the list of them).
jv() { python3 -c "import sys; from bson import json_util
l = [json_util.loads(x) for x in open(sys.argv[1])]
print($2)" "$T/$1.val"; }
vals steps "$C/composite.json" --canonical
expect_eq "validators: a collMod per namespace the plan writes fields to, moderate, warn" \
    "$(jv steps "[(x['db'], x['command']['collMod'], x['command']['validationLevel'], x['command']['validationAction']) for x in l]")" \
    "[('blog', 'posts', 'moderate', 'warn'), ('blog', 'notes', 'moderate', 'warn'), ('logging', 'logmsg', 'moderate', 'warn'), ('iot', 'buckets', 'moderate', 'warn')]"
expect_eq "validators from the steps: a bucket's fields, their types, all required" \
    "$(jv steps "(l[3]['command']['validator']['\$jsonSchema']['required'], {k: v.get('bsonType') for k, v in l[3]['command']['validator']['\$jsonSchema']['properties'].items()})")" \
    "(['_id', 'sensor_id', 'start', 'end', 'count', 'metaPositions', 'measurements', 'stats'], {'_id': 'objectId', 'sensor_id': None, 'start': 'date', 'end': 'date', 'count': 'int', 'metaPositions': 'array', 'measurements': 'array', 'stats': 'object'})"
expect_eq "validators from the steps: the array extract took away is not the parents', the renamed fields are" \
    "$(jv steps "sorted(l[0]['command']['validator']['\$jsonSchema']['properties'])")" "['by', 'headline']"
vals against "$C/composite.json" --canonical --against "$T/out-composite" --action error
expect_eq "validators --against: the data's types, required where every document has it, --action error" \
    "$(jv against "(l[1]['command']['validationAction'], l[1]['command']['validator']['\$jsonSchema']['required'], l[1]['command']['validator']['\$jsonSchema']['properties']['author'])")" \
    "('error', ['_id', 'author', 'text', 'ts', 'votes', 'post_id', 'n'], {'bsonType': ['string', 'null']})"
expect_eq "validators --against: the measurements' fields under items" \
    "$(jv against "sorted(l[3]['command']['validator']['\$jsonSchema']['properties']['measurements']['items']['properties'])")" \
    "['_id', 'battery', 'humidity', 'temperature', 'ts']"
vals usage "$C/composite.json" --against "$S"
expect_eq "validators: --against with another format refused" "$(
    "$REMODEL" compile "$C/composite.json" --against "$S" >/dev/null 2>"$T/err"; echo $?):$(cat "$T/err")" \
    "2:remodel: error: --against: only with --format validators"
# Every document of the plan's output satisfies its validator (checked
# here: mongo-java-server has neither collMod nor $jsonSchema), from the
# steps and from the data; the composite plan's output restored again
# (crm keeps the changed task).
"$MONGORESTORE" --uri "$uri" --dir "$T/out-composite" --nsInclude 'blog.*' --nsInclude 'logging.*' \
    --nsInclude 'iot.*' --drop >"$T/restore" 2>&1 || fail "validators: restore" "$(tail -3 "$T/restore")"
for v in steps against; do
    if python3 "$ROOT/tests/transforms/validators_check.py" "$uri" "$T/$v.val" >"$T/check-$v" 2>&1; then
        pass "validators ($v): every output document valid ($(tr '\n' ';' <"$T/check-$v"))"
    else
        fail "validators ($v): every output document valid" "$(cat "$T/check-$v")"
    fi
done
# crm.people holds the embed's output with one task's done made a string.
vals crm "$ROOT/dumps/plans/embed-tasks.json" --canonical --against "$T/out-crm"
python3 "$ROOT/tests/transforms/validators_check.py" "$uri" "$T/crm.val" >"$T/check-crm" 2>&1
rc=$?
expect_eq "validators: the wrong type in an embedded task fails, the others pass" \
    "$rc:$(sed -n 's/^crm.people: 98 documents, 1 fail; first: _id [0-9a-f]*: tasks\.[0-9]*\.done: string, not bool$/found/p' "$T/check-crm")" \
    "1:found"

# ---- --format mongosh --views: the script creates them after finalize ----
# The script run by mongosh 1.10.6 with views = true over a restored
# output: each view it creates (its db.createView calls recorded by a shim
# that then calls the real one: mongo-java-server has no views) gives back
# the dump's namespace, typed-equal; a namespace the new design no longer
# holds (crm.tasks, iot.readings) gets the old name, its leftover
# collection renamed aside first and read there; one whose run is recorded
# and not finalized is refused.
expect_eq "mongosh --views: only with --format mongosh" "$(
    "$REMODEL" compile "$ROOT/dumps/plans/embed-tasks.json" --views 2>&1 >/dev/null; echo $?)" \
    "remodel: error: --views: only with --format mongosh
2"
cat >"$T/shim.js" <<'JS'
var views = true;
const realCreateView = Object.getPrototypeOf(db).createView;
Object.getPrototypeOf(db).createView = function (name, source, pipeline) {
  print(EJSON.stringify({db: this.getName(), command: {create: name, viewOn: source, pipeline: pipeline}}, {relaxed: false}));
  return realCreateView.call(this, name, source, pipeline);
};
JS
# script_views NAME PLAN NS...: the plan's output restored (only NS's
# databases), the script run with views = true; its views in
# $T/NAME.sviews, its output in $T/NAME.sout.
script_views() {
    local n=$1 plan=$2 inc=() d
    shift 2
    for d in "$@"; do inc+=(--nsInclude "$d.*"); py "c.drop_database('$d')"; done
    "$MONGORESTORE" --uri "$uri" --dir "$T/out-$n" "${inc[@]}" --drop >"$T/restore" 2>&1 ||
        fail "$n: restore" "$(tail -3 "$T/restore")"
    "$REMODEL" compile "$plan" --format mongosh --views >"$T/$n.js" 2>"$T/err"
    "$MONGOSH1" "$(shell_uri "$uri")" --quiet --norc --eval "$(cat "$T/shim.js")" "$T/$n.js" >"$T/$n.sout" 2>&1
    rc=$?
    grep '^{"db"' "$T/$n.sout" >"$T/$n.sviews"
}
if [ -n "${MONGOSH1:-}" ] && [ -x "$MONGOSH1" ]; then
    plan_id_of() { sed -n 's/^const PLAN = {name: .*, id: "\([^"]*\)".*/\1/p' "$1"; }
    "$REMODEL" compile "$ROOT/dumps/plans/embed-tasks.json" --format mongosh --views >"$T/pre.js"
    py "c.remodel.plans.replace_one({'_id': sys.argv[2]}, {'_id': sys.argv[2], 'finalized': False}, upsert=True)" \
        "$(plan_id_of "$T/pre.js")"
    script_views crm "$ROOT/dumps/plans/embed-tasks.json" crm
    expect_eq "mongosh --views: refused while the run is recorded and not finalized" \
        "$rc:$(grep -c 'not finalized: run remodel online finalize first' "$T/crm.sout"):$(wc -l <"$T/crm.sviews")" "2:1:0"
    py "c.remodel.plans.delete_many({})"
    for x in crm:embed-tasks.json:crm composite:"$C"/composite.json:"blog logging iot"; do
        IFS=: read -r n p dbs <<<"$x"
        [ "${p#/}" == "$p" ] && p=$ROOT/dumps/plans/$p
        # shellcheck disable=SC2086
        script_views "$n" "$p" $dbs
        [ $rc == 0 ] || { fail "$n: mongosh 1.10.6 runs the views part" "$(head -c 600 "$T/$n.sout")"; continue; }
        if python3 "$ROOT/tests/transforms/views_same.py" "$uri" "$S" "$T/$n.sviews" >"$T/same-s$n" 2>&1; then
            pass "$n: the script's views give back the dump's namespaces ($(tr '\n' ';' <"$T/same-s$n"))"
        else
            fail "$n: the script's views give back the dump's namespaces" "$(cat "$T/same-s$n")"
        fi
    done
    expect_eq "mongosh --views: the old names where the new design left them, the rest beside" \
        "$(cat "$T/crm.sviews" "$T/composite.sviews" | python3 -c "import sys, json
print(' '.join(json.loads(l)['db'] + '.' + json.loads(l)['command']['create'] for l in sys.stdin))")" \
        "crm.tasks crm.people_before blog.comments blog.posts_before logging.logmsg_before iot.readings"
    expect_eq "mongosh --views: the leftovers renamed aside, read there" \
        "$(grep -c '^remodel: crm.tasks renamed aside to crm.tasks_remodel_.*_aside$' "$T/crm.sout"):$(
            grep -c '"coll":"tasks_remodel_[^"]*_aside"' "$T/crm.sviews")" "1:1"
else
    fail "mongosh --views: mongosh 1.10.6" "MONGOSH1 not installed (tests/peers/install.sh)"
fi
