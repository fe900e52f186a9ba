#!/usr/bin/env python3
"""A small shop's database imported one table per collection, as a new
user's first migration looks (issue 51): integer keys as _id, foreign keys
as fields, dates, decimals and flags as the export wrote them (strings,
0/1), a join table with no key of its own, a manager hierarchy, and small
lookup tables. Writes a directory dump: relational_shop.py DIR

    shop.customers   60  supportRepId -> employees (3..5: also fits mediaTypes 1..5: a tie)
    shop.employees    8  reportsTo -> employees (a hierarchy of depth 2); active 0/1
    shop.orders     400  customerId -> customers; billingAddress equal to the
                         customer's address (same values, not a reference);
                         orderedAt "2007-01-01T00:00:00Z"; total "12.50"
    shop.orderLines      orderId -> orders (1..14 a line each order: the owner),
                         itemId -> items (referenced: the item's name copied)
    shop.items      300  categoryId -> categories, mediaTypeId -> mediaTypes (lookups)
    shop.categories  12  shop.mediaTypes 5  (lookups: a name each)
    shop.playlists   15  shop.playlistItems: playlistId, itemId and nothing else (a join)
"""
import os
import random
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
from bson import ObjectId  # noqa: E402

random.seed(51)
FIRST = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lou"]
LAST = ["Hart", "Ives", "Judd", "Kerr", "Lamb", "Moss", "Nash", "Orr", "Pike", "Rowe"]
CITIES = ["Lyon", "Oslo", "Lima", "Rome", "Kyiv", "Doha", "Baku", "Riga"]


def date(y, m, d):
    return "%04d-%02d-%02dT00:00:00Z" % (y, m, d)


def main():
    out = {}
    # Employees: 1 is the boss, 2..3 report to 1, 4..8 to 2 or 3.
    managers = {1: None, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3, 8: 3}
    out["shop.employees"] = [
        {"_id": i, "name": "%s %s" % (FIRST[i], LAST[i]), "title": "agent" if i > 3 else "manager",
         "reportsTo": managers[i], "hired": date(2002 + i % 3, 1 + i, 10), "active": 1 if i % 4 else 0}
        for i in range(1, 9)]
    out["shop.categories"] = [{"_id": i, "name": "category %d" % i} for i in range(1, 13)]
    out["shop.mediaTypes"] = [{"_id": i, "name": n} for i, n in
                              enumerate(["MPEG audio", "AAC audio", "video", "PDF", "vinyl"], 1)]
    out["shop.customers"] = []
    for i in range(1, 61):
        out["shop.customers"].append({
            "_id": i, "firstName": FIRST[i % 12], "lastName": LAST[i % 10],
            "email": "c%d@example.org" % i, "address": "%d %s Street" % (100 + i, LAST[i % 10]),
            "city": CITIES[i % 8], "supportRepId": 3 + i % 3, "since": date(2005 + i % 4, 1 + i % 12, 1 + i % 28),
            "vip": "Y" if i % 5 == 0 else "N"})
    out["shop.items"] = [{"_id": i, "name": "item %03d" % i, "categoryId": 1 + i % 12,
                          "mediaTypeId": 1 + i % 5, "unitPrice": 0.99 + (i % 3)} for i in range(1, 301)]
    out["shop.orders"], out["shop.orderLines"] = [], []
    line = 0
    for o in range(1, 401):
        c = out["shop.customers"][random.randrange(60)]
        # Most orders bill the customer's own address: equal strings, no reference.
        billing = c["address"] if random.random() < 0.9 else "%d Other Road" % o
        total = 0
        for k in range(random.randint(1, 14)):
            line += 1
            qty = random.randint(1, 3)
            item = random.randint(1, 240)  # items 241..300 never sold
            total += qty * 0.99
            out["shop.orderLines"].append({"_id": line, "orderId": o, "itemId": item,
                                           "unitPrice": 0.99, "quantity": qty})
        out["shop.orders"].append({"_id": o, "customerId": c["_id"], "orderedAt": date(2007 + o % 5, 1 + o % 12, 1 + o % 28),
                                   "billingAddress": billing, "billingCity": c["city"],
                                   "total": "%.2f" % total})
    out["shop.playlists"] = [{"_id": i, "name": "playlist %d" % i} for i in range(1, 16)]
    out["shop.playlistItems"] = []
    for p in range(1, 16):
        for item in random.sample(range(1, 301), random.randint(3, 25)):
            out["shop.playlistItems"].append({"_id": ObjectId(), "playlistId": p, "itemId": item})
    rmlib.write_dump(sys.argv[1], out)


main()
