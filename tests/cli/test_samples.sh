# The shipped sample dump is what the generator makes, byte for byte, and
# the archive beside it holds the same documents.
. "$(dirname "$0")/lib.sh"
GEN=${REMODEL_GEN:-$(dirname "$REMODEL")/remodel-gen}

"$GEN" --out "$T/sample" --scale 1 --seed 1 2>"$T/err"
check "generator runs" test -f "$T/sample/prelude.json"
check "dumps/sample is the generator's output (seed 1, scale 1)" diff -r "$ROOT/dumps/sample" "$T/sample"
"$GEN" --out "$T/sample2" --scale 1 --seed 1 2>/dev/null
check "generator is deterministic" diff -r "$T/sample" "$T/sample2"
"$GEN" --out "$T/seed2" --scale 1 --seed 2 2>/dev/null
if diff -rq "$T/sample" "$T/seed2" >/dev/null; then fail "another seed gives other data"; else pass "another seed gives other data"; fi
"$GEN" --out "$T/sample" --scale 1 --seed 1 >/dev/null 2>"$T/err"; rc=$?
expect_eq "generator refuses an existing directory" "$rc:$(grep -c exists "$T/err")" "1:1"

fp() { "$REMODEL" inspect --json -q "$1" | python3 -c '
import json, sys
for n in sorted(json.load(sys.stdin)["namespaces"], key=lambda n: (n["db"], n["collection"])):
    print(n["db"], n["collection"], n["documents"], n["crc"], n.get("metadataSha1"))'; }
expect_eq "dumps/sample.archive.gz matches dumps/sample" "$(fp "$ROOT/dumps/sample.archive.gz")" "$(fp "$ROOT/dumps/sample")"
expect_eq "sample has 11 collections, 5268 documents" \
    "$("$REMODEL" inspect --json -q "$ROOT/dumps/sample" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["namespaces"]), sum(n["documents"] for n in d["namespaces"]))')" "11 5268"
