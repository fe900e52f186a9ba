#!/usr/bin/env python3
"""Round-trip properties over generated data, one PASS/FAIL line per seed.

A. extract style "both" then embed back (localField = the array, foreignField
   "_id", as = the array, project parentField away) gives the input back byte
   for byte, when every element is a document whose first field is its own
   unique _id (docs/plans.md, "Round trips").
B. embed (sort {_id: 1}, parentField projected away) then extract parentRef
   with an ordinalField gives the original children back (as a set; each one
   with parentField = its parent's _id and the ordinal appended at the end,
   docs/plans.md "A child is {_id, <the element's fields>, <parentField>,
   <ordinalField>}"); parents come back byte for byte; orphans stay, in order.

Each seed runs with the default memory and with --memory 1K (external sorts):
the outputs must be byte-identical, --stats-json must say spilled only for
the 1K run when the children exceed 1 KiB, and --tmp must be left empty.

    REMODEL=build/remodel python3 tests/transforms/props.py WORKDIR [SEEDS]
"""

import json
import os
import random
import struct
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
import bson  # noqa: E402
from bson.binary import Binary  # noqa: E402
from bson.code import Code  # noqa: E402
from bson.datetime_ms import DatetimeMS  # noqa: E402
from bson.decimal128 import Decimal128  # noqa: E402
from bson.int64 import Int64  # noqa: E402
from bson.max_key import MaxKey  # noqa: E402
from bson.min_key import MinKey  # noqa: E402
from bson.objectid import ObjectId  # noqa: E402
from bson.regex import Regex  # noqa: E402
from bson.son import SON  # noqa: E402
from bson.timestamp import Timestamp  # noqa: E402

NAMES = ["a", "b", "name", "qty", "é", "x.y" if False else "xy", "tags", "meta", "v", "when", "z"]


class Gen(object):
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.num = 1000 * seed  # numeric ids are unique by value across types
        self.sid = 0

    def text(self):
        alphabet = "abcxyz019 éü✓中-_"
        return "".join(self.r.choice(alphabet) for _ in range(self.r.randint(0, 12)))

    def value(self, depth=0):
        r = self.r
        kinds = ["i32", "i64", "dbl", "str", "bool", "null", "date", "oid", "bin",
                 "dec", "regex", "ts", "minmax", "code"]
        if depth < 3:
            kinds += ["doc", "arr", "doc", "arr"]
        k = r.choice(kinds)
        if k == "i32":
            return r.randint(-2 ** 31, 2 ** 31 - 1)
        if k == "i64":
            return Int64(r.randint(-2 ** 63, 2 ** 63 - 1))
        if k == "dbl":
            return r.choice([r.uniform(-1e6, 1e6), 0.0, -0.0, 1e300, float("inf")])
        if k == "str":
            return self.text()
        if k == "bool":
            return r.random() < 0.5
        if k == "null":
            return None
        if k == "date":
            return DatetimeMS(r.randint(-2 ** 40, 2 ** 42))
        if k == "oid":
            return ObjectId(bytes(r.getrandbits(8) for _ in range(12)))
        if k == "bin":
            return Binary(bytes(r.getrandbits(8) for _ in range(r.randint(0, 9))), r.choice([0, 5, 128]))
        if k == "dec":
            return Decimal128("%d.%02d" % (r.randint(-999, 999), r.randint(0, 99)))
        if k == "regex":
            return Regex(self.text(), r.choice(["", "i", "ms", "imx"]))
        if k == "ts":
            return Timestamp(r.randint(0, 2 ** 32 - 1), r.randint(0, 2 ** 32 - 1))
        if k == "minmax":
            return r.choice([MinKey(), MaxKey()])
        if k == "code":
            return Code("function(){return %d;}" % r.randint(0, 9))
        if k == "doc":
            return self.fields(depth + 1, r.randint(0, 3))
        return [self.value(depth + 1) for _ in range(r.randint(0, 4))]

    def fields(self, depth, n, avoid=()):
        d = SON()
        for _ in range(n):
            name = self.r.choice(NAMES)
            if name in avoid or name in d:
                continue
            d[name] = self.value(depth)
        return d

    def numeric_uid(self, k):
        """The next id as the number type k names (i32, i64, dbl), else None."""
        if k == "i32":
            return self.num
        if k == "i64":
            return Int64(self.num)
        if k == "dbl":
            return self.num + 0.5
        return None

    def uid(self):
        """A unique id: int32, int64, double, string, ObjectId (or a document)."""
        k = self.r.choice(["i32", "i64", "dbl", "str", "oid", "oid", "doc"])
        self.num += 1
        if k == "str":
            return "id-%d-%s" % (self.num, self.text())
        if k == "doc":
            return SON([("k", self.num), ("s", "x")])
        if k == "oid":
            return ObjectId(struct.pack(">I", 1600000000 + self.num) + bytes(self.r.getrandbits(8) for _ in range(8)))
        return self.numeric_uid(k)

    def sortable_uid(self):
        k = self.r.choice(["i32", "i64", "dbl", "str", "oid"])
        self.num += 1
        if k == "str":
            return "c%d%s" % (self.r.randint(0, 99), self.text())
        if k == "oid":
            return ObjectId(bytes(self.r.getrandbits(8) for _ in range(12)))
        return self.numeric_uid(k)


