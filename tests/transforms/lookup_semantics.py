"""$lookup's localField/foreignField matching, case by case as MongoDB's own
test of it states the server's answers (jstests/aggregation/sources/lookup/
lookup_equijoin_semantics.js and the lib it became, lookup_equijoin_
semantics_lib.js, read for their facts: the documents and the ids each case
expects; transcribed here as data). Every case comes in both directions:
the documents on the local side against one foreign document, and on the
foreign side under one local document.

  REMODEL=build/remodel python3 lookup_semantics.py WORKDIR

Each case runs as an embed (local = into, foreign = from, keepSource) in
memory and through the external sort (--memory 1K), and as a summarize
($addToSet of the children's _id); the matched ids must be exactly the
server's, each foreign document at most once per local one. Where the same
key code serves denormalize (its lookup of a scalar reference among the
foreign keys), the case also runs as denormalize: a local scalar against
each foreign document (one step per foreign namespace), and the local
documents holding a top-level scalar against the foreign one.

Where the server's answer depends on its version or engine, the case
follows docs/plans.md's "Join keys" (MongoDB 5.0+), and says so in its
name ("[version: ...]"):
  - SERVER-36681 (servers at feature compatibility version 9.0; the lib's
    current expectations): a local null or missing matches a foreign
    document whose path crosses an array the rest of the path finds
    nothing in, {a: []}, {a: [1]}, {a: [[]]}, {a: [5, {b: 5}]} for "a.b".
    Servers before it, 5.0 to 8.x, the ones users run (the older test:
    "missing on a path" L [0..8], "scalars on a path" L [0, 1, 3, 4, 6,
    7], "an empty array on a path" L without 30..34) skipped such
    elements. Such a case gives both answers (V(before, since)): remodel
    run by default must give the older one, with --server-version 9.0 the
    newer (issue 25, item 10), and its --stats-json names the rules
    followed (check_stats);
  - undefined matches only undefined (MongoDB 8.0; the lib's slot-based
    engine). The older test, on the classic engine, matched a foreign
    undefined as null ([0, 1, 2, 3] there) and refused a local undefined
    (BadValue);
  - "a.0.x" against a local null: the collection-scan joins (NLJ, HJ)
    also match {a: [{x: 1}, {y: 1}]} and {a: [{x: [1, 2]}]} (SERVER-64221),
    the index joins do not; remodel scans, so it gives the scan's answer;
  - a foreign collection that does not exist: the server gives every local
    document an empty array; remodel refuses a namespace the input lacks
    (a misspelt "from" must not empty data), so the case runs with an
    empty foreign namespace instead, and checks the refusal separately.
Cases marked "[derived]" are not in the server's test: the direction it
left out ("empty arrays and missing on a deep path" under one local), and
the SERVER-36681 query tests' documents (dotted_path_in_null.js,
arrayfind5) read as $lookup's foreign side, their answers derived from the
rules the transcribed cases show.
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


def _value_size(t, raw, at):
    """Bytes of a BSON value of type t starting at raw[at]."""
    fixed = {0x01: 8, 0x06: 0, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8,
             0x12: 8, 0x13: 16, 0xFF: 0, 0x7F: 0}
    if t in fixed:
        return fixed[t]
    if t in (0x02, 0x0D, 0x0E):
        return 4 + struct.unpack_from("<i", raw, at)[0]
    if t in (0x03, 0x04, 0x0F):
        return struct.unpack_from("<i", raw, at)[0]
    if t == 0x05:
        return 5 + struct.unpack_from("<i", raw, at)[0]
    if t == 0x0B:
        end = raw.index(b"\x00", at)
        return raw.index(b"\x00", end + 1) + 1 - at
    if t == 0x0C:
        return 4 + struct.unpack_from("<i", raw, at)[0] + 12
    raise ValueError("BSON type 0x%02x" % t)


def _patch_undefined(raw, start, path):
    """Turns the null at path (keys) of the document at raw[start] into an
    undefined: the same length, only the type byte differs."""
    at = start + 4
    while raw[at] != 0:
        t = raw[at]
        end = raw.index(b"\x00", at + 1)
        key = raw[at + 1:end].decode()
        if key == path[0]:
            if len(path) == 1:
                assert t == 0x0A
                raw[at] = 0x06
                return
            return _patch_undefined(raw, end + 1, path[1:])
        at = end + 1 + _value_size(t, raw, end + 1)
    raise KeyError(path)


def _undefined_paths(v, path, out):
    """v with each Undefined as None; the paths of those in out."""
    if isinstance(v, Undefined):
        out.append(path)
        return None
    if isinstance(v, list):
        return [_undefined_paths(e, path + [str(i)], out) for i, e in enumerate(v)]
    if isinstance(v, (dict, SON)) and not isinstance(v, DBRef):
        return SON((k, _undefined_paths(e, path + [k], out)) for k, e in v.items())
    return v


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
    marks = []
    plain = _undefined_paths(doc, [], marks)
    raw = bytearray(bson.encode(plain))
    for path in marks:
        _patch_undefined(raw, 0, path)
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


class V(object):
    """The answers of a case that depends on the server's version: before
    SERVER-36681 (MongoDB 5.0 to 8.x, remodel's default) and since (9.0,
    remodel run --server-version 9.0)."""

    def __init__(self, before, since):
        self.before, self.since = before, since


null_docs = [D(0, no_a=1), D(1, a=None), D(2, a=[None, 1]), D(10, a=[]), D(20, a=1),
             D(21, a={"x": None}), D(22, a=[[None, 1], 2]), D(23, a=False), D(24, a=0),
             D(25, a={}), D(26, a="")]
group("null and missing", null_docs,
      ("F", "a", D(0, b=None), "b", [0, 1, 2, 10]),
      ("L", "a", D(0, b=None), "b", [0, 1, 2]),
      ("F", "a", D(0, no_b=1), "b", [0, 1, 2, 10]),
      ("L", "a", D(0, no_b=1), "b", [0, 1, 2]))
# The older test's documents for the same case: {a: {x: undefined}} where
# the lib has false, 0, {} and "" (the same answers).
old_null_docs = [D(0, no_a=1), D(1, a=None), D(2, a=[None, 1]), D(10, a=[]), D(20, a=1),
                 D(21, a={"x": None}), D(22, a=[[None, 1], 2]), D(23, a={"x": Undefined()})]
group("null and missing (the older test's documents)", old_null_docs,
      ("F", "a", D(0, b=None), "b", [0, 1, 2, 10]),
      ("L", "a", D(0, b=None), "b", [0, 1, 2]),
      ("F", "a", D(0, no_b=1), "b", [0, 1, 2, 10]),
      ("L", "a", D(0, no_b=1), "b", [0, 1, 2]))

undef_docs = [D(0, no_a=1), D(1, a=None), D(2, a=[]), D(3, a=[None, 1]), D(10, a=1),
              D(11, a=[[None, 1], 2])]
group("undefined [version: 8.0 and the slot-based engine: only undefined matches it; "
      "the older classic test matched F [0, 1, 2, 3] and refused L]", undef_docs,
      ("F", "a", D(0, b=Undefined()), "b", []),
      ("L", "a", D(0, b=Undefined()), "b", []))
old_undef_docs = [D(0, no_a=1), D(1, a=None), D(2, a=[]), D(3, a=[None, 1]), D(10, a=1),
                  D(11, a={"x": None}), D(12, a=[[None, 1], 2]), D(13, a={"x": Undefined()})]
group("undefined, the older test's documents [version: as above]", old_undef_docs,
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
# MongoDB's "null in local, missing on foreign path": 9 children before
# SERVER-36681, 13 since.
group("missing on a path [version: SERVER-36681; before it L [0..8]]", miss_docs,
      ("F", "a.x", D(0, b=None), "b", [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12]),
      ("L", "a.x", D(0, b=None), "b", V(list(range(9)), list(range(13)))),
      ("F", "a.x", D(0, no_b=1), "b", [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12]),
      ("L", "a.x", D(0, no_b=1), "b", V(list(range(9)), list(range(13)))))

sc_docs = [D(0, a=1), D(1, no_a=1), D(2, a=[1]), D(3, a={"b": 1}), D(4, a={"no_b": 1}),
           D(5, a={"b": [1]}), D(6, a=[{"b": {"no_c": 1}}, 1]), D(7, a={"b": [{"no_c": 1}, 1]})]
group("scalars on a path [version: SERVER-36681; before it L [0, 1, 3, 4, 6, 7]]", sc_docs,
      ("F", "a.b.c", D(0, b=None), "b", [0, 1, 2, 3, 4, 5, 6, 7]),
      ("L", "a.b.c", D(0, b=None), "b", V([0, 1, 3, 4, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7])))

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
# [derived] The direction the server's test leaves out: a local null, or
# [] (which acts as null there), matches the documents where a branch of
# "a.b.c" is missing; a c of [] or [[]] is a value, not missing.
group("empty arrays and missing on a deep path, under one local [derived]", deep_empty,
      ("L", "a.b.c", D(0, b=None), "b", [2, 4, 7, 9]),
      ("L", "a.b.c", D(0, b=[]), "b", [2, 4, 7, 9]))

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
group("an empty array on a path [version: SERVER-36681; before it L without 30..34]", pempty,
      ("F", "a.x", D(0, b=[]), "b", [0, 1, 2, 3, 4, 5]),
      ("L", "a.x", D(0, b=[]), "b", V([3, 4, 12, 13, 20, 21, 22, 23],
                                      [3, 4, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33, 34])),
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

# [derived] SERVER-36681's own query tests, {"a.b": null} after the fix,
# as the foreign side of a $lookup from a local null (dotted_path_in_null:
# [2, 3, 4, 5], where servers before it gave [2, 4]; arrayfind5: both
# documents, where servers before it gave only the first). On the local
# side (F) a path is null only when it finds nothing at all.
dpn_docs = [D(1, a=[{"b": 5}]), D(2, a=[{}]), D(3, a=[]), D(4, a=[{}, {"b": 5}]),
            D(5, a=[5, {"b": 5}])]
group("SERVER-36681's documents [derived; version: before it L [2, 4]]", dpn_docs,
      ("F", "a.b", D(0, x=None), "x", [2, 3]),
      ("L", "a.b", D(0, x=None), "x", V([2, 4], [2, 3, 4, 5])),
      ("F", "a.b", D(0, x=5), "x", [1, 4, 5]),
      ("L", "a.b", D(0, x=5), "x", [1, 4, 5]))
af5_docs = [D(1, a=[{}, {"b": 1}]), D(2, a=[5, {"b": 1}])]
group("arrayfind5's documents [derived; version: before SERVER-36681 L [1]]", af5_docs,
      ("F", "a.b", D(0, x=None), "x", []),
      ("L", "a.b", D(0, x=None), "x", V([1], [1, 2])),
      ("F", "a.b", D(0, x=1), "x", [1, 2]),
      ("L", "a.b", D(0, x=1), "x", [1, 2]))

# A foreign collection that does not exist (the lib's last case): every one
# of 10 local documents gets an empty array. Run with an empty foreign
# namespace; the missing one is refused (checked in main).
group("no foreign documents [version: the server's is a collection that does not exist]",
      [D(i, a=1) for i in range(10)],
      ("F", "a", None, "b", []))


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


def top_scalar(doc, field):
    """The value of a top-level field that denormalize reads as one scalar
    reference (not dotted, present, neither null nor an array), or None."""
    if "." in field or field not in doc:
        return None
    v = doc[field]
    return None if v is None or isinstance(v, list) else v


def run_denorm(work, n, direction, local, lf, foreign, ff, want, vargs):
    """Denormalize where its lookup is $lookup's: the problems found."""
    src = os.path.join(work, "dn%d" % n)
    out = os.path.join(work, "dn%d-out" % n)
    rmlib.fresh(src)
    rmlib.fresh(out)
    if direction == "L":
        # one step per foreign document, each from its own namespace: the
        # local reference gets h<i> = that document's _id when it matches
        nss = {"t.local": [encode(d) for d in local]}
        steps = []
        for i, f in enumerate(foreign):
            nss["t.f%d" % i] = [encode(f)]
            steps.append({"denormalize": {"in": "t.local", "from": "t.f%d" % i, "localField": lf,
                                          "foreignField": ff, "fields": {"h%d" % i: "_id"}}})
    else:
        nss = {"t.local": [encode(d) for d in local], "t.foreign": [encode(d) for d in foreign]}
        steps = [{"denormalize": {"in": "t.local", "from": "t.foreign", "localField": lf,
                                  "foreignField": ff, "fields": {"h": "_id"}}}]
    rmlib.write_dump(src, nss)
    plan = os.path.join(work, "plan-dn.json")
    with open(plan, "w") as f:
        json.dump({"remodel": 1, "steps": steps}, f)
    rc, err = run(["run", "-q", "--allow-missing", plan, "--from", src, "--to", out] + vargs)
    if rc != 0:
        return ["denormalize: exit %d: %s" % (rc, err.strip()[:300])]
    docs = [bson.decode(raw) if isinstance(raw, (bytes, bytearray)) else dict(raw)
            for raw in rmlib.read_dir(out)[0]["t.local"]]
    if direction == "L":
        got = sorted((docs[0]["h%d" % i] for i in range(len(foreign)) if "h%d" % i in docs[0]), key=repr)
        exp = sorted(want, key=repr)
    else:
        got = sorted((d["_id"] for d in docs if "h" in d), key=repr)
        eligible = [d["_id"] for d in local if top_scalar(d, lf) is not None]
        exp = sorted((i for i in want if i in eligible), key=repr)
    return [] if got == exp else ["denormalize: matched %r, MongoDB %r" % (got, exp)]


