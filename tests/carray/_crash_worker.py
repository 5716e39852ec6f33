"""Crash-fuzz worker: runs one hostile carray call per stdin line in this process, on the device
named by argv[1]. Each line is a Python statement over `ca` (carray), `a` (a 2 x 3 x 4 float32
array), `v` (a 5-element int64 array), `e` (an empty 0 x 3 array) and `z` (a 0-d array), all on
the device. Before running a line the worker prints it (flushed), so when the interpreter dies
the parent knows which line killed it. Python exceptions are the expected outcome of bad input;
anything else, a crash (signal) or a hang, is a bug. Prints DONE at the end."""

import sys

import carray as ca

device = sys.argv[1]
ns = {"ca": ca}


def fresh():
    ns["a"] = ca.arange(24, dtype=ca.float32).reshape(2, 3, 4).to(device)
    ns["v"] = ca.arange(5, dtype=ca.int64).to(device)
    ns["e"] = ca.zeros((0, 3), dtype=ca.float32).to(device)
    ns["z"] = ca.asarray(1.5).to(device)


def _lists(x):
    """How many lists x.tolist() builds: a (2**31, 0) array is empty but makes 2**31 lists (as in
    NumPy), which would fill the memory."""
    total = count = 1
    for d in x.shape[:-1]:
        count *= d
        total += count
    return total


fresh()
for n, line in enumerate(sys.stdin):
    line = line.rstrip("\n")
    print(f"CASE {n}: {line}", flush=True)
    try:
        result = eval(compile(line, "<case>", "eval" if "=" not in line.replace("==", "")
                              else "exec"), ns)
        if isinstance(result, ca.Array) and result.size < 10_000 and _lists(result) < 10_000:
            result.tolist()         # read the values back (the device did the work)
    except (Exception, MemoryError):
        pass
    if n % 20 == 19:
        fresh()                     # in-place cases may have changed the arrays' values
    if device == "gpu":
        ca.opencl.finish()          # any kernel fault surfaces here, on this case
print("DONE", flush=True)
