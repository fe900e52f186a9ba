"""$lookup's localField/foreignField matching, case by case as MongoDB's own
test of it states the server's answers (jstests/aggregation/sources/lookup/
lookup_equijoin_semantics_lib.js, read for its facts: the documents and the
ids each case expects; transcribed here as data). Every case comes in both
directions, as there: the documents on the local side against one foreign
document, and on the foreign side under one local document.

  REMODEL=build/remodel python3 lookup_semantics.py WORKDIR

Each case runs as an embed (local = into, foreign = from, keepSource) in
memory and through the external sort (--memory 1K), and as a summarize
($addToSet of the children's _id); the matched ids must be exactly the
server's, each foreign document at most once per local one.

Where the server's answer depends on the engine or version, the case
follows ../shared/reference/mongodb-semantics.md and the README's "Join
keys" (MongoDB 5.0+; the slot-based engine's answer), and says so:
  - undefined matches only undefined (SBE); the classic engine refuses a
    local undefined (BadValue) instead;
  - "a.0.x" against a local null: the collection-scan joins (NLJ, HJ)
    also match {a: [{x: 1}, {y: 1}]} and {a: [{x: [1, 2]}]} (SERVER-64221),
    the index joins do not; remodel scans, so it gives the scan's answer.
"""

import datetime
import json
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
import bson  # noqa: E402
from bson.binary import Binary  # noqa: E402
from bson.dbref import DBRef  # noqa: E402
from bson.decimal128 import Decimal128  # noqa: E402
from bson.int64 import Int64  # noqa: E402
from bson.objectid import ObjectId  # noqa: E402
from bson.raw_bson import RawBSONDocument  # noqa: E402
from bson.regex import Regex  # noqa: E402
from bson.son import SON  # noqa: E402
from bson.timestamp import Timestamp  # noqa: E402

NAN = float("nan")


class Rx(object):
    """A BSON regular expression with its options exactly as given (Python's
    Regex drops those it does not know, like "g")."""

    def __init__(self, pattern, options):
        self.pattern, self.options = pattern, options

    def __repr__(self):
        return "/%s/%s" % (self.pattern, self.options)


class Undefined(object):
    """The deprecated BSON undefined (0x06), which Python's bson cannot write:
    encoded as a null, then its type byte patched."""

    def __repr__(self):
        return "undefined"


def encode(doc):
    rx = [(k, v) for k, v in doc.items() if isinstance(v, Rx)]
    if rx:
        # the other fields, then each regex appended by hand
        raw = bytearray(bytes(encode(SON((k, v) for k, v in doc.items() if not isinstance(v, Rx))).raw))
        del raw[-1]
        for k, v in rx:
            raw += b"\x0b" + k.encode() + b"\x00" + v.pattern.encode() + b"\x00" + v.options.encode() + b"\x00"
        raw += b"\x00"
        raw[0:4] = struct.pack("<i", len(raw))
        return RawBSONDocument(bytes(raw))
    marks = [k for k, v in doc.items() if isinstance(v, Undefined)]
    arr_marks = [k for k, v in doc.items() if isinstance(v, list) and any(isinstance(e, Undefined) for e in v)]
    plain = SON((k, None if isinstance(v, Undefined) else
                 [None if isinstance(e, Undefined) else e for e in v] if k in arr_marks else v)
                for k, v in doc.items())
    raw = bytearray(bson.encode(plain))
    for k in marks:
        at = raw.index(b"\x0a" + k.encode() + b"\x00")
        raw[at] = 0x06
    for k in arr_marks:
        # the array's own elements: its index keys in order
        start = raw.index(b"\x04" + k.encode() + b"\x00") + len(k) + 2
        for i, e in enumerate(doc[k]):
            if isinstance(e, Undefined):
                at = raw.index(b"\x0a" + str(i).encode() + b"\x00", start)
                raw[at] = 0x06
    return RawBSONDocument(bytes(raw))


def D(_id, **fields):
    d = SON([("_id", _id)])
    for k, v in fields.items():
        d[k] = v
    return d


# (group name, documents, [(direction, field on the documents' side, the
#  other side's single record, its field, expected ids)]), direction "F":
# the documents are local and the record foreign; "L": the reverse.
CASES = []


def group(name, docs, *runs):
    CASES.append((name, docs, runs))


null_docs = [D(0, no_a=1), D(1, a=None), D(2, a=[None, 1]), D(10, a=[]), D(20, a=1),
             D(21, a={"x": None}), D(22, a=[[None, 1], 2]), D(23, a=False), D(24, a=0),
             D(25, a={}), D(26, a="")]
