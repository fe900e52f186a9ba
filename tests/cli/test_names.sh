#!/usr/bin/env bash
# Hostile namespace names in every input format (archive, directory, tar,
# .bson file) and every output format (directory, tar, archive, .bson, a
# pipe, run): a name MongoDB would refuse (a database "..", "../../..",
# "a/../../b", "/abs", "a b", "", 64 bytes, a NUL; an empty collection, a
# collection holding a NUL) is one error line naming the input and the
# namespace, exit 1, and nothing is written anywhere (the destination's
# parents and the whole test directory are compared before and after: no
# file, no temporary). A collection name that looks like a path ("../../x",
# "/etc/passwd") is a legal name, written escaped inside the destination
# and read back the same. Tar members that climb are refused. Long names
# get the hashed file name and the collectionName that reading back needs
# (the fixture's own long name too). A dump of no namespace and an empty
# directory (undefined behaviour once, under UBSan), and tars cut at every
# member boundary (refused as truncated).
#   REMODEL=build/remodel bash tests/cli/test_names.sh
. "$(dirname "$0")/lib.sh"

CRAFT="python3 $ROOT/tests/transforms/craft_names.py"
BOX=$T/w/x/box             # everything a command may touch lives in $T/w
DST=$BOX/a/b/c             # destinations go in here, three levels down
mkdir -p "$DST" "$T/in"
tree_of() { (cd "$T/w" && find . | sort); }
BEFORE=$(tree_of)
D250=$(printf 'd%.0s' $(seq 1 250))
C300=$(printf 'c%.0s' $(seq 1 300))
HST=$($CRAFT hashed - "$C300")   # mongodump's file stem for C300

# refused NAME WANT-STATUS STRING... -- ARGS: the command fails with one error
# line holding every STRING, and $T/w is as it was (no file, no temp, at
# the destination, beside it, or above it).
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
    # after a failure, the next check starts from the same empty tree
    [ "$(tree_of)" == "$BEFORE" ] || { rm -rf "$T/w"; mkdir -p "$DST"; }
}

# colls_of DUMP: the [(db, collection)] list inspect reads from DUMP.
colls_of() {
    "$REMODEL" inspect --json "$1" | python3 -c 'import json,sys; print([(n["db"], n["collection"]) for n in json.load(sys.stdin)["namespaces"]])'
}

OUTS="dir out.tar out.tar.gz out.archive out.bson"

# --- database names MongoDB refuses, from an archive, to every output ---------------
i=0
for db in '..' '../../..' 'a/../../b' "/$T/w/abs" 'a/b' 'a\b' 'a b' 'a$b' 'a"b' 'a.b' '' "$(printf 'd%.0s' $(seq 1 64))"; do
    i=$((i + 1))
    $CRAFT archive "$T/in/bad$i.archive" "$db" x
    for out in $OUTS; do
        refused "archive db [$db] -> $out" 1 "bad$i.archive" "database \"$db\"" -- convert "$T/in/bad$i.archive" "$DST/$out"
    done
    refused "archive db [$db] -> run" 1 "bad$i.archive" -- run "$ROOT/dumps/plans/embed-tasks.json" --from "$T/in/bad$i.archive" --to "$DST/run"
    refused "archive db [$db] -> run, tar" 1 "bad$i.archive" -- run "$ROOT/dumps/plans/embed-tasks.json" --from "$T/in/bad$i.archive" --to "$DST/run.tar"
