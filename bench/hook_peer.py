#!/usr/bin/env python3
"""A hand-written Claude Code Stop hook of the kind public projects use,
for bench/hook.sh: read the hook input, take the last ```json block (else
the whole message), json.loads it, validate with jsonschema, print a block
with the first error. No repair, no store: the floor such a hook costs."""
import json
import re
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
hook = json.load(sys.stdin)
msg = hook.get("last_assistant_message") or ""
fences = re.findall(r"```json\s*(.*?)```", msg, re.S)
try:
    value = json.loads(fences[-1] if fences else msg)
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(value))
except ValueError as e:
    errors = [e]
if errors:
    print(json.dumps({"decision": "block", "reason": str(errors[0])[:2000]}))