group("null and missing", null_docs,
      ("F", "a", D(0, b=None), "b", [0, 1, 2, 10]),
      ("L", "a", D(0, b=None), "b", [0, 1, 2]),
      ("F", "a", D(0, no_b=1), "b", [0, 1, 2, 10]),
      ("L", "a", D(0, no_b=1), "b", [0, 1, 2]))

undef_docs = [D(0, no_a=1), D(1, a=None), D(2, a=[]), D(3, a=[None, 1]), D(10, a=1),
              D(11, a=[[None, 1], 2])]
group("undefined (SBE: only undefined matches it)", undef_docs,
      ("F", "a", D(0, b=Undefined()), "b", []),
      ("L", "a", D(0, b=Undefined()), "b", []))
group("undefined against undefined (SBE)", [D(0, a=Undefined()), D(1, a=[Undefined(), 1])],
      ("F", "a", D(0, b=Undefined()), "b", [0, 1]),
      ("L", "a", D(0, b=Undefined()), "b", [0, 1]))

nan_docs = [D(0, a=NAN), D(1, a=Decimal128("NaN")), D(2, a=[1, NAN]),
            D(3, a=[1, Decimal128("NaN")]), D(10, a=None), D(11, no_a=42)]
group("NaN", nan_docs,
      ("F", "a", D(0, b=NAN), "b", [0, 1, 2, 3]),
      ("L", "a", D(0, b=NAN), "b", [0, 1, 2, 3]))

type_docs = [D(0, a=0), D(1, a=3.14), D(2, a=Decimal128("3.14000000000000")), D(3, a="abc"),
             D(4, a=SON([("b", 1), ("c", 2), ("d", 3)])), D(5, a=True), D(6, a=False),
             D(7, a=datetime.datetime(2022, 1, 1, tzinfo=datetime.timezone.utc)),
             D(8, a=Timestamp(1, 123)), D(9, a=ObjectId("0102030405060708090A0B0C")),
             D(10, a=Binary(b"\x04" * 21, 0)), D(11, a=Rx("hjkl", "")), D(12, a=Rx("hjkl", "g")),
             D(13, a=DBRef("collection", "id", "database"))]
for d in type_docs:
    group("one type: %r" % (d["a"],), type_docs,
          ("F", "a", D("x", b=d["a"]), "b", [d["_id"]]),
          ("L", "a", D("x", b=d["a"]), "b", [d["_id"]]))
group("every type against a string they are not", type_docs,
      ("F", "a", D("x", b="xxx"), "b", []),
      ("L", "a", D("x", b="xxx"), "b", []))

scalar_docs = [D(0, a=1, y=2), D(1, a=[1]), D(2, a=[1, 2, 3]), D(3, a=[1, [2, 3]]),
               D(4, a=[1, [1, 2]]), D(5, a=[1, 2, 1]), D(6, a=[1, None]), D(7, a=[1, []]),
               D(10, a=2), D(11, a=[[1], 2]), D(12, a=[2, 3]), D(13, a={"y": 1}), D(14, no_a=1)]
group("top-level field to a scalar", scalar_docs,
      ("F", "a", D(0, b=1), "b", [0, 1, 2, 3, 4, 5, 6, 7]),
      ("L", "a", D(0, b=1), "b", [0, 1, 2, 3, 4, 5, 6, 7]))

path_docs = [D(0, a={"x": 1, "y": 2}), D(1, a=[{"x": 1}, {"x": 2}]), D(2, a=[{"x": 1}, {"x": None}]),
             D(3, a=[{"x": 1}, {"x": []}]), D(4, a=[{"x": 1}, {"no_x": 2}]), D(5, a={"x": [1, 2]}),
             D(6, a=[{"x": [1, 2]}]), D(7, a=[{"x": [1, 2]}, {"no_x": 2}]),
             D(10, a={"x": 2, "y": 1}), D(11, a={"x": [2, 3], "y": 1}),
             D(12, a=[{"no_x": 1}, {"x": 2}, {"x": 3}]), D(13, a={"x": [[1], 2]}),
             D(14, a=[{"x": [[1], 2]}]), D(15, a={"no_x": 1})]
group("path to a scalar", path_docs,
      ("F", "a.x", D(0, b=1), "b", [0, 1, 2, 3, 4, 5, 6, 7]),
      ("L", "a.x", D(0, b=1), "b", [0, 1, 2, 3, 4, 5, 6, 7]))

