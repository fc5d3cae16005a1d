#!/usr/bin/env python3
"""Reduce LiteLLM's model price file to what agentshape's pricing reads.

Usage: scripts/prices_filter.py MODEL_PRICES_JSON > crates/core/src/pricing/litellm.json

Called by scripts/update-prices.sh. Kept: entries that price a chat call
(`mode` is `chat` or `responses`, or absent) and list both
`input_cost_per_token` and `output_cost_per_token`; of those, only the price
fields core's pricing uses (the base prices, the 1-hour cache write, the
reasoning price, and the long-context tiers `..._above_<N>k_tokens`).
Batch, flex and priority prices, audio, images and per-query fees are left
out: agent transcripts do not say which of those a call used.

The output has sorted keys and one model per line, so a refresh diffs as
one changed line per changed model.
"""
import json
import re
import sys

MODES = {"chat", "responses", None}

FIELDS = {
    "litellm_provider",
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "cache_creation_input_token_cost_above_1hr",
    "output_cost_per_reasoning_token",
}

TIER = re.compile(
    r"(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost"
    r"|cache_creation_input_token_cost|cache_creation_input_token_cost_above_1hr)"
    r"_above_\d+k_tokens"
)


def is_price(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def keep(name, value):
    if name == "litellm_provider":
        return isinstance(value, str)
    return (name in FIELDS or TIER.fullmatch(name)) and is_price(value)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        data = json.load(f)
    out = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or entry.get("mode") not in MODES:
            continue
        if not (is_price(entry.get("input_cost_per_token"))
                and is_price(entry.get("output_cost_per_token"))):
            continue
        out[model] = {k: v for k, v in entry.items() if keep(k, v)}
    lines = [
        json.dumps(model) + ": " + json.dumps(out[model], sort_keys=True)
        for model in sorted(out)
    ]
    sys.stdout.write("{\n" + ",\n".join(lines) + "\n}\n")


main()
