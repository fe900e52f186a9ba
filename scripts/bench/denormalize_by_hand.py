#!/usr/bin/env python3
"""By hand: copy logging.hosts.ipaddr into logging.logmsg as host_ip (scripts/bench/denormalize.json)."""
import bson
from by_hand_common import args, copy_untouched, read, writer

src, dst = args()
copy_untouched(src, dst, {"logging.logmsg"})
ip = {}
for h in read(src, "logging.hosts"):
    ip.setdefault(h["_id"], h.get("ipaddr"))
with writer(dst, "logging.logmsg") as out:
    for m in read(src, "logging.logmsg"):
        if m.get("host") in ip:
            m["host_ip"] = ip[m["host"]]
        out.write(bson.encode(m))