C = lambda v: {"c": v}  # noqa: E731
deep_docs = [D(0, a={"b": C(1)}), D(1, a={"b": C([[2, 3], 1])}),
             D(2, a={"b": [C(2), C(1)]}), D(3, a={"b": [C(None), C(1)]}),
             D(4, a={"b": [{"no_c": 2}, C(1)]}), D(5, a={"b": [C([]), C(1)]}),
             D(6, a={"b": [C([[2, 3], 1])]}), D(7, a={"b": [C(1), C([[2, 3], 4])]}),
             D(8, a=[{"b": C(2)}, {"b": C(1)}]), D(9, a=[{"b": C(None)}, {"b": C(1)}]),
             D(10, a=[{"b": {"no_c": 2}}, {"b": C(1)}]), D(11, a=[{"b": C([])}, {"b": C(1)}]),
             D(12, a=[{"b": C([[2, 3], 1])}]), D(13, a=[{"b": C(4)}, {"b": C([[2, 3], 1])}]),
             D(14, a=[{"no_b": 2}, {"b": C(1)}]),
             D(15, a=[{"b": [C(1)]}]), D(16, a=[{"b": C(3)}, {"b": [C(1), C(2)]}]),
             D(17, a=[{"b": C(None)}, {"b": [C(1)]}]), D(18, a=[{"b": {"no_c": 2}}, {"b": [C(1)]}]),
             D(19, a=[{"b": C([])}, {"b": [C(1)]}]), D(20, a=[{"b": [C([[2, 3], 1])]}]),
             D(21, a=[{"b": C(4)}, {"b": [C([[2, 3], 1])]}]),
             D(22, a=[{"no_b": 2}, {"b": [{"no_c": 3}, C(1)]}]),
             D(100, a={"b": C([[1, 2], 3])}), D(101, a={"b": [C([[1, 2], 3])]}),
             D(102, a=[{"b": C([[1, 2], 3])}]), D(103, a=[{"b": [C([[1, 2], 3])]}])]
group("deep path to a scalar", deep_docs,
      ("F", "a.b.c", D(0, key=1), "key", list(range(23))),
      ("L", "a.b.c", D(0, key=1), "key", list(range(23))))

arr_docs = [D(0, a=[[1, 2], 3], y=4), D(1, a=[[1, 2]]), D(2, a=[1, 2], y=3),
            D(10, a=[[[1, 2], 3], 4]), D(11, a=[2, 1]), D(12, a=[[2, 1], 3], y=[1, 2]),
            D(13, a=[[2, 1], 3], y=[[1, 2], 3]), D(14, a=None), D(15, no_a=[1, 2])]
group("top-level field to an array", arr_docs,
      ("F", "a", D(0, b=[1, 2]), "b", [0, 1, 2, 11]),
      ("L", "a", D(0, b=[1, 2]), "b", [2, 11]),
      ("F", "a", D(0, b=[[1, 2], 42]), "b", [0, 1]),
      ("L", "a", D(0, b=[[1, 2], 42]), "b", [0, 1, 2]))

X = lambda v: {"x": v}  # noqa: E731
parr_docs = [D(0, a={"x": [[1, 2], 3], "y": 4}), D(1, a=[X([[1, 2], 3]), X(4)]),
             D(2, a=[X([[1, 2], 3]), X(None)]), D(3, a=[X([[1, 2], 3]), {"no_x": 4}]),
             D(4, a={"x": [1, 2], "y": 4}), D(5, a=[X([1, 2]), X(4)]), D(6, a=[X([1, 2]), X(None)]),
             D(7, a=[X([1, 2]), {"no_x": 4}]),
             D(10, a={"x": [2, 1], "y": [1, 2]}), D(11, a={"x": [[2, 1], 3], "y": [[1, 2], 3]}),
             D(12, a=[X(1), X(2)]), D(13, a=X([[[1, 2], 3]])), D(14, a=[X([[[1, 2], 3]])]),
             D(15, a={"no_x": [[1, 2], 3]})]
group("path to an array", parr_docs,
      ("F", "a.x", D(0, b=[1, 2]), "b", [0, 1, 2, 3, 4, 5, 6, 7, 10, 12]),
      ("L", "a.x", D(0, b=[1, 2]), "b", [4, 5, 6, 7, 10, 12]),
      ("F", "a.x", D(0, b=[[1, 2], 42]), "b", [0, 1, 2, 3]),
      ("L", "a.x", D(0, b=[[1, 2], 42]), "b", [0, 1, 2, 3, 4, 5, 6, 7]))

