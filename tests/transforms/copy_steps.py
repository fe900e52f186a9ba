#!/usr/bin/env python3
"""copy, move and delete (docs/plans.md, "copy, move and delete") against
an oracle written here, over generated flights and orders (values of every
type the filters compare across: numbers of each kind, strings, null,
missing, dates before and after the bound):

  - the delayed flights moved to their own collection through fields and
    project; the archive of orders older than 2020 (copy, then delete);
    every document of each namespace, in order, byte for byte as the
    oracle builds it; the same from the one-pass path, store to store
    (--batch) and to an archive;
  - check --against and run say how many each step selected (the
    oracle's count);
  - the source's indexes carried to the copies (but the one on a field
    project drops);
  - a move without filter and its inverse (the move back) give the input
    again, byte for byte.

    REMODEL=build/remodel python3 tests/transforms/copy_steps.py WORKDIR [SEED]
"""

import json
import os
import random
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
import bson  # noqa: E402
from bson.decimal128 import Decimal128  # noqa: E402
from bson.int64 import Int64  # noqa: E402
from bson.son import SON  # noqa: E402
import datetime  # noqa: E402

UTC = datetime.timezone.utc
BOUND = datetime.datetime(2020, 1, 1, tzinfo=UTC)
SONOPTS = bson.codec_options.CodecOptions(document_class=SON, tz_aware=True)

fails = 0


def verdict(name, ok, why=""):
    global fails
    print(("PASS " if ok else "FAIL ") + name)
    if not ok:
        fails += 1
        sys.stderr.write("  %s\n" % why)


def gen(seed):
    rnd = random.Random(seed)
    airports = ["JFK", "LAX", "ORD", "ATL", "DEN", "SFO"]
    flights = []
    for i in range(600):
        d = SON([("_id", i), ("origin", rnd.choice(airports)), ("dest", rnd.choice(airports))])
        k = rnd.randrange(9)
        if k == 0:
            pass  # no delay at all
        elif k == 1:
            d["delay"] = None
        elif k == 2:
            d["delay"] = "late"  # a string never compares with a number
        elif k == 3:
            d["delay"] = float(rnd.randrange(-10, 60)) + 0.5
        elif k == 4:
            d["delay"] = Int64(rnd.randrange(-10, 120))
        else:
            d["delay"] = rnd.randrange(-10, 90)
        if rnd.random() < 0.5:
            d["notes"] = "n%d" % i
        d["seats"] = rnd.randrange(50, 300)
        flights.append(d)
    orders = []
    for i in range(500):
        d = SON([("_id", bson.ObjectId(b"%012d" % i)), ("customer", "c%d" % rnd.randrange(40))])
        k = rnd.randrange(6)
        if k == 0:
            d["placed"] = "2019-05-01"  # a string: no date compares with it
        elif k == 1:
            pass
        else:
            d["placed"] = datetime.datetime(rnd.choice([2017, 2018, 2019, 2019, 2020, 2021, 2022]),
                                            rnd.randrange(1, 13), rnd.randrange(1, 28),
                                            rnd.randrange(24), tzinfo=UTC)
            if rnd.random() < 0.05:
                d["placed"] = BOUND  # the bound itself: not older
        d["total"] = Decimal128("%d.%02d" % (rnd.randrange(500), rnd.randrange(100)))
        d["lines"] = [SON([("sku", "s%d" % rnd.randrange(9)), ("qty", rnd.randrange(1, 4))])
                      for _ in range(rnd.randrange(0, 4))]
        orders.append(d)
    return flights, orders


def ix(key, name):
    return {"v": 2, "key": key, "name": name}


META = {
    "air.flights": {"options": {}, "indexes": [ix({"_id": 1}, "_id_"),
                                               ix({"origin": 1, "dest": 1}, "origin_1_dest_1"),
                                               ix({"notes": 1}, "notes_1"),
                                               ix({"delay": -1}, "delay_-1")]},
    "shop.orders": {"options": {}, "indexes": [ix({"_id": 1}, "_id_"),
                                              ix({"customer": 1}, "customer_1"),
                                              ix({"placed": 1}, "placed_1")]},
}

# --- the oracle: MongoDB's rules for these filters and fields, written out --


