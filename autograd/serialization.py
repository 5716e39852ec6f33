"""autograd.save / autograd.load: tensors to and from a file in the safetensors format.

The format (github.com/huggingface/safetensors), byte for byte as its reference writer makes it:

    8 bytes    N, the header length, a little-endian unsigned 64-bit integer
    N bytes    a UTF-8 JSON object {name: {"dtype": "F32", "shape": [2, 3],
               "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}} (the last entry
               optional), padded with spaces to a multiple of 8 bytes
    the rest   the tensors' bytes, little-endian, C order, one after the other: the offsets
               (relative to the end of the header) cover this buffer with no hole or overlap

Anything but a flat {str: tensor} dict is a checkpoint (nested containers of tensors and
Python scalars): its tensors are ordinary entries and its structure is JSON in __metadata__
(see the "checkpoints" section), so every safetensors reader still reads its tensors.

The writer orders tensors as the reference does (by dtype, widest alignment first, then by name)
and writes compact JSON with "__metadata__" first. The reader checks every number in the header
against the file before using it and raises ValueError naming what is wrong; it only parses
JSON and copies bytes, so loading a file never runs code (no pickle).
"""

import contextlib
import json
import math
import os
import secrets
import struct
import sys
from collections import Counter, OrderedDict

import carray
from autograd.tensor import Tensor, device_name

__all__ = ["save", "load", "load_metadata"]

# safetensors name -> (carray dtype, element size, struct/array code); our dtypes
_DTYPES = {
    "BOOL": (carray.bool_, 1, "?"),
    "I32": (carray.int32, 4, "i"),
    "I64": (carray.int64, 8, "q"),
    "F32": (carray.float32, 4, "f"),
    "F64": (carray.float64, 8, "d"),
    "I8": (carray.int8, 1, "b"),
    "I16": (carray.int16, 2, "h"),
    "U8": (carray.uint8, 1, "B"),
    "U16": (carray.uint16, 2, "H"),
    "U32": (carray.uint32, 4, "I"),
    "U64": (carray.uint64, 8, "Q"),
    "F16": (carray.float16, 2, "H"),       # (the 2-byte floats byte-swap as their bits)
    "BF16": (carray.bfloat16, 2, "H"),
}
_NAMES = {dt.name: name for name, (dt, _, _) in _DTYPES.items()}
# the reference writer's dtype order (its enum lists dtypes by increasing alignment)
_RANK = {"BOOL": 0, "U8": 1, "I8": 2, "I16": 3, "U16": 4, "I32": 5, "U32": 6, "F32": 7, "F64": 8,
         "I64": 9, "U64": 10,
         "F16": 4.1, "BF16": 4.2}     # (between U16 and I32, as the reference's enum)
# dtypes of the format that carray has no type for (named in the error message)
_OTHER_DTYPES = {"C64", "F8_E5M2",
                 "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F4", "F6_E2M3",
                 "F6_E3M2"}
_MAX_HEADER = 100_000_000      # the reference reader's limit
_MAX_DIMS = 32                 # carray's most dims per array
_METADATA = "__metadata__"


# ---------------------------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------------------------

def save(obj, f, metadata=None):
    """Write obj to the file f (a str, os.PathLike or binary file object) in the safetensors
    format; metadata is an optional dict of str -> str stored in the header. obj is a dict of
    name -> Tensor (or carray.Array), written as a plain safetensors file, or a checkpoint:
    tensors, None, bools, ints, floats (inf and nan too), strs, and lists, tuples and dicts
    (str or int keys) of them, nested (e.g. {"model": model.state_dict(), "opt":
    opt.state_dict(), "epoch": 3, "rng": autograd.get_rng_state()}); its tensors become flat
    entries named after their key paths (a tensor found twice is stored once) and the rest
    JSON in the metadata, never pickle. Tensors are saved detached, as contiguous CPU copies.
    TypeError for any other value or key (naming its path) or bad metadata; ValueError for a
    circular structure, one nested more than 100 levels, or a metadata key
    "autograd.structure". A path is written atomically: to a temporary file beside it, then
    renamed over it, so a failed save leaves the previous file as it was."""
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
    """(padded header bytes, arrays in file order) for save: a flat {str: tensor} dict as a
    plain safetensors file, anything else as a checkpoint (see _prepare_checkpoint)."""
    if _is_flat(obj):
        named = [(name, _as_cpu_array(name, value)) for name, value in obj.items()]
        return _layout(named, None if metadata is None else _check_metadata(metadata))
    return _prepare_checkpoint(obj, metadata)


