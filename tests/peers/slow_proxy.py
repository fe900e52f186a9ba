#!/usr/bin/env python3
"""A TCP proxy on loopback that slows a server down, for the tests.

    slow_proxy.py TARGET_PORT PORT_FILE DELAY_FILE

Listens on 127.0.0.1 on a free port (written to PORT_FILE once it
accepts connections) and forwards every connection to 127.0.0.1:
TARGET_PORT. Each chunk a client sends waits DELAY_FILE's number of
milliseconds first (read again for every chunk, so a test changes the
delay while a run goes on; a missing or empty file: none), so every round
trip to the server takes that much longer. Ends with its parent's
SIGTERM."""
import os
import socket
import sys
import threading
import time


def delay_ms(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def pump(src, dst, delay_file):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if delay_file:
                ms = delay_ms(delay_file)
                if ms > 0:
                    time.sleep(ms / 1000.0)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    target, port_file, delay_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(tmp, port_file)
    while True:
        c, _ = ls.accept()
        s = socket.create_connection(("127.0.0.1", target))
        for sock in (c, s):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(c, s, delay_file), daemon=True).start()
        threading.Thread(target=pump, args=(s, c, None), daemon=True).start()


if __name__ == "__main__":
    main()
