#!/usr/bin/env bash
# A differential test of remodel's aggregation expressions and filters
# (issue 48) against mingo (npm, pinned in tests/peers/mingo), an
# independent implementation of MongoDB's aggregation language, for the
# families where its model is MongoDB's: strings, regular expressions,
# arrays, objects, sets, conditionals and comparisons, and the query
# operators. Not numeric types, decimals or date parsing: JavaScript has
# one number type, so numbers are compared by value only (int32, int64 and
# double alike), and the cases avoid decimals and dates.
# Over the documents of tests/transforms/expr/docs.json, each case of
# tests/transforms/expr/mingo_cases.json runs as $addFields {r: EXPR}
# ($project, or $match for a query) in mingo, and as a set step (with a
# filter for a query) in `remodel run`, compared _id by _id
# (tests/transforms/expr/expr_diff.py). Where mingo departs from MongoDB,
# the case names the MongoDB page that decides and remodel must give the
# documented value; a known departure of remodel prints KNOWN.
#   REMODEL=build/remodel bash tests/cli/test_expr_mingo.sh
. "$(dirname "$0")/lib.sh"
E=$ROOT/tests/transforms/expr
MG=$ROOT/tests/peers/mingo
MINGO_DIR=${MINGO_DIR:-${REMODEL_PEERS:-$HOME/.cache/remodel-peers}/mingo}
case $MINGO_DIR in /*) ;; *) MINGO_DIR=$PWD/$MINGO_DIR ;; esac

# mingo and bson at the versions tests/peers/mingo/package.json pins.
pins=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["dependencies"]; print(d["mingo"], d["bson"])' \
    "$MG/package.json")
have=$(cd "$T" && NODE_PATH=$MINGO_DIR/node_modules node -e '
    require("mingo"); require("bson");
    const v = (m) => JSON.parse(require("fs").readFileSync(`${process.argv[1]}/${m}/package.json`)).version;
    console.log(v("mingo"), v("bson"));' "$MINGO_DIR/node_modules" 2>"$T/err")
if [ "$have" != "$pins" ]; then
    fail "mingo expressions: mingo installed" "need mingo and bson $pins in $MINGO_DIR/node_modules" \
        "(run tests/peers/install.sh); found [$have] $(head -c 300 "$T/err")"
    exit 0
fi

# Filters need the query layer (common/query/): until it is in the build,
# a step's filter is refused, and the $match cases are skipped (SKIP line).
filters=()
mkdir -p "$T/probe/xd"
python3 -c 'import bson, sys; open(sys.argv[1], "wb").write(bson.encode({"_id": 1}))' "$T/probe/xd/c.bson"
echo '{"remodel": 1, "steps": [{"set": {"in": "xd.c", "filter": {"_id": 1}, "fields": {"m": 1}}}]}' >"$T/probe.json"
if ! "$REMODEL" run "$T/probe.json" --from "$T/probe" --to "$T/probe.archive" -q -f 2>"$T/err"; then
    filters=(--no-filters "this build refuses a step's filter ($(head -c 200 "$T/err" | tr '\n' ' '))")
fi

python3 "$E/expr_diff.py" --peer mingo --mingo "$MINGO_DIR" --remodel "$REMODEL" \
    --docs "$E/docs.json" --cases "$E/mingo_cases.json" --work "$T/work" "${filters[@]}" ||
    fail "mingo expressions: the harness" "tests/transforms/expr/expr_diff.py failed (its message above)"