def absent_from_refused(work, rep):
    """The server's nonexistent foreign collection: remodel refuses it."""
    src = os.path.join(work, "absent")
    rmlib.fresh(src)
    rmlib.write_dump(src, {"t.local": [D(i, a=1) for i in range(10)]})
    plan = os.path.join(work, "plan-absent.json")
    with open(plan, "w") as f:
        json.dump({"remodel": 1, "steps": [{"embed": {"from": "t.nothere", "into": "t.local",
                                                        "localField": "a", "foreignField": "b",
                                                        "as": "m"}}]}, f)
    out = os.path.join(work, "absent-out")
    rmlib.fresh(out)
    rc, err = run(["run", "-q", "--allow-missing", plan, "--from", src, "--to", out])
    problems = []
    if rc != 2 or "namespace t.nothere is not in the input" not in err:
        problems.append("exit %d: %s" % (rc, err.strip()[:300]))
    if os.path.exists(out):
        problems.append("an output was left")
    rep.result("$lookup semantics: a foreign namespace the input lacks is refused (exit 2), "
               "not read as empty", problems)


def check_stats(work, rep):
    """--stats-json names the $lookup rules a run followed: 5.0-8.x by
    default (--server-version 8.0 said), SERVER-36681's from 9.0."""
    src = os.path.join(work, "stats-in")
    rmlib.fresh(src)
    rmlib.write_dump(src, {"t.local": [D(0, b=None)], "t.foreign": [encode(d) for d in miss_docs]})
    plan = os.path.join(work, "plan-stats.json")
    with open(plan, "w") as f:
        json.dump({"remodel": 1, "steps": [{"embed": {"from": "t.foreign", "into": "t.local",
                                                        "localField": "b", "foreignField": "a.x",
                                                        "as": "m", "countAs": "n"}}]}, f)
    for vargs, want in (([], ["8.0", "5.0-8.x", 9, 6]),
                        (["--server-version", "8.2"], ["8.2", "5.0-8.x", 9, 6]),
                        (["--server-version", "9.0"], ["9.0", "9.0 (SERVER-36681)", 13, 2]),
                        (["--server-version", "10.1.2"], ["10.1.2", "9.0 (SERVER-36681)", 13, 2])):
        out = os.path.join(work, "stats-out")
        st = os.path.join(work, "stats.json")
        rmlib.fresh(out)
        rc, err = run(["run", "-q", plan, "--from", src, "--to", out, "--stats-json", st] + vargs)
        problems = []
        if rc != 0:
            problems.append("exit %d: %s" % (rc, err.strip()[:300]))
        else:
            with open(st) as f:
                stats = json.load(f)
            local = [bson.decode(raw) if isinstance(raw, (bytes, bytearray)) else dict(raw)
                     for raw in rmlib.read_dir(out)[0]["t.local"]][0]
            foreign = rmlib.read_dir(out)[0].get("t.foreign", [])
            got = [stats.get("serverVersion"), stats.get("lookupRules"), local.get("n"), len(foreign)]
            if got != want:
                problems.append("serverVersion, lookupRules, children, orphans: %r, want %r" % (got, want))
        rep.result("$lookup semantics: remodel run %s: MongoDB's \"null in local, missing on "
                   "foreign path\" embeds %d of 15, and --stats-json says serverVersion %s, "
                   "lookupRules %s" % (" ".join(vargs) or "(no --server-version)", want[2], want[0],
                                       want[1]), problems)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    rep = rmlib.Reporter()
    n = 0
    for gname, docs, runs in CASES:
        for direction, docs_field, record, rec_field, answers in runs:
            # A case that depends on the version runs by default (MongoDB
            # 5.0-8.x's answer) and with --server-version 9.0 (SERVER-36681's).
            if isinstance(answers, V):
                variants = [([], answers.before, " (default: before SERVER-36681)"),
                            (["--server-version", "9.0"], answers.since, " (--server-version 9.0)")]
            else:
                variants = [([], answers, "")]
            for vargs, want, vlabel in variants:
                n += 1
                problems = run_one(work, n, gname, docs, direction, docs_field, record, rec_field,
                                   want, vargs, vlabel, rep)
    absent_from_refused(work, rep)
    check_stats(work, rep)
    return 1 if rep.failed else 0


