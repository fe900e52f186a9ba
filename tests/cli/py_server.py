"""The suites' pymongo scripts, run without a python3 launch each.

lib.sh's `py` started a python3 per check, and most of that time is the
interpreter's start and pymongo's import (about a third of a second on an
idle 2-core machine, seconds under load, tens of times per suite). This
process imports them once, then forks a child per request, so each script
still runs alone, as `python3 -c` would run it: its own process, its own
client, its exit status, os._exit and all. Two differences: its stdin is
/dev/null, and its client is not closed at the end (below).

    python3 py_server.py DIR OWNER

DIR/in is a FIFO of request directories, one path a line. Each holds
one of code (a script run after lib.sh's prelude: its client on argv's
first), plain (a script, as python3 -c runs it) or script (a file's path,
as python3 PATH runs it); argv (sys.argv[1:], each ended by a NUL byte), cwd, env (`env -0`) and done, a FIFO the client holds open. The child runs code
with its stdout and stderr in the files out and err there; once it has
ended, this process writes its exit status and a newline to done. It ends
when OWNER (the suite's shell) has or DIR is gone. Once listening, it
writes its pid to DIR/ready.
"""

import gc
import os
import select
import signal
import sys
import threading
import traceback

import datetime  # noqa: F401  imported for the scripts, as lib.sh's prelude did
import json  # noqa: F401
import random  # noqa: F401
import pymongo

PRELUDE_NAMES = ("sys", "random", "json", "datetime", "pymongo")


KINDS = ("code", "plain", "script")


def read_request(d):
    kind = next(k for k in KINDS if os.path.exists(os.path.join(d, k)))
    with open(os.path.join(d, kind)) as f:
        text = f.read()
    with open(os.path.join(d, "argv"), "rb") as f:
        argv = [a.decode("utf-8", "surrogateescape") for a in f.read().split(b"\0")[:-1]]
    with open(os.path.join(d, "cwd")) as f:
        cwd = f.read().rstrip("\n")
    env = {}
    with open(os.path.join(d, "env"), "rb") as f:
        for item in f.read().split(b"\0"):
            k, eq, v = item.partition(b"=")
            if eq:
                env[k.decode("utf-8", "surrogateescape")] = v.decode("utf-8", "surrogateescape")
    return kind, text, argv, cwd, env


def child(d):
    """Runs in the forked process: never returns."""
    status = 1
    scope = {}
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as python3 starts
        fd = os.open("/dev/null", os.O_RDONLY)
        os.dup2(fd, 0)
        os.close(fd)
        for n, name in ((1, "out"), (2, "err")):
            fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, n)
            os.close(fd)
        kind, text, argv, cwd, env = read_request(d)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        scope = {"__name__": "__main__", "__builtins__": __builtins__}
        if kind == "script":
            # python3 SCRIPT: its directory first on the path.
            sys.argv = [text] + argv
            sys.path[0] = os.path.dirname(os.path.realpath(text))
            scope["__file__"] = text
            with open(text, "rb") as f:
                text = f.read()
            name = sys.argv[0]
        else:
            sys.argv = ["-c"] + argv
            sys.path[0] = ""  # python3 -c's first entry: the working directory
            name = "<string>"
        # A PYTHONPATH the suite exported after this server started.
        for entry in reversed(env.get("PYTHONPATH", "").split(os.pathsep)):
            if entry and entry not in sys.path:
                sys.path.insert(1, entry)
        if kind == "code":
            for module in PRELUDE_NAMES:
                scope[module] = sys.modules[module]
            scope["c"] = pymongo.MongoClient(argv[0], directConnection=True, serverSelectionTimeoutMS=10000)
        try:
            exec(compile(text, name, "exec"), scope)
            status = 0
        except SystemExit as e:
            if e.code is None:
                status = 0
            elif isinstance(e.code, int):
                status = e.code & 0xFF
            else:
                print(e.code, file=sys.stderr)
                status = 1
        except BaseException:
            traceback.print_exc()
            status = 1
    except BaseException:
        traceback.print_exc()
    # The interpreter's exit, less the client's close: python3 -c waits for
    # the script's own threads and closes its files (flushing them), but
    # pymongo's close takes half a second (its monitors joined) and does
    # nothing a test sees: the server drops the connections when the
    # process ends, and every write was acknowledged before it returned.
    try:
        for t in threading.enumerate():
            if t is not threading.main_thread() and not t.daemon:
                t.join()
        scope.clear()
        gc.collect()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        traceback.print_exc()
        status = status or 1
    os._exit(status)


def main():
    d, owner = sys.argv[1], int(sys.argv[2])
    fifo = os.path.join(d, "in")
    # Read and write: the FIFO never reads as ended between two clients.
    rfd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    with open(os.path.join(d, "ready.new"), "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(os.path.join(d, "ready.new"), os.path.join(d, "ready"))
    running = {}  # child pid -> request directory
    pending = b""
    while True:
        try:
            ready, _, _ = select.select([rfd, wake_r], [], [], 1.0)
        except InterruptedError:
            ready = []
        if wake_r in ready:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
        if rfd in ready:
            try:
                pending += os.read(rfd, 65536)
            except BlockingIOError:
                pass
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                req = line.decode("utf-8", "surrogateescape")
                sys.stdout.flush()
                pid = os.fork()
                if pid == 0:
                    os.close(rfd)
                    child(req)
                running[pid] = req
        while running:
            try:
                pid, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            req = running.pop(pid, None)
            if req is None:
                continue
            rc = os.waitstatus_to_exitcode(st)
            rc = 128 - rc if rc < 0 else rc  # killed by a signal: as bash says it
            # Not blocking: the client holds done open before it asks;
            # no reader is a client gone.
            try:
                fd = os.open(os.path.join(req, "done"), os.O_WRONLY | os.O_NONBLOCK)
                os.write(fd, b"%d\n" % rc)
                os.close(fd)
            except OSError:
                pass
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        if not os.path.exists(fifo):
            return


if __name__ == "__main__":
    main()