done
# 63 bytes is MongoDB's longest database name: accepted.
$CRAFT archive "$T/in/ok63.archive" "$(printf 'd%.0s' $(seq 1 63))" x
run_rm convert -q "$T/in/ok63.archive" "$DST/ok63"
expect_eq "archive db of 63 bytes: accepted" "$rc:$(ls "$DST/ok63" | grep -c '^d')" "0:1"
rm -rf "${DST:?}"/*
# The message shows control bytes as \xNN: one line, whatever the name holds.
$CRAFT archive "$T/in/ctl.archive" $'a/\n\x1b[2J' x
refused "archive db with control bytes: escaped" 1 'database "a/\x0a\x1b[2J"' -- convert "$T/in/ctl.archive" "$DST/dir"
# A NUL in a name, in the prelude or in a namespace header, is refused, not cut.
$CRAFT archive "$T/in/nul.archive" 'db\x00x' c
refused "archive db with a NUL" 1 "nul.archive" 'database "db\x00x"' "NUL" -- convert "$T/in/nul.archive" "$DST/dir"
$CRAFT archive "$T/in/nulc.archive" db 'c\x00/../../x'
for out in $OUTS; do
    refused "archive collection with a NUL -> $out" 1 "nulc.archive" 'collection "c\x00/../../x"' "NUL" -- convert "$T/in/nulc.archive" "$DST/$out"
done
$CRAFT archive "$T/in/nulh.archive" db c 'db\x00../x' c
refused "archive namespace header: db with a NUL" 1 "nulh.archive" 'database "db\x00../x"' "NUL" -- convert "$T/in/nulh.archive" "$DST/dir"
$CRAFT archive "$T/in/nulhc.archive" db c db 'c\x00x'
refused "archive namespace header: collection with a NUL" 1 "nulhc.archive" 'collection "c\x00x"' "NUL" -- convert "$T/in/nulhc.archive" "$DST/out.tar"
$CRAFT archive "$T/in/empty.archive" db ''
for out in $OUTS; do
    refused "archive with an empty collection name -> $out" 1 "empty.archive" "empty collection name" -- convert "$T/in/empty.archive" "$DST/$out"
done
refused "archive with an empty collection name -> a pipe" 1 "empty.archive" "empty collection name" -- cat "$T/in/empty.archive"
expect_eq "archive with an empty collection name -> a pipe: nothing on it" "$(wc -c <"$T/out")" 0

# --- from a directory ------------------------------------------------------------------
i=0
for db in 'a b' 'a$b' 'a"b' 'a\b' 'a.b' "$(printf 'd%.0s' $(seq 1 64))"; do
    i=$((i + 1))
    $CRAFT dir "$T/in/dbdir$i" "$db" c
    for out in $OUTS; do
        refused "dir: a database directory [$db] -> $out" 1 "dbdir$i" "database \"$db\"" -- convert "$T/in/dbdir$i" "$DST/$out"
    done
done
refused "dir: a database directory [a b] -> run" 1 "dbdir1" 'database "a b"' -- run "$ROOT/dumps/plans/embed-tasks.json" --from "$T/in/dbdir1" --to "$DST/run"
# File names: %00 is a NUL; ".bson" is the collection "" (not passed over).
$CRAFT dir "$T/in/nuldir" db 'x%00..%2F..%2Fy'
for out in $OUTS; do
    refused "dir: a file name with %00 -> $out" 1 "nuldir/db/x%00..%2F..%2Fy.bson" 'collection "x\x00../../y"' "NUL" -- convert "$T/in/nuldir" "$DST/$out"
done
$CRAFT dir "$T/in/emptystem" db ''
refused "dir: a file named .bson" 1 "emptystem" 'collection ""' "empty collection name" -- convert "$T/in/emptystem" "$DST/dir"
# The metadata's collectionName is a name from the input too.
$CRAFT dir "$T/in/metanul" db c '{"collectionName": "c\u0000/../../x", "indexes": []}'
refused "dir: collectionName with a NUL" 1 "metanul/db/c.metadata.json" 'collection "c\x00/../../x"' "NUL" -- convert "$T/in/metanul" "$DST/out.tar"
$CRAFT dir "$T/in/metaempty" db "$HST" '{"collectionName": "", "indexes": []}'
refused "dir: an empty collectionName" 1 "metaempty" "empty collection name" -- convert "$T/in/metaempty" "$DST/dir"
# ... and so is the one beside a single .bson file read on its own.
refused "single .bson: its side metadata's collectionName with a NUL" 1 "metanul/db/c.metadata.json" 'collection "c\x00/../../x"' "NUL" -- convert "$T/in/metanul/db/c.bson" "$DST/out.tar"
$CRAFT dir "$T/in/metaempty1" db c '{"collectionName": "", "indexes": []}'
refused "single .bson: its side metadata's empty collectionName" 1 "metaempty1/db/c.metadata.json" "empty collection name" -- convert "$T/in/metaempty1/db/c.bson" "$DST/dir"
# A single database's directory named by "." takes its real name.
mkdir -p "$T/in/one/crm"; cp "$ROOT/dumps/sample/crm/tasks.bson" "$T/in/one/crm/"
expect_eq "dir: a database's directory given as . reads as its real name" \
    "$(cd "$T/in/one/crm" && colls_of .)" "[('crm', 'tasks')]"

# --- from a tar --------------------------------------------------------------------------
for member in 'dump/fine/../../x.bson' '../x/y.bson' '/abs/db/x.bson' 'dump/db/../../../x.bson' './../db/x.bson' 'dump/a/../../b/x.bson'; do
    $CRAFT tar "$T/in/m.tar" "$member"
    for out in dir out.tar out.archive; do
        refused "tar member $member -> $out" 1 "m.tar" "\"$member\"" "climbs" -- convert "$T/in/m.tar" "$DST/$out"
    done
done
# A climbing member among good ones is refused all the same.
$CRAFT tar "$T/in/m2.tar" 'dump/db/a.bson' 'dump/db/../../x.bson'
refused "tar: a climbing member after a good one" 1 "m2.tar" "climbs" -- convert "$T/in/m2.tar" "$DST/dir"
i=0
for db in 'a b' 'a$b' 'a"b' 'a\b' ''; do
    i=$((i + 1))
    $CRAFT tar "$T/in/sp$i.tar" "dump/$db/x.bson"
    for out in $OUTS; do
        refused "tar: a database [$db] -> $out" 1 "sp$i.tar" "database \"$db\"" -- convert "$T/in/sp$i.tar" "$DST/$out"
    done
done
refused "tar: a database [a b] -> run" 1 "sp1.tar" 'database "a b"' -- run "$ROOT/dumps/plans/embed-tasks.json" --from "$T/in/sp1.tar" --to "$DST/run.tar"
$CRAFT tar "$T/in/nul.tar" 'dump/db/x%00y.bson'
refused "tar: a member name with %00" 1 "nul.tar:dump/db/x%00y.bson" 'collection "x\x00y"' "NUL" -- convert "$T/in/nul.tar" "$DST/dir"
$CRAFT tar "$T/in/meta.tar" "dump/db/$HST.bson" "dump/db/$HST.metadata.json="'{"collectionName": "a\u0000b"}'
refused "tar: collectionName with a NUL" 1 "meta.tar:dump/db" 'collection "a\x00b"' "NUL" -- convert "$T/in/meta.tar" "$DST/dir"
$CRAFT tar "$T/in/es.tar" 'dump/db/.bson'
refused "tar: a member .bson" 1 "es.tar" "empty collection name" -- convert "$T/in/es.tar" "$DST/dir"

# --- from a .bson file -------------------------------------------------------------------
# Its database is only guessed from its directory's name: the characters
# MongoDB refuses there become '_' (not an error), under 64 bytes.
mkdir -p "$T/in/spacedir/a b" "$T/in/dots/x.y\$z" "$T/in/long/$(printf 'd%.0s' $(seq 1 80))"
cp "$ROOT/dumps/sample/crm/tasks.bson" "$T/in/spacedir/a b/c.bson"
cp "$ROOT/dumps/sample/crm/tasks.bson" "$T/in/dots/x.y\$z/..%2F..%2Fc.bson"
cp "$ROOT/dumps/sample/crm/tasks.bson" "$T/in/long/$(printf 'd%.0s' $(seq 1 80))/c.bson"
for out in dir out.tar out.archive; do
    run_rm convert -q "$T/in/spacedir/a b/c.bson" "$DST/$out"
    expect_eq "bson: a parent directory \"a b\" -> $out: the database a_b" "$rc:$(colls_of "$DST/$out")" "0:[('a_b', 'c')]"
    run_rm convert -q "$T/in/dots/x.y\$z/..%2F..%2Fc.bson" "$DST/2$out"
    expect_eq "bson: parent \"x.y\$z\", file ..%2F..%2Fc.bson -> $out: x_y_z, ../../c" "$rc:$(colls_of "$DST/2$out")" "0:[('x_y_z', '../../c')]"
    run_rm convert -q "$T/in/long/$(printf 'd%.0s' $(seq 1 80))/c.bson" "$DST/3$out"
    expect_eq "bson: a parent of 80 bytes -> $out: cut to 63" "$rc:$(colls_of "$DST/3$out")" "0:[('$(printf 'd%.0s' $(seq 1 63))', 'c')]"
done
expect_eq "bson: nothing outside the destination" "$(cd "$T/w" && find . | grep -v '^\./x/box/a/b/c' | sort)" "$(echo "$BEFORE" | grep -v '^\./x/box/a/b/c')"
rm -rf "${DST:?}"/*
mkdir -p "$T/in/eb/db"; cp "$ROOT/dumps/sample/crm/tasks.bson" "$T/in/eb/db/.bson"
refused "bson: a file named .bson" 1 ".bson" "empty collection name" -- convert "$T/in/eb/db/.bson" "$DST/out.archive"

# --- names made by options or plans ----------------------------------------------------------
refused "--nsTo making a database \"a b\"" 2 'database "a b"' -- convert "$ROOT/dumps/sample" "$DST/x.archive" --nsFrom 'crm.tasks' --nsTo 'a b.tasks'
refused "--nsTo making a database \"a\$b\"" 2 'database "a$b"' -- convert "$ROOT/dumps/sample" "$DST/dir" --nsFrom 'crm.tasks' --nsTo 'a$b.tasks'
for ns in '../x.addresses' 'a/b.addresses' 'a b.addresses'; do
    echo '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "'"$ns"'", "style": "parentRef"}}]}' >"$T/in/plan.json"
    refused "plan: a namespace \"$ns\"" 2 'step 1 (extract): "to"' -- run "$T/in/plan.json" --from "$ROOT/dumps/sample" --to "$DST/run"
done

# --- collection names that look like paths are legal: written escaped, inside ------------
inside() { # NAME OUT: nothing in $T/w but the destination OUT, nothing at $T/escaped
    local outside
    outside=$(cd "$T/w" && find . | grep -v '^\./x/box/a/b/c' | sort)
    expect_eq "$1: nothing outside the destination" "$outside:$(ls -A "$DST"):$(ls -d "$T"/escaped* 2>/dev/null)" \
        "$(echo "$BEFORE" | grep -v '^\./x/box/a/b/c'):$2:"
}
UP=$(printf '../%.0s' $(seq 1 40))   # from anywhere under $T, to /
for coll in '../../x' 'a/b' '..' '.' '/etc/passwd' "$UP$T/escaped" 'sp ace+%' $'\x01\n'; do
    $CRAFT archive "$T/in/c.archive" db "$coll"
    want=$(python3 -c 'import sys; print([("db", sys.argv[1])])' "$coll")
    for out in dir out.tar out.tar.zst out.archive out.bson; do
        rm -rf "${DST:?}"/*
        run_rm convert -q "$T/in/c.archive" "$DST/$out"
        expect_eq "collection [$coll] -> $out: exit 0" "$rc" 0
        inside "collection [$coll] -> $out" "$out"
        [ "$out" = out.bson ] && continue
        expect_eq "collection [$coll] -> $out: read back under the same name" "$(colls_of "$DST/$out")" "$want"
    done
    # The directory holds exactly db/<escaped>.bson and .metadata.json.
    rm -rf "${DST:?}"/*
    "$REMODEL" convert -q "$T/in/c.archive" "$DST/dir"
    esc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote_plus(sys.argv[1]))' "$coll")
    expect_eq "collection [$coll]: the files in db/ are named as mongodump names them" \
        "$(ls -A "$DST/dir/db" | tr '\n' ' ')" "$esc.bson $esc.metadata.json "
    # run writes through the same writers: a step in that namespace, to a
    # directory and to a tar.
    python3 -c 'import json,sys; print(json.dumps({"remodel": 1, "steps": [{"set": {"in": "db." + sys.argv[1], "fields": {"v": 2}}}]}))' "$coll" >"$T/in/set.json"
    for out in run run.tar; do
        rm -rf "${DST:?}"/*
        run_rm run -q "$T/in/set.json" --from "$T/in/c.archive" --to "$DST/$out"
        expect_eq "run: collection [$coll] -> $out: exit 0" "$rc" 0
        inside "run: collection [$coll] -> $out" "$out"
        expect_eq "run: collection [$coll] -> $out: read back, the step applied" \
            "$(colls_of "$DST/$out"):$("$REMODEL" show "$DST/$out" | tr '\n' ' ')" "$want:{\"_id\":1,\"v\":2} {\"_id\":2,\"v\":2} "
    done
done
rm -rf "${DST:?}"/*
# A tar read back from remodel's output keeps its escaped member names.
$CRAFT archive "$T/in/c.archive" db '../../x'
"$REMODEL" convert -q "$T/in/c.archive" "$DST/o.tar"
expect_eq "tar output: members under dump/, escaped" "$(tar -tf "$DST/o.tar" | sort | tr '\n' ' ')" \
    "dump/db/ dump/db/..%2F..%2Fx.bson dump/db/..%2F..%2Fx.metadata.json dump/prelude.json "
rm -rf "${DST:?}"/*

# --- long names: the hashed form carries collectionName --------------------------------------
$CRAFT longname "$T/in/long"
mkdir -p "$T/in/lb/db"; python3 -c 'import bson,sys; open(sys.argv[1] + "/" + "d" * 250 + ".bson", "wb").write(bson.encode({"_id": 1}) + bson.encode({"_id": 2, "x": "y"}))' "$T/in/lb/db"
for src in "$T/in/long.archive" "$T/in/lb/db/$D250.bson"; do
    label="long name from $(basename "$src" | cut -c1-12)"
    for via in dir dir.tar; do
        rm -rf "${DST:?}"/*
        run_rm convert -q "$src" "$DST/$via"
        expect_eq "$label -> $via: written" "$rc" 0
        "$REMODEL" convert -q "$DST/$via" "$DST/back.dir"
        meta=$(ls "$DST"/back.dir/*/*.metadata.json)
        expect_eq "$label -> $via: the file name is hashed (238 bytes + .metadata.json)" "$(basename "$meta" | wc -c)" 253
        expect_eq "$label -> $via: collectionName is the real name" \
            "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["collectionName"])' "$meta")" \
            "$("$REMODEL" inspect --json "$src" | python3 -c 'import json,sys; print(json.load(sys.stdin)["namespaces"][0]["collection"])')"
        expect_eq "$label -> $via: read back, the same namespace and documents (CRC)" \
            "$("$REMODEL" inspect --json "$DST/back.dir" | python3 -c 'import json,sys; print([(n["db"], n["collection"], n["documents"], n["crc"]) for n in json.load(sys.stdin)["namespaces"]])')" \
            "$("$REMODEL" inspect --json "$src" | python3 -c 'import json,sys; print([(n["db"], n["collection"], n["documents"], n["crc"]) for n in json.load(sys.stdin)["namespaces"]])')"
        expect_eq "$label -> $via: the same documents shown" "$("$REMODEL" show "$DST/back.dir")" "$("$REMODEL" show "$src")"
    done
