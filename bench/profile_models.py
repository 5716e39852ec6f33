"""cProfile of autograd's W10 (char-GPT AdamW step) and W11 (LSTM LM SGD step) on the CPU: where
the time of bench/test_bench_models.py's steps goes.

    python bench/profile_models.py [steps] [out.txt]      # default 10 steps, stdout

Prints, per workload, the mean step time and the top functions by own time and by cumulative
time.
"""

import cProfile
import io
import pathlib
import pstats
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import test_bench_models as W  # noqa: E402

import autograd  # noqa: E402


def profile(name, step, steps, out):
    step()
    t0 = time.perf_counter()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    elapsed = (time.perf_counter() - t0) / steps
    out.write(f"== {name}: {1000 * elapsed:.1f} ms per step under cProfile ({steps} steps)\n")
    for key in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats(key).print_stats(25)
        out.write(buf.getvalue().split("\n", 6)[-1])


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    autograd.manual_seed(0)
    _, gpt = W._models("train_gpt", "GPT", W.GPT, None)
    profile("W10 char-GPT AdamW step", W._gpt_step(autograd, gpt, "cpu"), steps, out)
    _, lm = W._models("word_lm", "RNNModel", W.LM, None)
    profile("W11 LSTM LM SGD step", W._lm_step(autograd, lm, "cpu"), steps, out)


if __name__ == "__main__":
    main()
