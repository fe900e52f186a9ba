#!/usr/bin/env python3
"""What issue 64's analyze items should find in natural_keys.py's dump,
computed here without remodel: natural_oracle.py DUMP WHAT

    refs     the (collection, field, target collection, target field) of every
             string field all of whose values are found among a field unique in
             every document of another collection of its database, several
             documents a key (many to one)
    buckets  per collection with a date and a series field: the readings a
             series averages a day
    dates    every field whose strings all parse with one format, as
             "ns field format" (Python's strptime, C locale)
    convert OUT   the dates of OUT (the plan's run) against strptime of DUMP's
"""
import datetime
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bson  # noqa: E402
import rmlib  # noqa: E402

FORMATS = ["%Y/%m/%d %H:%M", "%b %d %Y", "%m/%d/%Y", "%d.%m.%Y", "%d %b %Y", "%Y-%m-%d"]


def load(path):
    nss, _ = rmlib.read_dir(path)
    return {ns: [bson.decode(d) for d in docs] for ns, docs in nss.items()}


def refs(colls):
    out = []
    for ns, docs in sorted(colls.items()):
        db = ns.split(".")[0]
        fields = sorted({k for d in docs for k in d if k != "_id"})
        for f in fields:
            vals = [d[f] for d in docs if isinstance(d.get(f), str)]
            if len(vals) < len(docs):
                continue
            for tns, tdocs in sorted(colls.items()):
                if tns == ns or tns.split(".")[0] != db:
                    continue
                for k in sorted({k for d in tdocs for k in d if k != "_id"}):
                    keys = [d.get(k) for d in tdocs]
                    if None in keys or len(set(keys)) != len(keys):
                        continue
                    keyset = set(keys)
                    found = [v for v in vals if v in keyset]
                    if len(found) == len(vals) and len(vals) >= 2 * len(set(found)):
                        out.append("%s %s %s %s" % (ns, f, tns, k))
    return out


def parse(fmt, s):
    try:
        return datetime.datetime.strptime(s, fmt)
    except ValueError:
        return None


def dates(colls):
    out = []
    for ns, docs in sorted(colls.items()):
        for f in sorted({k for d in docs for k in d}):
            vals = [d[f] for d in docs if isinstance(d.get(f), str)]
            if not vals:
                continue
            for fmt in FORMATS:
                if all(parse(fmt, v) for v in vals):
                    out.append("%s %s %s" % (ns, f, fmt))
                    break
    return out


def main():
    colls = load(sys.argv[1])
    what = sys.argv[2]
    if what == "refs":
        print("\n".join(refs(colls)))
    elif what == "dates":
        print("\n".join(dates(colls)))
    elif what == "buckets":
        docs = colls["markets.prices"]
        days = (max(d["day"] for d in docs) - min(d["day"] for d in docs)).total_seconds() / 86400
        series = len({d["symbol"] for d in docs})
        print("%.2f" % (len(docs) / series / days))
    elif what == "convert":
        out = load(sys.argv[3])
        bad = 0
        total = 0
        for ns, docs in colls.items():
            got = {d["_id"]: d for d in out.get(ns, [])}
            for line in dates({ns: docs}):
                _, f, fmt = line.split(" ", 2)
                for d in docs:
                    total += 1
                    want = parse(fmt, d[f])
                    have = got.get(d["_id"], {}).get(f)
                    if not isinstance(have, datetime.datetime) or have.replace(tzinfo=None) != want:
                        bad += 1
        print("%d converted, %d wrong" % (total, bad))


main()
