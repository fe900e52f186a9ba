#!/usr/bin/env python3
"""By hand: embed crm.tasks into crm.people (scripts/bench/embed.json)."""
from collections import defaultdict
import bson
from by_hand_common import args, copy_untouched, read, writer

src, dst = args()
copy_untouched(src, dst, {"crm.people", "crm.tasks"})
people_ids = set()
people = list(read(src, "crm.people"))
for p in people:
    people_ids.add(p["_id"])
children = defaultdict(list)
with writer(dst, "crm.tasks") as orphans:
    for t in read(src, "crm.tasks"):
        if t.get("owner") in people_ids:
            owner = t.pop("owner")
            children[owner].append(t)
        else:
            orphans.write(bson.encode(t))  # orphans stay in crm.tasks
with writer(dst, "crm.people") as out:
    for p in people:
        p["tasks"] = sorted(children.get(p["_id"], []), key=lambda c: c["_id"])
        out.write(bson.encode(p))
