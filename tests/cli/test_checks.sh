#!/usr/bin/env bash
# Mistakes the data shows (docs/commands.md): a field a step names that no document
# has, a join in which nothing matches, lookups that mostly miss, readings
# that mostly go to onInvalid. On the real Atlas sample and crafted dumps,
# through run (one pass and batch) and check --against.
#   REMODEL=build/remodel bash tests/cli/test_checks.sh
. "$(dirname "$0")/lib.sh"

ATLAS=$(atlas_sample)
S=$ROOT/dumps/sample
mkdump() { python3 "$ROOT/tests/transforms/mkdump.py" "$@"; }
plan() { printf '%s' "$2" >"$T/$1.json"; }
# refused NAME PLAN SRC STRING...: run and check --against both exit 1 with
# one error line holding every STRING; run writes nothing.
refused() {
    local n=$1 p=$2 src=$3; shift 3
    run_rm run -q "$T/$p.json" --from "$src" --to "$T/out-$p.archive"
    expect_eq "$n: run exits 1 with one line" "$rc:$(grep -c . "$T/err")" "1:1"
    expect_message "$n: run says so, after the plan's name" "$T/$p.json: $1" "$@"
    expect_eq "$n: run writes nothing" "$(ls -A "$T" | grep -c -e "out-$p" -e '\.remodel-')" 0
    run_rm check "$T/$p.json" --against "$src"
    expect_eq "$n: check --against exits 1 with one line" "$rc:$(grep -c . "$T/err")" "1:1"
    expect_message "$n: check --against says the same, after the plan's name" "$T/$p.json: $1" "$@"
}

# --- the issue's case: "acounts" for "accounts" on the Atlas sample ----------
EMBED='{"remodel": 1, "steps": [{"embed": {"from": "sample_analytics.accounts", "into": "sample_analytics.customers", "localField": "%s", "foreignField": "%s", "as": "accounts"%s}}]}'
plan typo "$(printf "$EMBED" acounts account_id '')"
refused "embed, localField misspelled" typo "$ATLAS" \
    'step 1 (embed): localField "acounts" is in none of the 500 documents of sample_analytics.customers; did you mean "accounts"?' \
    '(if that is expected, add "allowMissing": true to the step)'
plan ftypo "$(printf "$EMBED" accounts acount_id '')"
refused "embed, foreignField misspelled" ftypo "$ATLAS" \
    'step 1 (embed): foreignField "acount_id" is in none of the 1746 documents of sample_analytics.accounts; did you mean "account_id"?'
plan nomatch "$(printf "$EMBED" username account_id '')"
refused "embed joining nothing" nomatch "$ATLAS" \
    'step 1 (embed): none of the 1746 documents of sample_analytics.accounts matches any of the 500 of sample_analytics.customers (localField "username" = foreignField "account_id")'

# allowMissing on the step, or --allow-missing: it runs, and does what was asked.
plan allowed "$(printf "$EMBED" acounts account_id ', "allowMissing": true')"
run_rm run -q "$T/allowed.json" --from "$ATLAS" --to "$T/allowed.archive"
expect_eq "allowMissing: true: runs" "$rc:$(cat "$T/err")" "0:"
expect_eq "allowMissing: true: every customer got accounts: []" \
    "$("$REMODEL" show "$T/allowed.archive" --ns sample_analytics.customers | grep -c '"accounts":\[\]')" 500
run_rm run -q --allow-missing "$T/typo.json" --from "$ATLAS" --to "$T/allowed2.archive"
expect_eq "--allow-missing: runs" "$rc:$(cat "$T/err")" "0:"
check "--allow-missing: the same bytes as allowMissing: true" cmp "$T/allowed.archive" "$T/allowed2.archive"
run_rm check --allow-missing "$T/typo.json" --against "$ATLAS"
expect_eq "check --allow-missing: valid" "$rc:$(cat "$T/out")" "0:$T/typo.json: 1 step(s), valid against $ATLAS"

# The plan spelled right: runs, and the summary says what EMBEDDED counts.
plan right "$(printf "$EMBED" accounts account_id '')"
run_rm check "$T/right.json" --against "$ATLAS"
expect_eq "spelled right: check --against says valid" "$rc:$(cat "$T/out")" "0:$T/right.json: 1 step(s), valid against $ATLAS"
run_rm run "$T/right.json" --from "$ATLAS" --dry-run
row() { awk -v ns="$1" '$1 == ns { $1 = ""; print substr($0, 2) }' "$T/out"; }
expect_eq "spelled right: customers: 1748 embedded of 1746 accounts, none missed" \
    "$(row sample_analytics.customers)" "500 500 1748 0 0 0 0 0"
