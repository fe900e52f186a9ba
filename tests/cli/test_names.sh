#!/usr/bin/env bash
# Hostile namespace names in every input format and every output format: a
# name MongoDB would refuse (a database "..", "../../..", "a/b", "a b", "",
# 64 bytes, a NUL) is an error naming the input and the namespace, and
# nothing is written anywhere; a collection name that looks like a path
# ("../../x") is a legal name, written escaped inside the destination and
# read back the same. Tar members that climb are refused. Long names get
# the hashed file name and the collectionName that reading back needs.
#   REMODEL=build/remodel bash tests/cli/test_names.sh
. "$(dirname "$0")/lib.sh"

CRAFT="python3 $ROOT/tests/transforms/craft_names.py"
BOX=$T/box                 # everything a command may touch lives in here
DST=$BOX/a/b/c             # destinations go in here, three levels down
mkdir -p "$DST" "$T/in"
tree_of() { (cd "$BOX" && find . | sort); }
BEFORE=$(tree_of)

# refused NAME WANT-STATUS STRING... -- ARGS: the command fails with one error
# line holding every STRING, and the box is as it was (no file, no temp).
refused() {
    local n=$1 want=$2 s missing=""; shift 2
    local strings=()
    while [ "$1" != "--" ]; do strings+=("$1"); shift; done; shift
    run_rm "$@"
    expect_eq "$n: exit $want" "$rc" "$want"
    for s in "${strings[@]}"; do grep -qF -- "$s" "$T/err" || missing="$missing [$s]"; done
    if [ "$(wc -l <"$T/err")" -eq 1 ] && [ -z "$missing" ]; then pass "$n: one line naming it"
    else fail "$n: one line naming it" "missing$missing in: $(head -c 300 "$T/err")"; fi
    expect_eq "$n: nothing written anywhere" "$(tree_of)" "$BEFORE"
}

# --- database names MongoDB refuses, from an archive, to every output -----------
i=0
for db in '..' '../../..' 'a/b' 'a\b' 'a b' 'a$b' 'a"b' '' "$(printf 'd%.0s' $(seq 1 64))"; do
    i=$((i + 1))
    $CRAFT archive "$T/in/bad$i.archive" "$db" x
    for out in dir out.tar out.tar.gz out.archive out.bson; do
        refused "archive db [$db] -> $out" 1 "bad$i.archive" "database \"$db\"" -- convert "$T/in/bad$i.archive" "$DST/$out"
    done
    refused "archive db [$db] -> run" 1 "bad$i.archive" -- run "$ROOT/dumps/plans/embed-tasks.json" --from "$T/in/bad$i.archive" --to "$DST/run"
done
$CRAFT archive "$T/in/nul.archive" 'db\x00x' c
refused "archive db with a NUL" 1 "nul.archive" "NUL" -- convert "$T/in/nul.archive" "$DST/dir"
$CRAFT archive "$T/in/empty.archive" db ''
refused "archive with an empty collection name" 1 "empty.archive" "empty collection name" -- convert "$T/in/empty.archive" "$DST/dir"

# --- from a directory, a tar and a .bson file -----------------------------------------
mkdir -p "$T/in/spacedir/a b"; cp "$ROOT/dumps/sample/crm/tasks.bson" "$T/in/spacedir/a b/c.bson"
refused "dir: a database directory \"a b\"" 1 "spacedir" 'database "a b"' -- convert "$T/in/spacedir" "$DST/dir"
# A .bson file's database is only guessed from its directory's name: the
# characters MongoDB refuses there become '_' (not an error).
run_rm convert -q "$T/in/spacedir/a b/c.bson" "$DST/guessed.archive"
expect_eq "bson: a parent directory \"a b\" gives the database a_b" "$rc:$("$REMODEL" inspect --json "$DST/guessed.archive" | python3 -c 'import json,sys; print([n["db"] for n in json.load(sys.stdin)["namespaces"]])')" "0:['a_b']"
rm -f "$DST/guessed.archive"
# --nsFrom/--nsTo rename what a dump holds; a name they make is checked too.
refused "--nsTo making a database \"a b\"" 2 'database "a b"' -- convert "$ROOT/dumps/sample" "$DST/x.archive" --nsFrom 'crm.tasks' --nsTo 'a b.tasks'
for member in 'dump/fine/../../x.bson' '../x/y.bson' '/abs/db/x.bson' 'dump/db/../../../x.bson'; do
    $CRAFT tar "$T/in/m.tar" "$member"
    refused "tar member $member" 1 "m.tar" "climbs" -- convert "$T/in/m.tar" "$DST/dir"
