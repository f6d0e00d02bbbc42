"""Inputs and float64 NumPy expectations for test/Integration/CPU/numerics.test.

  gen.py norm rms|layer DIR      rows at 1e-30, 1e30, 3e38, denormal, NaN,
                                  Inf, zero and ordinary scale
  gen.py sdpa SCALE DIR [nan|inf] causal attention with q = SCALE * x,
                                  k = v = x (logits ~ SCALE); a non-finite
                                  value in token 3 (batch 0) or 4 (batch 1)
  gen.py inject IN.npy OUT.npy CLEAN.npy B T VALUE
                                  OUT = IN with x[B, T, 0] = VALUE (nan,
                                  inf); CLEAN = IN with x[B, T, 0] = 0
  gen.py check-causal Y.npy REF.npy B T
                                  positions >= T of batch B are all NaN;
                                  the other positions match REF
The attention reference sums only over visible keys (a masked key has no
effect, as in fused attention kernels), unlike eager PyTorch, where
0 x NaN in the masked product spreads a NaN to earlier positions.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "..", "utils"))
import blockc_ref as R  # noqa: E402


def weights(path, named):
    R.write_safetensors(path, [(n, "F32", v.shape, R.encode_tensor(v, "F32"))
                               for n, v in named])


def norm(kind, out):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, 64))
    x[0, 0] *= 1e-30
    x[0, 1] *= 1e30
    x[0, 2] = 3e38 * np.sign(x[0, 2])
    x[0, 3] *= 1e-42
    x[0, 4, 5] = np.nan
    x[0, 5, 7] = np.inf
    x[0, 6, :] = 0.0
    x = x.astype(np.float32)
    g = (1 + 0.1 * rng.standard_normal(64)).astype(np.float32)
    b = (0.1 * rng.standard_normal(64)).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if kind == "rms":
            weights(os.path.join(out, "w.safetensors"), [("g", g)])
            y = xd / np.sqrt(np.mean(xd * xd, -1, keepdims=True) + 1e-6) * g
        else:
            weights(os.path.join(out, "w.safetensors"), [("g", g), ("b", b)])
            m = np.mean(xd, -1, keepdims=True)
            v = np.mean((xd - m) ** 2, -1, keepdims=True)
            y = (xd - m) / np.sqrt(v + 1e-5) * g + b
    np.save(os.path.join(out, "ref.npy"), y.astype(np.float32))


def sdpa(scale, out, bad):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 9, 64)).astype(np.float32)
    if bad == "nan":
        x[0, 3, 5] = np.nan
    elif bad == "inf":
        x[1, 4, 2] = np.inf
    np.save(os.path.join(out, "x.npy"), x)
    weights(os.path.join(out, "w.safetensors"),
            [("qscale", np.full(64, scale, np.float32))])
    xd = x.astype(np.float64).reshape(2, 9, 4, 16)
    o = np.zeros_like(xd)
    with np.errstate(all="ignore"):
        for b in range(2):
            for h in range(4):
                for t in range(9):
                    q = xd[b, t, h] * scale
                    k = xd[b, :t + 1, h]
                    s = k @ q / 4.0
                    p = np.exp(s - s.max())
                    o[b, t, h] = (p / p.sum()) @ k
    np.save(os.path.join(out, "ref.npy"), o.reshape(2, 9, 64).astype(np.float32))


def check_causal(y_path, ref_path, b, t):
    y, ref = np.load(y_path), np.load(ref_path)
    if not np.isnan(y[b, t:]).all():
        sys.exit("positions >= %d of batch %d are not all NaN" % (t, b))
    y[b, t:] = 0.0
    ref = ref.copy()
    ref[b, t:] = 0.0
    err, scale = R.compare_arrays(y, ref, 1e-5)
    print("causal NaN ok: positions >= %d of batch %d NaN, the rest "
          "max_abs_err=%.3g" % (t, b, err))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "norm":
        norm(sys.argv[2], sys.argv[3])
    elif cmd == "sdpa":
        sdpa(float(sys.argv[2]), sys.argv[3],
             sys.argv[4] if len(sys.argv) > 4 else "")
    elif cmd == "inject":
        x = np.load(sys.argv[2])
        b, t = int(sys.argv[5]), int(sys.argv[6])
        clean = x.copy()
        clean[b, t, 0] = 0.0
        x[b, t, 0] = float(sys.argv[7])
        np.save(sys.argv[3], x)
        np.save(sys.argv[4], clean)
    else:
        check_causal(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                     int(sys.argv[5]))
