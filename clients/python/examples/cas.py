"""Append a line to a secret without losing another writer's change: read,
write with if_version, and on a Conflict read again (python3 cas.py REF < LINE)."""

import os
import sys

from arca_client import Client, Conflict


def update(arca, ref, change, tries=10):
    """Write change(value) over ref as of the version read; read again when another writer was first."""
    for _ in range(tries):
        got = arca.get(ref)
        try:
            return arca.put(ref, change(got.value), if_version=got.version)
        except Conflict:
            continue  # someone wrote ref since the get: change what they wrote
    raise RuntimeError(f"{ref} changed under each of {tries} tries")


if __name__ == "__main__":
    environ = {k: os.environ[k] for k in ("HOME", "PATH") if k in os.environ}
    config = os.path.expanduser("~/.config/arca/arca.toml")  # pinned: no arca.toml from the directory
    line = sys.stdin.read().rstrip("\n")  # a secret: never on the command line
    with Client.start("arca", config=config, environ=environ) as arca:
        put = update(arca, sys.argv[1], lambda v: v.reveal() + "\n" + line)
    print(f"version {put.version}")
