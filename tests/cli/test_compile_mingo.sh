#!/usr/bin/env bash
# A differential test of `remodel compile PLAN --format pipeline`: its
# pipelines, run pass by pass by mingo (an independent implementation of
# MongoDB's aggregation language, npm, pinned in tests/peers/mingo, run with
# Node by tests/peers/mingo/run_pipelines.js), give the documents
# `remodel run PLAN` writes, namespace by namespace, _id by _id, field order
# included (tests/transforms/mingo_same.py). Cases: every plan of
# dumps/plans/ (a step compile leaves client-side is checked to be named
# with its reason, and the plan is skipped with a SKIP line naming it), the
# plans of tests/transforms/cases/compile/ (embed, summarize, denormalize,
# field steps), at --server-version 4.0 and 5.2 ($topN/$bottomN themselves
# from 5.2, a sort and $slice below), on dumps/sample and on the Atlas
# sample's sample_analytics.
#
# Named departures of mingo from MongoDB (each line says so):
#   - numbers compare by value: JavaScript has one number type, so mingo
#     cannot keep int32, int64 and double apart as MongoDB's $group and
#     arithmetic do (https://www.mongodb.com/docs/manual/reference/operator/aggregation/sum/);
#     the types are compared byte for byte on a server by test_compile.sh;
#   - the others, each named (with the MongoDB page) in the lines of the
#     cases that meet it ("edge data" below) or checked to be still there by
#     the probes at the end, when no case meets it.
#   REMODEL=build/remodel bash tests/cli/test_compile_mingo.sh
. "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1
S=$ROOT/dumps/sample
MG=$ROOT/tests/peers/mingo
MINGO_DIR=${MINGO_DIR:-${REMODEL_PEERS:-$HOME/.cache/remodel-peers}/mingo}
case $MINGO_DIR in /*) ;; *) MINGO_DIR=$PWD/$MINGO_DIR ;; esac

# mingo and bson at the versions tests/peers/mingo/package.json pins.
pins=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["dependencies"]; print(d["mingo"], d["bson"])' \
    "$MG/package.json")
want_mingo=${pins% *} want_bson=${pins#* }
have=$(cd "$T" && NODE_PATH=$MINGO_DIR/node_modules node -e '
    require("mingo"); require("bson");  // both load
    const v = (m) => JSON.parse(require("fs").readFileSync(`${process.argv[1]}/${m}/package.json`)).version;
    console.log(v("mingo"), v("bson"));' "$MINGO_DIR/node_modules" 2>"$T/err")
if [ "$have" != "$want_mingo $want_bson" ]; then
    fail "mingo-missing" "need node with mingo $want_mingo and bson $want_bson in $MINGO_DIR/node_modules" \
        "(run tests/peers/install.sh); found [${have}] $(head -c 300 "$T/err")"
    exit 1
fi
if ! python3 -c 'import bson.json_util' 2>"$T/err"; then
    fail "mingo: python3 with pymongo's bson package" "$(cat "$T/err"); run tests/peers/install.sh"
    exit 1
fi
pass "mingo ${have% *} and bson ${have#* } (Node $(node --version)) installed"

mkdir -p "$T/plans"
cp "$ROOT"/dumps/plans/*.json "$ROOT"/tests/transforms/cases/compile/*.json "$T/plans/"

# same NAME PLAN SRC [VERSION [LABEL]]: mingo_same.py prints its own lines.
same() {
    local name=$1 plan=$2 src=$3 v=${4:-} label=${5:-} departs=${6:-} args=()
    [ -n "$v" ] && args+=(--server-version "$v") && name="$name @$v"
    [ -n "$label" ] && args+=(--label "$label")
    [ -n "$departs" ] && args+=(--departs --departs-ns "$departs")
    python3 "$ROOT/tests/transforms/mingo_same.py" --remodel "$REMODEL" --mingo "$MINGO_DIR" \
        --plan "$plan" --src "$src" --name "$name" "${args[@]}" || true  # its FAIL lines say why
}

# --- dumps/plans/: each at 4.0 and 5.2 ----------------------------------------
for p in "$ROOT"/dumps/plans/*.json; do
    n=$(basename "$p" .json)
    for v in 4.0 5.2; do same "$n" "$T/plans/$n.json" "$S" "$v"; done
done

# --- tests/transforms/cases/compile/ on the sample ------------------------------
# embed: sort + inclusion project + countAs, orphans (no keepSource): students
# (an array of references, school.students.courses -> school.courses), and
# mingo-embed-orphans (crm.tasks left with no owner); sort + limit + keepSource
# + countAs: subset; exclusion project + two-key sort + limit + keepSource +
# countAs: mingo-embed-exclude.
for n in students subset mingo-embed-exclude mingo-embed-orphans; do
    for v in 4.0 5.2; do same "$n" "$T/plans/$n.json" "$S" "$v"; done
done
# summarize: $count $sum $avg $min $max and one $topN/$bottomN (a sort and
# $slice at 4.0, themselves at 5.2): summary, mingo-summary-40. $addToSet:
# mingo-addtoset-only (alone), mingo-addtoset (beside a $topN: at 4.0 the
# children reach $group sorted by its sortBy). $first $last, sort, several
# $topN/$bottomN: ordered and mingo-summary-all, server-side at 5.2 only (at
# 4.0 compile names the step client-side, checked, and the plan is skipped).
for n in summary mingo-summary-40 mingo-addtoset-only mingo-addtoset ordered mingo-summary-all; do
    for v in 4.0 5.2; do same "$n" "$T/plans/$n.json" "$S" "$v"; done
done
# denormalize: a scalar reference (logging.logmsg.host -> logging.hosts),
# onMissing null; an array of references (guard: the pipeline leaves such a
# document as it is, which compile notes; here remodel run's differ, see
# mingo_same.py's FAIL for the documents). Field steps on top-level fields.
for n in mingo-denorm-host fields mingo-fields; do
    same "$n" "$T/plans/$n.json" "$S" 5.0
done

# --- the Atlas sample: customers.accounts -> accounts.account_id ----------------
ATLAS=$(atlas_sample)
if [ -d "$ATLAS/sample_analytics" ]; then
    "$REMODEL" convert "$ATLAS" "$T/atlas" --nsInclude 'sample_analytics.*' -q 2>"$T/err" ||
        fail "mingo atlas: convert sample_analytics" "$(cat "$T/err")"
    # mingo-atlas-ties: sort {limit: -1}, where most accounts tie (limit
    # 10000): ties go by the customer's array of references, then _id, in
    # both (when the engine kept from's order on ties, 236 customers
    # differed: mingo's $lookup hands them in another order; issue 25).
    for n in atlas mingo-atlas-orphans mingo-atlas-ties; do
        for v in 4.0 5.2; do same "$n (atlas)" "$T/plans/$n.json" "$T/atlas" "$v"; done
    done
else
    fail "mingo atlas: the Atlas sample" "not found: $ATLAS/sample_analytics"
fi

# --- the harness catches a wrong pipeline ---------------------------------------
# The same comparison with compile's output changed in one place (embed-tasks:
# the children's sort on due_date turned around) must FAIL.
cat >"$T/mutant" <<MUTANT
#!/usr/bin/env python3
import json, subprocess, sys
r = subprocess.run(["$REMODEL"] + sys.argv[1:], capture_output=not sys.argv[1:2] != ["compile"])
if sys.argv[1:2] != ["compile"]:
    sys.exit(r.returncode)
c = json.loads(r.stdout)
for stage in c["steps"][0]["passes"][0]["pipeline"]:
    if "\$sort" in stage:
        k = [k for k in stage["\$sort"] if k.endswith("due_date")][0]
        stage["\$sort"][k] = {"\$numberInt": "-1"}
        break
print(json.dumps(c))
MUTANT
chmod +x "$T/mutant"
python3 "$ROOT/tests/transforms/mingo_same.py" --remodel "$T/mutant" --mingo "$MINGO_DIR" \
    --plan "$T/plans/embed-tasks.json" --src "$S" --name "mutant" >"$T/mut" 2>"$T/muterr"
mrc=$?
if [ $mrc -eq 1 ] && grep -q '^FAIL mingo mutant: crm.people' "$T/mut" && grep -q 'due_date' "$T/muterr"; then
    pass "mingo harness: compile's output with the embed's sort turned around FAILs (crm.people, at due_date)"
else
    fail "mingo harness: compile's output with the embed's sort turned around FAILs" \
        "exit $mrc: $(cat "$T/mut") $(head -c 600 "$T/muterr")"
fi

# --- edge data: numbers of three types as references, null and missing -------
# Parents with int32, int64, double and string _ids; children referencing
# them by other number types (MongoDB matches numbers by value), by null, by
# nothing; sort keys and accumulated values mixing types, null and missing.
python3 "$ROOT/tests/transforms/mkdump.py" "$T/edge" "$(cat "$ROOT/tests/transforms/cases/compile/data/edge.json")" 2>"$T/err" || fail "mingo edge: write the edge dump" "$(cat "$T/err")"
for v in 4.0 5.2; do same "mingo-edge-embed (edge)" "$T/plans/mingo-edge-embed.json" "$T/edge" "$v"; done
for v in 4.0 5.2; do same "mingo-edge-summary (edge)" "$T/plans/mingo-edge-summary.json" "$T/edge" "$v"; done
# Cases that meet a departure of mingo from MongoDB: run and compared as
# strictly as the rest; their lines name the departure and the MongoDB page.
#   - an expression object ({k: "$k", v: "$v"}) whose expression is missing:
#     MongoDB leaves the field out (the object's fields are the expressions
#     that give a value), mingo writes null. compile's denormalize tests
#     "is there a value" with {$objectToArray: {v: EXPR}}, so with mingo a
#     reference that finds nothing (onMissing null) looks found;
#   - $addToSet of a missing value: MongoDB adds nothing, mingo adds null;
#   - Decimal128: MongoDB's $sum and $avg add decimals (into a decimal);
#     to mingo a bson Decimal128 is no number, so they skip it.
same "mingo-edge-denorm (edge)" "$T/plans/mingo-edge-denorm.json" "$T/edge" 5.0
for v in 4.0 5.2; do
    same "mingo-edge-missing (edge)" "$T/plans/mingo-edge-missing.json" "$T/edge" "$v" \
        "mingo departs: \$addToSet adds null for a missing value, and an expression object's missing field becomes null; MongoDB adds nothing and leaves it out: https://www.mongodb.com/docs/manual/reference/operator/aggregation/addToSet/" \
        edge.parents
done
same "mingo-edge-decimal (edge)" "$T/plans/mingo-edge-decimal.json" "$T/edge" 5.0 \
    "mingo departs: Decimal128 is no number to \$sum and \$avg, MongoDB adds it: https://www.mongodb.com/docs/manual/reference/operator/aggregation/sum/" \
    edge.parents

# --- departures no case reaches, each checked to be still there ----------------
# MongoDB's order across types and of documents and arrays
# (https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/):
# ObjectId < Boolean < Date; documents compare field by field in their
# order; a descending sort on an array uses its largest element. Document
# equality keeps field order ({a:1, b:2} is not {b:2, a:1}: $eq, $addToSet,
# $group keys). The compiled pipelines sort, $min/$max and compare only the
# plan's own keys, which on the data above never mix these types.
NODE_PATH=$MINGO_DIR/node_modules node -e '
const mingo = require("mingo"); const { ObjectId } = require("bson");
const oid = new ObjectId("5d6b0a00f9d66379a18df98c");
const ids = (docs, st) => JSON.stringify(mingo.aggregate(docs, st).map((d) => d._id));
const probes = [
  ["ObjectId sorts after Boolean and Date (MongoDB: ObjectId < Boolean < Date)",
   ids([{_id: 1, a: new Date(0)}, {_id: 2, a: true}, {_id: 3, a: oid}], [{$sort: {a: 1}}]), "[2,1,3]"],
  ["documents compare by sorted field names (MongoDB: field by field in order)",
   ids([{_id: 1, a: {b: 2, a: 1}}, {_id: 2, a: {a: 2, b: 1}}], [{$sort: {a: 1}}]), "[1,2]"],
  ["a descending sort on arrays uses their smallest element (MongoDB: the largest)",
   ids([{_id: 1, a: [1, 9]}, {_id: 2, a: [3, 4]}, {_id: 3, a: 2}], [{$sort: {a: -1}}]), "[2,3,1]"],
  ["documents with the same fields in another order are equal ($eq, $addToSet, $group)",
   JSON.stringify(mingo.aggregate([{x: {a: 1, b: 2}}, {x: {b: 2, a: 1}}],
     [{$group: {_id: null, s: {$addToSet: "$x"}}}])[0].s.length), "1"],
];
for (const [what, got, known] of probes)
  console.log(got === known ? `PASS mingo departure still there: ${what}` :
    `FAIL mingo departure gone or changed (update this test): ${what}: got ${got}, knew ${known}`);
' 2>"$T/err" || fail "mingo departure probes" "$(cat "$T/err")"
