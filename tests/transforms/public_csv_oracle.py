#!/usr/bin/env python3
"""The oracle of tests/cli/test_public_csv.sh: what remodel's steps must give
on public CSV files (vega_datasets' airports, stocks, Seattle's hourly
temperatures and daily weather) imported by csv_import.py, computed here from the CSV text
with plain Python (csv, strptime, zoneinfo) and the bson package, never
from remodel's output. Each command prints one line the suite compares.

  import CSVDIR SRC [TEXTFIELD]     every document the importer wrote is its
                                    CSV row, typed as autoParse types it
                                    (TEXTFIELD: kept as text)
  types CSVDIR                      each field's types and their counts
  amid CSVDIR                       the fields with a few numbers among strings
  dates CSVDIR SRC OUT NS FIELD FMT TZ
                                    each converted FIELD is strptime's
                                    datetime in TZ ("UTC" or an Olson name),
                                    every other field as it was
  buckets CSVDIR OUT NS META TIME VALUE UNIT TZ [FMT TZ_READ]   (META "-": none)
                                    the buckets are the oracle's grouping:
                                    series, start, end, count, min, max and
                                    the readings' _ids
  unique CSVDIR FIELD [text]        how many airports, how many distinct FIELD
                                    as imported (or as text), the rows that
                                    share one
  flights SRC OUT                   a made-up vega.flights (airports by
                                    ObjectId) beside SRC's airports, in OUT
  rekey SRC OUT                     the re-keyed airports and the flights'
                                    rewritten references are the oracle's
  samekey SRC FIELD ERRFILE         the rows of the two documents the refusal
                                    names, if both hold the value it names
  filters CSVDIR SRC OUT            copy, move and delete as the oracle
                                    selects (tests/cli/test_public_csv.sh's
                                    plan), order and bytes; then the
                                    "step N ..." lines remodel must print
"""
import collections
import csv
import datetime as dt
import math
import os
import random
import re
import sys
from zoneinfo import ZoneInfo

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bson  # noqa: E402
from bson.codec_options import CodecOptions  # noqa: E402
from bson import json_util  # noqa: E402
from bson.son import SON  # noqa: E402
import csv_import  # noqa: E402  (its ObjectIds: row N of a namespace)
import rmlib  # noqa: E402

UTC = dt.timezone.utc
OPTS = CodecOptions(document_class=SON, tz_aware=True)
FILES = {"vega.airports": "airports.csv", "vega.stocks": "stocks.csv",
         "vega.seattle_temps": "seattle-temps.csv", "vega.seattle_weather": "seattle-weather.csv"}