def num(v):
    """The number v holds for a comparison, or None (bools and other types
    are not numbers to a query)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float, Int64)):
        return v
    return None


def delayed(d):
    v = num(d.get("delay"))
    return v is not None and v > 15


def old(d):
    v = d.get("placed")
    return isinstance(v, datetime.datetime) and v < BOUND


def subtract(a, b):
    """$subtract of two numbers, typed as the server types it."""
    r = a - b
    if isinstance(a, float) or isinstance(b, float):
        return float(r)
    if isinstance(a, Int64) or isinstance(b, Int64):
        return Int64(r)
    return int(r)  # int32 here: the values are small


def delayed_copy(d):
    out = SON()
    for k, v in d.items():
        if k != "notes":
            out[k] = v
    out["late_by"] = subtract(d["delay"], 15)
    return out


def archived_copy(d):
    return SON([(k, d[k]) for k in d if k in ("_id", "placed", "total")])


def enc(d):
    return bson.encode(d, codec_options=SONOPTS)


# --- checks -----------------------------------------------------------------


def same_docs(name, got, want):
    got = [bytes(g) for g in got]
    want = [enc(w) if not isinstance(w, (bytes, bytearray)) else bytes(w) for w in want]
    if got == want:
        verdict(name, True)
        return
    why = "%d documents, the oracle's %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            why += "; first difference at %d: %s vs the oracle's %s" % (
                i, bson.decode(g, SONOPTS), bson.decode(w, SONOPTS))
            break
    verdict(name, False, why)


def read_out(path):
    if os.path.isdir(path):
        return rmlib.read_dir(path)
    return rmlib.read_archive(path)


def index_names(meta_text):
    return [i["name"] for i in json.loads(meta_text).get("indexes", [])]


def main():
    work = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    flights, orders = gen(seed)
    src = os.path.join(work, "src")
    rmlib.write_dump(src, {"air.flights": flights, "shop.orders": orders},
                     {k: json.dumps(v) for k, v in META.items()})
    # What the dump holds, as its bytes were written.
    nss, _ = rmlib.read_dir(src)
    flights = [bson.decode(b, SONOPTS) for b in nss["air.flights"]]
    orders = [bson.decode(b, SONOPTS) for b in nss["shop.orders"]]

    plan = os.path.join(work, "plan.json")
    with open(plan, "w") as f:
        json.dump({"remodel": 1, "steps": [
            {"move": {"from": "air.flights", "to": "air.delayed",
                      "filter": {"delay": {"$gt": 15}},
                      "fields": {"late_by": {"$subtract": ["$delay", 15]}},
                      "project": {"notes": 0}}},
            {"copy": {"from": "shop.orders", "to": "archive.orders",
                      "filter": {"placed": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}},
                      "project": {"placed": 1, "total": 1}}},
            {"delete": {"from": "shop.orders",
                        "filter": {"placed": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}}}}]}, f)

    want = {
        "air.flights": [d for d in flights if not delayed(d)],
        "air.delayed": [delayed_copy(d) for d in flights if delayed(d)],
        "shop.orders": [d for d in orders if not old(d)],
        "archive.orders": [archived_copy(d) for d in orders if old(d)],
    }
    n_delayed = len(want["air.delayed"])
    n_old = len(want["archive.orders"])
    verdict("the data has each case (%d delayed of %d, %d old of %d)"
            % (n_delayed, len(flights), n_old, len(orders)),
            0 < n_delayed < len(flights) and 0 < n_old < len(orders))

    r = rmlib.run_remodel(["check", plan, "--against", src])
    lines = [
        "step 1 (move) air.flights: %d of %d document(s) selected, moved to air.delayed"
        % (n_delayed, len(flights)),
        "step 2 (copy) shop.orders: %d of %d document(s) selected, copied to archive.orders"
        % (n_old, len(orders)),
        "step 3 (delete) shop.orders: %d of %d document(s) selected, deleted"
        % (n_old, len(orders)),
    ]
    verdict("check --against: valid, each step's count the oracle's",
            r.rc == 0 and all(l in r.err.splitlines() for l in lines),
            "rc %d, stderr %s" % (r.rc, r.err))

    for how, args in (("one pass", []), ("store to store", ["--batch"]),
                      ("to an archive", ["--batch"])):
        out = os.path.join(work, "out-" + how.replace(" ", "-"))
        if how == "to an archive":
            out += ".archive"
        r = rmlib.run_remodel(["run", plan, "--from", src, "--to", out] + args)
        if r.rc != 0:
            verdict("%s: run" % how, False, r.err)
            continue
        verdict("%s: run's summary says the counts" % how,
                all(l in r.err.splitlines() for l in lines), r.err)
        got, metas = read_out(out)
        for ns in ("air.flights", "air.delayed", "shop.orders", "archive.orders"):
            same_docs("%s: %s, every document in order, byte for byte" % (how, ns),
                      got.get(ns, []), want[ns])
        verdict("%s: the copies' indexes are the source's, but the one project drops" % how,
                index_names(metas["air.delayed"]) == ["_id_", "origin_1_dest_1", "delay_-1"]
                and index_names(metas["archive.orders"]) == ["_id_", "placed_1"]
                and index_names(metas["air.flights"]) == index_names(json.dumps(META["air.flights"])),
                "%s / %s" % (metas.get("air.delayed"), metas.get("archive.orders")))

    # A whole move and the move back (its inverse) give the input again.
    there = os.path.join(work, "there.json")
    back = os.path.join(work, "back.json")
    with open(there, "w") as f:
        json.dump({"remodel": 1, "steps": [{"move": {"from": "air.flights", "to": "old.flights"}}]}, f)
    with open(back, "w") as f:
        json.dump({"remodel": 1, "steps": [{"move": {"from": "old.flights", "to": "air.flights"}}]}, f)
    mid, end = os.path.join(work, "mid"), os.path.join(work, "end")
    r1 = rmlib.run_remodel(["run", there, "--from", src, "--to", mid])
    r2 = rmlib.run_remodel(["run", back, "--from", mid, "--to", end]) if r1.rc == 0 else r1
    if r2.rc != 0:
        verdict("a move and the move back", False, r2.err)
    else:
        a, _ = rmlib.read_dir(mid)
        b, _ = rmlib.read_dir(end)
        verdict("a whole move leaves its source empty",
                a.get("air.flights", []) == [] and a["old.flights"] == nss["air.flights"])
        verdict("the move back gives the input again, byte for byte",
                b["air.flights"] == nss["air.flights"] and b.get("old.flights", []) == [])
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
