#!/usr/bin/env python3
"""Regenerate crates/core/src/secrets/rules.toml from gitleaks' default config.

Usage: scripts/secrets-rules-from-gitleaks.py GITLEAKS_TOML COMMIT > crates/core/src/secrets/rules.toml

GITLEAKS_TOML is `config/gitleaks.toml` of https://github.com/gitleaks/gitleaks at COMMIT.
Rules are copied verbatim (id, description, regex, secretGroup, entropy, keywords,
allowlists); only what cannot apply to transcript text is left out (see OMITTED below).
The rules agentshape adds itself are kept in AGENTSHAPE_RULES at the end of this script.
"""
import json
import sys
import tomllib

src, commit = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    cfg = tomllib.load(f)

# Rules gated on a file path: transcripts have no file path, so gitleaks would never
# run them on this text; running them unconditionally would change their meaning.
PATH_RULES = {r["id"] for r in cfg["rules"] if "path" in r}


def lit(s):
    assert "'''" not in s and not s.endswith("'"), s
    return "'''" + s + "'''"


def basic(s):
    return json.dumps(s, ensure_ascii=False)


def allowlist(a, header):
    out = []
    # Allowlists that need a path (OR: the path half never matches; AND: the whole
    # list never matches) are equivalent to nothing on path-less text.
    if a.get("paths") and (a.get("condition") == "AND" or not (a.get("regexes") or a.get("stopwords"))):
        return out
    out.append(header)
    if "description" in a:
        out.append(f"description = {basic(a['description'])}")
    if "regexTarget" in a:
        out.append(f"regexTarget = {basic(a['regexTarget'])}")
    if a.get("regexes"):
        out.append("regexes = [")
        out += [f"    {lit(x)}," for x in a["regexes"]]
        out.append("]")
    if a.get("stopwords"):
        out.append("stopwords = [")
        words = a["stopwords"]
        for i in range(0, len(words), 8):
            out.append("    " + " ".join(basic(w) + "," for w in words[i : i + 8]))
        out.append("]")
    return out


print(f"""\
# Secret rules of agentshape (crates/core/src/secrets): credential shapes masked in
# everything agentshape stores, prints, serves and exports.
#
# Derived from gitleaks' default configuration, config/gitleaks.toml of
# https://github.com/gitleaks/gitleaks at commit {commit},
# used under the MIT License:
#
#   MIT License
#
#   Copyright (c) 2019 Zachary Rice
#
#   Permission is hereby granted, free of charge, to any person obtaining a copy
#   of this software and associated documentation files (the "Software"), to deal
#   in the Software without restriction, including without limitation the rights
#   to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
#   copies of the Software, and to permit persons to whom the Software is
#   furnished to do so, subject to the following conditions:
#
#   The above copyright notice and this permission notice shall be included in all
#   copies or substantial portions of the Software.
#
#   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
#   IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
#   FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
#   AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
#   LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
#   OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
#   SOFTWARE.
#
# Regenerate with scripts/secrets-rules-from-gitleaks.py (it holds agentshape's own rules too).
#
# Format (the same for a user's rule file, which replaces rules of the same id, adds
# new ids, and removes the ids listed in a top-level `disabled = ["id", ...]`):
#   [[rules]] id, description, regex, secretGroup, entropy, keywords, [[rules.allowlists]]
#   [allowlist] / [[allowlists]]: global allowlists (regexes, regexTarget, stopwords, condition)
# with gitleaks' meaning: a rule runs only when one of its keywords occurs in the text
# (ASCII case-insensitive; no keywords: always); the secret is capture group
# `secretGroup`, else the first non-empty group, else the whole match; a secret whose
# Shannon entropy (bits per char) is not above `entropy` is dropped; so is one an
# allowlist matches (`regexTarget` "secret" (default), "match" or "line"; or containing
# a stopword, case-insensitive).
#
# Regex syntax is Go's RE2, as in gitleaks. The Rust `regex` crate reads it with these
# adaptations, done when the detector is compiled (never in this file), so that the
# meaning stays Go's:
#   - `\\w`, `\\W`, `\\d`, `\\D`, `\\s`, `\\S`, `\\b`, `\\B` are ASCII-only, as in Go (Rust's are Unicode);
#   - `\\<` and `\\>` are the literal characters, as in Go (Rust reads them as word boundaries);
#   - nothing else differs for the rules below (a test compiles every one).
#
# Left out of gitleaks' rules (they need a file path, which transcript text has not):
#   {", ".join(sorted(PATH_RULES))}
# and rule allowlists that only list paths (or AND a path with other checks).
# Global allowlist paths are left out for the same reason.
""")

g = cfg["allowlist"]
print("[allowlist]")
print(f"description = {basic(g.get('description', 'global allow lists'))}")
print("regexes = [")
for x in g["regexes"]:
    print(f"    {lit(x)},")
print("]")
print("stopwords = [" + ", ".join(basic(w) for w in g["stopwords"]) + "]")
print()

for r in cfg["rules"]:
    if r["id"] in PATH_RULES:
        continue
    out = ["[[rules]]", f"id = {basic(r['id'])}", f"description = {basic(r['description'])}",
           f"regex = {lit(r['regex'])}"]
    if "secretGroup" in r:
        out.append(f"secretGroup = {r['secretGroup']}")
    if "entropy" in r:
        out.append(f"entropy = {r['entropy']}")
    out.append("keywords = [" + ", ".join(basic(k) for k in r["keywords"]) + "]")
    for a in r.get("allowlists", []):
        out += allowlist(a, "[[rules.allowlists]]")
    print("\n".join(out))
    print()

print(open(__file__.replace(".py", ".own.toml")).read(), end="")
