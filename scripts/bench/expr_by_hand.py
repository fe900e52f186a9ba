#!/usr/bin/env python3
"""By hand: scripts/bench/expr.json's $set over a mongodump archive, archive
to archive, as a user with pymongo's bson module would write it: the
documents of crm.tasks with done false are decoded, given the ten fields
and encoded again, every other document is copied as it is
(archive_by_hand.py). Usage: expr_by_hand.py SRC.archive DST.archive"""
import datetime
import sys

from archive_by_hand import double_string, rewrite

EPOCH = datetime.datetime(1970, 1, 1)


def to_date(s):
    # what {"$toDate": "$due_s"} does with $dateToString's default format
    # ("2014-04-01T00:00:00.000Z"); null stays null
    if s is None:
        return None
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")


def change(d):
    if d.get("done") is not False:
        return False
    p = d.get("priority")
    d["due"] = to_date(d.get("due_s"))
    d["label"] = "task: " + d["description"]
    d["urgency"] = "high" if isinstance(p, (int, float)) and p >= 3 else "normal"
    d["shout"] = d["description"].upper()
    d["prio"] = 0 if p is None else p
    d["cost"] = None if p is None else (p + 1) * 1.5
    due = d.get("due_date")
    d["day"] = None if due is None else due.strftime("%Y-%m-%d")
    weeks = None if due is None else (due - EPOCH) // datetime.timedelta(milliseconds=1) / 604800000
    d["weeks"] = None if weeks is None else double_string(weeks)
    d["weeks_r"] = None if weeks is None else round(weeks, 2)
    d["head"] = d["description"][:8]
    return True


if len(sys.argv) != 3:
    sys.exit("usage: expr_by_hand.py SRC.archive DST.archive")
rewrite(sys.argv[1], sys.argv[2], ("crm", "tasks"), change)
