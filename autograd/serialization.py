"""autograd.save / autograd.load: tensors to and from a file in the safetensors format.

The format (github.com/huggingface/safetensors), byte for byte as its reference writer makes it:

    8 bytes    N, the header length, a little-endian unsigned 64-bit integer
    N bytes    a UTF-8 JSON object {name: {"dtype": "F32", "shape": [2, 3],
               "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}} (the last entry
               optional), padded with spaces to a multiple of 8 bytes
    the rest   the tensors' bytes, little-endian, C order, one after the other: the offsets
               (relative to the end of the header) cover this buffer with no hole or overlap

The writer orders tensors as the reference does (by dtype, widest alignment first, then by name)
and writes compact JSON with "__metadata__" first. The reader checks every number in the header
against the file before using it and raises ValueError naming what is wrong; it only parses
JSON and copies bytes, so loading a file never runs code (no pickle).
"""

import contextlib
import json
import os
import secrets
import struct
import sys

import carray
from autograd.tensor import Tensor, device_name

__all__ = ["save", "load", "load_metadata"]

# safetensors name -> (carray dtype, element size, struct/array code); our five dtypes
_DTYPES = {
    "BOOL": (carray.bool_, 1, "?"),
    "I32": (carray.int32, 4, "i"),
    "I64": (carray.int64, 8, "q"),
    "F32": (carray.float32, 4, "f"),
    "F64": (carray.float64, 8, "d"),
}
_NAMES = {dt.name: name for name, (dt, _, _) in _DTYPES.items()}
# the reference writer's dtype order (its enum lists dtypes by increasing alignment)
_RANK = {"BOOL": 0, "I32": 1, "F32": 2, "F64": 3, "I64": 4}
# dtypes of the format that carray has no type for (named in the error message)
_OTHER_DTYPES = {"U8", "I8", "I16", "U16", "F16", "BF16", "U32", "U64", "C64", "F8_E5M2",
                 "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F4", "F6_E2M3",
                 "F6_E3M2"}
_MAX_HEADER = 100_000_000      # the reference reader's limit
_MAX_DIMS = 32                 # carray's most dims per array
_METADATA = "__metadata__"


# ---------------------------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------------------------

def save(obj, f, metadata=None):
    """Write obj, a dict of name -> Tensor (or carray.Array), to the file f (a str, os.PathLike
    or binary file object) in the safetensors format; metadata is an optional dict of str -> str
    stored in the header. Tensors are saved detached, as contiguous CPU copies.
    TypeError for a value that is not a tensor, a non-str name or metadata entry;
    ValueError for a name "__metadata__". A path is written atomically: to a temporary file
    beside it, then renamed over it, so a failed save leaves the previous file as it was."""
    header, arrays = _prepare(obj, metadata)
    if hasattr(f, "write"):
        _write_file(f, header, arrays)
        return
    path = os.fsdecode(f)
    head, name = os.path.split(path)
    tmp = os.path.join(head, f".{name}.{secrets.token_hex(8)}.tmp")
    try:
        with open(tmp, "xb") as fh:      # (open, not mkstemp: the umask's usual permissions)
            _write_file(fh, header, arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _write_file(fh, header, arrays):
    fh.write(struct.pack("<Q", len(header)))
    fh.write(header)
    for arr in arrays:
        _write_array(fh, arr)


def _prepare(obj, metadata):
    """(padded header bytes, arrays in file order) for save."""
    if not isinstance(obj, dict):
        if hasattr(obj, "state_dict"):     # a whole nn.Module (or optimizer)
            raise TypeError(f"save stores a dict of name -> Tensor, not a "
                            f"{type(obj).__name__} object (safetensors holds tensors, not "
                            f"objects); save its state_dict() instead: "
                            f"autograd.save(model.state_dict(), f)")
        raise TypeError(f"save expects a dict of name -> Tensor (a state_dict), got "
                        f"{type(obj).__name__}")
    entries = []
    for name, value in obj.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__} {name!r}")
        if name == _METADATA:
            raise ValueError(f"{_METADATA!r} is reserved for the metadata; rename the tensor")
        arr = _as_cpu_array(name, value)
        entries.append((name, _NAMES[arr.dtype.name], arr))
    entries.sort(key=lambda e: (-_RANK[e[1]], e[0]))

    header = {}
    if metadata is not None:
        header[_METADATA] = _check_metadata(metadata)
    offset, arrays = 0, []
    for name, code, arr in entries:
        header[name] = {"dtype": code, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
        arrays.append(arr)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return text + b" " * (-len(text) % 8), arrays


def _as_cpu_array(name, value):
    """value's data as a C-contiguous CPU carray.Array (TypeError for other values)."""
    if isinstance(value, Tensor):
        arr = value.detach().array
    elif isinstance(value, carray.Array):
        arr = value
    else:
        raise TypeError(f"save can only store Tensors or carray Arrays, got "
                        f"{type(value).__name__} for {name!r}")
    if arr.device != "cpu":
        arr = arr.to("cpu")
    if arr.dtype.name not in _NAMES:
        raise TypeError(f"cannot save {name!r}: dtype {arr.dtype} has no safetensors code")
    return arr if arr.flags.c_contiguous else arr.copy()  # (ascontiguousarray makes 0-d 1-d)


def _check_metadata(metadata):
    if not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict of str -> str, got {type(metadata).__name__}")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"metadata must map str to str, got {k!r}: {v!r}")
    return dict(metadata)


def _write_array(fh, arr):
    """Write arr's bytes (C order, little-endian)."""
    if arr.size == 0:
        return
    view = memoryview(arr).cast("B")
    if sys.byteorder == "big" and arr.itemsize > 1:
        view = _swapped(view, _DTYPES[_NAMES[arr.dtype.name]][2])
    fh.write(view)


# ---------------------------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------------------------

def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         device=None, **pickle_load_args):
    """The dict of name -> Tensor stored in the safetensors file f (a str, os.PathLike or binary
    file object), with torch.load's arguments. The file holds CPU tensors; map_location puts
    them elsewhere: a device ("cpu", "gpu", "cuda", "cuda:0", autograd.device), a dict mapping
    the saved location ("cpu") to a device, or a callable(tensor, "cpu") returning the tensor
    to use (None keeps it). device= is the older name of a device map_location.
    weights_only and mmap are accepted: loading only ever reads tensors and never runs code
    (the safety weights_only=True asks for), and the file is read into memory, not mapped.
    ValueError when the file is truncated or corrupted (the message says what is wrong) or
    holds a dtype autograd lacks; OSError when it cannot be read; RuntimeError for a
    pickle_module with weights_only=True (as PyTorch); TypeError for an unknown
    map_location."""
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if map_location is None:
        map_location = device
    place = _placement(map_location)
    with _opened(f, "rb") as fh:
        size = _remaining(fh)
        n = _read_header_length(fh.read(8), size)
        entries = _parse_header(fh.read(n))
        _check_offsets(entries, size - 8 - n)
        out = {}
        for name, code, shape, begin, end in entries:
            out[name] = place(Tensor._wrap(_read_array(fh, name, code, shape, end - begin)))
    return out


