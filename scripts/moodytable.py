"""moodytable.py: the markdown tables of moody-tables.py and
moody-sim-table.py, one row per rank count n and one column per algorithm."""
import csv
from collections import OrderedDict


def grouped(path, key):
    """The rows of the CSV file at path grouped by key(row), the groups in
    the order their first rows come."""
    groups = OrderedDict()
    for r in csv.DictReader(open(path)):
        groups.setdefault(key(r), []).append(r)
    return groups


def print_table(title, rows, cell):
    """Prints title and the table of rows: the algorithms in the order they
    come, n ascending, and in each cell cell(the rows of that n and
    algorithm), "" for none."""
    algs = list(OrderedDict.fromkeys(r["algorithm"] for r in rows))
    nps = sorted({int(r["np"]) for r in rows})
    print(f"\n{title}\n")
    print("| n | " + " | ".join(f"`{a}`" for a in algs) + " |")
    print("| ---: |" + " ---: |" * len(algs))
    for n in nps:
        cells = [cell([r for r in rows if int(r["np"]) == n and r["algorithm"] == a]) for a in algs]
        print(f"| {n} | " + " | ".join(cells) + " |")
