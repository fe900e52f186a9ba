#!/usr/bin/env python3
"""By hand: set schemaVersion: 2 and rename message -> msg in logging.logmsg (scripts/bench/field.json)."""
import bson
from by_hand_common import args, copy_untouched, read, writer

src, dst = args()
copy_untouched(src, dst, {"logging.logmsg"})
with writer(dst, "logging.logmsg") as out:
    for m in read(src, "logging.logmsg"):
        m["schemaVersion"] = 2
        if "message" in m:
            m["msg"] = m.pop("message")
        out.write(bson.encode(m))
