#!/usr/bin/env python3
"""bucketize / unbucketize properties over generated readings (docs/plans.md,
"bucketize and unbucketize"), one PASS/FAIL line per seed:

  - unbucketize(bucketize(x)) == x as a multiset of documents, byte for byte
    (irregular and equal timestamps, out-of-order input, many interleaved
    series, mixed numeric types, meta fields at varying positions, dates
    before 1970);
  - every bucket holds 1..maxCount readings of one (meta, window), sorted by
    time, readings inside [start, end), count == len(measurements);
  - --memory 1K gives byte-identical output to the default;
  - no bucket passes 16 MiB: readings of megabytes cut a window into
    several buckets before maxCount.

Then the real time-series fixtures of mongo-tools pass through `remodel run`
untouched (byte-identical .bson and metadata) when no step names them.

    REMODEL=build/remodel python3 tests/transforms/bucket_props.py WORKDIR [SEEDS]
"""

import collections
import filecmp
import os
import random
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
import bson  # noqa: E402
from bson.datetime_ms import DatetimeMS  # noqa: E402
from bson.decimal128 import Decimal128  # noqa: E402
from bson.int64 import Int64  # noqa: E402
from bson.objectid import ObjectId  # noqa: E402
from bson.raw_bson import RawBSONDocument  # noqa: E402
from bson.son import SON  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "mongo-tools", "mongorestore",
                        "testdata", "timeseries_tests")
RAW = bson.codec_options.CodecOptions(document_class=RawBSONDocument)


def gen(seed, n=None):
    rnd = random.Random(seed)
    n_meta = rnd.choice([1, 1, 2])
    metas = ["sensor", "site"][:n_meta]
    n_series = rnd.choice([1, 3, 10, 40])
    series = []
    for i in range(n_series):
        vals = []
        for m in metas:
            k = rnd.randrange(6)
            vals.append([("s%d" % i), i, Int64(i), float(i) + 0.5, SON([("a", i), ("b", "x")]),
                         [i, "q"]][k])
        series.append(vals)
    span = rnd.choice([1, 60, 3600, 86400, 7])
    max_count = rnd.choice([1, 2, 3, 5, 1000])
    base = rnd.choice([0, -86400000 * 400, 1776000000000, -1500])
    docs = []
    for i in range(n or rnd.randrange(1, 400)):
        vals = rnd.choice(series)
        t = base + rnd.choice([0, 1, 999, 1000]) * rnd.randrange(-3000, 3000)
        if rnd.random() < 0.2 and docs:
            t = docs[-1][1]  # equal timestamps
        idk = rnd.randrange(4)
        _id = [i, "id%d" % rnd.randrange(50), ObjectId(), rnd.randrange(20)][idk]
        value = rnd.choice([1, Int64(2), 2.5, Decimal128("3.25"), "text", None, -7])
        fields = [("_id", _id), ("ts", DatetimeMS(t)), ("value", value)]
        if rnd.random() < 0.3:
            fields.append(("extra", {"k": rnd.randrange(3)}))
        if rnd.random() < 0.1:
            fields.append(("_metaPositions", [1, 2]))  # a reading's own field of that name
        for m, v in zip(metas, vals):
            fields.insert(rnd.randrange(len(fields) + 1), (m, v))
        if rnd.random() < 0.05:
            rnd.shuffle(fields)
        docs.append((bson.encode(SON(fields)), t))
    plan = {"remodel": 1, "steps": [
        {"bucketize": {"from": "t.r", "to": "t.b", "timeField": "ts",
                       "metaField": metas if len(metas) > 1 or rnd.random() < 0.5 else metas[0],
                       "spanSeconds": span, "maxCount": max_count,
                       "stats": {"value": ["count", "min", "max", "sum", "avg"]}}},
        {"unbucketize": {"from": "t.b", "to": "t.back", "timeField": "ts", "metaField": metas}}]}
    return plan, [d for d, _ in docs], metas, span, max_count


