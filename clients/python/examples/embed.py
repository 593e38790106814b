"""Spawn arca serve, get three secrets into an environment, close, and run
the command given (python3 embed.py CMD [ARG...]) with them."""

import os
import subprocess
import sys

from arca_client import Client

REFS = {"DB_PASSWORD": "arca://app/db", "API_KEY": "arca://app/api", "TOKEN": "arca://app/token"}

# serve gets only what it needs: where its vault is, and where binaries are;
# and its config pinned, so that it takes no arca.toml from the directory.
environ = {k: os.environ[k] for k in ("HOME", "PATH") if k in os.environ}
config = os.path.expanduser("~/.config/arca/arca.toml")
with Client.start("arca", config=config, environ=environ) as arca:
    secrets = arca.resolve(REFS)
child_env = dict(os.environ, **{name: s.reveal() for name, s in secrets.items()})
sys.exit(subprocess.run(sys.argv[1:], env=child_env).returncode)