def rows(csvdir, ns):
    with open(os.path.join(csvdir, FILES[ns]), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def docs(root, ns):
    return [bson.decode(d, OPTS) for d in rmlib.read_dir(root)[0].get(ns, [])]


def raw(root, ns):
    return rmlib.read_dir(root)[0].get(ns, [])


def zone(name):
    return UTC if name == "UTC" else ZoneInfo(name)


def parse(text, fmt, tz):
    """strptime's wall time read in TZ (fold 0: an hour a change skips is
    read with the offset before it, one it repeats as its first)."""
    return dt.datetime.strptime(text, fmt).replace(tzinfo=zone(tz)).astimezone(UTC)


def row_of(ns, oid):
    """The CSV row (from 0) an importer's ObjectId stands for."""
    return int.from_bytes(oid.binary[9:], "big") if oid == csv_import.object_id(
        ns, int.from_bytes(oid.binary[9:], "big")) else None


def done(bad, ok):
    print(ok if not bad else "; ".join(bad[:4]) + (" (%d in all)" % len(bad) if len(bad) > 4 else ""))


INT = re.compile(r"[+-]?[0-9]+")
FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def typed(text):
    """A CSV field as mongoimport types it (for the values in these files:
    no hexadecimal, infinities or numbers past int64 among them)."""
    if INT.fullmatch(text):
        return int(text)
    if FLOAT.fullmatch(text):
        return float(text)
    return text


def cmd_import(csvdir, src, text_field=""):
    bad, n = [], 0
    for ns in FILES:
        want, got = rows(csvdir, ns), docs(src, ns)
        if len(want) != len(got):
            bad.append("%s: %d documents, %d rows" % (ns, len(got), len(want)))
        for i, (r, d) in enumerate(zip(want, got)):
            n += 1
            if d["_id"] != csv_import.object_id(ns, i) or list(d)[1:] != list(r):
                bad.append("%s row %d: _id or fields %s" % (ns, i, list(d)))
                continue
            for k, text in r.items():
                v, w = d[k], text if k == text_field else typed(text)
                if type(v) is not type(w) or v != w:
                    bad.append("%s row %d: %s is %r, the CSV's %r is %r" % (ns, i, k, v, text, w))
    done(bad, "%d documents, each its row" % n)


def cmd_types(csvdir):
    """Each field's BSON types and how many documents hold each, as
    analyze's "fields" report them: one line a field."""
    for ns in sorted(FILES):
        rs = rows(csvdir, ns)
        print("%s _id objectId:%d" % (ns, len(rs)))
        for k in rs[0]:
            n = collections.Counter({int: "int", float: "double", str: "string"}[type(typed(r[k]))]
                                    for r in rs)
            print("%s %s %s" % (ns, k, " ".join("%s:%d" % kv for kv in sorted(n.items()))))


def cmd_amid(csvdir):
    """The fields where a few values (1 in 20 at most, of 20 or more) type
    as numbers among strings: "ns field numbers of values", a line each."""
    for ns in sorted(FILES):
        rs = rows(csvdir, ns)
        for k in rs[0]:
            nums = sum(1 for r in rs if not isinstance(typed(r[k]), str))
            if 0 < nums and nums * 20 <= len(rs) and len(rs) >= 20:
                print("%s %s %d of %d" % (ns, k, nums, len(rs)))


def cmd_dates(csvdir, src, out, ns, field, fmt, tz):
    want = rows(csvdir, ns)
    before = {d["_id"]: d for d in docs(src, ns)}
    bad, n = [], 0
    for d in docs(out, ns):
        i = row_of(ns, d["_id"])
        t = parse(want[i][field], fmt, tz)
        n += 1
        if d[field] != t:
            bad.append("%s %r: %s, strptime gives %s" % (d["_id"], want[i][field], d[field], t))
        # the temperatures' plan adds a field "city" (their series)
        rest = [(k, v) for k, v in d.items() if k not in (field, "city")]
        old = [(k, v) for k, v in before[d["_id"]].items() if k != field]
        if rest != old:
            bad.append("%s: other fields changed: %s" % (d["_id"], rest))
    done(bad, "%d converted, 0 wrong" % n)


def window(t, unit, tz):
    """The calendar unit holding T in TZ: its first instant and the next's."""
    lt = t.astimezone(zone(tz))
    if unit == "day":
        d = dt.datetime(lt.year, lt.month, lt.day, tzinfo=zone(tz))
        return d.astimezone(UTC), (d + dt.timedelta(days=1)).astimezone(UTC)
    per = {"year": 12, "quarter": 3, "month": 1}[unit]
    k = (lt.year * 12 + lt.month - 1) // per * per

    def first(k):
        return dt.datetime(k // 12, k % 12 + 1, 1, tzinfo=zone(tz)).astimezone(UTC)
    return first(k), first(k + per)


def cmd_buckets(csvdir, out, ns, meta, time, value, unit, tz, fmt, tz_read):
    want = collections.defaultdict(list)
    for i, r in enumerate(rows(csvdir, ns)):
        t = parse(r[time], fmt, tz_read)
        # META "-": one series, buckets without a meta field
        series = None if meta == "-" else r[meta]
        want[(series,) + window(t, unit, tz)].append((csv_import.object_id(ns, i), float(r[value])))
    got, bad = {}, []
    for b in docs(out, ns.split(".")[0] + ".buckets"):
        if meta == "-" and (list(b) != ["_id", "start", "end", "count", "metaPositions", "measurements",
                                        "stats"] or b["metaPositions"] != []):
            bad.append("bucket %s: fields %s, metaPositions %s" % (b["_id"], list(b), b["metaPositions"]))
        k = (None if meta == "-" else b[meta], b["start"], b["end"])
        if k in got:
            bad.append("two buckets %s" % (k,))
        got[k] = b
    for k in sorted(set(want) | set(got), key=str):
        if k not in got or k not in want:
            bad.append("bucket %s: remodel %s, oracle %s" % (k, "has" if k in got else "lacks",
                                                            "has" if k in want else "lacks"))
            continue
        b, w = got[k], want[k]
        st = b["stats"][value]
        ids = sorted(str(m["_id"]) for m in b["measurements"])
        vals = [v for _, v in w]
        # count and avg where the plan asks for them (avg: the exact mean,
        # which $avg's double-double sum reaches to the last bits)
        avg_off = "avg" in st and abs(st["avg"] - math.fsum(vals) / len(vals)) > 1e-12 * abs(st["avg"])
        if avg_off or (b["count"], st.get("count", len(w)), st["min"], st["max"], ids) != (
                len(w), len(w), min(vals), max(vals), sorted(str(i) for i, _ in w)):
            bad.append("bucket %s: count %s min %s max %s, oracle %d %s %s" % (
                k, b["count"], st["min"], st["max"], len(w), min(vals), max(vals)))
    done(bad, "OK %d buckets" % len(got))


def cmd_unique(csvdir, field, as_text=""):
    """The rows whose FIELD, typed as the import types it (or kept as text),
    is one value: numbers are equal as numbers, as a unique index has them."""
    seen = collections.defaultdict(list)
    rs = rows(csvdir, "vega.airports")
    for i, r in enumerate(rs):
        seen[r[field] if as_text else typed(r[field])].append(i)
    dup = ["rows %s (%s) all %r" % (" and ".join(map(str, v)), ", ".join(rs[i][field] for i in v), k)
           for k, v in seen.items() if len(v) > 1]
    print("%d airports, %d distinct %s%s" % (len(rs), len(seen), field, ": " + "; ".join(dup) if dup else ""))


def cmd_flights(src, out):
    airports = docs(src, "vega.airports")
    rnd = random.Random(64)
    flights = []
    for i in range(1, 601):
        o, d = rnd.sample(airports, 2)
        f = SON([("_id", i), ("carrier", rnd.choice(["AA", "DL", "UA", "WN"])),
                 ("origin", o["_id"]), ("destination", d["_id"]), ("delay", rnd.randrange(-10, 90))])
        if i % 100 == 0:
            f["destination"] = None  # no reference: stays as it is
        flights.append(f)
    rmlib.write_dump(out, {"vega.airports": raw(src, "vega.airports"), "vega.flights": flights})
    print("%d flights" % len(flights))


def cmd_rekey(src, out):
    code = {}
    want_airports = []
    for a in docs(src, "vega.airports"):
        code[a["_id"]] = a["iata"]
        want_airports.append(bson.encode(SON([("_id", a["iata"]) if k == "_id" else (k, v)
                                              for k, v in a.items()])))
    want_flights = []
    for f in docs(src, "vega.flights"):
        for k in ("origin", "destination"):
            if f[k] is not None:
                f[k] = code[f[k]]
        want_flights.append(bson.encode(f))
    bad = []
    got_a = raw(out, "vega.airports_by_code")
    if sorted(got_a) != sorted(want_airports):
        bad.append("airports_by_code: %d documents, %d the oracle's" % (
            len(got_a), len(set(got_a) & set(want_airports))))
    got_f = raw(out, "vega.flights")
    if got_f != want_flights:
        bad.append("flights: %d documents, %d the oracle's in place" % (
            len(got_f), sum(a == b for a, b in zip(got_f, want_flights))))
    if raw(out, "vega.airports"):
        bad.append("vega.airports not emptied")
    done(bad, "%d airports re-keyed, %d flights' references, byte for byte" % (
        len(want_airports), len(want_flights)))


def cmd_samekey(src, field, errfile):
    """The refusal's two documents and the _id they both get: the rows they
    are, and whether both hold that value in FIELD."""
    err = open(errfile).read()
    m = re.search(r'documents (\{ "_id" : .*? \}) and (\{ "_id" : .*? \}) both get (\{ "_id" : .*? \}) in ', err)
    if not m:
        print("no two documents named in: " + err[:300])
        return
    a, b, key = (json_util.loads(m.group(k))["_id"] for k in (1, 2, 3))
    by_id = {d["_id"]: d for d in docs(src, "vega.airports")}
    if a not in by_id or b not in by_id or a == b:
        print("the named documents are not two airports: " + m.group(0))
    elif by_id[a][field] == by_id[b][field] == key and type(by_id[a][field]) is type(key):
        print("rows %d and %d, both %s %r" % (row_of("vega.airports", a), row_of("vega.airports", b), field, key))
    else:
        print("%s: %r and %r, the refusal says %r" % (field, by_id[a][field], by_id[b][field], key))


CUT = dt.datetime(2005, 1, 1, tzinfo=UTC)


def cmd_filters(csvdir, src, out):
    """The plan: copy AAPL's date and price to vega.aapl; move the prices
    before 2005 to vega.stocks_archive; delete IBM's; copy the airports west
    of 150 W to vega.far_west."""
    srows = rows(csvdir, "vega.stocks")
    stocks = docs(src, "vega.stocks")
    when = [parse(srows[row_of("vega.stocks", d["_id"])]["date"], "%b %d %Y", "UTC") for d in stocks]
    sym = [srows[row_of("vega.stocks", d["_id"])]["symbol"] for d in stocks]
    aapl = [bson.encode(SON((k, v) for k, v in d.items() if k in ("_id", "date", "price")))
            for d, s in zip(stocks, sym) if s == "AAPL"]
    archive = [bson.encode(d) for d, t in zip(stocks, when) if t < CUT]
    left = [(d, s) for d, t, s in zip(stocks, when, sym) if t >= CUT]
    kept = [bson.encode(d) for d, s in left if s != "IBM"]
    arows = rows(csvdir, "vega.airports")
    airports = docs(src, "vega.airports")
    far = [bson.encode(a) for a in airports
           if float(arows[row_of("vega.airports", a["_id"])]["longitude"]) < -150]
    bad = []
    for ns, want in (("vega.aapl", aapl), ("vega.stocks_archive", archive), ("vega.stocks", kept),
                     ("vega.far_west", far), ("vega.airports", [bson.encode(a) for a in airports])):
        got = raw(out, ns)
        if got != want:
            bad.append("%s: %d documents, oracle %d, %d the same in place" % (
                ns, len(got), len(want), sum(a == b for a, b in zip(got, want))))
    done(bad, "aapl %d, archive %d, stocks %d, far_west %d: in order, byte for byte" % (
        len(aapl), len(archive), len(kept), len(far)))
    print("step 1 (copy) vega.stocks: %d of %d document(s) selected, copied to vega.aapl" % (
        len(aapl), len(stocks)))
    print("step 2 (move) vega.stocks: %d of %d document(s) selected, moved to vega.stocks_archive" % (
        len(archive), len(stocks)))
    print("step 3 (delete) vega.stocks: %d of %d document(s) selected, deleted" % (
        len(left) - len(kept), len(left)))
    print("step 4 (copy) vega.airports: %d of %d document(s) selected, copied to vega.far_west" % (
        len(far), len(airports)))


def main(argv):
    cmds = {"import": cmd_import, "types": cmd_types, "amid": cmd_amid, "dates": cmd_dates, "buckets": cmd_buckets, "unique": cmd_unique,
            "flights": cmd_flights, "rekey": cmd_rekey, "samekey": cmd_samekey, "filters": cmd_filters}
    if not argv or argv[0] not in cmds:
        raise SystemExit(__doc__)
    cmds[argv[0]](*argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
