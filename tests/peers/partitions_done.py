"""Waits until a plan's first pass has DONE partitions done, for the
partition suites (tests/cli/test_online_workers.sh,
test_online_partitioned.sh).

  python3 tests/peers/partitions_done.py URI PLAN DONE [PID]

PLAN is the plan's id (tests/cli/lib.sh's plan_id), its state in the
database remodel (the default). Polls remodel.partitions every 5 ms; once
DONE or more are done, kills PID with SIGKILL if given (here, at once: a
shell's kill after this returns would come a batch or more later) and
exits 0. Exits 3 after 60 s without.
"""
import os
import signal
import sys
import time

import pymongo

uri, plan, done = sys.argv[1], sys.argv[2], int(sys.argv[3])
pid = int(sys.argv[4]) if len(sys.argv) > 4 else 0
c = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
t0 = time.time()
while time.time() - t0 < 60:
    if c.remodel.partitions.count_documents({"plan": plan, "pass": 1, "state": "done"}) >= done:
        if pid:
            os.kill(pid, signal.SIGKILL)
        sys.exit(0)
    time.sleep(0.005)
sys.exit(3)
