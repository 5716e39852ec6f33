"""Where the time of W10 (char-GPT AdamW step) and W11 (LSTM LM SGD step) goes on the OpenCL
device, through autograd.profiler: the rows with the most device time and the most host time
of a few steps (after a warm-up step that builds the kernels).

    BENCH_MODELS_DEVICE=gpu python bench/profile_models_gpu.py [steps]
"""

import os
import pathlib
import sys
import time

os.environ.setdefault("BENCH_MODELS_DEVICE", "gpu")
sys.path[:0] = [str(pathlib.Path(__file__).resolve().parent),
                str(pathlib.Path(__file__).resolve().parent.parent)]

import test_bench_models as W  # noqa: E402

import autograd  # noqa: E402
from autograd.profiler import profile  # noqa: E402


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    dev = W.DEVICE
    work = {
        "W10": lambda: W._gpt_step(autograd, W._models("train_gpt", "GPT", W.GPT, None)[1],
                                   dev),
        "W11": lambda: W._lm_step(autograd, W._models("word_lm", "RNNModel", W.LM, None)[1],
                                  dev),
    }
    for name, make in work.items():
        step = make()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        wall = (time.perf_counter() - t0) / steps
        with profile() as prof:
            for _ in range(steps):
                step()
        rows = prof.key_averages()
        print(f"== {name} on {dev}: {wall * 1e3:.2f} ms per step ({steps} steps profiled)")
        print(rows.table(sort_by="self_device_time_total", row_limit=15))
        print(rows.table(sort_by="self_cpu_time_total", row_limit=15))


if __name__ == "__main__":
    main()