miss_docs = [D(0, a={"no_x": 1}), D(1, a={"no_x": [1, 2]}), D(2, a=[{"no_x": 1}, {"no_x": 2}]),
             D(3, a=[{"no_x": 2}, X(1)]), D(4, a=[{"no_x": [1, 2]}, X(1)]), D(5, a=X(None)),
             D(6, a=[X(None), X(1)]), D(7, a=[X(None), X([1])]), D(8, no_a=1), D(9, a=[1]),
             D(10, a=[]), D(11, a=[[1]]), D(12, a=[[]]), D(20, a={"x": 2, "y": 1}),
             D(21, a=[X(2), X(3)])]
group("missing on a path", miss_docs,
      ("F", "a.x", D(0, b=None), "b", [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12]),
      ("L", "a.x", D(0, b=None), "b", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
      ("F", "a.x", D(0, no_b=1), "b", [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12]),
      ("L", "a.x", D(0, no_b=1), "b", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]))

sc_docs = [D(0, a=1), D(1, no_a=1), D(2, a=[1]), D(3, a={"b": 1}), D(4, a={"no_b": 1}),
           D(5, a={"b": [1]}), D(6, a=[{"b": {"no_c": 1}}, 1]), D(7, a={"b": [{"no_c": 1}, 1]})]
group("scalars on a path", sc_docs,
      ("F", "a.b.c", D(0, b=None), "b", [0, 1, 2, 3, 4, 5, 6, 7]),
      ("L", "a.b.c", D(0, b=None), "b", [0, 1, 2, 3, 4, 5, 6, 7]))

empty_docs = [D(0, a=[[]]), D(1, a=[[], 1]), D(2, a=[[], None]), D(3, a=[]), D(10, no_a=1),
              D(11, a=None), D(12, a=[None]), D(13, a=[None, 1]), D(20, a=1), D(21, a=[[[], 1], 2]),
              D(22, a=[1, 2]), D(23, a=[[None, 1], 2])]
group("an empty array in a top-level field", empty_docs,
      ("F", "a", D(0, b=[]), "b", [0, 1, 2]),
      ("L", "a", D(0, b=[]), "b", [2, 10, 11, 12, 13]),
      ("F", "a", D(0, b=[[], 42]), "b", [0, 1, 2]),
      ("L", "a", D(0, b=[[], 42]), "b", [0, 1, 2, 3]))

deep_empty = [D(0, a={"b": C([])}), D(1, a={"b": [C([]), C([])]}),
              D(2, a={"b": [{"no_c": 42}, C([]), C([])]}), D(3, a=[{"b": C([])}, {"b": C([])}]),
              D(4, a=[{"b": {"no_c": 42}}, {"b": C([])}, {"b": C([])}]),
              D(5, a={"b": C([[]])}), D(6, a={"b": [C([]), C([[]])]}),
              D(7, a={"b": [{"no_c": 42}, C([]), C([[]])]}), D(8, a=[{"b": C([])}, {"b": C([[]])}]),
              D(9, a=[{"b": {"no_c": 42}}, {"b": C([])}, {"b": C([[]])}])]
group("empty arrays and missing on a deep path", deep_empty,
      ("F", "a.b.c", D(0, b=None), "b", [0, 1, 2, 3, 4]),
      ("F", "a.b.c", D(0, b=[]), "b", [5, 6, 7, 8, 9]))

pempty = [D(0, a={"x": [[]], "y": 1}), D(1, a=[X([[]])]), D(2, a=[X([[]]), X(1)]),
          D(3, a=[X([[]]), X(None)]), D(4, a=[X([[]]), {"no_x": 1}]), D(5, a=X([[], 1])),
          D(10, a={"x": [], "y": 1}), D(11, a=[X([]), X(1)]), D(12, a=[X([]), X(None)]),
          D(13, a=[X([]), {"no_x": 1}]),
          D(20, no_a=1), D(21, a={"no_x": 1}), D(22, a=[{"no_x": 1}, {"no_x": 2}]),
          D(23, a=[X(None), X(1)]),
          D(30, a=[]), D(31, a=[1]), D(32, a=[None, 1]), D(33, a=[[]]), D(34, a=[[1], 2]),
          D(40, a=X(1)), D(41, a=X([[[], 1], 2])), D(42, a=X([1, 2])), D(43, a=X([[None, 1], 2])),
          D(44, a=[X(1)]), D(45, a=[X([[[], 1], 2])]), D(46, a=[X([1, 2])]),
          D(47, a=[X([[None, 1], 2])])]
group("an empty array on a path", pempty,
      ("F", "a.x", D(0, b=[]), "b", [0, 1, 2, 3, 4, 5]),
      ("L", "a.x", D(0, b=[]), "b", [3, 4, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33, 34]),
      ("F", "a.x", D(0, b=[[], 42]), "b", [0, 1, 2, 3, 4, 5]),
      ("L", "a.x", D(0, b=[[], 42]), "b", [0, 1, 2, 3, 4, 5, 10, 11, 12, 13]))