expect_eq "spelled right: accounts: every one taken" "$(row sample_analytics.accounts)" "1746 0 0 0 0 0 0 0"
expect_eq "spelled right: the header names MISSED and INVALID" \
    "$(head -1 "$T/out" | tr -s ' ')" "NAMESPACE IN OUT EMBEDDED ORPHANS OVERFLOW EXTRACTED MISSED INVALID"

# --- summarize, extract, denormalize, bucketize --------------------------------
plan sum '{"remodel": 1, "steps": [{"summarize": {"into": "crm.people", "from": "crm.tasks", "localField": "_id", "foreignField": "ownr", "fields": {"n": {"$count": {}}}}}]}'
refused "summarize, foreignField misspelled" sum "$S" \
    'step 1 (summarize): foreignField "ownr" is in none of the 1000 documents of crm.tasks; did you mean "owner"?'
plan ext '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "adresses", "to": "crm.addresses", "style": "parentRef"}}]}'
refused "extract (one pass), path misspelled" ext "$S" \
    'step 1 (extract): path "adresses" is in none of the 98 documents of crm.people; did you mean "addresses"?'
run_rm run -q --batch "$T/ext.json" --from "$S" --to "$T/ext-batch.archive"
expect_eq "extract --batch: the same error" "$rc:$(cat "$T/err")" \
    "1:remodel: error: $T/ext.json: "'step 1 (extract): path "adresses" is in none of the 98 documents of crm.people; did you mean "addresses"? (if that is expected, add "allowMissing": true to the step)'

mkdump "$T/shop" '{
  "shop.products": [{"_id": 1, "name": "fan", "price": 5}, {"_id": 2, "name": "grommet", "price": 1},
                    {"_id": 3, "name": "shifter", "price": 9}],
  "shop.orders": [{"_id": 10, "product_id": 1}, {"_id": 11, "product_id": 2}, {"_id": 12, "product_id": 3},
                  {"_id": 13, "product_id": 7}, {"_id": 14, "product_id": 8}, {"_id": 15, "product_id": 9},
                  {"_id": 16, "product_id": 7}, {"_id": 17, "product_id": 8}, {"_id": 18, "product_id": 9},
                  {"_id": 19, "product_id": 9}],
  "shop.carts": [{"_id": 20, "items": [{"product": 1, "qty": 2}, {"product": 2}]}, {"_id": 21, "items": []}],
  "shop.strs": [{"_id": 30, "product_id": "1"}, {"_id": 31, "product_id": "2"}]}'
DEN='{"remodel": 1, "steps": [{"denormalize": {"in": "shop.%s", "from": "shop.products", "localField": "%s", "fields": {"product_name": "%s"}}}]}'
plan dfield "$(printf "$DEN" orders product_id nme)"
refused "denormalize, a copied field misspelled" dfield "$T/shop" \
    'step 1 (denormalize): fields "nme" is in none of the 3 documents of shop.products; did you mean "name"?'
plan dpath "$(printf "$DEN" carts items.prodct name)"
refused "denormalize, a dotted path misspelled inside array elements" dpath "$T/shop" \
    'step 1 (denormalize): localField "items.prodct" is in none of the 2 documents of shop.carts; did you mean "items.product"?'
plan dtypes "$(printf "$DEN" strs product_id name)"
refused "denormalize finding nothing (strings for numbers)" dtypes "$T/shop" \
    'step 1 (denormalize): none of the 2 references in shop.strs (localField "product_id") is found in shop.products (foreignField "_id")' \
    'check the fields and their types'
# 7 of 10 orders refer to products that are gone: it runs, warns, counts.
plan dmost "$(printf "$DEN" orders product_id name)"
for mode in one-pass --batch --memory=1K; do
    extra=; [ $mode = one-pass ] || extra=${mode/=/ }
    run_rm run -q $extra "$T/dmost.json" --from "$T/shop" --to "$T/dmost$mode.archive" --stats-json "$T/dmost.json.stats"
    expect_eq "denormalize mostly missing ($mode): exit 0, one warning even with -q" "$rc:$(cat "$T/err")" \
        '0:remodel: warning: step 1 (denormalize): 7 of the 10 references in shop.orders found nothing in shop.products (localField "product_id", foreignField "_id")'
    expect_eq "denormalize mostly missing ($mode): --stats-json counts and lists it" \
        "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([n["missed"] for n in d["namespaces"] if n["ns"]=="shop.orders"], len(d["warnings"]), d["warnings"][0][:40])' "$T/dmost.json.stats")" \
        "[7] 1 step 1 (denormalize): 7 of the 10 refere"
