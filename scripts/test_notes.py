#!/usr/bin/env python3
"""Tests of scripts/notes.py on small repositories made for each case."""
import os
import subprocess
import sys
import tempfile
import unittest

NOTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.py")


def run(files):
    """notes.py over a fresh git repository holding `files`: (exit code, output)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        subprocess.run(["git", "init", "-q", root], check=True)
        subprocess.run(["git", "-C", root, "add", "-A"], check=True)
        done = subprocess.run(
            [sys.executable, NOTES, root], capture_output=True, text=True, check=False
        )
        return done.returncode, done.stdout


DEFINED = "//! A module.\n//!\n//! Note [Ready]: what it means.\n"


class Notes(unittest.TestCase):
    def test_defined_and_cited_is_clean(self):
        code, out = run({
            "src/a.rs": DEFINED,
            "src/b.rs": "// Waits until ready (Note [Ready] in `a`).\nfn f() {}\n",
        })
        self.assertEqual((code, out), (0, ""))

    def test_cited_but_never_defined(self):
        code, out = run({"src/b.rs": "fn f() {} // see Note [Ready]\n"})
        self.assertEqual(code, 1)
        self.assertIn("Note [Ready] is cited but never defined: src/b.rs:1", out)

    def test_a_citation_starting_a_line_is_no_definition(self):
        # The name wraps onto the next line; the mention starts no paragraph.
        code, out = run({
            "src/b.rs": "/// Waits, as\n/// Note [Ready]: says.\n/// Note \\[Ready\n/// again\\] too.\n",
        })
        self.assertEqual(code, 1)
        self.assertIn("Note [Ready] is cited but never defined: src/b.rs:2", out)
        self.assertIn("Note [Ready again] is cited but never defined: src/b.rs:3", out)

    def test_a_note_defined_in_an_es_module_counts(self):
        # The npm package's tests and the wasm bench are `.mjs` files.
        code, out = run({
            "bench/b.mjs": "// Note [Timed to text]: why.\nconst x = 1;\n",
            "README.md": "Timed so (Note [Timed to text] in `bench/b.mjs`).\n",
        })
        self.assertEqual((code, out), (0, ""))

    def test_defined_twice(self):
        code, out = run({
            "src/a.rs": DEFINED,
            "src/c.rs": "fn g() {\n    // Note [Ready]: here too.\n}\n",
        })
        self.assertEqual(code, 1)
        self.assertIn("Note [Ready] is defined more than once: src/a.rs:3, src/c.rs:2", out)

    def test_escaped_brackets_and_other_comment_forms(self):
        code, out = run({
            "src/a.rs": "/// Note \\[Ready\\]: escaped for rustdoc.\nfn f() {}\n",
            "scripts/x.sh": "# Note [Shell]\n# a heading, its text below.\n",
            "assets/x.css": "/* Note [Ready] in a.rs, and Note [Shell] in x.sh. */\n",
        })
        self.assertEqual((code, out), (0, ""))

    def test_a_test_restating_its_note_is_no_second_definition(self):
        code, out = run({
            "src/a.rs": DEFINED + "#[cfg(test)]\nmod tests {\n    /// Note [Ready]: checked.\n    fn t() {}\n}\n",
            "tests/it.rs": "/// Note [Ready]: checked again.\nfn t() {}\n",
        })
        self.assertEqual((code, out), (0, ""))

    def test_prose_and_code_cite_too_but_a_string_is_data(self):
        code, out = run({
            "README.md": "Measured (Note [Gone\naway]).\n",
            "src/a.rs": 'fn f() { g("Note [x] first."); } // Note [Also gone]\n',
        })
        self.assertEqual(code, 1)
        self.assertIn("Note [Gone away] is cited but never defined: README.md:1", out)
        self.assertIn("Note [Also gone] is cited but never defined: src/a.rs:1", out)
        self.assertNotIn("[x]", out)

    def test_a_note_only_a_test_defines_is_defined(self):
        code, out = run({
            "tests/it.rs": "/// Note [Only here]: a test's own.\nfn t() {}\n// (Note [Only here])\n",
        })
        self.assertEqual((code, out), (0, ""))


if __name__ == "__main__":
    unittest.main()