num_docs = [D(0, a=[X(1), X(2)]), D(1, a=[X([2, 3, 1])]), D(2, a=[X(1), {"y": 1}]),
            D(10, a=[X(2), X(1)]), D(11, a=[X([2, 3])]), D(12, a=X(1)), D(13, a=X([1, 2])),
            D(14, a=[{"y": 1}, X(1)])]
group("a path with a numeric component, to a scalar", num_docs,
      ("F", "a.0.x", D(0, b=1), "b", [0, 1, 2]),
      ("L", "a.0.x", D(0, b=1), "b", [0, 1, 2]))

numnull = [D(0, a=X(1)), D(1, a=X([1, 2])), D(2, a=[{"y": 1}, X(1)]), D(3, a=[X(None), X(1)]),
           D(4, a=[X([1, None]), X(1)]), D(5, a=[1, 2]), D(10, a=[X(1), {"y": 1}]),
           D(11, a=[X([1, 2])])]
group("a path with a numeric component, to null (SERVER-64221: the scan joins' answer)", numnull,
      ("F", "a.0.x", D(0, b=None), "b", [0, 1, 2, 3, 4, 5]),
      ("L", "a.0.x", D(0, b=None), "b", [0, 1, 2, 3, 4, 5, 10, 11]))


def run(args):
    r = rmlib.run_remodel(args)
    return r.rc, r.err


def matched(out, local_ns):
    """{local _id: [foreign _ids]} from an embed's output."""
    docs = rmlib.read_dir(out)[0][local_ns]
    res = {}
    for raw in docs:
        d = bson.decode(raw) if isinstance(raw, (bytes, bytearray)) else dict(raw)
        res[d["_id"]] = [c["_id"] for c in d.get("m", [])]
    return res


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    rep = rmlib.Reporter()
    n = 0
    for gname, docs, runs in CASES:
        for direction, docs_field, record, rec_field, want in runs:
            n += 1
            if direction == "F":
                local, lf, foreign, ff = docs, docs_field, [record], rec_field
            else:
                local, lf, foreign, ff = [record], rec_field, docs, docs_field
            rec_value = {k: v for k, v in record.items() if k != "_id"}
            name = "$lookup semantics: %s: %s %r = %s %r of %s -> %s" % (
                gname, "local" if direction == "F" else "foreign", docs_field,
                "foreign" if direction == "F" else "local", rec_field, rec_value,
                json.dumps(sorted(want, key=str), default=str))
            src = os.path.join(work, "in%d" % n)
            rmlib.fresh(src)
            rmlib.write_dump(src, {"t.local": [encode(d) for d in local],
                                   "t.foreign": [encode(d) for d in foreign]})
            problems = []
            for label, step, extra in (
                    ("embed", {"embed": {"from": "t.foreign", "into": "t.local", "localField": lf,
                                         "foreignField": ff, "as": "m", "keepSource": True}}, []),
                    ("embed --memory 1K", None, ["--memory", "1K"]),
                    ("summarize", {"summarize": {"into": "t.local", "from": "t.foreign",
                                                 "localField": lf, "foreignField": ff,
                                                 "fields": {"m": {"$addToSet": "$$ROOT"}}}}, [])):
                if step is not None:
                    plan = os.path.join(work, "plan-%s.json" % label.split()[0])
                    with open(plan, "w") as f:
                        json.dump({"remodel": 1, "steps": [step]}, f)
                out = os.path.join(work, "out%d-%s" % (n, label.replace(" ", "")))
                rmlib.fresh(out)
                # --allow-missing: several cases rightly name fields no
                # document has, or match nothing.
                rc, err = run(["run", "-q", "--allow-missing", plan, "--from", src, "--to", out]
                              + extra)
                if rc != 0:
                    problems.append("%s: exit %d: %s" % (label, rc, err.strip()[:300]))
                    continue
                got = matched(out, "t.local")
                for lid, ids in got.items():
                    if len(ids) != len(set(map(repr, ids))):
                        problems.append("%s: local %r got a foreign document twice: %r" % (label, lid, ids))
                if direction == "F":
                    ids = sorted((k for k, v in got.items() if v), key=repr)
                else:
                    ids = sorted(next(iter(got.values())), key=repr)
                if ids != sorted(want, key=repr):
                    problems.append("%s: matched %r, MongoDB %r" % (label, ids, sorted(want, key=repr)))
            rep.result(name, problems)
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