done
# The source's other metadata stays: only collectionName is added.
rm -rf "${DST:?}"/*
"$REMODEL" convert -q "$T/in/long.archive" "$DST/dir"
expect_eq "long name: the metadata kept, collectionName added" \
    "$(ls "$DST/dir/long"):$(cat "$DST/dir/long/$HST.metadata.json")" \
    "$HST.bson
$HST.metadata.json:{\"indexes\":[],\"collectionName\":\"$C300\"}"
# mongodump's own long name (the fixture): remodel names its files exactly
# as mongodump did, through an archive and back into a directory.
LONGFIX=$MT/mongorestore/testdata/longcollectionname/db1
if [ -d "$LONGFIX" ]; then
    rm -rf "${DST:?}"/*
    "$REMODEL" convert -q "$LONGFIX" "$DST/l.archive" && "$REMODEL" convert -q "$DST/l.archive" "$DST/l"
    expect_eq "fixture long name: the same file names as mongodump's" "$(ls "$DST/l/db1")" "$(ls "$LONGFIX")"
    expect_eq "fixture long name: the same bytes of BSON" "$(cmp "$DST/l/db1/"*.bson "$LONGFIX/"*.bson && echo same)" same
    expect_eq "fixture long name: the same metadata" "$(cmp "$DST/l/db1/"*.metadata.json "$LONGFIX/"*.metadata.json && echo same)" same
else
    fail "fixture long name" "$LONGFIX is missing"
fi
# A rename gives the metadata its new collectionName, so the name survives a dir.
rm -rf "${DST:?}"/*
"$REMODEL" convert -q "$ROOT/dumps/sample" "$DST/ren" --nsFrom 'crm.tasks' --nsTo 'crm.todo'
expect_eq "renamed into a dir: read back under the new name" \
    "$("$REMODEL" inspect --json "$DST/ren" | python3 -c 'import json,sys; print(sorted(n["collection"] for n in json.load(sys.stdin)["namespaces"] if n["db"] == "crm"))')" \
    "['people', 'todo']"
rm -rf "${DST:?}"/*

# --- a dump of no namespace, and an empty directory (undefined behaviour once) ---------
python3 - "$T/in/zero.archive" <<'PY'
import struct, sys
h = b'\x10concurrent_collections\x00' + struct.pack('<i', 1)
open(sys.argv[1], 'wb').write(b'\x6d\xe2\x99\x81' + struct.pack('<i', len(h) + 5) + h + b'\x00' + b'\xff\xff\xff\xff')
PY
for out in o.tar o.tar.gz o.archive dir; do
    rm -rf "${DST:?}"/*
    run_rm convert -q "$T/in/zero.archive" "$DST/$out"
    expect_eq "no namespace -> $out: exit 0, written, no temporary left" "$rc:$(ls -A "$DST" | tr '\n' ' ')" "0:$out "
done
rm -rf "${DST:?}"/*
"$REMODEL" convert -q "$T/in/zero.archive" "$DST/o.tar"
expect_eq "no namespace -> tar: a tar of dump/ alone" "$(tar -tf "$DST/o.tar" | tr '\n' ' ')" ""
rm -rf "${DST:?}"/*
mkdir -p "$T/in/emptydir"
run_rm inspect "$T/in/emptydir"
expect_eq "an empty directory: exit 1, one line" "$rc:$(wc -l <"$T/err")" "1:1"
expect_message "an empty directory: says so" "no dump files"
refused "an empty directory -> dir" 1 "no dump files" -- convert "$T/in/emptydir" "$DST/dir"

# --- a tar cut short is truncated, at a member boundary too ------------------------------------
$CRAFT tarcuts "$T/in/cuts"
for f in "$T"/in/cuts/cut-*.tar; do
    n=$(basename "$f" .tar)
    gzip -c "$f" >"$f.gz"
    for src in "$f" "$f.gz"; do
        refused "tar $n$( [ "$src" = "$f" ] || echo .gz) -> dir: truncated" 1 "$(basename "$src")" "truncated tar" -- convert "$src" "$DST/dir"
    done
    run_rm inspect "$f"
    expect_eq "tar $n: inspect exits 1" "$rc" 1
    "$REMODEL" convert -q - "$DST/p.archive" <"$f" 2>"$T/err"; st=$?
    expect_eq "tar $n on standard input: exit 1, nothing written" "$st:$(ls -A "$DST" | wc -l)" "1:0"
done
for f in whole ended; do
    run_rm convert -q "$T/in/cuts/$f.tar" "$DST/$f.archive"
    expect_eq "tar $f (both end blocks): read whole" "$rc:$(colls_of "$DST/$f.archive")" "0:[('db', 'a'), ('db', 'b')]"
done
rm -rf "${DST:?}"/*

# --- mongorestore reads the long name back from remodel's directory --------------------
# Its --dryRun says which namespace each file would restore to: the real
# 300-byte name, taken from the collectionName remodel wrote.
if use_peers names-peers; then
    if uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$SRV" 2>"$T/err"); then
        "$REMODEL" convert -q "$T/in/long.archive" "$DST/mr"
        "$MONGORESTORE" --uri "$uri" --dryRun -v "$DST/mr" >"$T/mr.log" 2>&1
        expect_eq "mongorestore --dryRun: the long name restores to itself" \
            "$(grep -o "found collection long\.[^ ]* bson to restore to long\.[^ ]*" "$T/mr.log")" \
            "found collection long.$C300 bson to restore to long.$C300"
        "$SERVER" stop "$SRV" >/dev/null 2>&1
    else
        fail "mongorestore --dryRun: server start" "$(cat "$T/err")"
    fi
fi
