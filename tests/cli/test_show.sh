#!/usr/bin/env bash
# remodel show: documents as Extended JSON. The judges are the real tools:
# canonical output must equal bsondump's byte for byte (and --pretty
# bsondump --pretty's), relaxed output mongoexport's for the same documents
# restored into a FerretDB server. Then the options: --ns, --skip, --limit,
# --id, headers between namespaces, every input format.
#   REMODEL=build/remodel bash tests/cli/test_show.sh
. "$(dirname "$0")/lib.sh"

use_peers show-peers || exit 0
ATLAS=$(atlas_sample)
S=$ROOT/dumps/sample

# --- canonical = bsondump -----------------------------------------------------
same=0; differ=""
for f in $(find "$FIX" "$ATLAS" "$S" -name '*.bson' -size -20M | sort); do
    # Skipped where bsondump prints nothing (deep_nested.bson: its Go
    # decoder stops at 200 levels) or refuses the file.
    "$BSONDUMP" "$f" >"$T/b.json" 2>/dev/null && [ -s "$T/b.json" ] || continue
    "$REMODEL" show --canonical "$f" >"$T/a.json" 2>"$T/err" || continue  # remodel refuses it (below)
    if cmp -s "$T/a.json" "$T/b.json"; then same=$((same + 1)); else differ="$differ $f"; fi
done
expect_eq "canonical = bsondump, byte for byte, on every fixture file both read" "$differ" ""
[ "$same" -ge 80 ] && pass "canonical: $same files compared" || fail "canonical: files compared" "only $same"
for f in "$MT/bsondump/testdata/all_types.bson" "$ATLAS/sample_analytics/customers.bson"; do
    "$BSONDUMP" --pretty "$f" >"$T/b.json" 2>/dev/null
    "$REMODEL" show --canonical --pretty "$f" >"$T/a.json"
    check "--pretty = bsondump --pretty ($(basename "$f"))" cmp -s "$T/a.json" "$T/b.json"
done
# The files bsondump prints but remodel refuses are the invalid ones.
for f in bad_cstring bad_type; do
    run_rm show "$MT/bsondump/testdata/$f.bson"
    expect_eq "show refuses invalid $f.bson (exit 1, one error line)" "$rc:$(wc -l <"$T/err")" "1:1"
done

# Edge values: doubles in every form Go's shortest 'G' takes, against bsondump.
python3 - "$T/edge.bson" <<'PY'
import sys, bson
vals = [1.0, 100000.0, 123456.789, 1234567.0, 1e6, 0.0001, 0.00001, 1e21, -0.0, 5e-324,
        1.7976931348623157e308, 0.1, 2.5e-7, 17.76, -3.5e-10, 2305843009213694000.0,
        float('nan'), float('inf'), float('-inf')]
docs = [{"_id": i, "d": v} for i, v in enumerate(vals)]
docs.append({"_id": 100, "s": "a\"b\\c\n\t\x01\x1f\x7f\u2028\u2029é<>&", "k": {"a": [1, {"b": []}, {}]},
             "r": bson.regex.Regex("x", "smix"), "bin": bson.binary.Binary(b"\x00\xff", 4),
             "ts": bson.timestamp.Timestamp(5, 7), "dec": bson.decimal128.Decimal128("-1.50E+3"),
             "mn": bson.min_key.MinKey(), "mx": bson.max_key.MaxKey(), "code": bson.code.Code("f()"),
             "cws": bson.code.Code("g()", {"z": 1})})
open(sys.argv[1], "wb").write(b"".join(bson.encode(d) for d in docs))
PY
"$BSONDUMP" "$T/edge.bson" >"$T/b.json" 2>/dev/null
"$REMODEL" show --canonical "$T/edge.bson" >"$T/a.json"
check "edge values: canonical = bsondump" cmp -s "$T/a.json" "$T/b.json"
[ -s "$T/a.json" ] || fail "edge values printed" "empty output"

# Relaxed dates, against ISO-8601 strings Python computes on its own.
python3 - "$T/dates.bson" "$T/dates.want" <<'PY'
import sys, bson, datetime
ms_list = [0, 1, 500, 1415909689584, 1415909689500, 1415909689000, -1, -62135596800000,
           253402300799999, 253402300800000]
out = []
for i, ms in enumerate(ms_list):
    if 0 <= ms <= 253402300799999:
        t = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
        frac = ("%03d" % (ms % 1000)).rstrip("0")
        d = '{"$date":"%s%sZ"}' % (t.strftime("%Y-%m-%dT%H:%M:%S"), "." + frac if frac else "")
    else:
        d = '{"$date":{"$numberLong":"%d"}}' % ms
    out.append('{"_id":%d,"t":%s}' % (i, d))
open(sys.argv[1], "wb").write(b"".join(bson.encode({"_id": i, "t": bson.datetime_ms.DatetimeMS(ms)})
                                        for i, ms in enumerate(ms_list)))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
"$REMODEL" show "$T/dates.bson" >"$T/a.json"
check "relaxed dates: ISO-8601 from 1970 to 9999, \$numberLong outside" cmp -s "$T/a.json" "$T/dates.want"

