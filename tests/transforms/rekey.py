#!/usr/bin/env python3
"""rekey (docs/plans.md, "rekey") against an oracle written here, not
remodel:

  airports  WORKDIR SEED  airports keyed by ObjectIds and numbers, re-keyed
            by their IATA code; the flights' origin, destination and stops
            (an array) and the airports' own hub rewritten; references held
            as another number type ($lookup equality), null, missing;
            every document of each namespace in order, byte for byte, with
            and without --batch, to an archive, at --memory 64K (the sorts
            spilling) and after a set keeping the old _id; check
            --against's and run's counts; a key
            no airport has: refused naming the flight, or kept with
            onMissing "keep" and counted in a warning; two airports given
            one code: refused naming both, nothing written;
  gen       WORKDIR DUMP  remodel-gen's sample: parts re-keyed by partno
            (the products' arrays of parts rewritten) and hosts by name
            (each log message's host): the output the oracle's.

    REMODEL=build/remodel python3 tests/transforms/rekey.py airports WORKDIR [SEED]
    REMODEL=build/remodel python3 tests/transforms/rekey.py gen WORKDIR DUMP
"""

import decimal
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
from bson.objectid import ObjectId  # noqa: E402
from bson.son import SON  # noqa: E402

SONOPTS = bson.codec_options.CodecOptions(document_class=SON, tz_aware=True)
REPORT = rmlib.Reporter()


def verdict(name, ok, why=""):
    if ok:
        REPORT.ok(name)
    else:
        REPORT.bad(name, why)


# --- the oracle ---------------------------------------------------------------

