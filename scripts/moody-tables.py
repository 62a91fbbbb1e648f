#!/usr/bin/env python3
"""moody-tables.py: markdown tables (time per split in ms, allocated bytes
per rank and, when measured with --peak, peak live bytes per rank) from the
CSV of scoll split --figure, one table per variant: rows are rank counts,
columns algorithms. Usage: moody-tables.py FIG.csv"""
import sys

from moodytable import grouped, print_table


def cell(col, fmt):
    """The cell of column col: "—" for a skipped configuration."""
    def text(m):
        if not m:
            return ""
        if m[0]["skipped"]:
            return "—"
        return fmt.format(float(m[0][col]))
    return text


for v, rs in grouped(sys.argv[1], lambda r: r["variant"]).items():
    cols = [("ms per split", "median_ms", "{:.1f}"), ("allocated B/rank", "alloc_bytes_per_rank", "{:.0f}")]
    if any(float(r.get("peak_bytes_per_rank") or 0) > 0 for r in rs):
        cols.append(("peak live B/rank (--peak)", "peak_bytes_per_rank", "{:.0f}"))
    for what, col, fmt in cols:
        print_table(f"{v}: {what}", rs, cell(col, fmt))