def _is_flat(obj):
    """obj is a dict of str name -> Tensor (or carray.Array): a plain safetensors file."""
    return isinstance(obj, dict) and all(
        isinstance(k, str) and k != _METADATA and isinstance(v, (Tensor, carray.Array))
        for k, v in obj.items())


def _layout(named, metadata):
    """(padded header bytes, arrays in file order) for [(name, CPU array)] and the header's
    metadata dict (or None), ordered as the reference writer orders them."""
    entries = sorted(((name, _NAMES[arr.dtype.name], arr) for name, arr in named),
                     key=lambda e: (-_RANK[e[1]], e[0]))
    header = {}
    if metadata is not None:
        header[_METADATA] = metadata
    offset, arrays = 0, []
    for name, code, arr in entries:
        header[name] = {"dtype": code, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
        arrays.append(arr)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return text + b" " * (-len(text) % 8), arrays


# ---------------------------------------------------------------------------------------------
# checkpoints: nested containers of tensors and Python scalars
# ---------------------------------------------------------------------------------------------
#
# The tensors are flat safetensors entries named after their key path ("opt/state/0/exp_avg";
# "#2", "#3"... added when two paths give one name); the rest is JSON in the header's
# __metadata__ under _STRUCTURE. JSON null, true/false, integers, strings and arrays stand for
# None, bools, ints, strs and lists; every JSON object has exactly one key, a tag:
#     {"tensor": name}            the tensor stored under name (a tensor saved twice: one entry)
#     {"tuple": [...]}            a tuple
#     {"dict": [[key, value], ...]}, {"OrderedDict": ...}, {"Counter": ...}   str or int keys
#     {"float": "inf" | "-inf" | "nan"}   (finite floats are JSON numbers, written with repr)

_STRUCTURE = "autograd.structure"
_MAX_DEPTH = 100            # nesting levels of a checkpoint (saved or loaded)
_MAX_NODES = 10_000_000     # values in a loaded structure
_DICT_TAGS = {"dict": dict, "OrderedDict": OrderedDict, "Counter": Counter}
_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _prepare_checkpoint(obj, metadata):
    """(header bytes, arrays) for a checkpoint: obj's tensors as entries, its structure as
    JSON in the metadata. TypeError for a value or key of another type (naming its path),
    ValueError for a circular or too deeply nested structure or a metadata key
    "autograd.structure"."""
    metadata = {} if metadata is None else _check_metadata(metadata)
    if _STRUCTURE in metadata:
        raise ValueError(f"the metadata key {_STRUCTURE!r} is reserved for the structure of "
                         f"a checkpoint; rename it")
    encoder = _Encoder()
    tree = encoder.encode(obj, (), 0)
    metadata[_STRUCTURE] = json.dumps(tree, separators=(",", ":"), ensure_ascii=False,
                                      allow_nan=False)
    return _layout(encoder.named, metadata)


def _where(path):
    """A key path as subscripts: "the checkpoint['opt']['state'][0]"."""
    return "the checkpoint" + "".join(f"[{k!r}]" for k in path)


class _Encoder:
    """Turns a checkpoint into its JSON structure, collecting its tensors in self.named."""

    def __init__(self):
        self.named = []         # [(entry name, CPU array)]
        self.by_id = {}         # id(tensor) -> entry name (a shared tensor is stored once)
        self.keep = []          # the tensors seen, so that their ids stay theirs
        self.taken = {_METADATA}
        self.active = set()     # ids of the containers being encoded (to catch cycles)

    def encode(self, obj, path, depth):
        if depth > _MAX_DEPTH:
            raise ValueError(f"save: {_where(path)} is nested more than {_MAX_DEPTH} levels deep")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            x = float(obj)
            return x if math.isfinite(x) else {"float": repr(x)}
        if isinstance(obj, (Tensor, carray.Array)):
            return {"tensor": self._tensor(obj, path)}
        if not isinstance(obj, (list, tuple, dict)):
            hint = (" (save its state_dict() instead: autograd.save(model.state_dict(), f))"
                    if hasattr(obj, "state_dict") else "")
            raise TypeError(f"save stores tensors, None, bool, int, float, str and lists, "
                            f"tuples and dicts of them, not a {type(obj).__name__} object (at "
                            f"{_where(path)}){hint}")
        if id(obj) in self.active:
            raise ValueError(f"save: {_where(path)} contains itself (a circular reference)")
        self.active.add(id(obj))
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if isinstance(k, bool) or not isinstance(k, (str, int)):
                    raise TypeError(f"save: {_where(path)} has a key {k!r} of type "
                                    f"{type(k).__name__}; checkpoint dict keys must be str or int")
                k = k if isinstance(k, str) else int(k)
                items.append([k, self.encode(v, (*path, k), depth + 1)])
            tag = next((t for t, cls in _DICT_TAGS.items() if type(obj) is cls), "dict")
            out = {tag: items}
        else:
            values = [self.encode(v, (*path, i), depth + 1) for i, v in enumerate(obj)]
            out = {"tuple": values} if isinstance(obj, tuple) else values
        self.active.discard(id(obj))
        return out

    def _tensor(self, value, path):
        """The entry name of a tensor (a new entry unless it was stored already)."""
        if id(value) in self.by_id:
            return self.by_id[id(value)]
        base = "/".join(str(k) for k in path) or "tensor"
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}#{n}"
        self.taken.add(name)
        self.by_id[id(value)] = name
        self.keep.append(value)
        self.named.append((name, _as_cpu_array(_where(path), value)))
        return name