def run_one(work, n, gname, docs, direction, docs_field, record, rec_field, want, vargs, vlabel, rep):
    if direction == "F":
        local, lf, foreign, ff = docs, docs_field, [record] if record else [], rec_field
    else:
        local, lf, foreign, ff = [record], rec_field, docs, docs_field
    rec_value = {k: v for k, v in (record or {}).items() if k != "_id"}
    name = "$lookup semantics: %s: %s %r = %s %r of %s -> %s%s" % (
        gname, "local" if direction == "F" else "foreign", docs_field,
        "foreign" if direction == "F" else "local", rec_field, rec_value,
        json.dumps(sorted(want, key=str), default=str), vlabel)
    src = os.path.join(work, "in%d" % n)
    rmlib.fresh(src)
    rmlib.write_dump(src, {"t.local": [encode(d) for d in local],
                           "t.foreign": [encode(d) for d in foreign]})
    problems = []
    plan = None
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
                      + extra + vargs)
        if rc != 0:
            problems.append("%s: exit %d: %s" % (label, rc, err.strip()[:300]))
            continue
        got = matched(out, "t.local")
        if len(got) != len(local):
            problems.append("%s: %d local documents out of %d" % (label, len(got), len(local)))
        for lid, ids in got.items():
            if len(ids) != len(set(map(repr, ids))):
                problems.append("%s: local %r got a foreign document twice: %r" % (label, lid, ids))
        if direction == "F":
            ids = sorted((k for k, v in got.items() if v), key=repr)
        else:
            ids = sorted(next(iter(got.values())), key=repr)
        if ids != sorted(want, key=repr):
            problems.append("%s: matched %r, MongoDB %r" % (label, ids, sorted(want, key=repr)))
    if foreign and ((direction == "L" and top_scalar(record, rec_field) is not None)
                    or (direction == "F" and any(top_scalar(d, lf) is not None for d in local))):
        label = " (+ denormalize)"
        problems += run_denorm(work, n, direction, local, lf, foreign, ff, want, vargs)
    else:
        label = ""
    rep.result(name + label, problems)


if __name__ == "__main__":
    sys.exit(main())