def _placement(map_location):
    """A function moving a loaded (CPU) tensor where map_location says."""
    if map_location is None:
        return lambda t: t
    if isinstance(map_location, dict):
        target = map_location.get("cpu", None)
        return _placement(target) if target is not None else (lambda t: t)
    if callable(map_location) and not isinstance(map_location, str):
        def call(t):
            moved = map_location(t, "cpu")
            return t if moved is None else moved
        return call
    if not isinstance(map_location, str):
        raise TypeError(f"map_location should be a str, a device, a dict or a callable, got "
                        f"{type(map_location).__name__}")
    name = device_name(map_location)
    return lambda t: t if name == "cpu" else Tensor._wrap(t.array.to(name))


def load_metadata(f):
    """The "__metadata__" dict of the safetensors file f ({} when it has none). ValueError
    when the file is corrupted."""
    with _opened(f, "rb") as fh:
        size = _remaining(fh)
        header = _decode_header(fh.read(_read_header_length(fh.read(8), size)))
    return dict(header.get(_METADATA) or {})


def _opened(f, mode):
    """A context manager giving a binary file: f opened when it is a path, f itself (left
    open) when it is a file object."""
    if hasattr(f, "read" if "r" in mode else "write"):
        return contextlib.nullcontext(f)
    return open(os.fspath(f), mode)


def _remaining(fh):
    """How many bytes fh holds from its current position on."""
    pos = fh.tell()
    end = fh.seek(0, os.SEEK_END)
    fh.seek(pos)
    return end - pos


def _read_header_length(first8, size):
    """N from the first 8 bytes, checked against the file size."""
    if len(first8) < 8:
        raise ValueError(f"not a safetensors file: {size} bytes, too short for the 8-byte "
                         f"header length")
    (n,) = struct.unpack("<Q", first8)
    if n > _MAX_HEADER:
        raise ValueError(f"corrupted safetensors file: header length {n} is larger than the "
                         f"{_MAX_HEADER}-byte limit")
    if 8 + n > size:
        raise ValueError(f"truncated safetensors file: the header length says {n} bytes but "
                         f"only {size - 8} follow")
    return n


