"""carray.random: a counter-based generator (Philox4x32-10) with NumPy's Generator methods.

    g = carray.random.default_rng(42)      # or carray.random.Generator(42)
    g.random((2, 3))                       # float32 (carray's default float) in [0, 1)
    g.uniform(-1, 1, 5, dtype="float64")
    g.normal(0.0, 2.0, size=(4,))
    g.integers(0, 10, size=8)              # int64 in [0, 10)
    g.permutation(10)                      # a shuffled arange(10)

Methods take NumPy's argument names plus `dtype=` and `device=`; size=None returns a Python
scalar (as NumPy does) unless a parameter is an array. Parameters broadcast against each other
and against `size`.

The stream (the specification the OpenCL kernels reproduce bit for bit)
-----------------------------------------------------------------------
Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC'11), exactly Random123's philox4x32_10 (checked against its kat_vectors):

- key = (seed & 0xFFFFFFFF, seed >> 32), for a seed in [0, 2**64).
- block c of the stream = philox4x32_10(counter=(c & 0xFFFFFFFF, c >> 32, a, 0), key): four
  32-bit words w0..w3. `a`, the attempt, is 0 except for the retries of `integers` below; the
  last counter word is 0 (reserved).
- A generator keeps `offset`, the number of blocks used. A draw of n elements uses blocks
  offset .. offset + ceil(n / per_block) - 1, block b of the draw (counter offset + b) making
  elements b * per_block .. (b + 1) * per_block - 1, and then offset += ceil(n / per_block)
  (a scalar draw takes one block; an unused tail of the last block is dropped).
- 64-bit numbers: x0 = w0 | w1 << 32, x1 = w2 | w3 << 32.
- All float arithmetic is IEEE round-to-nearest with no fused multiply-add (an OpenCL port
  needs `#pragma OPENCL FP_CONTRACT OFF`).

per method and dtype (i is the element's position in the draw, C order):

- random/uniform float32, 4 per block: u = (w[i % 4] >> 8) * 2**-24; out = low + (high - low)
  * u in float32 arithmetic (no fused multiply-add).
- random/uniform float64, 2 per block: u = (x[i % 2] >> 11) * 2**-53; out = low + (high - low)
  * u in float64.
- normal, Box-Muller: a pair of integers (v1, v2) of `bits` bits gives
  r = sqrt(-2 ln u1) with u1 = (v1 + 1) 2**-bits in (0, 1], and t = 2 pi v2 2**-bits;
  z = (r cos t, r sin t). float32, 4 per block: elements 2p, 2p + 1 of a block (p = 0, 1) from
  v1, v2 = w[2p], w[2p + 1] with bits = 32, computed in float64 and rounded to float32 once;
  out = loc + scale * z in float32 (|z| <= 6.66). float64, 2 per block: v1, v2 = x0 >> 11,
  x1 >> 11 with bits = 53 (|z| <= 8.57); out = loc + scale * z.
  No libm: everything is IEEE float64 +, -, *, / and sqrt in a fixed order, so every device with
  float64 gives the same bits (Horner(y; cn .. c0) means (..(cn y + cn-1) y + ..) y + c0):
  * ln(v 2**-bits), 1 <= v <= 2**53: float64(v) = m 2**e with m in [1, 2); when m > sqrt(2),
    m = m * 0.5 and e = e + 1. t = (m - 1) / (m + 1), y = t * t,
    p = Horner(y; l9 .. l0) * y + 1 with lk = 1 / (2k + 3), k = e - bits,
    ln = k * LN2_HI + (k * LN2_LO + (t + t) * p), LN2_HI + LN2_LO = ln 2 split as fdlibm's.
  * cos and sin of 2 pi v 2**-bits, 0 <= v < 2**bits: q = (v + 2**(bits-3)) >> (bits-2)
    quarter turns (integers), a = float64(v - q 2**(bits-2)) * (2 pi / 2**bits) in
    [-pi/4, pi/4], y = a * a; sin a = a + a * y * Horner(y; s7 .. s0) with
    sk = (-1)**(k+1) / (2k+3)!; cos a = 1 - 0.5 * y + y * y * Horner(y; c7 .. c0) with
    ck = (-1)**k / (2k+4)!. Then by q: swap (cos, sin) when q is odd, negate cos when
    (q + 1) & 2, negate sin when q & 2.
  ln is within about an ulp, cos and sin within 5e-16 of the exact values (measured);
  tests/carray/test_random.py writes the
  whole stream out in Python and checks carray against it bit for bit.
- integers (any dtype), 2 per block, span s = high - low (+1 with endpoint), 0 meaning 2**64:
  Lemire's multiply-shift, x * s = hi * 2**64 + lo with x = x[i % 2]; accepted when lo >=
  2**64 mod s, then out = low + hi; a rejected x is replaced by number i % 2 of the same block
  at attempt a = 1, 2, ... Exactly uniform; the rejection rate is below s / 2**64.
- permutation(n): position i of a draw of n gives j_i uniform in [0, i] (the integers rule with
  s = i + 1), then inside-out Fisher-Yates: for i in 0..n-1: a[i] = a[j_i]; a[j_i] = i.

Guarantees: the numbers depend only on (seed, offset, position), never on the number of threads
or the device. A draw of n elements equals the first n of a draw of m > n elements made at the
same offset; two successive draws whose sizes are multiples of per_block equal one draw of the
sum.
"""

import os

from carray.cpu._random import Generator, philox4x32_10_block

__all__ = ["Generator", "default_rng", "philox4x32_10_block"]


def default_rng(seed=None):
    """A new Generator(seed); seed None takes 8 bytes from os.urandom, a Generator is returned
    as it is (as numpy.random.default_rng)."""
    if isinstance(seed, Generator):
        return seed
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    return Generator(seed)
