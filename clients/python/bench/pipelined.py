"""Pipelined gets through the client beside the raw pipe, in one run.

    python3 bench/pipelined.py [--rounds 5] [--requests 20000]

Each round times three ways of getting one secret N times from serve:

    raw      serve spawned as the client spawns it (the same pipes and
             buffers), a burst of get lines written from a thread while the
             main thread reads the responses, stderr drained by a thread;
             each line has an id of its own and each response is matched
             to its request by the id it echoes, as the client must, and
             nothing else is parsed
    window   the same pipe kept at 64 requests in flight from one thread:
             as many lines written as a read of stdout answered; what 64
             callers can ask of serve with no client between
    threads  the client, from 64 threads calling get()
    futures  the client, from one thread: submit_get() N times, taking
             the results as they come

and prints req/s of each and the ratios to raw. Uses $ARCA_BIN, or builds
arca as the tests do. ``--before DIR``, a directory holding another
tree's arca_client package, times that client's threads and futures too,
in the same rounds (a before and after in one run).

On Linux it also prints what a get cost both sides in each turn, serve's
CPU time and this process's, and the raw turn's cost over each turn's: the
ratio of the rates when the machine's cores are all taken, which its other
work sways less.

A thread woken per call has a floor of its own, whatever the client:
``--floor`` adds a turn of 64 threads that each hand a lock to one thread
and wait for it back, with no pipe at all.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future
from types import ModuleType
from typing import Any, Callable, Deque, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arca_client import Got  # noqa: E402
from arca_client.client import PIPE_BUFFER  # noqa: E402
from tests.support import Home, arca_bin  # noqa: E402

REF = "arca://app/db"


def lines(first: int, k: int) -> bytes:
    """k get lines with the ids after first, each its own."""
    return b"".join(b'{"id":%d,"op":"get","ref":"arca://app/db"}\n' % i for i in range(first + 1, first + k + 1))


def answers(id: int, line: bytes) -> bool:
    """Whether line is the response to request id, by the id it echoes."""
    return line[6:line.index(b",", 6)] == b"%d" % id


class ServeCPU:
    """The CPU time serve ran between start and stop, every thread's, in
    µs, from Linux's /proc/PID/task/*/schedstat; 0 where there is none."""

    def __init__(self) -> None:
        self.used = 0.0
        self._pid = 0
        self._at = 0.0

    @staticmethod
    def _now(pid: int) -> float:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
            total = 0
            for t in tasks:
                with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
            return total / 1000
        except (OSError, ValueError, IndexError):
            return 0.0

    def start(self, pid: int) -> None:
        self._pid, self._at = pid, self._now(pid)

    def stop(self) -> None:
        now = self._now(self._pid)
        self.used = now - self._at if now and self._at else 0.0


serve_cpu = ServeCPU()


def spawn(home: Home) -> "subprocess.Popen[bytes]":
    return subprocess.Popen([arca_bin(), "serve", "--config", home.config], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=PIPE_BUFFER,
                            env=home.environ, cwd=home.dir)


def raw(home: Home, n: int) -> float:
    p = spawn(home)
    assert p.stdin and p.stdout and p.stderr
    drain = threading.Thread(target=lambda: [None for _ in iter(p.stderr.readline, b"")])  # type: ignore[union-attr]
    drain.start()

    def write() -> None:
        for sent in range(0, n, 1000):
            p.stdin.write(lines(sent, min(n - sent, 1000)))  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]

    serve_cpu.start(p.pid)
    began = time.perf_counter()
    writer = threading.Thread(target=write)
    writer.start()
    for i in range(1, n + 1):
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("serve stopped answering")
        if not answers(i, line):
            raise RuntimeError(f"response {i} answers another request")
    took = time.perf_counter() - began
    serve_cpu.stop()
    writer.join()
    stop(p, drain)
    return n / took


def stop(p: "subprocess.Popen[bytes]", drain: threading.Thread) -> None:
    """Ends a raw turn's serve: its input closed, its exit and its stderr's drain waited for."""
    assert p.stdin and p.stdout and p.stderr
    p.stdin.close()
    p.wait()
    drain.join()
    p.stdout.close()
    p.stderr.close()


def window(home: Home, n: int) -> float:
    p = spawn(home)
    assert p.stdin and p.stdout and p.stderr
    drain = threading.Thread(target=lambda: [None for _ in iter(p.stderr.readline, b"")])  # type: ignore[union-attr]
    drain.start()
    fd = p.stdout.fileno()
    serve_cpu.start(p.pid)
    began = time.perf_counter()
    sent = min(64, n)
    p.stdin.write(lines(0, sent))
    p.stdin.flush()
    seen = 0
    rest = b""  # a line begun in the chunk before
    while seen < n:
        chunk = os.read(fd, PIPE_BUFFER)
        if not chunk:
            raise RuntimeError("serve stopped answering")
        got = (rest + chunk).split(b"\n")
        rest = got.pop()
        for line in got:
            seen += 1
            if not answers(seen, line):
                raise RuntimeError(f"response {seen} answers another request")
        k = min(seen + 64 - sent, n - sent)
        if k > 0:
            p.stdin.write(lines(sent, k))
            p.stdin.flush()
            sent += k
    took = time.perf_counter() - began
    serve_cpu.stop()
    stop(p, drain)
    return n / took


