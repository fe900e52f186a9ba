# Every real mongodump output in tests/fixtures (mongo-tools' test data)
# and the Atlas-shaped sample (tests/fixtures/atlas_sample.py) is read, and
# survives archive -> directory -> tar.zst -> archive (and the gzip and zstd
# variants) with the same documents in the same order per namespace (the
# CRC-64 of each namespace's documents), the same metadata bytes, and CRCs
# that verify.
. "$(dirname "$0")/lib.sh"
ATLAS=$(atlas_sample)

TD=$MT/mongorestore/testdata

# fingerprint SRC: one line per namespace "db coll docs crc metadata-sha1",
# sorted, or "ERROR ..." when inspect fails or reports a problem.
fingerprint() {
    "$REMODEL" inspect --json -q "$1" 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception as e:
    print("ERROR no json"); sys.exit()
if d["problems"]:
    print("ERROR", d["problems"]); sys.exit()
for n in sorted(d["namespaces"], key=lambda n: (n["db"], n["collection"])):
    print(n["db"], n["collection"], n["documents"], n["crc"], n.get("metadataSha1", "-"),
          n.get("crcVerified", "-") is not False)
'
}

# roundtrip NAME SRC: converts through every format and compares fingerprints.
roundtrip() {
    local name=$1 src=$2 d=$T/$1 want got ok=1 step prev
    mkdir -p "$d"
    want=$(fingerprint "$src")
    case $want in ""|ERROR*) fail "read $name" "$want"; return ;; esac
    pass "read $name"
    prev=$src
    for step in a.archive dir tar.tar.zst b.archive gz.archive.gz gzdir zst.archive.zst tgz.tgz c.archive; do
        local opts=()
        [ "$step" = gzdir ] && opts=(--compress gzip)
        if ! "$REMODEL" convert -q "${opts[@]}" "$prev" "$d/$step" 2>"$T/err"; then
            fail "roundtrip $name -> $step" "$(cat "$T/err")"
            return
        fi
        got=$(fingerprint "$d/$step")
        if [ "$got" != "$want" ]; then
            fail "roundtrip $name -> $step" "fingerprints differ:
want:
$want
got:
$got"
            ok=0
        fi
        prev=$d/$step
    done
    [ $ok = 1 ] && pass "roundtrip $name through 9 conversions"
    # A second pass of the same conversion writes the same bytes.
    "$REMODEL" convert -q "$d/c.archive" "$d/again.archive" &&
        expect_eq "stable bytes $name" "$(cmp "$d/b.archive" "$d/again.archive" && echo same)" same
}

for a in "$TD"/*.archive "$TD"/timeseries_tests/dump.archive; do
    roundtrip "$(basename "$(dirname "$a")")-$(basename "$a" .archive)" "$a"
done
for dir in aws_test_db collMod_ttl_index coll_with_geohaystack_index coll_with_index \
           coll_with_ttl_index coll_without_index dump_local_oplog duplicate_index_key \
           duplicate_index_key_with_oplog foodump indexmetadata indextestdump \
           longcollectionname/db1 longindextestdump oplogdump oplogdumpmaxsize \
           prelude_test/prelude_db_target prelude_test/prelude_gzip \
           prelude_test/prelude_top_level prelude_test/server_version_unknown \
           specialcharacter timeseries_tests/ts_dump timeseries_tests/ts_dump_invalid_buckets \
           timeseries_tests/ts_dump_with_oplog usersdump testdirs; do
    roundtrip "$(echo "$dir" | tr / -)" "$TD/$dir"
done
roundtrip atlas-sample "$ATLAS"

# Single .bson files: every one in the fixtures that is valid BSON is read
# and copied byte for byte (a .bson destination keeps exactly the bytes).
n=0; bad=0
while IFS= read -r f; do
    case $f in */bsondump/testdata/bad_*|*/partial_file.bson|*/random_bytes.bson|*/invalid_field_name.bson) continue ;; esac
    n=$((n + 1))
    rm -f "$T/one.bson"
    if ! "$REMODEL" convert -q "$f" "$T/one.bson" 2>"$T/err" || ! cmp -s "$f" "$T/one.bson"; then
        [ -s "$f" ] || { [ -f "$T/one.bson" ] && [ ! -s "$T/one.bson" ] && continue; }
        bad=$((bad + 1)); echo "  $f: $(cat "$T/err")" >&2
    fi
