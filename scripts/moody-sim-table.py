#!/usr/bin/env python3
"""moody-sim-table.py: markdown tables of simulated split times (µs, stage
model) from the CSV of the recorded-split simulations: one table per figure
variant, rows n, columns algorithm × topology kind (torus, Clos)."""
import csv
import sys
from collections import OrderedDict

rows = list(csv.DictReader(open(sys.argv[1])))
groups = OrderedDict()
for r in rows:
    groups.setdefault((r["figure"], r["variant"]), []).append(r)
for (fig, var), rs in groups.items():
    algs = list(OrderedDict.fromkeys(r["algorithm"] for r in rs))
    nps = sorted({int(r["np"]) for r in rs})
    print(f"\n{fig} {var}: simulated µs (torus / Clos)\n")
    print("| n | " + " | ".join(f"`{a}`" for a in algs) + " |")
    print("| ---: |" + " ---: |" * len(algs))
    for n in nps:
        cells = []
        for a in algs:
            t = {r["topology"].split(":")[0]: float(r["time_s"]) * 1e6 for r in rs if int(r["np"]) == n and r["algorithm"] == a}
            cells.append(f"{t.get('torus', 0):.0f} / {t.get('clos', 0):.0f}" if t else "")
        print(f"| {n} | " + " | ".join(cells) + " |")
