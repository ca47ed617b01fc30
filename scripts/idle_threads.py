#!/usr/bin/env python3
"""What the main thread does while the other threads wait.

Reads `perf script -F tid,time,ip,sym,dso` output of a two-thread run. For every sample of a
worker thread spinning in libgomp (waiting for the next parallel region or at a barrier) it
takes the main thread's sample nearest in time and counts the symbol main was running: the
serial work between regions and the uneven work inside them, the things that keep a 2-thread
step from running twice as fast as a 1-thread one.

    perf record -F 20000 -o step.data build/comera bench step --batch 1 --repeats 100
    perf script -i step.data -F tid,time,ip,sym,dso > step.txt
    python3 scripts/idle_threads.py step.txt

Only the last 60% of the run is read (the steady state, after model setup and warm-up).
"""
import argparse
import bisect
import collections
import re
import sys

LINE = re.compile(r"\s*(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            tid, t, ip, sym, dso = m.groups()
            dso = dso.split("/")[-1]
            name = sym if sym != "[unknown]" else f"{dso}:{ip[-5:]}"
            rows.append((int(tid), float(t), name, dso))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("script", help="perf script output (tid,time,ip,sym,dso)")
    p.add_argument("--top", type=int, default=40, help="symbols to list (default 40)")
    p.add_argument("--window", type=float, default=1e-4, help="pairing window in seconds (default 1e-4)")
    a = p.parse_args()
    rows = read(a.script)
    if not rows:
        sys.exit(f"{a.script}: no samples read; make it with perf script -F tid,time,ip,sym,dso")
    busiest = [t for t, _ in collections.Counter(r[0] for r in rows).most_common(2)]
    if len(busiest) < 2:
        sys.exit(f"{a.script}: one thread only; record a run with 2 threads")
    main_tid, worker_tid = min(busiest), max(busiest)
    t0, t1 = min(r[1] for r in rows), max(r[1] for r in rows)
    start = t0 + 0.4 * (t1 - t0)
    main_rows = [r for r in rows if r[0] == main_tid and r[1] > start]
    worker_rows = [r for r in rows if r[0] == worker_tid and r[1] > start]
    times = [r[1] for r in main_rows]
    idle = lambda r: "libgomp" in r[3]
    counts, paired = collections.Counter(), 0
    for r in worker_rows:
        if not idle(r):
            continue
        i = bisect.bisect_left(times, r[1])
        near = [main_rows[j] for j in (i - 1, i) if 0 <= j < len(main_rows) and abs(times[j] - r[1]) < a.window]
        if not near:
            continue
        paired += 1
        m = min(near, key=lambda x: abs(x[1] - r[1]))
        counts["(main waiting too)" if idle(m) else m[2][:100]] += 1
    worker_idle = sum(idle(r) for r in worker_rows)
    print(f"worker thread idle in {worker_idle} of {len(worker_rows)} samples "
          f"({100 * worker_idle / max(1, len(worker_rows)):.1f}%); main thread idle in "
          f"{sum(idle(r) for r in main_rows)} of {len(main_rows)}")
    print(f"what main ran meanwhile ({paired} pairs):")
    for name, n in counts.most_common(a.top):
        print(f"{n:7d} {100 * n / max(1, paired):5.1f}%  {name}")


if __name__ == "__main__":
    main()
