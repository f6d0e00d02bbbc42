#!/usr/bin/env python3
"""Why f16 blocks do not use AVX512_FP16's FMAs (docs/Precision.md).

One projection row y = sum_k x_k w_k (K = 4096, activations ~ N(0, 1),
weights ~ N(0, 0.02), all f16), computed as blockc's f16 kernels do (the
f16 values widened, f32 accumulation: F16C + vfmadd231ps) and as
AVX512_FP16's vfmadd231ph would (32 lanes each accumulating K / 32
products in f16, one rounding per FMA, then a tree sum in f16), each
against the exact (float64) sum, as a fraction of the output scale, beside
the tolerance with which `utils/blockc_ref.py compare --dtype f16` checks
f16 blocks (max 2u, rms u / 8 of the scale, u = 2^-11).

  benchmarks/f16_accumulation.py [--out FILE]

Result: benchmarks/results/f16-accumulation/result.txt.
"""

import argparse
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results",
        "f16-accumulation", "result.txt"))
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    k, n, lanes = 4096, 256, 32
    x = rng.standard_normal(k).astype(np.float16)
    w = (rng.standard_normal((n, k)) * 0.02).astype(np.float16)
    exact = w.astype(np.float64) @ x.astype(np.float64)
    f32 = w.astype(np.float32) @ x.astype(np.float32)
    acc = np.zeros((n, lanes), np.float16)
    wl = w.reshape(n, k // lanes, lanes).astype(np.float64)
    xl = x.reshape(k // lanes, lanes).astype(np.float64)
    for s in range(k // lanes):
        acc = (acc.astype(np.float64) + wl[:, s, :] * xl[s]).astype(
            np.float16)
    while acc.shape[1] > 1:
        h = acc.shape[1] // 2
        acc = (acc[:, :h].astype(np.float32) + acc[:, h:]).astype(np.float16)
    scale = np.abs(exact).max()
    u = 2.0 ** -11
    lines = []
    for name, y in (("f32 accumulation", f32),
                    ("f16 accumulation (vfmadd231ph)", acc[:, 0])):
        err = np.abs(y.astype(np.float64) - exact)
        lines.append("%-32s max_abs_err/scale %.2e  rms/scale %.2e"
                     % (name, err.max() / scale,
                        np.sqrt((err ** 2).mean()) / scale))
    lines.append("f16 unit roundoff u = %.2e; compare --dtype f16 allows "
                 "max 2u = %.2e, rms u/8 = %.2e of the scale"
                 % (u, 2 * u, u / 8))
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as fh:
        fh.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
