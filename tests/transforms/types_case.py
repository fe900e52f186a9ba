#!/usr/bin/env python3
"""Every BSON type passes through the transforms byte for byte.

pymongo cannot write some types back as they were (undefined becomes null,
DBPointer a DBRef document, symbol a string, regex options get sorted), so
these documents are built from raw bytes, and the expected outputs too: the
docs (docs/commands.md, docs/plans.md) say documents are carried byte for byte, embedded children
included, and only the named fields change.

    REMODEL=build/remodel python3 tests/transforms/types_case.py WORKDIR
"""

import math
import os
import struct
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
import run_case  # noqa: E402
from bson.decimal128 import Decimal128  # noqa: E402


def cstr(s):
    return s.encode("utf-8") + b"\0"


def bstr(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<i", len(b) + 1) + b + b"\0"


def el(t, name, payload):
    return bytes([t]) + cstr(name) + payload


def doc(*elems):
    body = b"".join(elems)
    return struct.pack("<i", len(body) + 5) + body + b"\0"


def arr(*vals, keys=None):
    keys = keys or [str(i) for i in range(len(vals))]
    return doc(*[el(t, k, p) for k, (t, p) in zip(keys, vals)])


def i32(n):
    return (0x10, struct.pack("<i", n))


def s(x):
    return (0x02, bstr(x))


def d(raw):
    return (0x03, raw)


def a(raw):
    return (0x04, raw)


def E(name, v):
    return el(v[0], name, v[1])


OID = bytes.fromhex("61741c9cbc9ec583c836170a")
SCOPE = doc(el(0x10, "x", struct.pack("<i", 1)))
CWS_CODE = bstr("function(){return x;}")

# name -> (type, payload): every type, some in unusual encodings
VALUES = [
    ("dbl", (0x01, struct.pack("<d", 1.5))),
    ("negzero", (0x01, struct.pack("<d", -0.0))),
    ("nanpayload", (0x01, bytes.fromhex("010000000000f87f"))),
    ("inf", (0x01, struct.pack("<d", math.inf))),
    ("str", s("héllo ✓")),
    ("emptystr", s("")),
    ("doc", d(doc(E("x", i32(1)), E("y", s("z"))))),
    ("emptydoc", d(doc())),
    ("nested", a(arr(a(arr(i32(1), a(arr()), d(doc(E("q", a(arr(i32(2)))))))), s("a")))),
    ("bin0", (0x05, struct.pack("<i", 3) + b"\x00abc")),
    ("bin2", (0x05, struct.pack("<i", 7) + b"\x02" + struct.pack("<i", 3) + b"abc")),
    ("uuid", (0x05, struct.pack("<i", 16) + b"\x04" + bytes(range(16)))),
    ("bin80", (0x05, struct.pack("<i", 2) + b"\x80\xff\x00")),
    ("undef", (0x06, b"")),
    ("oid", (0x07, OID)),
    ("t", (0x08, b"\x01")),
    ("f", (0x08, b"\x00")),
    ("date", (0x09, struct.pack("<q", -62135596800000))),
    ("null", (0x0A, b"")),
    ("regex", (0x0B, cstr("^a.*b$") + cstr("mix"))),
    ("dbptr", (0x0C, bstr("db.coll") + OID)),
    ("code", (0x0D, bstr("function(){return 1;}"))),
    ("sym", (0x0E, bstr("sym"))),
    ("cws", (0x0F, struct.pack("<i", 4 + len(CWS_CODE) + len(SCOPE)) + CWS_CODE + SCOPE)),
    ("i32", i32(-7)),
    ("ts", (0x11, struct.pack("<II", 5, 1700000000))),
    ("i64", (0x12, struct.pack("<q", 2 ** 62))),
    ("dec", (0x13, Decimal128("1.10").bid)),
    ("dec_nan", (0x13, Decimal128("NaN").bid)),
    ("min", (0xFF, b"")),
    ("max", (0x7F, b"")),
]


def all_values(reverse=False):
    v = list(reversed(VALUES)) if reverse else VALUES
    return [E(n, x) for n, x in v]


def without(elems, *names):
    drop = [el(x[0], n, x[1]) for n, x in VALUES if n in names]
    return [e for e in elems if e not in drop]


def cases():
    out = []
    c1 = doc(E("_id", i32(1)), E("owner", i32(1)), *all_values())
    c2 = doc(E("_id", i32(2)), *all_values(reverse=True), E("owner", i32(1)))
    c3 = doc(E("_id", i32(3)), E("owner", i32(2)), E("regex", VALUES[19][1]))
    p1_elems = [E("_id", i32(1))] + all_values()
    p2_elems = [E("_id", i32(2)), E("sym", (0x0E, bstr("parent")))]
    out.append({
        "name": "types: children of every BSON type are embedded byte for byte (parents' other fields too)",
        "plan": {"remodel": 1, "steps": [{"embed": {"from": "crm.c", "into": "crm.p", "localField": "_id",
                                                    "foreignField": "owner", "as": "kids"}}]},
        "input": {"crm.p": [doc(*p1_elems), doc(*p2_elems)], "crm.c": [c2, c1, c3]},
        "expect": {"crm.p": [doc(*(p1_elems + [E("kids", a(arr(d(c1), d(c2))))])),
                             doc(*(p2_elems + [E("kids", a(arr(d(c3))))]))],
                   "crm.c": []}})

    c1x = doc(E("_id", i32(1)), *all_values())
    c2x = doc(E("_id", i32(2)), *all_values(reverse=True))
    out.append({
        "name": "types: exclusion projection keeps every other field byte for byte",
        "plan": {"remodel": 1, "steps": [{"embed": {"from": "crm.c", "into": "crm.p", "localField": "_id",
                                                    "foreignField": "owner", "as": "kids",
                                                    "project": {"owner": 0}, "keepSource": True}}]},
        "input": {"crm.p": [doc(E("_id", i32(1)))], "crm.c": [c1, c2]},
        "expect": {"crm.p": [doc(E("_id", i32(1)), E("kids", a(arr(d(c1x), d(c2x)))))],
                   "crm.c": [c1, c2]}})

    base = [E("_id", i32(1))] + all_values()
    regex = VALUES[19][1]
    out.append({
        "name": "types: set, unset, rename leave every other field byte for byte (regex moved as is)",
        "plan": {"remodel": 1, "steps": [
            {"set": {"in": "crm.d", "fields": {"added": 1}}},
            {"unset": {"in": "crm.d", "fields": ["sym"]}},
            {"rename": {"in": "crm.d", "fields": {"regex": "moved.regex"}}}]},
        "input": {"crm.d": [doc(*base)]},
        "expect": {"crm.d": [doc(*(without(base, "sym", "regex") + [E("added", i32(1)),
                                                                    E("moved", d(doc(E("regex", regex))))]))]}})

    broken = doc(E("_id", i32(1)), E("a", a(arr(i32(1), i32(2), i32(3), i32(4), keys=["0", "1", "9", "3"]))),
                 *all_values())
    out.append({
        "name": "types: an untouched namespace (every type, array keys 0,1,9,3) is copied byte for byte",
        "plan": {"remodel": 1, "steps": [{"set": {"in": "crm.d", "fields": {"x": 1}}}]},
        "input": {"crm.d": [doc(E("_id", i32(1)))], "raw.keep": [broken, doc(*all_values(reverse=True))]},
        "expect": {"crm.d": [doc(E("_id", i32(1)), E("x", i32(1)))],
                   "raw.keep": [broken, doc(*all_values(reverse=True))]}})

    out.append({
        "name": "types: a child's inner array keyed 0,1,9,3 is embedded as it is",
        "plan": {"remodel": 1, "steps": [{"embed": {"from": "raw.c", "into": "raw.p", "localField": "_id",
                                                    "foreignField": "_id", "as": "same"}}]},
        "input": {"raw.p": [doc(E("_id", i32(1)))], "raw.c": [broken]},
        "expect": {"raw.p": [doc(E("_id", i32(1)), E("same", a(arr(d(broken)))))], "raw.c": []}})

    e1 = [E("_id", i32(10))] + all_values()
    e2 = [E("_id", i32(11))] + all_values(reverse=True)
    out.append({
        "name": "types: extract parentRef carries every type byte for byte, parentField appended",
        "plan": {"remodel": 1, "steps": [{"extract": {"from": "crm.p", "path": "items", "to": "crm.items",
                                                      "style": "parentRef"}}]},
        "input": {"crm.p": [doc(E("_id", i32(1)), E("items", a(arr(d(doc(*e1)), d(doc(*e2))))), E("after", i32(1)))]},
        "expect": {"crm.p": [doc(E("_id", i32(1)), E("after", i32(1)))],
                   "crm.items": [doc(*(e1 + [E("parent_id", i32(1))])), doc(*(e2 + [E("parent_id", i32(1))]))]}})

    und = (0x06, b"")
    nul = (0x0A, b"")
    out.append({
        "name": "types: undefined is its own join key (matches only undefined, not null or missing)",
        "plan": {"remodel": 1, "steps": [{"embed": {"from": "crm.c", "into": "crm.p", "localField": "k",
                                                    "foreignField": "k", "as": "m"}}]},
        "input": {"crm.p": [doc(E("_id", i32(1)), E("k", und)), doc(E("_id", i32(2)), E("k", nul))],
                  "crm.c": [doc(E("_id", i32(10)), E("k", und)), doc(E("_id", i32(11)), E("k", nul)),
                            doc(E("_id", i32(12)))]},
        "expect": {"crm.p": [doc(E("_id", i32(1)), E("k", und), E("m", a(arr(d(doc(E("_id", i32(10)), E("k", und))))))),
                             doc(E("_id", i32(2)), E("k", nul),
                                 E("m", a(arr(d(doc(E("_id", i32(11)), E("k", nul))), d(doc(E("_id", i32(12))))))))],
                   "crm.c": []}})
    return out


def big_cases():
    """The 16 MiB limit: five children of 3.5 MiB cannot all go into one parent."""
    from bson.son import SON
    blob = "x" * (3584 * 1024)
    kids = [SON([("_id", i), ("owner", "huge-parent"), ("blob", blob)]) for i in range(1, 6)]
    proj = [SON([("_id", i), ("blob", blob)]) for i in range(1, 6)]
    plan = {"remodel": 1, "steps": [{"embed": {"from": "big.c", "into": "big.p", "localField": "_id",
                                               "foreignField": "owner", "as": "kids",
                                               "project": {"owner": 0}}}]}
    inp = {"big.p": [SON([("_id", "huge-parent")]), SON([("_id", "small")])],
           "big.c": kids[::-1] + [SON([("_id", 9), ("owner", "small")])]}
    out = [{
        "name": "16 MiB: past it, onOverflow error (the default) fails naming the parent and its count",
        "plan": plan, "input": inp, "expect_error": ["huge-parent", "5"]}]
    plan2 = {"remodel": 1, "steps": [dict(plan["steps"][0])]}
    plan2["steps"][0] = {"embed": dict(plan["steps"][0]["embed"], onOverflow="outlier")}
    out.append({
        "name": "16 MiB: with outlier the parent keeps as many as fit, the rest go to an overflow page",
        "plan": plan2, "input": inp,
        "expect": {"big.p": [SON([("_id", "huge-parent"), ("kids", proj[:4]), ("hasExtraKids", True)]),
                             SON([("_id", "small"), ("kids", [SON([("_id", 9)])])])],
                   "big.p_kids_overflow": [SON([("_id", rmlib.Placeholder("$any", "page")),
                                                ("parent_id", "huge-parent"), ("page", 2),
                                                ("kids", proj[4:])])],
                   "big.c": []}})
    return out


def main():
    work = sys.argv[1]
    rep = rmlib.Reporter()
    for case in cases() + big_cases():
        try:
            run_case.run_case(case, work, rep)
        except Exception:
            import traceback
            rep.bad(case["name"], traceback.format_exc())


if __name__ == "__main__":
    main()