def mongo_key(v):
    """MongoDB's order for the id types sortable_uid makes."""
    if isinstance(v, (int, float)):
        return (1, float(v), b"")
    if isinstance(v, str):
        return (2, 0.0, v.encode("utf-8"))
    if isinstance(v, ObjectId):
        return (3, 0.0, v.binary)
    raise TypeError(v)


def run_both(work, plan, src, tmp):
    """Runs default and --memory 1K; returns (outputs, stats, problems)."""
    outs, stats, problems = {}, {}, []
    planf = os.path.join(work, "plan.json")
    with open(planf, "w") as f:
        json.dump(plan, f)
    for name, extra in (("default", []), ("memory 1K", ["--memory", "1K"])):
        out = os.path.join(work, "out-" + name.replace(" ", ""))
        sj = out + ".stats.json"
        rmlib.fresh(out)
        rmlib.fresh(sj)
        r = rmlib.run_remodel(["run", planf, "--from", src, "--to", out, "--quiet", "--tmp", tmp,
                               "--stats-json", sj] + extra)
        left = rmlib.leftovers(tmp)
        if left:
            problems.append("%s: temporary files left in --tmp: %s" % (name, left))
        if r.rc != 0:
            problems.append("%s: status %d: %s" % (name, r.rc, r.err[:600]))
            continue
        if r.err.strip():
            problems.append("%s: --quiet run wrote to stderr: %s" % (name, r.err[:600]))
        outs[name] = rmlib.read_dir(out)[0]
        with open(sj) as f:
            stats[name] = json.load(f)
    if len(outs) == 2:
        for d in rmlib.bson_bytes_equal(outs["default"], outs["memory 1K"]):
            problems.append("default vs --memory 1K: " + d)
    return outs, stats, problems


def spill_checks(stats, child_bytes):
    p = []
    if "default" in stats and stats["default"].get("spilled") is not False:
        p.append("default memory: spilled = %r, want false" % stats["default"].get("spilled"))
    if child_bytes > 1024 and "memory 1K" in stats and stats["memory 1K"].get("spilled") is not True:
        p.append("--memory 1K with %d bytes of children: spilled = %r, want true"
                 % (child_bytes, stats["memory 1K"].get("spilled")))
    return p


def prop_a(seed, work):
    g = Gen(seed)
    r = g.r
    parents = []
    for _ in range(r.randint(1, 10)):
        p = SON([("_id", g.uid())])
        p.update(g.fields(1, r.randint(0, 3), avoid=("items",)))
        items = []
        for _ in range(r.choice([0, 1, 2, 3, 5, 8])):
            e = SON([("_id", g.uid())])
            e.update(g.fields(1, r.randint(0, 4), avoid=("parent_id",)))
            items.append(e)
        p["items"] = items
        for k, v in g.fields(1, r.randint(0, 2), avoid=("items",) + tuple(p)).items():
            p[k] = v
        parents.append(p)
    raw = [bson.encode(p) for p in parents]
    child_bytes = sum(len(bson.encode(e)) for p in parents for e in p["items"])
    src, tmp = os.path.join(work, "in"), os.path.join(work, "tmp")
    rmlib.fresh(src)
    os.makedirs(tmp, exist_ok=True)
    rmlib.write_dump(src, {"t.parents": raw})
    plan = {"remodel": 1, "steps": [
        {"extract": {"from": "t.parents", "path": "items", "to": "t.children", "style": "both"}},
        {"embed": {"from": "t.children", "into": "t.parents", "localField": "items",
                   "foreignField": "_id", "as": "items", "project": {"parent_id": 0}}}]}
    outs, stats, problems = run_both(work, plan, src, tmp)
    if "default" in outs:
        o = outs["default"]
        if sorted(o) != ["t.children", "t.parents"]:
            problems.append("namespaces: %s" % sorted(o))
        b = rmlib.Bindings()
        problems += rmlib.compare_ns("t.parents", [rmlib.RawBSONDocument(x) for x in raw],
                                     o.get("t.parents", []), b)
        if o.get("t.children"):
            problems.append("t.children keeps %d documents, want 0" % len(o["t.children"]))
    problems += spill_checks(stats, child_bytes)
    return problems


