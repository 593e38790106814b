"""The reading of a get's response in isolation, the two ways in turns: the
fast path (_fast.py, what a get's success in serve's shape takes) and the
general way (json, then the generated reader), each from the line to the
settled Future.

    python3 bench/decode.py [--rounds 5] [--lines 50000]

prints µs a line of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import Future
from typing import Any, Dict, List, Mapping, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arca_client import _wire  # noqa: E402
from arca_client._read import Policy  # noqa: E402
from arca_client.results import GetResult, read_get  # noqa: E402

LINE = (b'{"id":12345,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":'
        b'"s3cret-value-of-some-length-0123456789","version":1,"created_at":"2026-11-30T08:14:14.381353202Z",'
        b'"updated_at":"2026-11-30T08:14:14.381353202Z"}}\n')


def general(d: Mapping[str, Any], policy: Optional[Policy]) -> GetResult:
    """read_get under another name: the wire takes the fast path for read_get itself only."""
    return read_get(d, policy)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lines", type=int, default=50000)
    args = ap.parse_args()
    ways = {"fast": read_get, "general": general}
    got: Dict[str, List[float]] = {k: [] for k in ways}
    for _ in range(args.rounds):
        for name, read in ways.items():
            began = time.perf_counter()
            for _ in range(args.lines):
                fut: Future[Any] = Future()
                _wire._deliver((12345, fut, read), LINE)
            got[name].append((time.perf_counter() - began) * 1e6 / args.lines)
            if fut.result().version != 1:
                raise RuntimeError("a line read wrong")
    for name, xs in got.items():
        print(f"{name}: {statistics.median(xs):.2f} µs a line (median of {args.rounds}; {min(xs):.2f} to {max(xs):.2f})")


if __name__ == "__main__":
    main()