done
$CRAFT tar "$T/in/sp.tar" 'dump/a b/x.bson'
refused "tar: a database \"a b\"" 1 'database "a b"' -- convert "$T/in/sp.tar" "$DST/out.archive"
# A plan cannot name one either.
for ns in '../x.addresses' 'a/b.addresses' 'a b.addresses'; do
    echo '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "'"$ns"'", "style": "parentRef"}}]}' >"$T/in/plan.json"
    refused "plan: a namespace \"$ns\"" 2 'step 1 (extract): "to"' -- run "$T/in/plan.json" --from "$ROOT/dumps/sample" --to "$DST/run"
done

# --- collection names that look like paths are legal: written escaped, inside -------
for coll in '../../x' 'a/b' '..' '/etc/passwd' 'sp ace+%'; do
    $CRAFT archive "$T/in/c.archive" db "$coll"
    for out in dir out.tar out.tar.zst out.archive; do
        rm -rf "${DST:?}"/*
        run_rm convert -q "$T/in/c.archive" "$DST/$out"
        expect_eq "collection [$coll] -> $out: exit 0" "$rc" 0
        outside=$(cd "$BOX" && find . | grep -v '^\./a/b/c' | grep -v '^\.$\|^\./a$\|^\./a/b$')
        expect_eq "collection [$coll] -> $out: nothing outside the destination" "$outside" ""
        expect_eq "collection [$coll] -> $out: read back under the same name" \
            "$("$REMODEL" inspect --json "$DST/$out" | python3 -c 'import json,sys; print([n["collection"] for n in json.load(sys.stdin)["namespaces"]])')" \
            "$(python3 -c 'import sys; print([sys.argv[1]])' "$coll")"
    done
    # The directory holds exactly db/<escaped>.bson and .metadata.json.
    rm -rf "${DST:?}"/*
    "$REMODEL" convert -q "$T/in/c.archive" "$DST/dir"
    expect_eq "collection [$coll]: files in db/" "$(ls -A "$DST/dir/db" | wc -l)" 2
done
rm -rf "${DST:?}"/*

# --- long names: the hashed form carries collectionName --------------------------------
$CRAFT longname "$T/in/long"
mkdir -p "$T/in/lb/db"; python3 -c 'import bson,sys; open(sys.argv[1] + "/" + "d" * 250 + ".bson", "wb").write(bson.encode({"_id": 1}))' "$T/in/lb/db"
for src in "$T/in/long.archive" "$T/in/lb/db/$(printf 'd%.0s' $(seq 1 250)).bson"; do
    rm -rf "${DST:?}"/*
    run_rm convert -q "$src" "$DST/dir"
    expect_eq "long name ($(basename "$src" | cut -c1-12)...): written" "$rc" 0
    meta=$(ls "$DST"/dir/*/*.metadata.json)
    expect_eq "long name: the file name is hashed (238 bytes + .metadata.json)" "$(basename "$meta" | wc -c)" 253
    expect_eq "long name: read back with the same name" \
        "$("$REMODEL" inspect --json "$DST/dir" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["namespaces"][0]["collection"]))')" \
        "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["collectionName"]))' "$meta")"
    expect_eq "long name: the documents come back" "$("$REMODEL" show "$DST/dir" | wc -l)" "$("$REMODEL" show "$src" | wc -l)"
done
# A rename gives the metadata its new collectionName, so the name survives a dir.
rm -rf "${DST:?}"/*
"$REMODEL" convert -q "$ROOT/dumps/sample" "$DST/ren" --nsFrom 'crm.tasks' --nsTo 'crm.todo'
expect_eq "renamed into a dir: read back under the new name" \
    "$("$REMODEL" inspect --json "$DST/ren" | python3 -c 'import json,sys; print(sorted(n["collection"] for n in json.load(sys.stdin)["namespaces"] if n["db"] == "crm"))')" \
    "['people', 'todo']"

# --- a dump of no namespace, and an empty directory (undefined behaviour once) ---------
python3 - "$T/in/zero.archive" <<'PY'
import struct, sys
h = b'\x10concurrent_collections\x00' + struct.pack('<i', 1)
open(sys.argv[1], 'wb').write(b'\x6d\xe2\x99\x81' + struct.pack('<i', len(h) + 5) + h + b'\x00' + b'\xff\xff\xff\xff')
PY
for out in o.tar o.tar.gz o.archive dir; do
    rm -rf "${DST:?}"/*
    run_rm convert -q "$T/in/zero.archive" "$DST/$out"
    expect_eq "no namespace -> $out: exit 0, no temporary left" "$rc:$(ls -A "$DST" | grep -c remodel-)" "0:0"
done
rm -rf "${DST:?}"/*
mkdir -p "$T/in/emptydir"
run_rm inspect "$T/in/emptydir"
expect_eq "an empty directory: exit 1, one line" "$rc:$(wc -l <"$T/err")" "1:1"
expect_message "an empty directory: says so" "no dump files"
