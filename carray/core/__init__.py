"""carray's core: the Array type and what every op builds on.

_array (the strided Array type, views, copies, indexing, construction from Python objects and
buffers, the buffer protocol and DLPack export), _storage (host memory and the caching allocator),
_dtype (the dtypes and NumPy 2 promotion), _strided (the n-d strided iterator and its thread
pool), _format (NumPy's repr). Nothing here imports carray.ops, carray.cpu or carray.opencl at
import time.
"""
