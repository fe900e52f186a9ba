#!/usr/bin/env python3
"""A new user's data as a CSV import leaves it (issue 64), written as a
directory dump: natural_keys.py DIR

    travel.airports   300  _id an ObjectId, "iata" a unique 3-letter code, name, city
    travel.flights   6000  origin, destination: IATA codes (skewed: hubs), no name
                           tying them to airports; "dep" "2001/01/01 00:47"
    cinema.movies     500  "released" "Jun 12 1998", "opened" "Jan 1 2000"
                           (one digit days unpadded), "added" "12/31/1999"
    markets.prices   2400  20 symbols, one closing price a month: a series of
                           readings too sparse for buckets of a day
    school.students  200, school.courses 40, school.enrolments: studentId
                           and courseId and nothing else besides an int _id
                           (a junction no other collection references)
"""
import datetime
import os
import random
import string
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
from bson import ObjectId  # noqa: E402

random.seed(64)
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
CITIES = ["Lyon", "Oslo", "Lima", "Rome", "Kyiv", "Doha", "Baku", "Riga", "Nice", "Bern"]


def main():
    out = {}
    codes = set()
    while len(codes) < 300:
        codes.add("".join(random.choice(string.ascii_uppercase) for _ in range(3)))
    codes = sorted(codes)
    out["travel.airports"] = [{"_id": ObjectId(), "iata": c, "name": "%s airport" % c.title(),
                               "city": random.choice(CITIES)} for c in codes]
    # Hubs: the first 30 codes take most of the traffic.
    weights = [20 if i < 30 else 1 for i in range(len(codes))]
    t0 = datetime.datetime(2001, 1, 1)
    out["travel.flights"] = []
    for i in range(6000):
        o, d = random.choices(codes, weights, k=2)
        t = t0 + datetime.timedelta(minutes=47 + 13 * i)
        out["travel.flights"].append({"_id": ObjectId(), "origin": o, "destination": d,
                                      "dep": t.strftime("%Y/%m/%d %H:%M"), "delay": random.randint(0, 90)})
    out["cinema.movies"] = []
    for i in range(500):
        r = datetime.date(1950, 1, 1) + datetime.timedelta(days=random.randrange(25000))
        o = r + datetime.timedelta(days=random.randrange(60))
        a = r + datetime.timedelta(days=random.randrange(900))
        out["cinema.movies"].append({"_id": ObjectId(), "movie title": "movie %d" % i,
                                     "released": "%s %02d %d" % (MON[r.month - 1], r.day, r.year),
                                     "opened": "%s %d %d" % (MON[o.month - 1], o.day, o.year),
                                     "added": "%02d/%02d/%d" % (a.month, a.day, a.year)})
    out["markets.prices"] = []
    for s in range(20):
        for m in range(120):
            out["markets.prices"].append({"_id": ObjectId(), "symbol": "SYM%02d" % s,
                                          "day": datetime.datetime(2000 + m // 12, 1 + m % 12, 1),
                                          "close": round(random.uniform(10, 90), 2)})
    out["school.students"] = [{"_id": i, "name": "student %d" % i} for i in range(1, 201)]
    out["school.courses"] = [{"_id": i, "title": "course %d" % i} for i in range(1, 41)]
    out["school.enrolments"] = []
    n = 0
    for s in range(1, 201):
        for c in random.sample(range(1, 41), random.randint(1, 6)):
            n += 1
            out["school.enrolments"].append({"_id": n, "studentId": s, "courseId": c})
    rmlib.write_dump(sys.argv[1], out)


main()
