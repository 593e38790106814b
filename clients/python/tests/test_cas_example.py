"""examples/cas.py: the compare-and-set loop a README shows whole. Its
update is held to what it promises with another writer made to win the
first round, and the script runs as an embedder would run it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import unittest

from .support import DENY_ALL, HERE, Home, arca_bin

EXAMPLE = HERE.parent / "examples" / "cas.py"
REF = "arca://app/keys"


def load_example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("cas_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class CasExampleTest(unittest.TestCase):
    def setUp(self) -> None:
        self.home = Home()
        self.addCleanup(self.home.cleanup)
        self.c = self.home.start()
        self.addCleanup(self.c.close)
        self.c.put(REF, "key-a")
        self.update = load_example().update

    def test_a_write_between_read_and_put_is_kept(self) -> None:
        calls = []

        def change(value):  # type: ignore[no-untyped-def]
            calls.append(value.reveal())
            if len(calls) == 1:  # another writer, between this get and this put
                self.c.put(REF, value.reveal() + "\nkey-b")
            return value.reveal() + "\nkey-c"

        put = self.update(self.c, REF, change)
        self.assertEqual(calls, ["key-a", "key-a\nkey-b"])
        self.assertEqual(put.version, 3)
        self.assertEqual(self.c.get(REF).value.reveal(), "key-a\nkey-b\nkey-c")

    def test_it_gives_up_after_its_tries(self) -> None:
        def always_late(value):  # type: ignore[no-untyped-def]
            self.c.put(REF, value.reveal() + "\nother")
            return "never-written"

        with self.assertRaises(RuntimeError) as cm:
            self.update(self.c, REF, always_late, tries=3)
        self.assertNotIn("never-written", str(cm.exception))
        self.assertEqual(self.c.get(REF).version, 4)

    def test_the_script_appends_a_line(self) -> None:
        # The config it pins, and where it runs an arca.toml whose PDP
        # denies everything, which serve must not read.
        os.makedirs(os.path.join(self.home.dir, ".config", "arca"), exist_ok=True)
        with open(os.path.join(self.home.dir, ".config", "arca", "arca.toml"), "w"):
            pass
        cwd = os.path.join(self.home.dir, "elsewhere")
        os.mkdir(cwd)
        with open(os.path.join(cwd, "arca.toml"), "w") as f:
            f.write(DENY_ALL)
        env = {"HOME": self.home.dir, "PYTHONPATH": str(HERE.parent),
               "PATH": os.path.dirname(arca_bin()) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")}
        p = subprocess.run([sys.executable, str(EXAMPLE), REF], env=env, cwd=cwd,
                           input=b"key-d\n", capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        self.assertEqual(p.stdout, b"version 2\n")
        self.assertEqual(self.c.get(REF).value.reveal(), "key-a\nkey-d")

    def test_it_is_short_and_the_readme_shows_it_whole(self) -> None:
        text = EXAMPLE.read_text()
        self.assertLessEqual(len(text.splitlines()), 30)
        self.assertIn("```python\n" + text + "```\n", (HERE.parent / "README.md").read_text())


if __name__ == "__main__":
    unittest.main()
