"""DistributedDataParallel (torch.nn.parallel): one model replica per MPI rank, gradients
averaged over the ranks during backward.

How the gradients travel: parameters are grouped, in reverse registration order (roughly the
order backward produces their gradients), into buckets of at most bucket_cap_mb; after the
first backward that synchronizes, the buckets are rebuilt in the order the gradients really
came (rank 0's order, broadcast; torch's "rebuilt buckets"), so that no bucket waits for a
parameter that comes late (a bias registered after its weight, say). A
post-accumulate-grad hook on each parameter copies its new .grad into its bucket's buffer (on the
GPU a device buffer, read to the host once the bucket is full); when a bucket is full it is
all-reduced asynchronously (MPI Iallreduce), so communication
overlaps the rest of backward. Buckets start in the same order on every rank. A callback queued
on the engine (autograd.engine.queue_callback) waits for all of them at the end of backward and
writes the averages back into .grad.
"""

import contextlib

import carray
from autograd import distributed as dist
from autograd.distributed.collectives import _all_reduce_host_sum, _broadcast_unchecked
from autograd.engine import queue_callback
from autograd.grad_mode import is_grad_enabled
from autograd.nn.module import Module
from autograd.tensor import Tensor

__all__ = ["DistributedDataParallel"]

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This "
    "error indicates that your module has parameters that were not used in producing loss. You "
    "can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by making "
    "sure all `forward` function outputs participate in calculating loss.")


_FIRST_BUCKET_BYTES = 1024 * 1024      # torch's dist._DEFAULT_FIRST_BUCKET_BYTES


class _Bucket:
    """Parameters whose gradients travel together in one host buffer (flat). On the GPU the
    gradients first gather in a device buffer of the same layout (device copies, no waiting),
    which crosses to the host in one read queued when the bucket is full (the host goes on
    queueing backward's kernels; the all-reduce starts once the read has arrived) and back in
    one write at the end of backward: two transfers per bucket instead of two per parameter."""

    def __init__(self, params, dtype):
        self.params = params
        self.offsets = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.flat = carray.zeros(n, dtype=dtype)
        self.device_flat = None
        self.ready = [False] * len(params)
        self.pending = len(params)
        self.work = None
        self.read = None        # the queued device-to-host copy (a pyopencl Event)

    def reset(self):
        self.ready = [False] * len(self.params)
        self.pending = len(self.params)
        self.work = None
        self.read = None

    def _staging(self):
        """The buffer gradients gather in: flat on the CPU, else a device buffer on the
        parameters' device (made on first use, remade if the module moved)."""
        dev = self.params[0].array.device
        if dev == "cpu":
            return self.flat
        if self.device_flat is None or self.device_flat.device != dev:
            n, dtype = self.flat.shape[0], self.flat.dtype
            self.device_flat = carray.zeros(n, dtype=dtype, device=dev)
            self.flat = carray.opencl.pinned_empty(n, dtype)   # copies at full speed
        return self.device_flat

    def put(self, i, grad):
        """Copy parameter i's gradient (None: zeros) into the staging buffer."""
        a, n = self.offsets[i], self.params[i].numel()
        buf = self._staging()
        if grad is None:
            buf[a:a + n] = 0
        else:
            buf[a:a + n] = grad.array.reshape(-1)
        self.ready[i] = True
        self.pending -= 1

    def start_read(self):
        """Queue the full bucket's copy into flat (on the GPU; nothing to do on the CPU)."""
        buf = self._staging()
        if buf is not self.flat:
            self.read = carray.opencl.download_async(buf, self.flat)

    def read_done(self, wait):
        """True when flat holds the gradients; with wait, waits for the copy first."""
        if self.read is not None:
            if not wait and self.read.command_execution_status > 0:    # 0: CL_COMPLETE
                return False
            self.read.wait()
            self.read = None
        return True

    def average(self, world):
        """Divide the summed gradients by world: on the device after one write back there,
        or in flat on the CPU."""
        buf = self._staging()
        if buf is not self.flat:
            buf[...] = self.flat
        buf /= world

    def take(self, i, used):
        """Write the averaged gradient back into parameter i's .grad (after average)."""
        p = self.params[i]
        a, n = self.offsets[i], p.numel()
        avg = self._staging()[a:a + n].reshape(p.shape)
        if p.grad is None:
            if used:
                p.grad = Tensor._wrap(avg.copy())
            return
        p.grad.array[...] = avg
        p.grad._vc[0] += 1


