#!/usr/bin/env python3
"""By hand: extract crm.people.addresses into crm.addresses (scripts/bench/extract.json)."""
import bson
from bson import ObjectId
from by_hand_common import args, copy_untouched, read, writer

src, dst = args()
copy_untouched(src, dst, {"crm.people"})
with writer(dst, "crm.people") as people, writer(dst, "crm.addresses") as addrs:
    for p in read(src, "crm.people"):
        arr = p.get("addresses")
        if isinstance(arr, list):
            del p["addresses"]
            for n, a in enumerate(arr):
                child = {"_id": a.get("_id", ObjectId())} if isinstance(a, dict) else {"_id": ObjectId(), "value": a}
                if isinstance(a, dict):
                    child.update((k, v) for k, v in a.items() if k != "_id")
                child["person_id"] = p["_id"]
                child["n"] = n
                addrs.write(bson.encode(child))
        people.write(bson.encode(p))
