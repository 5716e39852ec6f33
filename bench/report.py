"""Turn a pytest-benchmark JSON file into the markdown table of bench/RESULTS.md.

    python -m pytest bench --benchmark-only --benchmark-json=bench.json
    python bench/report.py bench.json

For each group: every implementation's median, and its ratio to carray's (peer / carray, so
> 1 means carray is faster).
"""

import json
import sys
from collections import defaultdict


def impl_name(bench):
    """'carray', 'numpy' or 'torch', from a test name like test_add_numpy[...]."""
    name = bench["name"].split("[")[0]
    for impl in ("carray", "numpy", "torch"):
        if name.endswith(impl):
            return impl
    return name


def main(path):
    with open(path) as f:
        data = json.load(f)
    groups = defaultdict(dict)
    for bench in data["benchmarks"]:
        groups[bench["group"]][impl_name(bench)] = bench["stats"]["median"]
    print(f"Machine: {data['machine_info'].get('cpu', {}).get('brand_raw', '?')}, "
          f"{data['machine_info'].get('cpu', {}).get('count', '?')} cores; "
          f"date {data['datetime'][:10]}\n")
    print("| group | carray median | NumPy median | PyTorch median | NumPy/carray "
          "| PyTorch/carray |")
    print("|---|---|---|---|---|---|")
    for group in sorted(groups):
        g = groups[group]
        ours = g.get("carray")

        def fmt(t):
            return "-" if t is None else (f"{t * 1e3:.3f} ms" if t >= 1e-4 else f"{t * 1e6:.3f} us")

        def ratio(peer, ours=ours):
            return "-" if peer is None or ours is None else f"{peer / ours:.2f}"

        print(f"| {group} | {fmt(ours)} | {fmt(g.get('numpy'))} | {fmt(g.get('torch'))} | "
              f"{ratio(g.get('numpy'))} | {ratio(g.get('torch'))} |")


if __name__ == "__main__":
    main(sys.argv[1])