def prop_b(seed, work):
    g = Gen(seed + 100000)
    r = g.r
    parents = []
    for _ in range(r.randint(0, 8)):
        p = SON([("_id", g.uid())])
        p.update(g.fields(1, r.randint(0, 3), avoid=("kids",)))
        parents.append(p)
    children, expected_kids, orphans = [], [], []
    per_parent = {}
    for n in range(r.randint(0, 30)):
        c = SON([("_id", g.sortable_uid())])
        body = g.fields(1, r.randint(0, 4), avoid=("parent_id", "n"))
        roll = r.random()
        parent = None
        if parents and roll < 0.8:
            parent = r.choice(parents)
            ref = parent["_id"]
            # the same number in another type still matches
            if isinstance(ref, int) and not isinstance(ref, Int64) and r.random() < 0.3:
                ref = r.choice([Int64(ref), float(ref), Decimal128(str(ref))])
        elif roll < 0.9:
            ref = "no-such-parent"
        else:
            ref = None  # no parent_id at all: an orphan too
        keys = list(body.items())
        pos = r.randint(0, len(keys))
        for i, (k, v) in enumerate(keys):
            if i == pos and ref is not None:
                c["parent_id"] = ref
            c[k] = v
        if pos == len(keys) and ref is not None:
            c["parent_id"] = ref
        children.append(c)
        if parent is None:
            orphans.append(c)
        else:
            per_parent.setdefault(id(parent), (parent, []))[1].append(c)
    for parent, kids in per_parent.values():
        kids_sorted = sorted(kids, key=lambda c: mongo_key(c["_id"]))  # stable
        for n, c in enumerate(kids_sorted):
            e = SON((k, v) for k, v in c.items() if k != "parent_id")
            e["parent_id"] = parent["_id"]
            e["n"] = n
            expected_kids.append(e)
    child_bytes = sum(len(bson.encode(c)) for c in children)
    src, tmp = os.path.join(work, "in"), os.path.join(work, "tmp")
    rmlib.fresh(src)
    os.makedirs(tmp, exist_ok=True)
    rmlib.write_dump(src, {"t.parents": parents, "t.children": children})
    plan = {"remodel": 1, "steps": [
        {"embed": {"from": "t.children", "into": "t.parents", "localField": "_id",
                   "foreignField": "parent_id", "as": "kids", "sort": {"_id": 1},
                   "project": {"parent_id": 0}}},
        {"extract": {"from": "t.parents", "path": "kids", "to": "t.kids", "style": "parentRef",
                     "parentField": "parent_id", "ordinalField": "n"}}]}
    outs, stats, problems = run_both(work, plan, src, tmp)
    if "default" in outs:
        o = outs["default"]
        if sorted(o) != ["t.children", "t.kids", "t.parents"]:
            problems.append("namespaces: %s" % sorted(o))
        b = rmlib.Bindings()
        problems += rmlib.compare_ns("t.parents", parents, o.get("t.parents", []), b)
        problems += rmlib.compare_ns("t.children", orphans, o.get("t.children", []), b)
        problems += rmlib.compare_ns("t.kids", expected_kids, o.get("t.kids", []), b, unordered=True)
    if "default" in stats:
        for n in stats["default"].get("namespaces", []):
            if n.get("ns") == "t.children" and n.get("orphans") != len(orphans):
                problems.append("stats: t.children orphans %r, want %d" % (n.get("orphans"), len(orphans)))
    problems += spill_checks(stats, child_bytes)
    return problems


def main():
    work = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rep = rmlib.Reporter()
    for name, prop in (("extract both then embed back gives the input byte for byte", prop_a),
                       ("embed then extract parentRef gives the children back", prop_b)):
        for seed in range(1, seeds + 1):
            try:
                rep.result("property: %s (seed %d)" % (name, seed), prop(seed, work))
            except Exception:
                import traceback
                rep.bad("property: %s (seed %d)" % (name, seed), traceback.format_exc())


if __name__ == "__main__":
    main()