# --- relaxed = mongoexport -----------------------------------------------------
if uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$SRV" 2>"$T/err"); then
    "$MONGORESTORE" --uri "$uri" --noIndexRestore --dir "$ATLAS" >"$T/restore.log" 2>&1
    expect_eq "atlas sample restored" "$?" 0
    n=0
    for ns in sample_analytics.accounts sample_analytics.customers sample_geospatial.shipwrecks \
              sample_mflix.theaters sample_mflix.users sample_training.zips; do
        "$MONGOEXPORT" --uri "$uri" -d "${ns%%.*}" -c "${ns#*.}" 2>/dev/null | sort >"$T/e.json"
        "$REMODEL" show --ns "$ns" "$ATLAS" | sort >"$T/s.json"
        n=$((n + $(wc -l <"$T/s.json")))
        if [ -s "$T/s.json" ] && cmp -s "$T/e.json" "$T/s.json"; then pass "relaxed = mongoexport ($ns)"
        else fail "relaxed = mongoexport ($ns)" "$(diff "$T/e.json" "$T/s.json" | head -4)"; fi
    done
    [ "$n" -gt 40000 ] && pass "relaxed: $n documents compared" || fail "relaxed: documents compared" "$n"
    "$SERVER" stop "$SRV" >/dev/null 2>&1
else
    fail "server start" "$(cat "$T/err")"
fi

# --- options -------------------------------------------------------------------
lines() { "$REMODEL" show "$@" | wc -l; }
expect_eq "--ns: every document of one namespace" "$(lines "$S" --ns crm.tasks)" 1000
expect_eq "--limit" "$(lines "$S" --ns crm.tasks --limit 3)" 3
expect_eq "--limit 0 prints nothing" "$(lines "$S" --ns crm.tasks --limit 0)" 0
"$REMODEL" show "$S" --ns crm.tasks >"$T/all.json"
"$REMODEL" show "$S" --ns crm.tasks --skip 10 --limit 5 >"$T/part.json"
expect_eq "--skip 10 --limit 5 = lines 11-15" "$(sed -n 11,15p "$T/all.json" | md5sum)" "$(md5sum <"$T/part.json")"
expect_eq "--skip past the end" "$(lines "$S" --ns crm.tasks --skip 5000)" 0
# --id: the fourth task's _id, given as Extended JSON.
id=$(sed -n 4p "$T/all.json" | python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["_id"]))')
"$REMODEL" show "$S" --ns crm.tasks --id "$id" >"$T/one.json"
expect_eq "--id finds that document" "$(cat "$T/one.json")" "$(sed -n 4p "$T/all.json")"
# Numbers match by value across types, as find() matches: 3 == 3.0 == NumberLong(3).
python3 -c 'import bson,sys; sys.stdout.buffer.write(b"".join(bson.encode({"_id": v, "n": i}) for i, v in enumerate([1, 2.0, bson.int64.Int64(3), "3"])))' >"$T/ids.bson"
expect_eq "--id 3.0 matches NumberLong(3), not \"3\"" "$("$REMODEL" show "$T/ids.bson" --id 3.0)" '{"_id":3,"n":2}'
expect_eq "--id '{\"\$numberLong\":\"2\"}' matches 2.0" "$("$REMODEL" show "$T/ids.bson" --id '{"$numberLong":"2"}')" '{"_id":2.0,"n":1}'
run_rm show "$T/ids.bson" --id '{bad'
expect_eq "--id that is not Extended JSON: exit 2" "$rc:$(grep -c -- '--id' "$T/err")" "2:1"
run_rm show "$S" --ns crm.taks
expect_eq "--ns naming no namespace: exit 2" "$rc" 2
expect_message "--ns naming no namespace: says which" "--ns crm.taks: no such namespace"
run_rm show "$S" --limit -1
expect_eq "--limit -1 refused" "$rc" 2

# Several namespaces: a header before each one's documents.
"$REMODEL" show "$S" --ns crm.people --ns blog.posts --limit 2 >"$T/two.json"
expect_eq "two namespaces: headers" "$(grep '^==> ' "$T/two.json" | tr '\n' ' ')" "==> blog.posts <== ==> crm.people <== "
expect_eq "two namespaces: 2 documents each" "$(grep -c '^{' "$T/two.json")" 4
expect_eq "whole dump: every document" "$("$REMODEL" show "$S" | grep -c '^{')" 5268

# Every input format gives the same documents.
"$REMODEL" convert -q "$S" "$T/s.archive.zst"
"$REMODEL" convert -q "$S" "$T/s.tar.gz"
for src in "$S" "$T/s.archive.zst" "$T/s.tar.gz" "$ROOT/dumps/sample.archive.gz"; do
    "$REMODEL" show --ns logging.logmsg "$src" | md5sum
done | sort -u >"$T/sums"
expect_eq "dir, archive.zst, tar.gz and archive.gz show the same documents" "$(wc -l <"$T/sums")" 1
"$REMODEL" show --ns crm.tasks "$S/crm/tasks.bson" --canonical >"$T/f.json" 2>/dev/null ||
    "$REMODEL" show --canonical "$S/crm/tasks.bson" >"$T/f.json"
"$BSONDUMP" "$S/crm/tasks.bson" >"$T/g.json" 2>/dev/null
check "a .bson file: canonical = bsondump" cmp -s "$T/f.json" "$T/g.json"
