"""A tour of carray's array: creation, views, indexing, broadcasting, and NumPy exchange.

Run it with `python examples/demo_array.py`. It needs only carray; the last part runs when NumPy is
installed and shows that arrays cross over without copying.
"""

import textwrap

import carray as ca


def show(label, value):
    """Print `label`, then the repr of `value` indented under it."""
    print(f"{label}:")
    print(textwrap.indent(repr(value), "    "))


print(f"carray {ca.__version__}, {ca.get_num_threads()} CPU thread(s)\n")

# -- creation: NumPy's factories; the default float is float32, Python ints give int64 --------
show("zeros((2, 3))", ca.zeros((2, 3)))
show("linspace(0, 1, 5)", ca.linspace(0, 1, 5))
show("eye(3, dtype=int32)", ca.eye(3, dtype=ca.int32))
show("array([[1.5, 2], [3, 4]], dtype=float64)", ca.array([[1.5, 2], [3, 4]], dtype=ca.float64))

# -- views share memory: only shape, strides and offset differ ---------------------------------
x = ca.arange(12)
a = x.reshape(3, 4)
show("a = arange(12).reshape(3, 4)", a)
print(f"a.shape={a.shape} a.strides={a.strides} (bytes) a.base is x: {a.base is x}\n")

t = a.T
show("a.T", t)
print(f"a.T.strides={t.strides} C-contiguous: {t.flags.c_contiguous} a.T.base is x: {t.base is x}")

r = a[::-1, ::-2]
show("a[::-1, ::-2] (negative steps, still a view)", r)
print(f"strides={r.strides}")

r[0, 0] = 100                       # writes through the view into x
print(f"after r[0, 0] = 100: x[11] = {x[11]}\n")

show("a[1:, None, 1:3] (slices and a new axis)", a[1:, None, 1:3])
show("swapaxes(expand_dims(a, 0), 0, 2).shape", ca.swapaxes(ca.expand_dims(a, 0), 0, 2).shape)

# -- advanced indexing gathers into a new array ------------------------------------------------
show("a[[0, 2], [1, 3]] (integer arrays)", a[[0, 2], [1, 3]])
show("a[array([True, False, True])] (boolean mask)", a[ca.array([True, False, True])])

# -- broadcasting is a stride-0 view -----------------------------------------------------------
row = ca.array([1.0, 2.0, 3.0])
b = ca.broadcast_to(row, (2, 3))
show("broadcast_to([1., 2., 3.], (2, 3))", b)
print(f"strides={b.strides} (stride 0 repeats the row without copying)")

z = ca.zeros((2, 3))
z[:, 1] = 5                          # __setitem__ broadcasts the value
print(f"z[:, 1] = 5 -> {z.tolist()}\n")

# -- NumPy exchange, zero-copy both ways (buffer protocol and DLPack) --------------------------
try:
    import numpy as np
except ImportError:
    np = None
    print("NumPy is not installed: skipping the NumPy exchange part.")

if np is not None:
    n = np.asarray(t)                # buffer protocol: a NumPy view of carray memory
    n[0, 0] = -1
    print(f"np.asarray(a.T) -> {n.dtype}, strides {n.strides}; "
          f"after n[0, 0] = -1: a[0, 0] = {a[0, 0]}")

    m = np.arange(6.0).reshape(2, 3)
    c = ca.asarray(m)                # carray view of NumPy memory, keeps m alive
    m[1, 2] = 42.0
    print(f"ca.asarray(numpy float64 array) -> {c.dtype}; sees NumPy's write: c[1, 2] = {c[1, 2]}")

    d = ca.from_dlpack(m.T)          # DLPack, strides and all
    e = np.from_dlpack(a[::-1])
    print(f"from_dlpack(m.T).shape = {d.shape}; np.from_dlpack(a[::-1])[0] = {e[0].tolist()}")