def _rebuild(text, tensors):
    """The checkpoint whose structure is the JSON text, with its tensors from the dict
    tensors (entry name -> Tensor). ValueError for anything malformed: not JSON, an unknown
    tag, a wrong type, a reference to a missing tensor, a tensor no value uses, nesting deeper
    than _MAX_DEPTH or more than _MAX_NODES values."""
    try:
        tree = json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"corrupted checkpoint structure: not JSON ({e})") from None
    except RecursionError:
        raise ValueError("corrupted checkpoint structure: nested too deeply") from None
    builder = _Builder(tensors)
    out = builder.build(tree, (), 0)
    unused = sorted(set(tensors) - builder.used)
    if unused:
        raise ValueError(f"corrupted checkpoint: tensor {unused[0]!r} is stored but no value of "
                         f"the structure uses it")
    return out


class _Builder:
    """Rebuilds a checkpoint from its (untrusted) JSON structure, checking every node."""

    def __init__(self, tensors):
        self.tensors = tensors
        self.used = set()
        self.nodes = 0

    def build(self, node, path, depth):
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise ValueError(f"corrupted checkpoint structure: more than {_MAX_NODES} values")
        if depth > _MAX_DEPTH:
            raise ValueError(f"corrupted checkpoint structure: {_where(path)} is nested more "
                             f"than {_MAX_DEPTH} levels deep")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.build(v, (*path, i), depth + 1) for i, v in enumerate(node)]
        bad = f"corrupted checkpoint structure at {_where(path)}"
        if len(node) != 1:
            raise ValueError(f"{bad}: expected an object with one tag key, got {list(node)!r}")
        ((tag, body),) = node.items()
        if tag == "tensor":
            if not isinstance(body, str) or body not in self.tensors:
                raise ValueError(f"{bad}: no stored tensor named {body!r}")
            self.used.add(body)
            return self.tensors[body]
        if tag == "float":
            if not isinstance(body, str) or body not in _FLOATS:
                raise ValueError(f"{bad}: a float tag holds 'inf', '-inf' or 'nan', got "
                                 f"{body!r}")
            return _FLOATS[body]
        if not isinstance(body, list):
            raise ValueError(f"{bad}: the {tag!r} tag needs a list, got {type(body).__name__}")
        if tag == "tuple":
            return tuple(self.build(v, (*path, i), depth + 1) for i, v in enumerate(body))
        if tag not in _DICT_TAGS:
            raise ValueError(f"{bad}: unknown tag {tag!r}")
        out = _DICT_TAGS[tag]()
        for item in body:
            if not (isinstance(item, list) and len(item) == 2):
                raise ValueError(f"{bad}: a dict item must be [key, value], got {item!r}")
            k, v = item
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise ValueError(f"{bad}: a dict key must be a str or an int, got {k!r}")
            if k in out:
                raise ValueError(f"{bad}: the key {k!r} appears twice")
            out[k] = self.build(v, (*path, k), depth + 1)
        return out


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
    view = _bytes_of(arr)
    if sys.byteorder == "big" and arr.itemsize > 1:
        view = _swapped(view, _DTYPES[_NAMES[arr.dtype.name]][2])
    fh.write(view)