def prop_invalid(seed, work, n=6000):
    """Readings past the size where bucketize makes its sort records on both
    cores (a thread ahead of the step), some invalid (time missing or not a
    date, meta missing) at random places, the first after the thousandth:
    onInvalid gets exactly those, in input order, and the output is the same
    bytes under --memory 1K (the records made on one thread); with
    onInvalid "error" both fail naming the first one's _id, with nothing
    written."""
    rnd = random.Random(seed)
    docs, bad = [], []
    for i in range(n):
        fields = [("_id", i), ("sensor", "s%d" % rnd.randrange(30)),
                  ("ts", DatetimeMS(rnd.randrange(0, 86400000))), ("v", rnd.random())]
        if i > 1000 and rnd.random() < 0.03:
            k = rnd.randrange(3)
            if k == 0:
                del fields[2]
            elif k == 1:
                fields[2] = ("ts", "yesterday")
            else:
                del fields[1]
            bad.append(bson.encode(SON(fields)))
        docs.append(bson.encode(SON(fields)))
    src = os.path.join(work, "ibin")
    rmlib.fresh(src)
    rmlib.write_dump(src, {"t.r": docs})
    p = []
    outs = []
    for on_invalid in ({"to": "t.bad"}, "error"):
        planf = os.path.join(work, "iplan.json")
        with open(planf, "w") as f:
            import json
            json.dump({"remodel": 1, "steps": [{"bucketize": {
                "from": "t.r", "to": "t.b", "timeField": "ts", "metaField": "sensor",
                "granularity": "minutes", "onInvalid": on_invalid}}]}, f)
        errs = []
        for extra in ([], ["--memory", "1K"]):
            out = os.path.join(work, "iout%d" % len(outs))
            rmlib.fresh(out)
            r = rmlib.run_remodel(["run", planf, "--from", src, "--to", out, "--quiet"] + extra)
            if on_invalid == "error":
                errs.append((r.rc, r.err.strip(), os.path.exists(out)))
                continue
            if r.rc != 0:
                return ["run %s: status %d: %s" % (extra, r.rc, r.err[:500])]
            outs.append(out)
            nss, _ = rmlib.read_dir(out)
            if nss.get("t.bad", []) != bad:
                p.append("%s: onInvalid holds %d readings, want the %d invalid ones in order"
                         % (extra, len(nss.get("t.bad", [])), len(bad)))
        if errs:
            first = bson.decode(bad[0])["_id"]
            for e in errs:
                if e[0] == 0 or e[2] or 'document { "_id" : %d }:' % first not in e[1]:
                    p.append("onInvalid error: status %d, output %s, message %r (want _id %d)"
                             % (e[0], "written" if e[2] else "absent", e[1][:300], first))
            if errs[0][:2] != errs[1][:2]:
                p.append("onInvalid error: the two memory settings differ: %r" % (errs,))
    for rel in ("t/b.bson", "t/bad.bson"):
        a, b = (open(os.path.join(o, rel), "rb").read() for o in outs)
        if a != b:
            p.append("%s differs between the default and --memory 1K" % rel)
    return p


def check_buckets(buckets, metas, span, max_count):
    p = []
    seen = set()
    for raw in buckets:
        if len(raw) > 16 * 1024 * 1024:
            p.append("a bucket of %d bytes, over 16 MiB" % len(raw))
        b = bson.decode(raw, codec_options=bson.codec_options.CodecOptions(
            datetime_conversion=bson.codec_options.DatetimeConversion.DATETIME_MS))
        keys = list(b.keys())
        want = ["_id"] + metas + ["start", "end", "count", "metaPositions", "measurements", "stats"]
        if keys != want:
            p.append("bucket fields %s, want %s" % (keys, want))
            break
        ms = b["measurements"]
        start, end = int(b["start"]), int(b["end"])
        if end - start != span * 1000 or start % (span * 1000) != 0:
            p.append("bucket %s: window %d..%d" % (b["_id"], start, end))
        if not 1 <= len(ms) <= max_count or b["count"] != len(ms):
            p.append("bucket %s: count %d, %d measurements" % (b["_id"], b["count"], len(ms)))
        times = [int(m["ts"]) for m in ms]
        if times != sorted(times) or not all(start <= t < end for t in times):
            p.append("bucket %s: times %s not sorted inside the window" % (b["_id"], times))
        if b["_id"] in seen:
            p.append("duplicate bucket _id %s" % b["_id"])
        seen.add(b["_id"])
    return p[:5]