done < <(find "$MT" "$ATLAS" -name '*.bson' -type f | sort)
expect_eq "every valid fixture .bson ($n files) copied byte for byte" "$bad" 0

# Named facts about particular dumps.
"$REMODEL" inspect --json -q "$TD/timeseries_tests/dump.archive" >"$T/ts.json"
expect_eq "time-series namespace keeps its buckets collection" \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(n["collection"],n.get("dataCollection"),n["type"],n["documents"]) for n in d["namespaces"] if n["type"]=="timeseries"])' "$T/ts.json")" \
    "[('foo_ts', 'system.buckets.foo_ts', 'timeseries', 10)]"
"$REMODEL" convert -q "$TD/timeseries_tests/dump.archive" "$T/tsdir"
check "time-series directory layout" test -f "$T/tsdir/timeseries_test/system.buckets.foo_ts.bson" -a \
    -f "$T/tsdir/timeseries_test/foo_ts.metadata.json"
"$REMODEL" convert -q "$TD/dump-w-oplog.archive" "$T/oplogdir"
check "oplog goes to the top-level oplog.bson" test -s "$T/oplogdir/oplog.bson"
# The oplog namespace is the last data namespace of an archive we write.
"$REMODEL" convert -q "$T/oplogdir" "$T/oplog.archive"
last=$(python3 - "$T/oplog.archive" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
p = 4
def doc(p):
    return struct.unpack('<i', d[p:p+4])[0]
p += doc(p)
while doc(p) != -1: p += doc(p)
p += 4
last = None
while p < len(d):
    n = doc(p); h = d[p:p+n]; p += n
    coll = h.split(b'collection\x00')[1][4:].split(b'\x00')[0].decode()
    last = coll
    while doc(p) != -1: p += doc(p)
    p += 4
print(last)
PY
)
expect_eq "oplog is the last namespace of a written archive" "$last" oplog
"$REMODEL" convert -q "$TD/longcollectionname/db1" "$T/longdir"
check "hashed long collection name escaped as mongodump does" test -f \
    "$T/longdir/db1/aVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryVeryLongCollectionNameConsistingOfE%24xFO0VquRn7cg3QooSZD5sglTddU.bson"
"$REMODEL" convert -q "$TD/specialcharacter" "$T/special.archive"
"$REMODEL" convert -q "$T/special.archive" "$T/specialdir"
check "escaped name caf%C3%A9s restored" test -f "$T/specialdir/db1/caf%C3%A9s.bson"
# Malformed metadata JSON (bad-format.archive) passes through byte for byte.
"$REMODEL" convert -q "$TD/bad-format.archive" "$T/badfmt"
python3 - "$TD/bad-format.archive" "$T/badfmt/test/ixtest.metadata.json" <<'PY' && pass "malformed metadata kept verbatim" || fail "malformed metadata kept verbatim"
import sys
a = open(sys.argv[1], 'rb').read(); m = open(sys.argv[2], 'rb').read()
assert len(m) > 50 and m in a, m
PY
# Standard input: an archive and a .bson stream.
"$REMODEL" cat "$TD/dump-w-oplog.archive" | "$REMODEL" convert -q - "$T/stdin.archive.zst"
expect_eq "archive from a pipe" "$(fingerprint "$T/stdin.archive.zst")" "$(fingerprint "$TD/dump-w-oplog.archive")"
gzip -c "$MT/bsondump/testdata/all_types.bson" | "$REMODEL" convert -q - "$T/stdin.bson"
check "gzip .bson from a pipe" cmp "$T/stdin.bson" "$MT/bsondump/testdata/all_types.bson"

