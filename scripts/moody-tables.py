#!/usr/bin/env python3
"""moody-tables.py: markdown tables (time per split in ms, allocated bytes
per rank and, when measured with --peak, peak live bytes per rank) from the
CSV of scoll split --figure, one table per variant: rows are rank counts,
columns algorithms. Usage: moody-tables.py FIG.csv"""
import csv
import sys
from collections import OrderedDict

rows = list(csv.DictReader(open(sys.argv[1])))
variants = OrderedDict()
for r in rows:
    variants.setdefault(r["variant"], []).append(r)
for v, rs in variants.items():
    algs = list(OrderedDict.fromkeys(r["algorithm"] for r in rs))
    nps = sorted({int(r["np"]) for r in rs})
    cols = [("ms per split", "median_ms", "{:.1f}"), ("allocated B/rank", "alloc_bytes_per_rank", "{:.0f}")]
    if any(float(r.get("peak_bytes_per_rank") or 0) > 0 for r in rs):
        cols.append(("peak live B/rank (--peak)", "peak_bytes_per_rank", "{:.0f}"))
    for what, col, fmt in cols:
        print(f"\n{v}: {what}\n")
        print("| n | " + " | ".join(f"`{a}`" for a in algs) + " |")
        print("| ---: |" + " ---: |" * len(algs))
        for n in nps:
            cells = []
            for a in algs:
                m = [r for r in rs if int(r["np"]) == n and r["algorithm"] == a]
                if not m:
                    cells.append("")
                elif m[0]["skipped"]:
                    cells.append("—")
                else:
                    cells.append(fmt.format(float(m[0][col])))
            print(f"| {n} | " + " | ".join(cells) + " |")