class DistributedDataParallel(Module):
    """DistributedDataParallel(module, device_ids=None, output_device=None, dim=0,
    broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
    find_unused_parameters=False, check_reduction=False, gradient_as_bucket_view=False,
    static_graph=False): wraps `module` (kept as .module, state_dict keys 'module.*') so that
    after backward every rank holds the gradients averaged over all ranks of process_group
    (the default group when None; a group from dist.new_group averages within it).

    At construction the parameters and buffers of the group's first rank are copied to every
    rank; with broadcast_buffers, buffers (BatchNorm's running statistics) again at each
    forward. Within no_sync() gradients only accumulate locally. With find_unused_parameters,
    parameters that got no gradient on a rank take part as zeros; without it such a model
    raises RuntimeError at the next forward, as torch's. Raises the process group's error
    before init_process_group, RuntimeError for a module without parameters that require grad,
    ValueError when the ranks' parameters differ in shape or dtype or this rank is not in
    process_group."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps an nn.Module, got "
                            f"{type(module).__name__}")
        if process_group is not None and process_group == dist.GroupMember.NON_GROUP_MEMBER:
            raise ValueError("DistributedDataParallel: this rank is not a member of "
                             "process_group (new_group returned NON_GROUP_MEMBER here)")
        world = dist.get_world_size(process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if bucket_cap_mb is None:
            bucket_cap_mb = 25
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be > 0, got "
                             f"{bucket_cap_mb}")
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._world = world
        self._params = params
        self._sync_states([*module.parameters(), *module.buffers()], check=True)
        self._buckets, self._where = self._make_buckets(list(reversed(params)))
        self._ready_order = []          # parameter indices in gradient order, until rebuilt
        self._rebuilt = False
        self._armed = False
        self._queued = False
        self._next_read = 0             # buckets whose copy to the host is queued
        self._next_launch = 0           # buckets whose all-reduce has started
        self._unfinished = False
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._on_grad)
                              for p in params]

    # -- construction ------------------------------------------------------------------------

    def _sync_states(self, tensors, check=False):
        """Copy rank 0's values of the tensors to every rank."""
        if self._world == 1:
            return
        if check:
            for t in tensors:       # the checked broadcast: ranks with other shapes raise
                dist.broadcast(t.detach(), group=self.process_group, group_src=0)
            return
        # CPU tensors go to MPI as they are (no copy); device tensors of one dtype are packed
        # into one device buffer first: one transfer each way instead of one per tensor
        works = [_broadcast_unchecked(t.detach(), 0, self.process_group) for t in tensors
                 if t.array.device == "cpu"]
        packs = {}
        for t in tensors:
            if t.array.device != "cpu":
                packs.setdefault((t.array.device, t.array.dtype), []).append(t)
        flats = []
        for group in packs.values():
            flat = Tensor._wrap(carray.concatenate([t.array.reshape(-1) for t in group]))
            works.append(_broadcast_unchecked(flat, 0, self.process_group))
            flats.append((group, flat))
        for w in works:
            w.wait()
        if dist.get_rank(self.process_group) == 0:
            return          # the source's values are the broadcast ones
        for group, flat in flats:
            a = 0
            for t in group:
                n = t.numel()
                t.array[...] = flat.array[a:a + n].reshape(t.shape)
                t._vc[0] += 1
                a += n

    def _make_buckets(self, params):
        """Buckets of at most bucket_bytes_cap bytes (the first of at most 1 MiB, as torch's,
        so communication starts early in backward), parameters in the given order, one dtype
        each; and {id(param): (bucket number, index in it)}."""
        buckets, where = [], {}
        current, size, dtype = [], 0, None
        for p in params:
            nbytes = p.numel() * p.element_size()
            cap = min(self.bucket_bytes_cap, _FIRST_BUCKET_BYTES) if not buckets \
                else self.bucket_bytes_cap
            if current and (p.dtype != dtype or size + nbytes > cap):
                buckets.append(_Bucket(current, current[0].array.dtype))
                current, size = [], 0
            current.append(p)
            size += nbytes
            dtype = p.dtype
        buckets.append(_Bucket(current, current[0].array.dtype))
        for b, bucket in enumerate(buckets):
            for i, p in enumerate(bucket.params):
                where[id(p)] = (b, i)
        return buckets, where

    # -- forward -----------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._unfinished:
            raise RuntimeError(_UNFINISHED)
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                self._sync_states(buffers)
        if is_grad_enabled() and self.require_backward_grad_sync:
            for bucket in self._buckets:
                bucket.reset()
            self._next_read = self._next_launch = 0
            self._queued = False
            self._armed = True
        else:
            self._armed = False
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Within this context, backward accumulates gradients locally without communication;
        the first backward after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- backward ----------------------------------------------------------------------------

    def _on_grad(self, param):
        """A parameter's .grad is final for this backward: stage it, start full buckets."""
        if not self._armed:
            return
        if not self._queued:
            queue_callback(self._finish_backward)
            self._queued = True
        b, i = self._where[id(param)]
        bucket = self._buckets[b]
        if bucket.ready[i]:
            return
        if not self._rebuilt:
            self._ready_order.append(param)
        bucket.put(i, param.grad)
        self._launch_ready()
        for bucket in self._buckets[:self._next_launch]:
            bucket.work.is_completed()   # lets MPI progress the started all-reduces

    def _launch_ready(self, wait=False):
        """Queue the host copies of the buckets that are full, then start the all-reduces of
        those whose copy has arrived (with wait: of all of them), in bucket order (the same on
        every rank)."""
        buckets = self._buckets
        while self._next_read < len(buckets) and not buckets[self._next_read].pending:
            buckets[self._next_read].start_read()
            self._next_read += 1
        while self._next_launch < self._next_read:
            bucket = buckets[self._next_launch]
            if not bucket.read_done(wait):
                return
            bucket.work = _all_reduce_host_sum(bucket.flat, self.process_group)
            self._next_launch += 1

    def _finish_backward(self):
        """End of backward: wait for every bucket and write the averages into .grad."""
        self._armed = False
        used = None
        if self._next_read < len(self._buckets) and not self.find_unused_parameters:
            self._unfinished = True
            self._launch_ready(wait=True)
            for bucket in self._buckets[:self._next_launch]:
                bucket.work.wait()
            return
        if self.find_unused_parameters:
            # which parameters got a gradient on some rank (torch's local_used_map)
            used = carray.zeros(len(self._params), dtype=carray.int32)
            for n, p in enumerate(self._params):
                b, i = self._where[id(p)]
                if self._buckets[b].ready[i]:
                    used[n] = 1
                else:
                    self._buckets[b].put(i, None)
        # every bucket's all-reduce starts before `used`'s, in bucket order on every rank (MPI
        # matches non-blocking collectives by the order they start in)
        self._launch_ready(wait=True)
        if used is not None:
            _all_reduce_host_sum(used, self.process_group).wait()
        for bucket in self._buckets:
            bucket.work.wait()
            bucket.average(self._world)
        for n, p in enumerate(self._params):
            b, i = self._where[id(p)]
            self._buckets[b].take(i, used is None or int(used[n]) > 0)
        if not self._rebuilt:
            self._rebuild_buckets()

    def _rebuild_buckets(self):
        """Buckets in the order this backward produced the gradients (rank 0's order on every
        rank; parameters that got none last, in reverse registration order)."""
        index = {id(p): n for n, p in enumerate(self._params)}
        order = [index[id(p)] for p in self._ready_order]
        seen = set(order)
        order += [n for n in reversed(range(len(self._params))) if n not in seen]
        if self._world > 1:
            box = [order]
            dist.broadcast_object_list(box, group=self.process_group, group_src=0)
            order = box[0]
        self._buckets, self._where = self._make_buckets([self._params[n] for n in order])
        self._ready_order = []
        self._rebuilt = True