def prop_big(seed):
    """Readings of 1.5 to 3.5 MB in one series and one window: past 16 MiB a
    window continues in further buckets before maxCount (1000) is reached."""
    rnd = random.Random(seed)
    docs = []
    for i in range(14):
        body = "x" * rnd.randrange(1500000, 3500000)
        docs.append(bson.encode(SON([("_id", i), ("ts", DatetimeMS(1776000000000 + i * 1000)),
                                     ("sensor", "big"), ("value", i), ("blob", body)])))
    plan = {"remodel": 1, "steps": [
        {"bucketize": {"from": "t.r", "to": "t.b", "timeField": "ts", "metaField": "sensor",
                       "granularity": "hours", "maxCount": 1000,
                       "stats": {"value": ["count", "min", "max", "sum", "avg"]}}},
        {"unbucketize": {"from": "t.b", "to": "t.back", "timeField": "ts", "metaField": "sensor"}}]}
    return plan, docs, ["sensor"], 3600, 1000


def prop_roundtrip(seed, work, n=None, case=None):
    plan, docs, metas, span, max_count = case or gen(seed, n)
    src = os.path.join(work, "bin")
    rmlib.fresh(src)
    rmlib.write_dump(src, {"t.r": docs})
    planf = os.path.join(work, "bplan.json")
    with open(planf, "w") as f:
        import json
        json.dump(plan, f)
    tmp = os.path.join(work, "btmp")
    os.makedirs(tmp, exist_ok=True)
    outs = []
    p = []
    for extra in ([], ["--memory", "1K", "--stats-json", os.path.join(work, "bstats.json")]):
        out = os.path.join(work, "bout%d" % len(outs))
        rmlib.fresh(out)
        r = rmlib.run_remodel(["run", planf, "--from", src, "--to", out, "--quiet", "--tmp", tmp] + extra)
        if r.rc != 0:
            return ["run %s: status %d: %s" % (extra, r.rc, r.err[:500])]
        if rmlib.leftovers(tmp):
            p.append("--tmp not empty: %s" % rmlib.leftovers(tmp))
        outs.append(out)
    nss, _ = rmlib.read_dir(outs[0])
    back = nss.get("t.back", [])
    if collections.Counter(back) != collections.Counter(docs):
        missing = collections.Counter(docs) - collections.Counter(back)
        extra = collections.Counter(back) - collections.Counter(docs)
        p.append("round trip differs: %d missing, %d extra; e.g. missing %s extra %s" % (
            sum(missing.values()), sum(extra.values()),
            [bson.decode(d) for d in list(missing)[:1]], [bson.decode(d) for d in list(extra)[:1]]))
    if nss.get("t.r"):
        p.append("t.r not empty after bucketize")
    p += check_buckets(nss.get("t.b", []), metas, span, max_count)
    if case and len(nss.get("t.b", [])) < 3:
        p.append("%d buckets for 14 readings of 1.5-3.5 MB: the 16 MiB limit did not cut them"
                 % len(nss.get("t.b", [])))
    cmp = filecmp.dircmp(outs[0], outs[1])
    diffs = []

    def walk(c):
        diffs.extend(c.diff_files + c.left_only + c.right_only)
        for sub in c.subdirs.values():
            walk(sub)
    walk(cmp)
    # dircmp is shallow by default: compare the bytes too
    for db in ("t",):
        for name in os.listdir(os.path.join(outs[0], db)):
            a = open(os.path.join(outs[0], db, name), "rb").read()
            b = open(os.path.join(outs[1], db, name), "rb").read()
            if a != b:
                diffs.append(name)
    if diffs:
        p.append("--memory 1K output differs: %s" % sorted(set(diffs)))
    if n:
        import json
        if not json.load(open(os.path.join(work, "bstats.json"))).get("spilled"):
            p.append("--memory 1K did not spill %d readings" % n)
    return p


