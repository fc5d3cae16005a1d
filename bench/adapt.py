#!/usr/bin/env python3
"""Turn agentshape's JSON output into the shapes ../shared/bench/check_outputs.py reads.

    adapt.py streams  IN.jsonl OUT.jsonl   (agentshape parse --json)
    adapt.py replies  IN.jsonl OUT.jsonl   (agentshape extract --jsonl --json)
    adapt.py instances IN.jsonl OUT.txt    (agentshape validate --jsonl --json)

Runs after timing, so its cost is not in the measured times.
"""
import json
import os
import sys


def streams(src, dst):
    for line in src:
        s = json.loads(line)
        r = s.get("result") or {}
        usage = r.get("usage") or {}
        # The peer contract has no heuristics: a category only with an error.
        cat = s.get("error_category") if s.get("error") is not None else None
        rec = {
            "file": os.path.basename(s["file"]),
            "lines": s["lines"], "events": s["events"], "blank_lines": s["blank_lines"],
            "malformed_lines": s["malformed_lines"], "non_object_lines": s["non_object_lines"],
            "saw_result": s["saw_result"], "is_error": s["error"] is not None and s["saw_result"],
            "error_category": cat, "error_text": s.get("error"),
            "input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0),
            "num_turns": r.get("num_turns") if s["saw_result"] else None,
            "total_cost_usd": r.get("total_cost_usd") if s["saw_result"] else None,
            "duration_ms": r.get("duration_ms") if s["saw_result"] else None,
            "session_id": s.get("session_id") if s["saw_result"] else None,
            "text_chunks": s["text_chunks"], "text_bytes": len(s["output"].encode("utf-8")),
            "text": s["output"], "result": r.get("text") if s["saw_result"] else None,
            "structured_output": s.get("structured_output"),
            "tool_uses": s.get("tool_use_counts", {}),
        }
        dst.write(json.dumps(rec, ensure_ascii=False) + "\n")


def replies(src, dst):
    for line in src:
        r = json.loads(line)
        dst.write(json.dumps({"id": r.get("id"), "value": r.get("value")}, ensure_ascii=False) + "\n")


def instances(src, dst):
    for line in src:
        dst.write("true\n" if json.loads(line)["valid"] else "false\n")


if __name__ == "__main__":
    what, inp, out = sys.argv[1:4]
    with open(inp, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        {"streams": streams, "replies": replies, "instances": instances}[what](src, dst)