done
run_rm run "$T/dmost.json" --from "$T/shop" --dry-run
expect_eq "denormalize mostly missing: MISSED 7 in the summary" "$(row shop.orders)" "10 10 0 0 0 0 7 0"
run_rm check "$T/dmost.json" --against "$T/shop"
expect_eq "denormalize mostly missing: check --against: valid, with the warning" "$rc:$(cat "$T/out"):$(cat "$T/err")" \
    "0:$T/dmost.json: 1 step(s), valid against $T/shop:remodel: warning: step 1 (denormalize): 7 of the 10 references in shop.orders found nothing in shop.products (localField \"product_id\", foreignField \"_id\")"
# A few misses (1 of 3 in the carts' elements): counted, no warning.
plan dfew "$(printf "$DEN" carts items.product name)"
run_rm run "$T/dfew.json" --from "$T/shop" --dry-run
expect_eq "denormalize with a few misses: no warning" "$rc:$(cat "$T/err" | grep -c warning)" "0:0"
expect_eq "denormalize with a few misses: none missed (both found)" "$(row shop.carts)" "2 2 0 0 0 0 0 0"

mkdump "$T/ts" '{"ts.r": [
  {"_id": 1, "m": "a", "t": {"$date": "2026-01-01T00:00:00Z"}},
  {"_id": 2, "m": "a", "t": "2026-01-01"}, {"_id": 3, "m": "a", "t": "2026-01-02"},
  {"_id": 4, "t": {"$date": "2026-01-01T00:00:00Z"}}]}'
BUCK='{"remodel": 1, "steps": [{"bucketize": {"from": "ts.r", "to": "ts.b", "timeField": "%s", "metaField": "%s", "granularity": "days", "onInvalid": {"to": "ts.bad"}}}]}'
plan btime "$(printf "$BUCK" tt m)"
refused "bucketize, timeField misspelled (onInvalid would take every reading)" btime "$T/ts" \
    'step 1 (bucketize): timeField "tt" is in none of the 4 documents of ts.r; did you mean "t"?'
plan bmeta "$(printf "$BUCK" t meta)"
refused "bucketize, metaField misspelled" bmeta "$T/ts" \
    'step 1 (bucketize): metaField "meta" is in none of the 4 documents of ts.r; fields there: "_id", "m", "t"'
plan bmost "$(printf "$BUCK" t m)"
run_rm run "$T/bmost.json" --from "$T/ts" --dry-run
expect_eq "bucketize with most readings invalid: warns" "$rc:$(grep warning "$T/err")" \
    '0:remodel: warning: step 1 (bucketize): 3 of the 4 readings of ts.r went to onInvalid (ts.bad): check timeField "t" and metaField'
expect_eq "bucketize with most readings invalid: INVALID 3" "$(row ts.r)" "4 0 0 0 0 0 0 3"

# --- no false alarms ---------------------------------------------------------
# An empty namespace has no fields to find; a step reading what an earlier
# step made is checked against that.
mkdump "$T/empty" '{"e.parents": [], "e.kids": [{"_id": 1, "p": 1}]}'
plan empty '{"remodel": 1, "steps": [{"embed": {"from": "e.kids", "into": "e.parents", "localField": "_id", "foreignField": "p", "as": "kids"}}]}'
run_rm run -q "$T/empty.json" --from "$T/empty" --to "$T/empty.archive"
expect_eq "embed into an empty namespace: fine" "$rc:$(cat "$T/err")" "0:"
plan later '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "crm.addresses", "style": "parentRef"}}, {"embed": {"from": "crm.addresses", "into": "crm.people", "localField": "_id", "foreignField": "parent_id", "as": "addresses"}}]}'
run_rm run -q "$T/later.json" --from "$S" --to "$T/later.archive"
expect_eq "a step reading a field an earlier step made: fine" "$rc:$(cat "$T/err")" "0:"
plan later2 '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "crm.addresses", "style": "parentRef"}}, {"embed": {"from": "crm.addresses", "into": "crm.people", "localField": "_id", "foreignField": "parentid", "as": "addresses"}}]}'
run_rm run -q "$T/later2.json" --from "$S" --to "$T/later2.archive"
expect_message "... and misspelled there, named with what the earlier step made" \
    'step 2 (embed): foreignField "parentid" is in none of the' 'of crm.addresses; did you mean "parent_id"?'
# Field steps are not checked: a plan that renames runs again on its output.
plan ren '{"remodel": 1, "steps": [{"rename": {"in": "crm.people", "fields": {"phone": "phones"}}}]}'
"$REMODEL" run -q "$T/ren.json" --from "$S" --to "$T/ren1.archive"
run_rm run -q "$T/ren.json" --from "$T/ren1.archive" --to "$T/ren2.archive"
expect_eq "rename again over its own output: fine (field steps unchecked)" "$rc:$(cat "$T/err")" "0:"
