#!/usr/bin/env python3
"""Finds notes cited but never defined, and notes defined twice (issue 42).

Usage: notes.py [ROOT]   (default: the repository this script sits in)

Note [Notes]: a long design note is written once, as a comment paragraph
whose first line starts `Note [Name]` followed by `:` or nothing (in Rust
doc comments the brackets are escaped, `Note \\[Name\\]`), and is cited
everywhere else as `Note [Name]`, usually with where it lives ("see Note
[Name] in `feed`"). A paragraph starts a comment block or follows an empty
comment line. Every other mention is a citation, wherever it is: comments,
Markdown, a test's data (but not a string's text: a mention right after a
quote). A test that opens with the note it checks restates it: in test code
(under `tests/` or `benches/`, `tests.rs`, `*_tests.rs`, `test_*`, or after
`#[cfg(test)]`) such a paragraph defines the note only when the code does
not. The files read are the ones git tracks (text only, no snapshots); a
name may wrap over two comment lines. Prints each problem with its places
and exits 1 when there is one.
"""
import os
import re
import subprocess
import sys

# A comment line: its marker (`//`, `///`, `//!`, `#`, `--`, `/*`, ` *`) and its text.
COMMENT = re.compile(r"^\s*(///?!?|#+|--|/\*+|\*(?!/))\s?(.*)$")
NOTE = re.compile(r"Note\s+\\?\[((?:[^\]\\]|\\(?!\]))+?)\\?\]")
OWN = ("scripts/notes.py", "scripts/test_notes.py")
TEXT_SUFFIXES = (
    ".rs", ".py", ".sh", ".js", ".mjs", ".css", ".toml", ".md", ".sql", ".jsonl",
    ".json", ".html", ".yml", ".yaml", ".txt",
)


def files(root):
    out = subprocess.run(
        ["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    for name in out.split("\0"):
        # This script shows the forms and its tests make up notes: neither cites one.
        if name.endswith(TEXT_SUFFIXES) and "/snapshots/" not in name and name not in OWN:
            yield name


def name_of(raw):
    return " ".join(raw.replace("\\", "").split())


def blocks(lines):
    """Runs of lines with the same comment marker: (marker, [(line number, text)]).

    Lines that are no comment (code, prose, data) run together under the
    marker `None`: whatever they mention is cited.
    """
    block, marker = [], None
    for no, line in enumerate(lines, 1):
        m = COMMENT.match(line)
        mark, text = (m.group(1), m.group(2)) if m else (None, line)
        if block and mark != marker:
            yield marker, block
            block = []
        marker = mark
        block.append((no, text))
    if block:
        yield marker, block


def test_code_from(path, lines):
    """The first line number of test code in `path` (past the end: none)."""
    parts = path.split("/")
    if "tests" in parts[:-1] or "benches" in parts[:-1] or parts[-1] in ("tests.rs",) \
            or parts[-1].endswith("_tests.rs") or parts[-1].startswith("test_"):
        return 1
    for no, line in enumerate(lines, 1):
        if path.endswith(".rs") and line.strip() == "#[cfg(test)]":
            return no
    return len(lines) + 1


def scan(path, text, defined, cited):
    lines_of = text.splitlines()
    tests_from = test_code_from(path, lines_of)
    for marker, block in blocks(lines_of):
        joined = ""
        lines = []  # (offset in joined, line number, paragraph start, length)
        previous_empty = True
        for no, line in block:
            line = line.strip()
            lines.append((len(joined), no, previous_empty, len(line)))
            joined += line + " "
            previous_empty = not line
        for m in NOTE.finditer(joined):
            if m.start() > 0 and joined[m.start() - 1] in "\"'":
                continue  # a string's text (a test's data), not a mention
            name = name_of(m.group(1))
            offset, no, para, length = max(x for x in lines if x[0] <= m.start())
            after = joined[m.end() : offset + length].strip()
            heads = marker is not None and para and m.start() == offset
            if heads and (after == "" or after.startswith(":")):
                # A test opening with the note it checks restates it: a
                # definition only when the code defines it nowhere.
                kind = "test" if no >= tests_from else "code"
                defined.setdefault(name, []).append((kind, f"{path}:{no}"))
            else:
                cited.setdefault(name, []).append(f"{path}:{no}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    defined, cited = {}, {}
    for path in files(root):
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        if "Note" in text:
            scan(path, text, defined, cited)
    bad = False
    for name in sorted(set(cited) - set(defined)):
        bad = True
        print(f"Note [{name}] is cited but never defined: {', '.join(cited[name])}")
    for name, places in sorted(defined.items()):
        code = [p for kind, p in places if kind == "code"]
        if len(code) > 1:
            bad = True
            print(f"Note [{name}] is defined more than once: {', '.join(code)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