def prop_fixtures(work):
    """The mongo-tools time-series fixtures pass through untouched."""
    if not os.path.isdir(FIXTURES):
        return ["no fixtures at %s" % FIXTURES]
    p = []
    src = os.path.join(work, "tsin")
    rmlib.fresh(src)
    # the fixtures are dump directories (or hold them); take each db directory
    import shutil
    shutil.copytree(FIXTURES, src)
    planf = os.path.join(work, "tsplan.json")
    with open(planf, "w") as f:
        f.write('{"remodel": 1, "steps": [{"bucketize": {"from": "zz.readings", "to": "zz.b", '
                '"timeField": "t", "metaField": "m", "granularity": "hours"}}]}')
    n = 0
    for name in sorted(os.listdir(src)):
        fixture = os.path.join(src, name)
        if not os.path.isdir(fixture):
            continue
        dump = os.path.join(work, "tsone")
        rmlib.fresh(dump)
        # a directory of .bson files alone is one database's directory
        single = not any(os.path.isdir(os.path.join(fixture, x)) for x in os.listdir(fixture))
        shutil.copytree(fixture, os.path.join(dump, name) if single else dump)
        rmlib.write_dump(dump, {"zz.readings": [bson.encode(SON([("_id", 1), ("t", DatetimeMS(0)), ("m", "a")]))]})
        out = os.path.join(work, "tsout")
        rmlib.fresh(out)
        r = rmlib.run_remodel(["run", planf, "--from", dump, "--to", out, "--quiet"])
        if r.rc != 0:
            p.append("%s: status %d: %s" % (name, r.rc, r.err[:300]))
            continue
        for dirpath, _, filenames in os.walk(fixture):
            for f in filenames:
                rel = os.path.relpath(os.path.join(dirpath, f), fixture)
                a = os.path.join(fixture, rel)
                b = os.path.join(out, name, rel) if single else os.path.join(out, rel)
                if not os.path.exists(b):
                    p.append("%s/%s missing from the output" % (name, rel))
                elif open(a, "rb").read() != open(b, "rb").read():
                    p.append("%s/%s changed" % (name, rel))
                else:
                    n += 1
    if n == 0 and not p:
        p.append("no fixture files compared")
    return p, n


def main():
    work = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    os.makedirs(work, exist_ok=True)
    rep = rmlib.Reporter()
    for seed in range(1, seeds + 1):
        name = "property: unbucketize(bucketize(x)) == x byte for byte, same with --memory 1K (seed %d)" % seed
        try:
            rep.result(name, prop_roundtrip(seed, work))
        except Exception:
            import traceback
            rep.bad(name, traceback.format_exc())
    name = "property: 20000 readings spill under --memory 1K and still round-trip, same bytes"
    try:
        rep.result(name, prop_roundtrip(1000, work, 20000))
    except Exception:
        import traceback
        rep.bad(name, traceback.format_exc())
    name = "property: 6000 readings, some invalid: onInvalid gets exactly those in order, the same bytes under --memory 1K, and \"error\" names the first"
    try:
        rep.result(name, prop_invalid(11, work))
    except Exception:
        import traceback
        rep.bad(name, traceback.format_exc())
    name = "property: a window whose readings pass 16 MiB continues in further buckets, each under 16 MiB, and round-trips"
    try:
        rep.result(name, prop_roundtrip(7, work, case=prop_big(7)))
    except Exception:
        import traceback
        rep.bad(name, traceback.format_exc())
    name = "time-series fixtures pass through untouched when no step names them"
    try:
        p, n = prop_fixtures(work)
        rep.result("%s (%d files)" % (name, n), p)
    except Exception:
        import traceback
        rep.bad(name, traceback.format_exc())
    sys.exit(1 if rep.failed else 0)


if __name__ == "__main__":
    main()