# Tars made by the system's tar, in formats our writer does not produce.
mkdir -p "$T/ext" && cp -r "$ROOT/dumps/sample" "$T/ext/sample"
tar -C "$T/ext" -cJf "$T/ext.tar.xz" sample
tar -C "$T/ext" -cjf "$T/ext.tar.bz2" sample
tar -C "$T/ext/sample" -czf "$T/ext-noroot.tgz" .
want=$(fingerprint "$ROOT/dumps/sample")
for t in ext.tar.xz ext.tar.bz2 ext-noroot.tgz; do
    expect_eq "tar made by tar(1): $t" "$(fingerprint "$T/$t")" "$want"
done
# A tar on standard input is copied to a temporary file under $TMPDIR (it is
# read in several passes) and gives what the file gives; the copy is gone
# afterwards, on success and on error.
mkdir -p "$T/spool"
tar -C "$T/ext" -cf "$T/ext.tar" sample
for t in ext.tar ext.tar.xz ext-noroot.tgz; do
    rm -f "$T/stdin-tar.archive"
    TMPDIR=$T/spool "$REMODEL" convert -q - "$T/stdin-tar.archive" <"$T/$t"
    expect_eq "tar on standard input: $t" "$(fingerprint "$T/stdin-tar.archive")" "$want"
done
head -c 20000 "$T/ext.tar" | TMPDIR=$T/spool "$REMODEL" convert -q - "$T/stdin-cut.archive" 2>"$T/stdin-cut.err"
st=$?
expect_eq "truncated tar on standard input: exit status 1" "$st" 1
check "truncated tar on standard input: the message names <stdin>" grep -q '^remodel: error: <stdin>: ' "$T/stdin-cut.err"
check "truncated tar on standard input: no output" test ! -e "$T/stdin-cut.archive"
expect_eq "tar on standard input: no temporary copy left" "$(ls -A "$T/spool")" ""

# Views: only metadata in a directory, a zero-document segment in an archive.
mkdir -p "$T/viewdump/shop"
printf '%s' '{"options":{"viewOn":"orders","pipeline":[{"$match":{"status":"A"}}]},"indexes":[],"collectionName":"active","type":"view"}' >"$T/viewdump/shop/active.metadata.json"
printf '%s' '{"indexes":[{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_"}],"collectionName":"orders"}' >"$T/viewdump/shop/orders.metadata.json"
cp "$MT/bsondump/testdata/sample.bson" "$T/viewdump/shop/orders.bson"
"$REMODEL" convert -q "$T/viewdump" "$T/view.archive"
prelude=$(python3 - "$T/view.archive" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
p = 4 + struct.unpack('<i', d[4:8])[0]
out = []
while struct.unpack('<i', d[p:p+4])[0] != -1:
    n = struct.unpack('<i', d[p:p+4])[0]
    doc = d[p:p+n]; p += n
    coll = doc.split(b'collection\x00')[1][4:].split(b'\x00')[0].decode()
    typ = doc.split(b'type\x00')[1][4:].split(b'\x00')[0].decode()
    out.append(coll + ':' + typ)
print(' '.join(out))
PY
)
expect_eq "a view is typed view in the archive prelude" "$prelude" "active:view orders:collection"
"$REMODEL" convert -q "$T/view.archive" "$T/viewback"
check "a view has only its metadata in a directory" test -f "$T/viewback/shop/active.metadata.json" -a ! -e "$T/viewback/shop/active.bson"
check "the view's metadata is kept byte for byte" cmp "$T/viewdump/shop/active.metadata.json" "$T/viewback/shop/active.metadata.json"
expect_eq "views survive the round trip" "$(fingerprint "$T/viewback")" "$(fingerprint "$T/viewdump")"
