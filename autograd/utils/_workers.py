"""DataLoader's worker processes, as torch.utils.data's: each worker takes (epoch, task, indices)
from its own index queue, fetches the batch and puts (epoch, task, batch) on the shared result
queue; the main process hands tasks out round-robin, keeps prefetch_factor tasks per worker in
flight and gives batches back in task order (the order of num_workers=0).

Batches cross processes by pickling (Tensors and carray arrays pickle their values). An exception
in a worker comes back as an _ExceptionWrapper holding the worker's traceback text and is raised
again in the main process. Workers stop on a None task, and on their own when the main process
is gone (checked every _STATUS_INTERVAL seconds).
"""

import multiprocessing
import os
import queue
import random
import sys
import time
import traceback

from autograd.factories import manual_seed

__all__ = ["WorkerInfo", "get_worker_info"]

_STATUS_INTERVAL = 5.0      # seconds between a worker's checks that the main process lives
_POLL_INTERVAL = 1.0        # seconds between the main process's checks that workers live
_JOIN_TIMEOUT = 1.0         # seconds a stopping worker gets before it is terminated
_worker_info = None         # set in a worker process only


class WorkerInfo:
    """What get_worker_info() returns in a worker: id, num_workers, seed, dataset (the worker's
    copy). The attributes are read-only (RuntimeError on assignment)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """The WorkerInfo of this DataLoader worker process; None in the main process."""
    return _worker_info


class _ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, to be raised again in the
    main process."""

    def __init__(self, where):
        exc_type, exc, _ = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, exc.__traceback__))
        self.where = where

    def reraise(self):
        """Raise an exception of the worker's exception type whose message is the worker's
        traceback (RuntimeError when that type cannot be built from one message)."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)       # KeyError would repr() the message
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self):
        return str(self)


def _worker_loop(fetcher, index_queue, result_queue, done_event, worker_init_fn, base_seed,
                 worker_id, num_workers, dataset, parent_pid):
    """A worker process's body: seed (base_seed + worker_id, for random and autograd), set
    get_worker_info(), call worker_init_fn(worker_id), then fetch batches until a None task."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = None
        try:
            if worker_init_fn is not None:
                worker_init_fn(worker_id)
        except Exception:
            init_error = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
        while True:
            try:
                task = index_queue.get(timeout=_STATUS_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:       # the main process is gone
                    break
                continue
            if task is None:
                break
            epoch, idx, indices = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher(indices)
                except Exception:
                    data = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
            result_queue.put((epoch, idx, data))
            del data
    except KeyboardInterrupt:
        pass                                  # the main process handles ^C
    # batches nobody will read must not keep this process alive at exit
    result_queue.cancel_join_thread()
    result_queue.close()


def _context(multiprocessing_context):
    if multiprocessing_context is None:
        return multiprocessing.get_context()
    if isinstance(multiprocessing_context, str):
        return multiprocessing.get_context(multiprocessing_context)
    return multiprocessing_context


def check_context(multiprocessing_context, num_workers):
    """PyTorch's checks of DataLoader(multiprocessing_context=): ValueError for an unknown start
    method name or for a context without worker processes, TypeError for a non-context."""
    if multiprocessing_context is None:
        return
    if num_workers == 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(multiprocessing_context, str):
        methods = multiprocessing.get_all_start_methods()
        if multiprocessing_context not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got "
                             f"multiprocessing_context={multiprocessing_context!r}")
    elif not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}")


class MultiProcessingIter:
    """The iterator of a DataLoader with num_workers > 0 (PyTorch's
    _MultiProcessingDataLoaderIter). fetcher(indices) makes one batch in a worker;
    index_source is the sampler of tasks' indices (iterated once per epoch). RuntimeError when
    a worker dies or no batch comes within timeout seconds (timeout > 0); a worker's exception
    is raised again here."""

    def __init__(self, loader, fetcher, index_source, base_seed):
        self._num_workers = loader.num_workers
        self._prefetch = loader.num_workers * (loader.prefetch_factor
                                               if loader.prefetch_factor is not None else 2)
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        self._index_source = index_source
        self._shutdown = False
        self._owner_pid = os.getpid()
        self._epoch = -1
        ctx = _context(loader.multiprocessing_context)
        self._done_event = ctx.Event()
        self._result_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        try:
            for worker_id in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(target=_worker_loop, daemon=True,
                                args=(fetcher, index_queue, self._result_queue, self._done_event,
                                      loader.worker_init_fn, base_seed, worker_id,
                                      self._num_workers, loader.dataset, os.getpid()))
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset()

    def _reset(self):
        """Start an epoch: a fresh pass over the indices, results of an unfinished earlier
        epoch dropped as they arrive."""
        self._epoch += 1
        self._indices = iter(self._index_source)
        self._send_idx = 0           # tasks handed out
        self._rcvd_idx = 0           # next task to give back (in order)
        self._outstanding = set()    # tasks handed out and not yet given back
        self._reorder = {}           # results that came before their turn
        for _ in range(self._prefetch):
            self._put_task()

    def _put_task(self):
        try:
            indices = next(self._indices)
        except StopIteration:
            return
        worker = self._send_idx % self._num_workers
        self._index_queues[worker].put((self._epoch, self._send_idx, indices))
        self._outstanding.add(self._send_idx)
        self._send_idx += 1

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_source)

    def __next__(self):
        while True:
            if self._in_order and self._rcvd_idx in self._reorder:
                data = self._reorder.pop(self._rcvd_idx)
                break
            if not self._outstanding:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            epoch, idx, data = self._get_data()
            if epoch != self._epoch or idx not in self._outstanding:
                continue                      # a batch of an earlier epoch
            if self._in_order and idx != self._rcvd_idx:
                self._reorder[idx] = data
                continue
            break
        idx = self._rcvd_idx if self._in_order else idx
        self._outstanding.discard(idx)
        self._rcvd_idx += 1
        self._put_task()
        if isinstance(data, _ExceptionWrapper):
            data.reraise()
        return data

    def _get_data(self):
        if self._shutdown:
            raise RuntimeError("DataLoader iterator used after its workers were shut down")
        start = time.monotonic()
        while True:
            wait = _POLL_INTERVAL
            if self._timeout > 0:
                wait = min(wait, max(0.0, start + self._timeout - time.monotonic()))
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            dead = [w.pid for w in self._workers if not w.is_alive()]
            if dead:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) "
                                   f"exited unexpectedly")
            if self._timeout > 0 and time.monotonic() - start >= self._timeout:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _shutdown_workers(self):
        """Stop the workers (a None task each; terminate those still alive after a while) and
        close the queues. Safe to call more than once."""
        if self._shutdown or os.getpid() != self._owner_pid:
            return          # (a forked child's copy of this iterator owns nothing)
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=_JOIN_TIMEOUT)
            if w.is_alive():
                w.terminate()
                w.join()
        for q in self._index_queues:
            q.close()
        self._result_queue.cancel_join_thread()
        self._result_queue.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:             # interpreter shutdown: modules may be gone
            pass
