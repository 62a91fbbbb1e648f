#!/usr/bin/env python3
"""moody-sim-table.py: markdown tables of simulated split times (µs, stage
model) from the CSV of the recorded-split simulations: one table per figure
variant, rows n, columns algorithm × topology kind (torus, Clos)."""
import sys

from moodytable import grouped, print_table


def cell(rows):
    """The torus and Clos times of one algorithm at one n."""
    t = {r["topology"].split(":")[0]: float(r["time_s"]) * 1e6 for r in rows}
    return f"{t.get('torus', 0):.0f} / {t.get('clos', 0):.0f}" if t else ""


for (fig, var), rs in grouped(sys.argv[1], lambda r: (r["figure"], r["variant"])).items():
    print_table(f"{fig} {var}: simulated µs (torus / Clos)", rs, cell)