def key(v):
    """Equal exactly when $lookup (and a unique index on _id) finds two
    values equal, for the types these data hold."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float, Int64)):
        return ("num", decimal.Decimal(v))
    if isinstance(v, Decimal128):
        return ("num", v.to_decimal())
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, ObjectId):
        return ("oid", v.binary)
    raise ValueError("no key for %r" % (v,))


def rekey(docs, new_id):
    """Each document with its _id replaced where it stands; the map from
    old key to new _id; the first two documents given one new _id, or
    None."""
    out, old_to_new, seen, dup = [], {}, {}, None
    for d in docs:
        n = new_id(d)
        c = SON()
        for k, v in d.items():
            c[k] = n if k == "_id" else v
        out.append(c)
        old_to_new[key(d["_id"])] = n
        if dup is None and key(n) in seen:
            dup = (seen[key(n)], d["_id"], n)
        seen.setdefault(key(n), d["_id"])
    return out, old_to_new, dup


def is_ref(v):
    return v is not None


def rewrite(docs, field, old_to_new, keep=False):
    """docs with the key (or each key of the array) at field mapped; the
    keys rewritten, those kept, and the first missing (document, value)."""
    n = kept = 0
    missing = None
    out = []
    for d in docs:
        if field not in d:
            out.append(d)
            continue
        v = d[field]
        vals = v if isinstance(v, list) else [v]
        new = []
        for x in vals:
            if not is_ref(x):
                new.append(x)
            elif key(x) in old_to_new:
                new.append(old_to_new[key(x)])
                n += 1
            else:
                new.append(x)
                kept += 1
                if missing is None:
                    missing = (d, x)
        c = SON(d)
        c[field] = new if isinstance(v, list) else new[0]
        out.append(c)
    return out, n, kept, missing


def enc(d):
    return bson.encode(d, codec_options=SONOPTS)


def same_docs(name, got, want):
    got = [bytes(g) for g in got]
    want = [enc(w) for w in want]
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
    return rmlib.read_dir(path) if os.path.isdir(path) else rmlib.read_archive(path)


def decode_all(raw):
    return [bson.decode(b, SONOPTS) for b in raw]


def write_plan(path, steps):
    with open(path, "w") as f:
        json.dump({"remodel": 1, "steps": steps}, f)
    return path


# --- airports and flights -----------------------------------------------------

def code(i):
    return "".join(chr(65 + (i // 26 ** k) % 26) for k in (2, 1, 0))


def gen(seed, n_airports, n_flights):
    rnd = random.Random(seed)
    ids = [i if i % 4 == 0 else ObjectId(b"%012d" % i) for i in range(n_airports)]
    airports = []
    for i, _id in enumerate(ids):
        d = SON([("_id", _id), ("iata", code(i * 7 + 3)), ("name", "Airport %d" % i)])
        if i == 5:  # _id not first: it stays where it stands
            d = SON([("iata", code(i * 7 + 3)), ("_id", _id), ("name", "Airport %d" % i)])
        h = rnd.randrange(5)
        if h == 0:
            d["hub"] = None
        elif h > 1:
            d["hub"] = rnd.choice(ids)
        airports.append(d)

    def ref(rnd):
        v = rnd.choice(ids)
        if isinstance(v, int) and rnd.random() < 0.3:
            return Int64(v) if rnd.random() < 0.5 else float(v)  # $lookup: equal
        return v

    flights = []
    for i in range(n_flights):
        d = SON([("_id", i), ("origin", ref(rnd))])
        k = rnd.randrange(10)
        if k == 0:
            d["destination"] = None
        elif k > 1:
            d["destination"] = ref(rnd)
        s = rnd.randrange(6)
        if s == 1:
            d["stops"] = []
        elif s > 1:
            d["stops"] = [ref(rnd) if rnd.random() < 0.9 else None for _ in range(rnd.randrange(1, 4))]
        d["seats"] = rnd.randrange(50, 300)
        flights.append(d)
    return airports, flights


REFS = [{"in": "air.flights", "field": "origin"},
        {"in": "air.flights", "field": "destination"},
        {"in": "air.flights", "field": "stops"},
        {"in": "air.airports_by_code", "field": "hub"}]


def expected(airports, flights, keep=False):
    to, old_to_new, dup = rekey(airports, lambda d: d["iata"])
    total = kept = 0
    want_f = flights
    for f in ("origin", "destination", "stops"):
        want_f, n, k, _ = rewrite(want_f, f, old_to_new, keep)
        total, kept = total + n, kept + k
    to, n, k, _ = rewrite(to, "hub", old_to_new, keep)
    return {"air.airports_by_code": to, "air.flights": want_f, "air.airports": []}, \
        total + n, kept + k, dup


def airports_case(work, seed):
    airports, flights = gen(seed, 300, 3000)
    src = os.path.join(work, "src")
    rmlib.write_dump(src, {"air.airports": airports, "air.flights": flights})
    nss, _ = rmlib.read_dir(src)
    airports, flights = decode_all(nss["air.airports"]), decode_all(nss["air.flights"])
    plan = write_plan(os.path.join(work, "plan.json"), [
        {"rekey": {"from": "air.airports", "to": "air.airports_by_code", "id": "$iata",
                   "references": REFS}}])
    want, n_refs, _, _ = expected(airports, flights)
    line = ("step 1 (rekey) air.airports: %d document(s) re-keyed into air.airports_by_code; "
            "%d reference(s) rewritten" % (len(airports), n_refs))
    kinds = {type(f.get("origin")).__name__ for f in flights}
    verdict("the data has each case (%d references; origins of types %s)"
            % (n_refs, sorted(kinds)), {"int", "Int64", "float", "ObjectId"} <= kinds)

    r = rmlib.run_remodel(["check", plan, "--against", src])
    verdict("check --against: valid, its count the oracle's",
            r.rc == 0 and line in r.err.splitlines(), "rc %d, stderr %s" % (r.rc, r.err))
    # A plan with a rekey runs store to store, --batch or not: the same.
    for how, args in (("by default", []), ("--batch", ["--batch"]),
                      ("to an archive", []), ("--memory 64K", ["--memory", "64K"])):
        out = os.path.join(work, "out-" + how.replace(" ", "-"))
        if how == "to an archive":
            out += ".archive"
        stats = out + ".stats.json"
        r = rmlib.run_remodel(["run", plan, "--from", src, "--to", out, "--stats-json", stats]
                              + args)
        if r.rc != 0:
            verdict("%s: run" % how, False, r.err)
            continue
        verdict("%s: run's summary says the counts" % how, line in r.err.splitlines(), r.err)
        with open(stats) as f:
            spilled = json.load(f)["spilled"]
        verdict("%s: the sorts %s" % (how, "went to disk" if args[:1] == ["--memory"]
                                      else "stayed in memory"),
                spilled == (args[:1] == ["--memory"]), "spilled: %s" % spilled)
        got, metas = read_out(out)
        for ns in ("air.airports_by_code", "air.flights", "air.airports"):
            same_docs("%s: %s, every document in order, byte for byte" % (how, ns),
                      got.get(ns, []), want[ns])
        verdict("%s: air.airports_by_code is a new collection (its _id index)" % how,
                [i["name"] for i in json.loads(metas["air.airports_by_code"])["indexes"]]
                == ["_id_"], metas.get("air.airports_by_code"))

    # The old _id kept in a field by a set before the rekey (as docs/plans.md
    # suggests), the two steps in one plan.
    plan_set = write_plan(os.path.join(work, "set-then-rekey.json"), [
        {"set": {"in": "air.airports", "fields": {"legacy_id": "$_id"}}},
        {"rekey": {"from": "air.airports", "to": "air.airports_by_code", "id": "$iata",
                   "references": REFS}}])
    with_legacy = []
    for d in airports:
        c = SON(d)
        c["legacy_id"] = d["_id"]
        with_legacy.append(c)
    want2, _, _, _ = expected(with_legacy, flights)
    out = os.path.join(work, "out-set-then-rekey")
    r = rmlib.run_remodel(["run", plan_set, "--from", src, "--to", out])
    verdict("a set keeping the old _id, then the rekey: run", r.rc == 0, r.err)
    if r.rc == 0:
        got, _ = read_out(out)
        for ns in ("air.airports_by_code", "air.flights"):
            same_docs("a set keeping the old _id, then the rekey: %s, byte for byte" % ns,
                      got.get(ns, []), want2[ns])

    # A flight whose origin no airport has.
    lost = SON(flights[17])
    lost["origin"] = "no-such-airport"
    flights2 = flights[:17] + [lost] + flights[18:]
    src2 = os.path.join(work, "src-lost")
    rmlib.write_dump(src2, {"air.airports": airports, "air.flights": flights2})
    out = os.path.join(work, "out-lost")
    r = rmlib.run_remodel(["run", plan, "--from", src2, "--to", out])
    msg = ('plan.json: step 1 (rekey): air.flights: document { "_id" : 17 }: '
           '{ "origin" : "no-such-airport" }: no document of air.airports had this _id '
           '("onMissing": "keep" leaves such a reference as it is)')
    verdict("a key no airport has: refused naming the flight and the key, nothing written",
            r.rc == 1 and msg in r.err and not os.path.exists(out), "rc %d: %s" % (r.rc, r.err))
    plan_keep = write_plan(os.path.join(work, "keep.json"), [
        {"rekey": {"from": "air.airports", "to": "air.airports_by_code", "id": "$iata",
                   "references": REFS, "onMissing": "keep"}}])
    want, n_refs, kept, _ = expected(airports, flights2, keep=True)
    r = rmlib.run_remodel(["run", plan_keep, "--from", src2, "--to", out])
    verdict("onMissing keep: the key kept, counted in a warning naming the reference",
            r.rc == 0 and kept == 1 and
            ("step 1 (rekey): 1 key(s) in air.flights.origin matched no document of "
             "air.airports: kept as they were") in r.err and
            ("%d reference(s) rewritten, 1 kept without a match" % n_refs) in r.err, r.err)
    if r.rc == 0:
        got, _ = read_out(out)
        same_docs("onMissing keep: air.flights, the unmatched key as it was",
                  got.get("air.flights", []), want["air.flights"])

    # Two airports given one code: refused naming both, nothing written.
    twin = SON(airports[40])
    twin["iata"] = airports[12]["iata"]
    airports3 = airports[:40] + [twin] + airports[41:]
    src3 = os.path.join(work, "src-dup")
    rmlib.write_dump(src3, {"air.airports": airports3, "air.flights": flights})
    _, _, _, dup = expected(airports3, flights)
    for how, out in (("a directory", os.path.join(work, "out-dup")),
                     ("an archive", os.path.join(work, "out-dup.archive"))):
        r = rmlib.run_remodel(["run", plan, "--from", src3, "--to", out])
        msg = ('plan.json: step 1 (rekey): air.airports: documents { "_id" : %s } and '
               '{ "_id" : %s } both get { "_id" : "%s" } in air.airports_by_code'
               % (rel(dup[0]), rel(dup[1]), dup[2]))
        verdict("two airports given one code, to %s: refused naming both (exit 1), nothing "
                "written" % how, r.rc == 1 and msg in r.err and not os.path.exists(out),
                "rc %d, want [%s] in: %s" % (r.rc, msg, r.err))
    r = rmlib.run_remodel(["check", plan, "--against", src3])
    verdict("check --against finds the two airports too", r.rc == 1 and "both get" in r.err,
            r.err)


def rel(v):
    """A value as libbson's relaxed Extended JSON prints it."""
    if isinstance(v, ObjectId):
        return '{ "$oid" : "%s" }' % v
    return json.dumps(v)


