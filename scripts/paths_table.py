#!/usr/bin/env python3
"""Compact markdown table and target check from `comera bench paths --json` output.

Usage: scripts/paths_table.py results/bench_paths.json

Table cells: merged path / tuned choice / dense, in ms (tuning run); the tuned time is bold
where the tuner chose a plan other than the merged path. Then the targets, checked on the
second, independent run, which times the first run's choice again against every candidate.
"""
import json
import sys


def ms(entry):
    return None if entry is None else entry.get("median_ms")


def fmt(x):
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def interior_rank(record):
    return max(record["ranks"][1:-1])


def main(path):
    records = json.load(open(path))
    tokens = sorted({r["tokens"] for r in records})
    rows = {}
    for r in records:
        rows.setdefault((r["layer"], r["shape"].split(" ")[0], interior_rank(r)), {})[r["tokens"]] = r
    print("| layer | r | " + " | ".join(f"B={b}" for b in tokens) + " |")
    print("|---|---:|" + "---:|" * len(tokens))
    for (layer, modes, rank), by_b in rows.items():
        cells = []
        for b in tokens:
            r = by_b.get(b)
            if r is None:
                cells.append("")
                continue
            tuned = fmt(ms(r["chosen"]))
            if r["chosen"]["name"] != "merged":
                tuned = f"**{tuned}**"
            cells.append(f"{fmt(ms(r['merged']))} / {tuned} / {fmt(ms(r['dense']))}")
        print(f"| {layer} `{modes.replace('|', chr(92) + '|')}` | {rank} | " + " | ".join(cells) + " |")
    print()

    first = [(ms(r["chosen"]) / ms(r["fastest"]), r) for r in records]
    print(f"tuning run: tuned / fastest candidate at most {max(f for f, _ in first):.3f}")
    second = []
    for r in records:
        v = r.get("verify")
        if v and ms(v["chosen"]) and ms(v["fastest"]) and ms(v["merged"]):
            second.append((ms(v["chosen"]) / ms(v["fastest"]), ms(v["chosen"]) / ms(v["merged"]), r))
    if second:
        within = sum(1 for f, _, _ in second if f <= 1.05)
        print(f"second run: tuned within 5% of the fastest candidate in {within} of {len(second)} cases "
              f"(worst {max(f for f, _, _ in second):.3f}); tuned / merged at most "
              f"{max(m for _, m, _ in second):.3f}")
        for f, _, r in sorted(second, key=lambda s: -s[0]):
            if f > 1.05:
                print(f"  over 5%: {r['layer']} r={interior_rank(r)} B={r['tokens']}: {f:.3f} "
                      f"(tuned {r['chosen']['order']}, fastest {r['verify']['fastest']['order']})")
    wins = [r for r in records if r["chosen"]["name"] != "merged"]
    print(f"merged path not chosen in {len(wins)} of {len(records)} cases; speedup over merged:")
    for r in wins:
        again = ""
        v = r.get("verify")
        if v and ms(v["chosen"]) and ms(v["merged"]):
            again = f" (second run {ms(v['merged']) / ms(v['chosen']):.2f}x)"
        print(f"  {r['layer']} r={interior_rank(r)} B={r['tokens']}: {r['chosen']['name']} "
              f"{r['chosen']['order']}: {ms(r['merged']) / ms(r['chosen']):.2f}x{again}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/bench_paths.json")
