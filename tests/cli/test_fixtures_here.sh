#!/usr/bin/env bash
# The tests need only the repository (issue 52): make check passes in a
# clone with nothing beside it (.ci/run runs it so). Here:
#  - no suite, unit test, test driver, script, the Makefile nor .ci names a
#    path beside the repository (the shared directory of fixtures the
#    suites once read); the docs may;
#  - the fixtures are in tests/fixtures (tests/fixtures/README.md):
#    mongo-tools' test data with its NOTICE and the Apache License, where
#    tests/cli/lib.sh ($FIX, $MT) and tests/unit/test.h (T_FIXTURES) point,
#    every file of it tracked by git (a clone has it);
#  - the Atlas-shaped sample (tests/fixtures/atlas_sample.py) is the same
#    bytes on every run, with the namespaces, counts and indexes the suites
#    rely on, and reads without a problem.
#   REMODEL=build/remodel bash tests/cli/test_fixtures_here.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1

# --- nothing beside the repository --------------------------------------------
# (The patterns are put together here so that this file does not hold them.)
up=.. dir=shared
for pat in "$up/$dir" "$dir/fixtures"; do
    got=$(grep -rIlF -- "$pat" tests Makefile .ci scripts 2>/dev/null | grep -v '\.md$' | sort)
    expect_eq "no test, script, Makefile or .ci file names $pat (only docs may)" "$got" ""
done

# --- the fixtures in the repository -------------------------------------------
F=$ROOT/tests/fixtures
expect_eq "tests/cli/lib.sh: \$FIX and \$MT in tests/fixtures" \
    "$(FIXTURES= bash -c '. tests/cli/lib.sh >/dev/null 2>&1; echo "$FIX $MT"' 2>/dev/null)" \
    "$F $F/mongo-tools"
expect_eq "tests/unit/test.h: T_FIXTURES is tests/fixtures/" \
    "$(sed -n 's/^#define T_FIXTURES "\(.*\)"$/\1/p' tests/unit/test.h)" "tests/fixtures/"
check "mongo-tools' test data: bsondump/testdata and mongorestore/testdata" \
    test -s "$F/mongo-tools/bsondump/testdata/all_types.bson" -a \
    -s "$F/mongo-tools/mongorestore/testdata/dump-w-oplog.archive"
# lacks FILE STRING...: the STRINGs FILE does not hold.
lacks() { local f=$1 s; shift; for s in "$@"; do grep -qF -- "$s" "$f" || echo "[$s]"; done; }
expect_eq "mongo-tools' NOTICE: where the files come from (repository, commit) and their license" \
    "$(lacks "$F/mongo-tools/NOTICE" mongodb/mongo-tools 8fa3cfc8263b9cead37912d7b0447766143c3e3a \
        'Copyright 2014 MongoDB, Inc.' Apache LICENSE)" ""
expect_eq "mongo-tools' LICENSE: the Apache License 2.0, whole" \
    "$(lacks "$F/mongo-tools/LICENSE" 'Apache License' 'Version 2.0, January 2004' \
        'TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION' '9. Accepting Warranty or Additional Liability.' \
        'END OF TERMS AND CONDITIONS')" ""
expect_eq "the suites that read fixtures name tests/fixtures, not another directory" \
    "$(grep -lE '^(FIX|MT|ATLAS)=' tests/cli/*.sh | xargs grep -hE '^(FIX|MT|ATLAS)=' | sort -u | tr '\n' ' ')" \
    'ATLAS=$(atlas_sample) FIX=${FIXTURES:-$ROOT/tests/fixtures} MT=$FIX/mongo-tools '
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --others --exclude-standard tests/fixtures >"$T/untracked"
    expect_eq "every file under tests/fixtures is tracked by git (a clone has it)" \
        "$(wc -l <"$T/untracked") $(head -3 "$T/untracked" | tr '\n' ' ')" "0 "
fi

# --- the Atlas-shaped sample --------------------------------------------------
A=$(atlas_sample)
python3 tests/fixtures/atlas_sample.py "$T/again"
check "atlas_sample.py: the same bytes on a second run" diff -r "$A" "$T/again"
# The digest of every file: a change of the generator changes the data the
# suites' numbers come from; it changes this line too, on purpose.
expect_eq "atlas_sample.py: the dump it has always written (digest)" \
    "$(cd "$A" && find . -type f | LC_ALL=C sort | xargs sha1sum | sha1sum | cut -c1-40)" \
    "65319eaf17f171c33cee9fc839f91618a0587e9e"
"$REMODEL" inspect --json -q "$A" >"$T/inspect.json" 2>"$T/err"
expect_eq "atlas sample: inspect reads it, no problem" "$?:$(cat "$T/err")" "0:"
expect_eq "atlas sample: the namespaces and their counts" \
    "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["problems"])
for n in sorted(d["namespaces"], key=lambda n: (n["db"], n["collection"])):
    print(n["db"], n["collection"], n["documents"])' "$T/inspect.json")" \
"[]
sample_analytics accounts 1746
sample_analytics customers 500
sample_geospatial shipwrecks 11095
sample_mflix sessions 1
sample_mflix theaters 1564
sample_mflix users 185
sample_training zips 29470"
expect_eq "atlas sample: the indexes, in mongodump 4.x's metadata" \
    "$(for m in "$A"/*/*.metadata.json; do python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(m["indexes"][0]["ns"], [(i["name"], i.get("unique", False)) for i in m["indexes"]])' "$m"; done)" \
"sample_analytics.accounts [('_id_', False)]
sample_analytics.customers [('_id_', False)]
sample_geospatial.shipwrecks [('_id_', False), ('coordinates_2dsphere', False)]
sample_mflix.sessions [('_id_', False), ('user_id_1', True)]
sample_mflix.theaters [('_id_', False), ('geo index', False)]
sample_mflix.users [('_id_', False), ('email_1', True)]
sample_training.zips [('_id_', False)]"
