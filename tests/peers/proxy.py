#!/usr/bin/env python3
"""A TCP proxy on loopback between remodel and a test server, that slows
it down or cuts it off at a chosen command (standard library only).

    proxy.py UPSTREAM_PORT PORT_FILE [--delay-file FILE]
             [--cut COMMAND:COLLECTION:N [--having FIELD]
              [--mode unsent|unanswered] [--down SECONDS]]

Listens on 127.0.0.1 on a free port (written to PORT_FILE once it
accepts connections) and forwards every connection to 127.0.0.1:
UPSTREAM_PORT, wire message by wire message.

--delay-file FILE: each message a client sends waits FILE's number of
  milliseconds first (read again for every message, so a test changes
  the delay while a run goes on; a missing or empty file: none), so every
  round trip takes that much longer (tests/cli/test_online_throttle.sh).
--cut COMMAND:COLLECTION:N: the Nth command COMMAND (an OP_MSG whose
  body's first key is COMMAND; a getMore's COLLECTION is its
  "collection") on COLLECTION (a trailing * takes every
  collection so beginning) "stops the server": every connection is
  closed and the line "dropped every connection at COMMAND N (MODE) on
  COLLECTION" printed (tests/cli/test_online_faults.sh,
  test_online_lost_write.sh). With --having FIELD only commands whose
  filter holds FIELD count (a join's partners fetched). --mode unsent
  (the default): that command is never sent, as a server stopping does
  to one it had not read; unanswered: it is sent, done by the server, and
  its reply dropped. --down SECONDS: new connections are closed for that
  long after the cut, as a restarting server's would be.

Ends with its parent's SIGTERM."""
import argparse
import os
import socket
import struct
import threading
import time

OP_MSG = 2013
# Bytes of a BSON value after its key, by type, where that is fixed.
FIXED = {0x01: 8, 0x06: 0, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8,
         0x12: 8, 0x13: 16, 0x7F: 0, 0xFF: 0}


def value_size(doc, t, i):
    if t in FIXED:
        return FIXED[t]
    if t in (0x02, 0x0D, 0x0E):  # string, code, symbol
        return 4 + struct.unpack_from("<i", doc, i)[0]
    if t in (0x03, 0x04, 0x0F):  # document, array, code with scope
        return struct.unpack_from("<i", doc, i)[0]
    if t == 0x05:  # binary: length, subtype, bytes
        return 5 + struct.unpack_from("<i", doc, i)[0]
    if t == 0x0B:  # regex: two C strings
        j = doc.index(b"\0", i) + 1
        return doc.index(b"\0", j) + 1 - i
    if t == 0x0C:  # DBPointer: string, ObjectId
        return 4 + struct.unpack_from("<i", doc, i)[0] + 12
    raise ValueError("BSON type %d" % t)


def elements(doc):
    """(type, key, value bytes) of a BSON document's top level."""
    i, end = 4, len(doc) - 1
    while i < end:
        t = doc[i]
        k = doc.index(b"\0", i + 1)
        key = doc[i + 1:k].decode("utf-8", "replace")
        i = k + 1
        n = value_size(doc, t, i)
        yield t, key, doc[i:i + n]
        i += n


def command(m):
    """The body of an OP_MSG as (name, collection, its filter's keys), or None."""
    if len(m) < 26 or struct.unpack_from("<i", m, 12)[0] != OP_MSG or m[20] != 0:
        return None
    try:
        body = m[21:21 + struct.unpack_from("<i", m, 21)[0]]
        els = list(elements(body))
        if not els:
            return None
        t, name, v = els[0]
        coll = v[4:-1].decode("utf-8", "replace") if t == 0x02 else None
        keys = set()
        for t, k, v in els:
            if k == "filter" and t == 0x03:
                keys = {key for _, key, _ in elements(v)}
            # A getMore names its cursor first, its collection after.
            if k == "collection" and t == 0x02 and name == "getMore":
                coll = v[4:-1].decode("utf-8", "replace")
        return name, coll, keys
    except (ValueError, struct.error, IndexError):
        return None


def exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b


def message(s):
    h = exact(s, 16)
    return h + exact(s, struct.unpack_from("<i", h)[0] - 16)


def close(*ss):
    for s in ss:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def delay_ms(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


class Proxy:
    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.seen = 0
        self.until = 0.0
        self.socks = set()
        if a.cut:
            self.cmd, self.coll, n = a.cut.rsplit(":", 2)
            self.nth = int(n)

    def trips(self, m):
        """Whether m is the Nth command --cut names."""
        if not self.a.cut:
            return False
        c = command(m)
        if c is None or c[0] != self.cmd or c[1] is None:
            return False
        name, coll, keys = c
        if self.coll.endswith("*"):
            if not coll.startswith(self.coll[:-1]):
                return False
        elif coll != self.coll:
            return False
        if self.a.having and self.a.having not in keys:
            return False
        with self.lock:
            self.seen += 1
            return self.seen == self.nth

    def drop_all(self):
        with self.lock:
            self.until = time.time() + self.a.down
            socks = list(self.socks)
        close(*socks)
        print("dropped every connection at %s %d (%s) on %s"
              % (self.cmd, self.nth, self.a.mode, self.coll), flush=True)

    def client_side(self, cli, srv, pending):
        try:
            while True:
                m = message(cli)
                if self.a.delay_file:
                    ms = delay_ms(self.a.delay_file)
                    if ms > 0:
                        time.sleep(ms / 1000.0)
                if self.trips(m):
                    if self.a.mode == "unsent":
                        return self.drop_all()
                    # its reply, by requestID, is the one server_side drops
                    pending.append(struct.unpack_from("<i", m, 4)[0])
                srv.sendall(m)
        except (EOFError, OSError):
            pass
        self.forget(cli, srv)

    def server_side(self, srv, cli, pending):
        try:
            while True:
                m = message(srv)
                if pending and struct.unpack_from("<i", m, 8)[0] in pending:
                    return self.drop_all()
                cli.sendall(m)
        except (EOFError, OSError):
            pass
        self.forget(cli, srv)

    def forget(self, *ss):
        close(*ss)
        with self.lock:
            self.socks.difference_update(ss)

    def serve(self):
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", 0))
        ls.listen(64)
        tmp = self.a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(ls.getsockname()[1]))
        os.rename(tmp, self.a.port_file)
        while True:
            cli, _ = ls.accept()
            if time.time() < self.until:
                close(cli)
                continue
            srv = socket.create_connection(("127.0.0.1", self.a.upstream))
            for s in (cli, srv):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.socks.update((cli, srv))
            pending = []
            threading.Thread(target=self.client_side, args=(cli, srv, pending), daemon=True).start()
            threading.Thread(target=self.server_side, args=(srv, cli, pending), daemon=True).start()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("upstream", type=int)
    p.add_argument("port_file")
    p.add_argument("--delay-file")
    p.add_argument("--cut", help="COMMAND:COLLECTION:N")
    p.add_argument("--having", help="FIELD")
    p.add_argument("--mode", choices=("unsent", "unanswered"), default="unsent")
    p.add_argument("--down", type=float, default=0.0, help="SECONDS")
    Proxy(p.parse_args()).serve()


if __name__ == "__main__":
    main()
