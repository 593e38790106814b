"""Pipelined gets through the client beside the raw pipe, in one run.

    python3 bench/pipelined.py [--rounds 5] [--requests 20000]

Each round times three ways of getting one secret N times from serve:

    raw      serve spawned as the client spawns it (the same pipes and
             buffers), a burst of get lines written from a thread while the
             main thread reads the responses, stderr drained by a thread;
             nothing parsed
    threads  the client, from 64 threads calling get()
    futures  the client, from one thread: submit_get() N times, taking
             the results as they come

and prints req/s of each and the ratios to raw. Uses $ARCA_BIN, or builds
arca as the tests do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Callable, Deque, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arca_client import Got  # noqa: E402
from arca_client.client import PIPE_BUFFER  # noqa: E402
from tests.support import Home, arca_bin  # noqa: E402

REF = "arca://app/db"
LINE = b'{"id":1,"op":"get","ref":"arca://app/db"}\n'


def raw(home: Home, n: int) -> float:
    p = subprocess.Popen([arca_bin(), "serve", "--config", home.config], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=PIPE_BUFFER,
                         env=home.environ, cwd=home.dir)
    assert p.stdin and p.stdout and p.stderr
    drain = threading.Thread(target=lambda: [None for _ in iter(p.stderr.readline, b"")])  # type: ignore[union-attr]
    drain.start()
    burst = LINE * 1000

    def write() -> None:
        for left in range(n, 0, -1000):
            p.stdin.write(burst[: min(left, 1000) * len(LINE)])  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]

    began = time.perf_counter()
    writer = threading.Thread(target=write)
    writer.start()
    for _ in range(n):
        if not p.stdout.readline():
            raise RuntimeError("serve stopped answering")
    took = time.perf_counter() - began
    writer.join()
    p.stdin.close()
    p.wait()
    drain.join()
    p.stdout.close()
    p.stderr.close()
    return n / took


def threads(home: Home, n: int) -> float:
    with home.start() as c:
        per = n // 64

        def caller() -> None:
            for _ in range(per):
                c.get(REF)

        ts = [threading.Thread(target=caller) for _ in range(64)]
        began = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return per * 64 / (time.perf_counter() - began)


def futures(home: Home, n: int) -> float:
    with home.start() as c:
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
        return n / (time.perf_counter() - began)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=20000)
    args = ap.parse_args()
    home = Home()
    try:
        home.arca("put", REF, stdin="s3cret-value-of-some-length-0123456789")
        ways: Dict[str, Callable[[Home, int], float]] = {"raw": raw, "threads": threads, "futures": futures}
        got: Dict[str, List[float]] = {k: [] for k in ways}
        print(f"python {sys.version.split()[0]}, {args.requests} gets a round, {os.cpu_count()} cpus")
        for r in range(args.rounds):
            for name, way in ways.items():
                got[name].append(way(home, args.requests))
            print(f"round {r + 1}: " + "  ".join(f"{k} {v[-1]:9.0f} req/s" for k, v in got.items())
                  + f"  ratios {got['threads'][-1] / got['raw'][-1]:.3f} {got['futures'][-1] / got['raw'][-1]:.3f}")
        med = {k: statistics.median(v) for k, v in got.items()}
        print("median:  " + "  ".join(f"{k} {v:9.0f} req/s" for k, v in med.items()))
        # The median of each round's ratio: a busy machine slows a whole
        # round, so the ratio within a round is steadier than across them.
        for way in ("threads", "futures"):
            ratios = [a / b for a, b in zip(got[way], got["raw"])]
            print(f"ratio {way}/raw: {statistics.median(ratios):.3f} (median of the rounds' ratios)")
    finally:
        home.cleanup()


if __name__ == "__main__":
    main()