# ---------------------------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------------------------

def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         device=None, **pickle_load_args):
    """What save stored in the safetensors file f (a str, os.PathLike or binary file
    object), with torch.load's arguments: the dict of name -> Tensor of a plain file, or the
    checkpoint rebuilt exactly (tuples, lists, int keys, OrderedDict and Counter as saved; a
    tensor saved twice comes back as one Tensor in both places; carray Arrays as Tensors).
    The file holds CPU tensors; map_location puts them elsewhere: a device ("cpu", "gpu",
    "cuda", "cuda:0", autograd.device), a dict mapping the saved location ("cpu") to a device,
    or a callable(tensor, "cpu") returning the tensor to use (None keeps it).
    device= is the older name of a device map_location.
    weights_only and mmap are accepted: loading only ever reads tensors and never runs code
    (the safety weights_only=True asks for), and the file is read into memory, not mapped.
    ValueError when the file is truncated or corrupted (the message says what is wrong; a
    checkpoint's structure is checked value by value, depth and size limited) or
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
        entries, meta = _parse_header(fh.read(n))
        _check_offsets(entries, size - 8 - n)
        out = {}
        for name, code, shape, begin, end in entries:
            out[name] = place(Tensor._wrap(_read_array(fh, name, code, shape, end - begin)))
    if meta and _STRUCTURE in meta:
        return _rebuild(meta[_STRUCTURE], out)
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
    meta = dict(header.get(_METADATA) or {})
    meta.pop(_STRUCTURE, None)      # (a checkpoint's structure, not the caller's metadata)
    return meta


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
    """([(name, dtype code, shape, begin, end)] sorted by offsets, each entry checked; the
    metadata dict or None)."""
    header = _decode_header(raw)
    entries = []
    for name, info in header.items():
        if name == _METADATA:
            continue
        entries.append(_entry(name, info))
    entries.sort(key=lambda e: (e[3], e[4]))
    return entries, header.get(_METADATA)


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
    view = _bytes_of(arr)
    if fh.readinto(view) != nbytes:
        raise ValueError(f"truncated safetensors file: the data of tensor {name!r} ends early")
    if code == "BOOL" and view.tobytes().translate(None, b"\x00\x01"):
        raise ValueError(f"corrupted safetensors file: BOOL tensor {name!r} holds bytes other "
                         f"than 0 and 1")
    if sys.byteorder == "big" and itemsize > 1:
        view[:] = _swapped(view, fmt)
    return arr


def _bytes_of(arr):
    """A byte memoryview of a C-contiguous CPU array (bfloat16, which has no buffer format,
    through its uint16 bits)."""
    return memoryview(arr.view(carray.uint16) if arr.dtype == carray.bfloat16 else arr).cast("B")


def _swapped(view, fmt):
    """The bytes of view with every element of struct format fmt byte-swapped."""
    import array
    out = array.array(fmt, view.tobytes())
    out.byteswap()
    return memoryview(out).cast("B")
