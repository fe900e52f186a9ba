#!/usr/bin/env python3
"""The one-pass path (docs/commands.md, "How a plan runs") against the batch path.
One PASS/FAIL line per check.

    REMODEL=build/remodel python3 tests/transforms/stream_props.py WORKDIR [SEEDS]

Plans made only of field steps, extract and denormalize run while the
source is read; a denormalize whose `from` has not been read whole yet holds
the documents reaching it back and lets them through, in order, when `from`
ends; past --memory it defers to the store-to-store sort-merge. Whatever the
path, the result must be the batch path's (`--batch`) byte for byte, and
so must the one-pass path's on one thread and on three (field steps
computed ahead over batches of documents); a document that fails a step
stops every path with one message.

Then unbucketize (with field steps before and after it) over buckets made
by bucketize, one pass against --batch.

For each seed: generated namespaces t.items (references to t.refs, arrays
to extract), t.refs (the referenced side, with duplicate keys) and t.other
(untouched), written as archives whose segments come in three orders
(items wholly before refs, refs before items, and small segments randomly
interleaved, built here with their CRC-64); a plan drawn from chains of
set/rename/unset/version, extract (then field steps on the new namespace)
and denormalize; run with the default --memory, with --memory 1K and with
--batch; the three directory outputs must be identical, the summaries
(--stats-json) equal, and the directory output must hold every namespace
with the right document counts. Errors too: a document that fails a step
gives the same message on both paths.
"""

import datetime
import json
import os
import random
import struct
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
import bson  # noqa: E402

crc64 = rmlib.crc64


def write_archive(path, namespaces, segments):
    """namespaces: [(ns, [raw docs])]; segments: [(ns, start, end)] in order."""
    out = [struct.pack("<I", 0x8199E26D)]
    out.append(bson.encode({"concurrent_collections": 4, "version": "0.1",
                            "server_version": "7.0.16", "tool_version": "stream_props"}))
    for ns, _ in namespaces:
        db, coll = ns.split(".", 1)
        out.append(bson.encode({"db": db, "collection": coll, "metadata": "",
                                "size": 0, "type": "collection"}))
    term = struct.pack("<i", -1)
    out.append(term)
    docs = dict(namespaces)
    crcs = {ns: 0 for ns, _ in namespaces}
    for ns, a, b in segments:
        db, coll = ns.split(".", 1)
        out.append(bson.encode({"db": db, "collection": coll, "EOF": False,
                                "CRC": bson.int64.Int64(0)}))
        for d in docs[ns][a:b]:
            out.append(d)
            crcs[ns] = crc64(crcs[ns], d)
        out.append(term)
    for ns, _ in namespaces:
        db, coll = ns.split(".", 1)
        c = crcs[ns]
        out.append(bson.encode({"db": db, "collection": coll, "EOF": True,
                                "CRC": bson.int64.Int64(c - (1 << 64) if c >= 1 << 63 else c)}))
        out.append(term)
    with open(path, "wb") as f:
        f.write(b"".join(out))


def key(rng):
    k = rng.randrange(12)
    return rng.choice([k, bson.int64.Int64(k), float(k), "k%d" % k])


def gen_data(rng, many=False):
    refs = []
    for i in range(rng.randrange(5, 25)):
        d = {"_id": i, "k": key(rng), "name": "ref %d" % i}
        if rng.random() < 0.7:
            d["price"] = rng.choice([i * 1.5, i, "p%d" % i])
        refs.append(d)
    items = []
    # many: past one of the one-pass path's batches (1,024 documents),
    # which field steps compute ahead on threads.
    for i in range(rng.randrange(1100, 2600) if many else rng.randrange(20, 120)):
        d = {"_id": bson.ObjectId(b"%012d" % i), "ref": key(rng), "n": i}
        if rng.random() < 0.2:
            del d["ref"]
        if rng.random() < 0.8:
            d["tags"] = [{"t": rng.randrange(5), "ref": key(rng)}
                         for _ in range(rng.randrange(0, 4))]
        if rng.random() < 0.5:
            d["old"] = rng.randrange(100)
        items.append(d)
    other = [{"_id": i, "x": "y" * rng.randrange(50)} for i in range(rng.randrange(1, 30))]
    enc = lambda docs: [bson.encode(d) for d in docs]  # noqa: E731
    return [("t.items", enc(items)), ("t.refs", enc(refs)), ("t.other", enc(other))]


