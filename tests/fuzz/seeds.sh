#!/usr/bin/env bash
# Makes the starting corpora from the project's fixtures and sample:
#   tests/fuzz/seeds.sh REMODEL   (writes tests/fuzz/corpus/*; run once, then
# make fuzz grows them). Small files only: the committed corpus stays small.
set -eu
cd "$(dirname "$0")/../.."
rm_=$1
FIX=tests/fixtures
C=tests/fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/archive $C/bson $C/tar $C/compressed $C/dir $C/plan $C/metadata
small() { find "$@" -type f -size -48k; }
# archives: the fixtures' small ones, and a small dump of the sample as one
for f in $(small $FIX/mongo-tools -name '*.archive'); do cp "$f" $C/archive/; done
"$rm_" convert -q dumps/sample/blog/posts.bson "$T/posts.archive" && cp "$T/posts.archive" $C/archive/
for f in $(small $FIX/mongo-tools dumps/sample -name '*.bson' | head -40); do
    cp "$f" "$C/bson/$(echo "$f" | md5sum | cut -c1-12).bson"
done
for d in crm school; do
    "$rm_" convert -q "dumps/sample/$d/$(ls dumps/sample/$d | grep -m1 '\.bson$')" "$T/$d.archive"
    "$rm_" convert -q "$T/$d.archive" "$T/$d.tar"
    "$rm_" convert -q "$T/$d.archive" "$T/$d.tar.gz"
    "$rm_" convert -q "$T/$d.archive" "$T/$d.archive.gz"
    "$rm_" convert -q "$T/$d.archive" "$T/$d.archive.zst"
    cp "$T/$d.tar" $C/tar/; cp "$T/$d.tar.gz" $C/tar/
    cp "$T/$d.archive.gz" "$T/$d.archive.zst" $C/compressed/
done
# directories: a dump directory as the dir harness's list of (name, bytes)
python3 - "$C/dir" $FIX/mongo-tools/mongorestore/testdata dumps/sample <<'PY'
import os, struct, sys
out = sys.argv[1]
n = 0
for top in sys.argv[2:]:
    for root, dirs, files in os.walk(top):
        entries = []
        for f in sorted(files):
            p = os.path.join(root, f)
            if os.path.getsize(p) > 16384 or not (f.endswith(".bson") or f.endswith(".json")):
                continue
            name = (os.path.basename(root) + "/" + f).encode()[:255]
            data = open(p, "rb").read()
            entries.append(bytes([len(name)]) + name + struct.pack("<I", len(data)) + data)
        if entries:
            blob = b"".join(entries[:6])
            if len(blob) < 48 * 1024:
                open(os.path.join(out, "dir%03d" % n), "wb").write(blob)
                n += 1
PY
cp dumps/plans/*.json $C/plan/
python3 - "$C/plan" tests/transforms/cases/*.json <<'PY'
import json, sys
out, n = sys.argv[1], 0
for path in sys.argv[2:]:
    for line in open(path):
        line = line.strip().rstrip(",")
        if not line.startswith("{"):
            continue
        try:
            case = json.loads(line)
        except ValueError:
            continue
        if "plan" in case and n < 120:
            open("%s/case%03d.json" % (out, n), "w").write(json.dumps(case["plan"]))
            n += 1
PY
for f in $(small $FIX/mongo-tools dumps/sample -name '*.metadata.json' | head -60); do
    cp "$f" "$C/metadata/$(echo "$f" | md5sum | cut -c1-12).json"
done
du -sh $C/*