def _decode_header(raw):
    """The header's JSON object (a dict), checked for type only."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"corrupted safetensors header: not UTF-8 ({e})") from None
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates,
                            parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"corrupted safetensors header: not JSON ({e})") from None
    except RecursionError:
        raise ValueError("corrupted safetensors header: JSON nested too deeply") from None
    if not isinstance(header, dict):
        raise ValueError(f"corrupted safetensors header: expected a JSON object, got "
                         f"{type(header).__name__}")
    meta = header.get(_METADATA)
    if meta is not None and not (isinstance(meta, dict) and
                                 all(isinstance(v, str) for v in meta.values())):
        raise ValueError(f"corrupted safetensors header: {_METADATA} must map str to str, "
                         f"got {meta!r}")
    return header


def _no_duplicates(pairs):
    """A JSON object's dict; ValueError for a repeated key (one pass: the header is untrusted)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"corrupted safetensors header: the key {k!r} appears twice")
        out[k] = v
    return out


def _reject_constant(name):
    raise ValueError(f"corrupted safetensors header: {name} is not a valid JSON number")


def _parse_header(raw):
    """[(name, dtype code, shape, begin, end)] sorted by offsets, each entry checked."""
    header = _decode_header(raw)
    entries = []
    for name, info in header.items():
        if name == _METADATA:
            continue
        entries.append(_entry(name, info))
    entries.sort(key=lambda e: (e[3], e[4]))
    return entries


def _entry(name, info):
    """(name, code, shape, begin, end) from one tensor's header entry, or ValueError."""
    where = f"corrupted safetensors header: tensor {name!r}"
    if not isinstance(info, dict):
        raise ValueError(f"{where}: expected an object with dtype, shape and data_offsets, "
                         f"got {info!r}")
    for key in ("dtype", "shape", "data_offsets"):
        if key not in info:
            raise ValueError(f"{where}: missing {key!r}")
    code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if not isinstance(code, str) or code not in _DTYPES:
        if isinstance(code, str) and code in _OTHER_DTYPES:
            raise ValueError(f"tensor {name!r} has dtype {code}, which autograd cannot hold "
                             f"(supported: {', '.join(_DTYPES)})")
        raise ValueError(f"{where}: unknown dtype {code!r}")
    if isinstance(shape, list) and len(shape) > _MAX_DIMS:     # (before multiplying them)
        raise ValueError(f"{where}: shape has {len(shape)} dims, more than the {_MAX_DIMS} "
                         f"an array may have")
    if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
        raise ValueError(f"{where}: shape must be a list of non-negative integers, got "
                         f"{shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))):
        raise ValueError(f"{where}: data_offsets must be [begin, end] (non-negative "
                         f"integers), got {offsets!r}")
    begin, end = offsets
    count = 1
    for s in shape:
        count *= s
    if end < begin or end - begin != count * _DTYPES[code][1]:
        raise ValueError(f"{where}: data_offsets {offsets} span {end - begin} bytes but "
                         f"shape {shape} of {code} needs {count * _DTYPES[code][1]}")
    return name, code, tuple(shape), begin, end


def _is_count(x):
    """x is a JSON integer in [0, 2**63)."""
    return type(x) is int and 0 <= x < 2**63


def _check_offsets(entries, buffer_size):
    """The entries (sorted by offsets) tile [0, buffer_size) exactly."""
    pos = 0
    for name, _, _, begin, end in entries:
        if begin < pos:
            raise ValueError(f"corrupted safetensors file: tensor {name!r} at bytes "
                             f"[{begin}, {end}) overlaps the previous tensor (ending at {pos})")
        if begin > pos:
            raise ValueError(f"corrupted safetensors file: a hole in the data before tensor "
                             f"{name!r} (bytes [{pos}, {begin}) belong to no tensor)")
        pos = end
    if pos > buffer_size:
        raise ValueError(f"truncated safetensors file: the tensors need {pos} bytes of data but "
                         f"the file holds {buffer_size}")
    if pos < buffer_size:
        raise ValueError(f"corrupted safetensors file: {buffer_size - pos} bytes after the last "
                         f"tensor belong to no tensor")


def _read_array(fh, name, code, shape, nbytes):
    """A new CPU array of dtype `code` and `shape` read from the next nbytes of fh."""
    dtype, itemsize, fmt = _DTYPES[code]
    try:
        arr = carray.empty(shape, dtype=dtype)
    except (ValueError, OverflowError, MemoryError) as e:
        raise ValueError(f"corrupted safetensors header: tensor {name!r} has an impossible "
                         f"shape {list(shape)} ({e})") from None
    if nbytes == 0:
        return arr
    view = memoryview(arr).cast("B")
    if fh.readinto(view) != nbytes:
        raise ValueError(f"truncated safetensors file: the data of tensor {name!r} ends early")
    if code == "BOOL" and view.tobytes().translate(None, b"\x00\x01"):
        raise ValueError(f"corrupted safetensors file: BOOL tensor {name!r} holds bytes other "
                         f"than 0 and 1")
    if sys.byteorder == "big" and itemsize > 1:
        view[:] = _swapped(view, fmt)
    return arr


def _swapped(view, fmt):
    """The bytes of view with every element of struct format fmt byte-swapped."""
    import array
    out = array.array(fmt, view.tobytes())
    out.byteswap()
    return memoryview(out).cast("B")
