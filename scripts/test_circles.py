#!/usr/bin/env python3
"""Tests of scripts/circles.py on small crates written to a temporary folder."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def crate(files):
    root = tempfile.mkdtemp()
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    return root


def run(root, *parents):
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "circles.py"), root, *parents],
        capture_output=True,
        text=True,
    )


class Circles(unittest.TestCase):
    def test_a_circle_through_use_lines_fails(self):
        root = crate({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\n",
            "b.rs": "use crate::a::A;\n",
        })
        out = run(root)
        self.assertEqual(out.returncode, 1)
        self.assertIn("a <-> b", out.stdout)

    def test_a_one_way_graph_passes(self):
        root = crate({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\n",
            "b.rs": "pub struct B;\n",
        })
        self.assertEqual(run(root).returncode, 0)

    def test_super_paths_braces_and_nested_levels(self):
        root = crate({
            "lib.rs": "mod x;\n",
            "x/mod.rs": "mod p;\nmod q;\n",
            "x/p.rs": "use super::{q::Q, other};\n",
            "x/q.rs": "fn f() { let _ = super::p::P; }\n",
        })
        out = run(root)
        self.assertEqual(out.returncode, 1)
        self.assertIn("under crate::x: p <-> q", out.stdout)

    def test_tests_and_comments_are_left_out(self):
        root = crate({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\n",
            "b.rs": "// see crate::a::A\n#[cfg(test)]\nmod tests { use crate::a::A; }\n",
            "b/tests.rs": "use crate::a::A;\n",
        })
        self.assertEqual(run(root).returncode, 0)


if __name__ == "__main__":
    unittest.main()