def gen_plan(rng):
    steps = []
    created = False
    for _ in range(rng.randrange(1, 6)):
        c = rng.randrange(8)
        if c == 0:
            steps.append({"set": {"in": "t.items", "fields": {"v": rng.randrange(3), "meta.s": "x"}}})
        elif c == 6:
            # Expressions, some under a filter; $add of a string ref fails
            # on its document, the same one whichever path or thread.
            f = {"e": {"$multiply": ["$n", 2]},
                 "s": {"$concat": [{"$toString": "$n"}, "/", {"$toString": {"$ifNull": ["$ref", "-"]}}]}}
            if rng.random() < 0.3:
                f["bad"] = {"$add": ["$n", {"$ifNull": ["$ref", 0]}]}
            step = {"in": "t.items", "fields": f}
            if rng.random() < 0.5:
                step["filter"] = {"n": {"$gte": rng.randrange(40)}}
            steps.append({"set": step})
        elif c == 7:
            steps.append({"set": {"in": "t.items", "fields": {"w": {"$size": {"$ifNull": ["$tags", []]}}}}})
        elif c == 1:
            steps.append({"rename": {"in": "t.items", "fields": {"old": "older"}}})
        elif c == 2:
            # "old" is in half the items: the others count unchanged.
            steps.append({"unset": {"in": "t.items", "fields": [rng.choice(["n", "old"])]}})
        elif c == 3 and not created:
            created = True
            steps.append({"extract": {"from": "t.items", "path": "tags", "to": "t.tags",
                                      "style": rng.choice(["parentRef", "childRefs", "both"]),
                                      "ordinalField": "pos"}})
            if rng.random() < 0.6:
                steps.append({"version": {"in": "t.tags", "value": 3}})
            if rng.random() < 0.5:
                steps.append({"denormalize": {"in": "t.tags", "from": "t.refs", "localField": "ref",
                                              "foreignField": "k", "fields": {"rname": "name"}}})
        else:
            steps.append({"denormalize": {"in": "t.items", "from": "t.refs", "localField": "ref",
                                          "foreignField": "k",
                                          "fields": rng.choice([["name"], {"rn": "name", "rp": "price"}]),
                                          "onMissing": rng.choice(["keep", "null"])}})
    return {"remodel": 1, "steps": steps}


def orders(rng, namespaces):
    sizes = dict((ns, len(d)) for ns, d in namespaces)
    whole = lambda names: [(ns, 0, sizes[ns]) for ns in names]  # noqa: E731
    yield "items before refs", whole(["t.items", "t.other", "t.refs"])
    yield "refs before items", whole(["t.refs", "t.other", "t.items"])
    pos = {ns: 0 for ns in sizes}
    segs = []
    while any(pos[ns] < sizes[ns] for ns in sizes):
        ns = rng.choice([n for n in sizes if pos[n] < sizes[n]])
        n = rng.randrange(1, 8)
        segs.append((ns, pos[ns], min(sizes[ns], pos[ns] + n)))
        pos[ns] = min(sizes[ns], pos[ns] + n)
    yield "interleaved segments", segs


