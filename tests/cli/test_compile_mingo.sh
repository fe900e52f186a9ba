#!/usr/bin/env bash
# remodel compile's pipelines run by an independent implementation of the
# aggregation language, mingo (Node, tests/peers/mingo): for each plan, the
# documents they give equal those remodel run writes, namespace by
# namespace, field order included (tests/transforms/compile_same.py); at
# --server-version 4.0 (the $topN fallback) and 5.2 ($topN itself, which
# mongo-java-server lacks, so only mingo runs it here). Numbers compare by
# value: JavaScript has one number type (the named departure; the types are
# compared byte for byte on mongo-java-server by test_compile.sh).
#   REMODEL=build/remodel bash tests/cli/test_compile_mingo.sh
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/peers/env.sh"
export PYTHONPATH=$ROOT/tests/transforms
S=$ROOT/dumps/sample
if [ -z "${MINGO_DIR:-}" ] || ! command -v node >/dev/null; then
    fail "mingo-missing" "mingo is installed by tests/peers/install.sh (npm); node must be on PATH"
    exit 0
fi
mkdir -p "$T/plans"
cp "$ROOT"/dumps/plans/*.json "$ROOT"/tests/transforms/cases/compile/*.json "$T/plans/"
for p in embed-tasks embed-parts students subset backfill-logging summary fields; do
    python3 "$ROOT/tests/transforms/compile_same.py" "$REMODEL" "$MINGO_DIR" "$T/plans/$p.json" "$S" \
        "$p (4.0)" --server-version 4.0
done
for p in summary ordered; do
    python3 "$ROOT/tests/transforms/compile_same.py" "$REMODEL" "$MINGO_DIR" "$T/plans/$p.json" "$S" \
        "$p (5.2)" --server-version 5.2
done
# The Atlas sample: customers.accounts -> accounts.account_id, child referencing.
ATLAS=$ROOT/../shared/fixtures/atlas-sample/dump
if [ -d "$ATLAS/sample_analytics" ]; then
        "$REMODEL" convert "$ATLAS" "$T/atlas.archive" --nsInclude 'sample_analytics.accounts' \
        --nsInclude 'sample_analytics.customers' -q
    python3 "$ROOT/tests/transforms/compile_same.py" "$REMODEL" "$MINGO_DIR" "$T/plans/atlas.json" \
        "$T/atlas.archive" "atlas customers.accounts (5.0)"
fi