def floor(home: Home, n: int) -> float:
    queue: Deque[threading.Lock] = deque()
    ready = threading.Condition()

    def dispatch() -> None:
        while True:
            with ready:
                while not queue:
                    ready.wait()
                batch = list(queue)
                queue.clear()
            for lock in batch:
                if lock is None:
                    return
                lock.release()

    def caller() -> None:
        for _ in range(per):
            lock = threading.Lock()
            lock.acquire()
            with ready:
                queue.append(lock)
                ready.notify()
            lock.acquire()

    per = n // 64
    d = threading.Thread(target=dispatch)
    d.start()
    ts = [threading.Thread(target=caller) for _ in range(64)]
    began = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    took = time.perf_counter() - began
    with ready:
        queue.append(None)  # type: ignore[arg-type]
        ready.notify()
    d.join()
    return per * 64 / took


def threads(home: Home, n: int, start: Any = None) -> float:
    with (start or home.start)() as c:
        per = n // 64

        def caller() -> None:
            for _ in range(per):
                c.get(REF)

        ts = [threading.Thread(target=caller) for _ in range(64)]
        serve_cpu.start(c.pid)
        began = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        took = time.perf_counter() - began
        serve_cpu.stop()
        return per * 64 / took


def futures(home: Home, n: int, start: Any = None) -> float:
    with (start or home.start)() as c:
        serve_cpu.start(c.pid)
        began = time.perf_counter()
        # As a pipelining caller would: the results taken as they come, a
        # window's worth of futures held.
        held: Deque[Future[Got]] = deque()
        for _ in range(n):
            held.append(c.submit_get(REF))
            if len(held) > 512:
                held.popleft().result()
        while held:
            held.popleft().result()
        took = time.perf_counter() - began
        serve_cpu.stop()
        return n / took


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def before_client(where: str) -> ModuleType:
    """The arca_client package in directory where, imported under another
    name: its modules import each other relatively."""
    sys.path.insert(0, os.path.abspath(where))
    try:
        spec = importlib.util.spec_from_file_location(
            "arca_client_before", os.path.join(where, "arca_client", "__init__.py"),
            submodule_search_locations=[os.path.join(where, "arca_client")])
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules["arca_client_before"] = mod
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.pop(0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--before", help="a directory holding another tree's arca_client, timed too")
    ap.add_argument("--floor", action="store_true", help="add the turn of 64 threads handing a lock each way")
    args = ap.parse_args()
    home = Home()
    try:
        home.arca("put", REF, stdin="s3cret-value-of-some-length-0123456789")
        ways: Dict[str, Callable[[Home, int], float]] = {"raw": raw, "window": window, "threads": threads,
                                                         "futures": futures}
        if args.before:
            old = before_client(args.before)

            def start() -> Any:
                return old.Client.start(arca_bin(), config=home.config, environ=home.environ, cwd=home.dir)

            ways["threads-before"] = lambda h, n: threads(h, n, start)
            ways["futures-before"] = lambda h, n: futures(h, n, start)
        if args.floor:
            ways["floor"] = floor
        got: Dict[str, List[float]] = {k: [] for k in ways}
        print(f"python {sys.version.split()[0]}, {args.requests} gets a round, {os.cpu_count()} cpus")
        # This process's CPU time (every thread's) per get of each turn, in
        # µs: the client's own cost, which a busy machine sways less.
        cpu: Dict[str, List[float]] = {k: [] for k in ways}
        # Both sides' CPU time per get, serve's and this process's (Linux):
        # the ratio of the rates when the machine's cores are all taken.
        cost: Dict[str, List[float]] = {}
        clients = [k for k in ways if k not in ("raw", "window")]
        for r in range(args.rounds):
            # The clients' turns swap places each round: none always
            # follows the raw turns.
            for name in ["raw", "window"] + (clients if r % 2 == 0 else clients[::-1]):
                way = ways[name]
                used = _cpu()
                serve_cpu.used = 0.0
                got[name].append(way(home, args.requests))
                cpu[name].append((_cpu() - used) * 1e6 / args.requests)
                if serve_cpu.used:
                    cost.setdefault(name, []).append(cpu[name][-1] + serve_cpu.used / args.requests)
            print(f"round {r + 1}: raw {got['raw'][-1]:.0f} req/s  "
                  + "  ".join(f"{k} {v[-1]:.0f} ({v[-1] / got['raw'][-1]:.2f})" for k, v in got.items() if k != "raw"))
        med = {k: statistics.median(v) for k, v in got.items()}
        print("median:  " + "  ".join(f"{k} {v:.0f} req/s" for k, v in med.items()))
        # The median of each round's ratio: a busy machine slows a whole
        # round, so the ratio within a round is steadier than across them.
        for way in ways:
            if way != "raw":
                ratios = sorted(a / b for a, b in zip(got[way], got["raw"]))
                print(f"ratio {way}/raw: {statistics.median(ratios):.3f} (median of the rounds' ratios;"
                      f" {ratios[0]:.2f} to {ratios[-1]:.2f}); {statistics.median(cpu[way]):.1f} µs of CPU a get here")
        if len(cost.get("raw", [])) == args.rounds:
            for way, costs in cost.items():
                if len(costs) == args.rounds:
                    ratios = sorted(a / b for a, b in zip(cost["raw"], costs))
                    print(f"cost {way}: {statistics.median(costs):.1f} µs of CPU a get, serve's and this process's;"
                          f" raw-cost/{way}-cost {statistics.median(ratios):.3f} ({ratios[0]:.2f} to {ratios[-1]:.2f})")
    finally:
        home.cleanup()


if __name__ == "__main__":
    main()