def run(work, plan_path, src, name, extra):
    out = os.path.join(work, "out-" + name)
    stats = os.path.join(work, "stats-" + name + ".json")
    rmlib.fresh(out)
    # Random plans may name a field no generated document has, or look up
    # nothing that exists: --allow-missing lets them run (warnings remain,
    # and must be the same whichever way the plan runs).
    r = rmlib.run_remodel(["run", "-q", "--allow-missing", plan_path, "--from", src, "--to", out,
                           "--tmp", os.path.join(work, "tmp"), "--stats-json", stats] + extra)
    st = None
    if r.rc == 0:
        with open(stats) as f:
            st = json.load(f)
            st.pop("spilled", None)
    return r, out, st


def main():
    work = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    rep = rmlib.Reporter()
    for seed in range(1, seeds + 1):
        rng = random.Random(seed)
        namespaces = gen_data(rng, many=seed % 5 == 0)
        plan = gen_plan(rng)
        plan_path = os.path.join(work, "plan.json")
        with open(plan_path, "w") as f:
            json.dump(plan, f)
        for label, segs in orders(rng, namespaces):
            src = os.path.join(work, "src.archive")
            write_archive(src, namespaces, segs)
            problems = []
            results, warned = {}, {}
            names = ("one-pass", "threads-1", "threads-3", "memory-1K", "batch")
            failed = {}
            for name, extra in (("one-pass", []), ("threads-1", ["--threads", "1"]),
                                ("threads-3", ["--threads", "3"]),
                                ("memory-1K", ["--memory", "1K"]), ("batch", ["--batch"])):
                r, out, st = run(work, plan_path, src, name, extra)
                if r.rc != 0:
                    failed[name] = (r.rc, r.err.strip(), os.path.exists(out))
                elif any(not l.startswith("remodel: warning: ") for l in r.err.splitlines()):
                    problems.append("%s: --quiet run wrote to stderr: %s" % (name, r.err[:300]))
                results[name] = (out, st)
                warned[name] = r.err
            # A document an expression fails on stops every path alike:
            # one message, exit 1, no output.
            if failed and (len(failed) < len(names) or len(set(failed.values())) != 1 or
                           failed["batch"][0] != 1 or failed["batch"][2]):
                problems += ["%s: exit %d: %s%s" % (n, f[0], f[1], " (output left)" if f[2] else "")
                             for n, f in sorted(failed.items())]
            if not problems and not failed:
                base_out, base_st = results["batch"]
                base_docs, _ = rmlib.read_dir(base_out)
                for name in names[:-1]:
                    out, st = results[name]
                    docs, _ = rmlib.read_dir(out)
                    problems += ["%s vs batch: %s" % (name, p)
                                 for p in rmlib.bson_bytes_equal(base_docs, docs)]
                    if st != base_st:
                        problems.append("%s: --stats-json differs from --batch" % name)
                    if warned[name] != warned["batch"]:
                        problems.append("%s: warnings differ from --batch: %s vs %s"
                                        % (name, warned[name][:300], warned["batch"][:300]))
                if len(base_docs.get("t.items", [])) != len(namespaces[0][1]):
                    problems.append("t.items: %d documents out of %d" %
                                    (len(base_docs.get("t.items", [])), len(namespaces[0][1])))
                if base_docs.get("t.other") != namespaces[2][1]:
                    problems.append("t.other is not copied byte for byte")
            if problems:
                problems.insert(0, "plan: " + json.dumps(plan))
            rep.result("one pass (1, 3 and the cores' threads) = --memory 1K = --batch, byte for "
                       "byte%s (seed %d, %s, %d items)"
                       % (", or one error" if failed else "", seed, label, len(namespaces[0][1])),
                       problems)

    # unbucketize: buckets made by bucketize, then read back in one pass,
    # alone or with field steps before (on the buckets) and after (on the
    # readings).
    for seed in range(1, seeds // 2 + 1):
        rng = random.Random(1000 + seed)
        readings = [bson.encode({"_id": i, "ts": datetime.datetime.fromtimestamp(
                        rng.randrange(0, 40000), datetime.timezone.utc),
                        "sensor": rng.randrange(4), "temp": rng.randrange(-20, 40)})
                    for i in range(rng.randrange(10, 200))]
        src = os.path.join(work, "readings.archive")
        write_archive(src, [("t.readings", readings), ("t.other", [])], [("t.readings", 0, len(readings))])
        bplan = os.path.join(work, "bplan.json")
        with open(bplan, "w") as f:
            json.dump({"remodel": 1, "steps": [{"bucketize": {
                "from": "t.readings", "to": "t.buckets", "timeField": "ts", "metaField": "sensor",
                "granularity": "hours", "maxCount": rng.randrange(2, 30)}}]}, f)
        buckets = os.path.join(work, "buckets.archive")
        rmlib.fresh(buckets)
        r = rmlib.run_remodel(["run", "-q", bplan, "--from", src, "--to", buckets])
        steps = []
        if rng.random() < 0.5:
            steps.append({"set": {"in": "t.buckets", "fields": {"checked": True}}})
        steps.append({"unbucketize": {"from": "t.buckets", "to": "t.back", "timeField": "ts",
                                      "metaField": "sensor"}})
        if rng.random() < 0.5:
            steps.append({"rename": {"in": "t.back", "fields": {"temp": "celsius"}}})
        plan = {"remodel": 1, "steps": steps}
        with open(plan_path, "w") as f:
            json.dump(plan, f)
        problems = [] if r.rc == 0 else ["bucketize: exit %d: %s" % (r.rc, r.err)]
        outs = {}
        for name, extra in (("one-pass", []), ("batch", ["--batch"])):
            if problems:
                break
            r, out, st = run(work, plan_path, buckets, name, extra)
            if r.rc != 0:
                problems.append("%s: exit %d: %s" % (name, r.rc, r.err.strip()))
            else:
                outs[name] = (rmlib.read_dir(out)[0], st)
        if not problems:
            problems = rmlib.bson_bytes_equal(outs["batch"][0], outs["one-pass"][0])
            if outs["batch"][1] != outs["one-pass"][1]:
                problems.append("--stats-json differs")
            if len(outs["batch"][0].get("t.back", [])) != len(readings):
                problems.append("t.back: %d readings out of %d" %
                                (len(outs["batch"][0].get("t.back", [])), len(readings)))
        if problems:
            problems.insert(0, "plan: " + json.dumps(plan))
        rep.result("unbucketize in one pass = --batch, byte for byte (seed %d)" % seed, problems)

    # A step error names the same document and step on both paths.
    namespaces = [("t.items", [bson.encode({"_id": 1, "tags": 5})]),
                  ("t.refs", [bson.encode({"_id": 1})]), ("t.other", [])]
    plan = {"remodel": 1, "steps": [
        {"denormalize": {"in": "t.items", "from": "t.refs", "localField": "_id", "fields": ["x"]}},
        {"extract": {"from": "t.items", "path": "tags", "to": "t.tags", "style": "parentRef"}}]}
    plan_path = os.path.join(work, "plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    src = os.path.join(work, "src.archive")
    write_archive(src, namespaces, [("t.items", 0, 1), ("t.refs", 0, 1)])
    msgs = []
    for name, extra in (("one-pass", []), ("batch", ["--batch"])):
        r, out, _ = run(work, plan_path, src, name, extra)
        msgs.append((r.rc, r.err.strip()))
        if os.path.exists(out):
            msgs.append("%s: output left behind" % name)
    problems = []
    if msgs[0] != msgs[1] or msgs[0][0] != 1 or "step 2 (extract)" not in msgs[0][1] \
            or '"_id" : 1' not in msgs[0][1]:
        problems.append("messages: %r" % (msgs,))
    rep.result("a step error gives the same message and exit status on both paths, "
               "no output", problems)
    if rmlib.leftovers(os.path.join(work, "tmp")):
        rep.bad("no temporary files left", rmlib.leftovers(os.path.join(work, "tmp")))
    else:
        rep.ok("no temporary files left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
