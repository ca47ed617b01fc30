#!/usr/bin/env python3
"""Markdown table and target check from `comera bench paths --json` output.

Usage: scripts/paths_table.py results/bench_paths.json

Per case: the merged path, the tuner's choice and the fastest candidate in the tuning run, and
the second (independent) run that times the first run's choice again against all candidates.
"""
import json
import sys


def ms(entry):
    return None if entry is None else entry.get("median_ms")


def fmt(x):
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def main(path):
    records = json.load(open(path))
    rank_of = lambda r: max(r["ranks"][1:-1])
    print("| layer | r | B | merged ms | chosen | chosen ms | fastest | fastest ms | dense ms "
          "| 2nd: chosen/fastest | 2nd: chosen/merged |")
    print("|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|")
    worst_fast, worst_merged, wins = [], [], []
    for r in records:
        v = r.get("verify") or {}
        merged, chosen, fastest = ms(r["merged"]), ms(r["chosen"]), ms(r["fastest"])
        vc, vf, vm = ms(v.get("chosen")), ms(v.get("fastest")), ms(v.get("merged"))
        c_f = vc / vf if vc and vf else None
        c_m = vc / vm if vc and vm else None
        name = r["chosen"]["name"]
        label = f"{r['layer']} {r['shape'].split(' ')[0]}"
        print(f"| {r['layer']} | {rank_of(r)} | {r['tokens']} | {fmt(merged)} | {name} | {fmt(chosen)} "
              f"| {r['fastest']['name']} | {fmt(fastest)} | {fmt(ms(r['dense']))} "
              f"| {'-' if c_f is None else f'{c_f:.3f}'} | {'-' if c_m is None else f'{c_m:.3f}'} |")
        case = f"{r['layer']} r={rank_of(r)} B={r['tokens']}"
        worst_fast.append((chosen / fastest, c_f, case))
        if c_m is not None:
            worst_merged.append((c_m, case))
        if name != "merged":
            wins.append((case, name, merged / chosen, vm / vc if vc and vm else None))
    print()
    over = [w for w in worst_fast if w[0] > 1.05]
    print(f"tuning run: chosen within 5% of the fastest in {len(worst_fast) - len(over)} of "
          f"{len(worst_fast)} cases; worst {max(w[0] for w in worst_fast):.3f}")
    second = [w for w in worst_fast if w[1] is not None]
    if second:
        over2 = [w for w in second if w[1] > 1.05]
        print(f"second run: chosen within 5% of the fastest in {len(second) - len(over2)} of "
              f"{len(second)} cases; worst {max(w[1] for w in second):.3f}")
        for w in sorted(over2, key=lambda w: -w[1]):
            print(f"  over 5%: {w[2]}: {w[1]:.3f}")
    if worst_merged:
        print(f"second run: chosen / merged at most {max(w[0] for w in worst_merged):.3f}")
    print(f"merged path not chosen in {len(wins)} cases:")
    for case, name, first, again in wins:
        again_text = "-" if again is None else f"{again:.2f}x"
        print(f"  {case}: {name}, {first:.2f}x faster than merged (second run {again_text})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/bench_paths.json")
