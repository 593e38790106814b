"""examples/embed.py, run as an embedder would: arca on PATH, a home
holding three secrets, a child that checks its environment."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

from .support import DENY_ALL, HERE, Home, arca_bin

EXAMPLE = HERE.parent / "examples" / "embed.py"
CHECK = '[ "$DB_PASSWORD" = "$1" ] && [ "$API_KEY" = "k-api-2" ] && [ "$TOKEN" = "t 3 with spaces" ] && [ "$KEPT" = yes ]'


class ExampleTest(unittest.TestCase):
    def setUp(self) -> None:
        # Home's own arca.toml, in the directory the example runs in, has a
        # PDP that denies everything: serve must not read it. The example
        # pins the user config.
        self.home = Home(DENY_ALL)
        self.addCleanup(self.home.cleanup)
        for ref, value in (("app/db", "pw-1"), ("app/api", "k-api-2"), ("app/token", "t 3 with spaces")):
            self.home.arca("put", "arca://" + ref, stdin=value)
        self.user_config = os.path.join(self.home.dir, ".config", "arca", "arca.toml")
        with open(self.user_config, "w"):
            pass

    def run_example(self, want_db: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
        env = {"HOME": self.home.dir, "KEPT": "yes", "PYTHONPATH": str(HERE.parent),
               "PATH": os.path.dirname(arca_bin()) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")}
        return subprocess.run([sys.executable, str(EXAMPLE), "sh", "-c", CHECK, "sh", want_db], env=env,
                              cwd=self.home.dir, capture_output=True, timeout=60)

    def test_the_child_gets_the_three_secrets(self) -> None:
        p = self.run_example("pw-1")
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        self.assertEqual(p.stdout, b"")

    def test_without_the_config_it_pins_it_does_not_start(self) -> None:
        os.remove(self.user_config)
        p = self.run_example("pw-1")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(b"does not exist", p.stderr)

    def test_a_wrong_value_fails_the_child(self) -> None:
        p = self.run_example("not-the-password")
        self.assertEqual(p.returncode, 1, p.stderr.decode(errors="replace"))

    def test_it_is_short_and_the_readme_shows_it_whole(self) -> None:
        with open(EXAMPLE) as f:
            text = f.read()
        self.assertLessEqual(len(text.splitlines()), 25)
        with open(HERE.parent / "README.md") as f:
            self.assertIn("```python\n" + text + "```\n", f.read())


if __name__ == "__main__":
    unittest.main()