# --- remodel-gen's sample -----------------------------------------------------

def gen_case(work, dump):
    nss, _ = rmlib.read_dir(dump)
    parts, products = decode_all(nss["catalog.parts"]), decode_all(nss["catalog.products"])
    hosts, logmsg = decode_all(nss["logging.hosts"]), decode_all(nss["logging.logmsg"])
    plan = write_plan(os.path.join(work, "gen.json"), [
        {"rekey": {"from": "catalog.parts", "to": "catalog.parts_by_no", "id": "$partno",
                   "references": [{"in": "catalog.products", "field": "parts"}]}},
        {"rekey": {"from": "logging.hosts", "to": "logging.hosts_by_name", "id": "$name",
                   "references": [{"in": "logging.logmsg", "field": "host"}],
                   "onMissing": "keep"}}])
    to_parts, m1, dup1 = rekey(parts, lambda d: d["partno"])
    to_hosts, m2, dup2 = rekey(hosts, lambda d: d["name"])
    want_products, n1, k1, miss1 = rewrite(products, "parts", m1)
    want_logmsg, n2, k2, _ = rewrite(logmsg, "host", m2, keep=True)
    verdict("remodel-gen's sample: unique codes, references found (%d parts, %d hosts "
            "referenced)" % (n1, n2), dup1 is None and dup2 is None and k1 == 0 and n1 and n2,
            "%s %s %s" % (dup1, dup2, miss1))
    out = os.path.join(work, "gen-out")
    r = rmlib.run_remodel(["run", plan, "--from", dump, "--to", out])
    verdict("remodel-gen's sample: run", r.rc == 0, r.err)
    if r.rc:
        return
    lines = ["step 1 (rekey) catalog.parts: %d document(s) re-keyed into catalog.parts_by_no; "
             "%d reference(s) rewritten" % (len(parts), n1),
             "step 2 (rekey) logging.hosts: %d document(s) re-keyed into logging.hosts_by_name; "
             "%d reference(s) rewritten%s" % (len(hosts), n2,
                                              ", %d kept without a match" % k2 if k2 else "")]
    verdict("remodel-gen's sample: the counts the oracle's",
            all(l in r.err.splitlines() for l in lines), "want %s in %s" % (lines, r.err))
    got, _ = read_out(out)
    for ns, want in (("catalog.parts_by_no", to_parts), ("catalog.products", want_products),
                     ("logging.hosts_by_name", to_hosts), ("logging.logmsg", want_logmsg),
                     ("catalog.parts", []), ("logging.hosts", [])):
        same_docs("remodel-gen's sample: %s, byte for byte" % ns, got.get(ns, []), want)


def main():
    mode, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    if mode == "airports":
        airports_case(work, int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    else:
        gen_case(work, sys.argv[3])
    sys.exit(1 if REPORT.failed else 0)


if __name__ == "__main__":
    main()
