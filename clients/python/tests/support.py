"""What the tests share: the arca binary, a fresh home, a fake serve.

The binary is $ARCA_BIN, or built once per run from the repository this
package sits in (``go build ./cmd/arca`` at its root), so the tests pass in
a fresh clone with Go installed.
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple
from unittest import mock

from arca_client import Client, Event, Secret
from arca_client import results as r

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent  # clients/python/tests -> the repository
FAKE = HERE / "fake_serve.py"
# A config whose PDP denies everything: serve must not read one where it runs.
DENY_ALL = '[serve.pdp]\nexec = "echo \'{\\"allow\\": false}\'"\n'

_built: Optional[str] = None
_lock = threading.Lock()


def arca_bin() -> str:
    """$ARCA_BIN, or arca built from the repository, once."""
    global _built
    if os.environ.get("ARCA_BIN"):
        return os.environ["ARCA_BIN"]
    with _lock:
        if _built is None:
            if not (REPO / "go.mod").is_file():
                raise RuntimeError(f"no go.mod at {REPO}: set ARCA_BIN to an arca binary")
            out = tempfile.mkdtemp(prefix="arca-client-py-")
            atexit.register(shutil.rmtree, out, True)
            path = os.path.join(out, "arca")
            subprocess.run(["go", "build", "-o", path, "./cmd/arca"], cwd=REPO, check=True)
            _built = path
        return _built


class Home:
    """A fresh HOME with an initialized vault and a config file."""

    def __init__(self, toml: str = "") -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="arca-home-")
        self.dir = self._tmp.name
        self.environ = {"HOME": self.dir, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self.arca("init")
        self.config = os.path.join(self.dir, "arca.toml")
        with open(self.config, "w") as f:
            f.write(toml)

    def arca(self, *args: str, stdin: str = "") -> str:
        p = subprocess.run([arca_bin(), *args], env=self.environ, input=stdin.encode(), capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(f"arca {args[0]}: exit {p.returncode}: {p.stderr.decode(errors='replace')}")
        return p.stdout.decode()

    def start(self, **kw: object) -> Client:
        kw.setdefault("config", self.config)
        kw.setdefault("environ", self.environ)
        kw.setdefault("cwd", self.dir)
        return Client.start(arca_bin(), **kw)  # type: ignore[arg-type]

    def vault_tmp(self) -> str:
        """Where the vault's temp file goes: a directory there makes the
        next commit fail after its event was written."""
        return os.path.join(self.dir, ".local", "share", "arca", "default.vault.tmp")

    def cleanup(self) -> None:
        self._tmp.cleanup()


# Two envs: default, initialized by Home, and ci, whose vault file was never
# created (its ops fail with op_error).
TWO_ENVS = """
[envs.default]
vault = "default"
[envs.ci]
vault = "ci"
[vaults.default]
kind = "file"
[vaults.ci]
kind = "file"
"""


# A PDP that takes 4 s to allow a request whose actor is "slow" (its
# timeout is 5 s), and allows the rest at once: the slow call is in flight
# while others pass.
SLOW_FOR_SLOW = (
    '[serve.pdp]\nexec = "read r; case \\"$r\\" in *\\"slow\\"*) sleep 4;; esac; echo \'{\\"allow\\": true}\'"\n'
)


def fake_binary(dirname: str, mode: str) -> str:
    """An executable that plays serve as tests/fake_serve.py does in mode."""
    path = os.path.join(dirname, "fake-arca")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {FAKE} {mode} \"$@\"\n")
    os.chmod(path, 0o755)
    return path


class Events:
    """An on_event that keeps what it was handed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: List[Event] = []
        self.errors: List[Tuple[Optional[Event], Exception]] = []

    def __call__(self, e: Optional[Event], err: Optional[Exception]) -> None:
        with self._lock:
            if e is not None:
                self.events.append(e)
            if err is not None:
                self.errors.append((e, err))

    def by_id(self) -> Dict[Any, List[str]]:
        out: Dict[Any, List[str]] = {}
        with self._lock:
            for e in self.events:
                if e.id is not None:
                    out.setdefault(e.id, []).append(f"{e.event}/{e.outcome}")
        return out


class GatedTestCase(unittest.TestCase):
    """A fake serve in its gated mode, whose get of arca://app/gated waits
    until the test opens the gate, and a record of the get results the
    client reads (their refs only: the record keeps no value). Every value
    the fake returns is ``canary``."""

    canary = "canary-gated-7f3a0c-never-kept"

    def setUp(self) -> None:
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        self.gate = os.path.join(d, "gate")
        self.addCleanup(self.open_gate)  # a failing test still lets the fake end
        self.c = Client.start(fake_binary(d, "gated"), environ={"FAKE_VALUE": self.canary, "FAKE_GATE": self.gate})
        self.addCleanup(self.c.close)
        self.read: List[str] = []
        real = r.read_get

        def recording(res: Mapping[str, Any], policy: Optional[r.Policy]) -> r.Got:
            self.read.append(res["ref"])
            return real(res, policy)

        patch = mock.patch.object(r, "read_get", recording)
        patch.start()
        self.addCleanup(patch.stop)

    def open_gate(self) -> None:
        with open(self.gate, "w"):
            pass

    def after_the_gate(self) -> None:
        """Open the gate and wait until serve answered all before it."""
        self.open_gate()
        self.assertEqual(self.c.manifest(timeout=30).protocol, "arca-serve/1")

    def secrets_alive(self) -> int:
        """How many Secrets holding the canary can still be reached."""
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is Secret and o.reveal() == self.canary)
