"""Attention-only models for the CPU attention kernel's edge paths.

  gen.py DIR H HKV D B T [--q-from N] [--kv-from N] [--full] [--nan N]

writes DIR/model.mlir (@forward(x [B, T, H*D]) -> [B, T, H*D]: q = the
rows [q-from, T) of x as H heads (the first q-from output rows are 0), k / v = the rows [kv-from, T) of the
first / second H_kv*D columns, sdpa causal unless --full), DIR/x.npy (seeded
normal) and DIR/ref.npy (float64 NumPy, bottom-right aligned causal mask,
rows without a visible key are 0; a masked key has no effect, so a NaN
reaches exactly the rows that see it).
"""
import argparse
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    for n in ("h", "hkv", "d", "b", "t"):
        ap.add_argument(n, type=int)
    ap.add_argument("--q-from", type=int, default=0)
    ap.add_argument("--kv-from", type=int, default=0)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--nan", type=int, default=-1,
                    help="NaN in the key and the value of this token "
                         "(batch 0, kv head 0)")
    a = ap.parse_args()
    h, hkv, d, qf, kf = a.h, a.hkv, a.d, a.q_from, a.kv_from
    assert 2 * hkv <= h
    w = h * d
    causal = "" if a.full else " {causal}"
    m = f"""func.func @forward(%x: tensor<?x?x{w}xf32>) -> tensor<?x?x{w}xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x{w}xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x{w}xf32>
  %tq = arith.subi %t, %c{qf} : index
  %tk = arith.subi %t, %c{kf} : index
  %xq = tensor.extract_slice %x[0, {qf}, 0] [%b, %tq, {w}] [1, 1, 1] : tensor<?x?x{w}xf32> to tensor<?x?x{w}xf32>
  %xk = tensor.extract_slice %x[0, {kf}, 0] [%b, %tk, {hkv * d}] [1, 1, 1] : tensor<?x?x{w}xf32> to tensor<?x?x{hkv * d}xf32>
  %xv = tensor.extract_slice %x[0, {kf}, {hkv * d}] [%b, %tk, {hkv * d}] [1, 1, 1] : tensor<?x?x{w}xf32> to tensor<?x?x{hkv * d}xf32>
  %q = tensor.expand_shape %xq [[0], [1], [2, 3]] output_shape [%b, %tq, {h}, {d}] : tensor<?x?x{w}xf32> into tensor<?x?x{h}x{d}xf32>
  %k = tensor.expand_shape %xk [[0], [1], [2, 3]] output_shape [%b, %tk, {hkv}, {d}] : tensor<?x?x{hkv * d}xf32> into tensor<?x?x{hkv}x{d}xf32>
  %v = tensor.expand_shape %xv [[0], [1], [2, 3]] output_shape [%b, %tk, {hkv}, {d}] : tensor<?x?x{hkv * d}xf32> into tensor<?x?x{hkv}x{d}xf32>
  %o = transformer.sdpa %q, %k, %v{causal} : tensor<?x?x{h}x{d}xf32>, tensor<?x?x{hkv}x{d}xf32>, tensor<?x?x{hkv}x{d}xf32> -> tensor<?x?x{h}x{d}xf32>
  %r = tensor.collapse_shape %o [[0], [1], [2, 3]] : tensor<?x?x{h}x{d}xf32> into tensor<?x?x{w}xf32>
  %e = tensor.empty(%b, %t) : tensor<?x?x{w}xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x{w}xf32>) -> tensor<?x?x{w}xf32>
  %y = tensor.insert_slice %r into %z[0, {qf}, 0] [%b, %tq, {w}] [1, 1, 1] : tensor<?x?x{w}xf32> into tensor<?x?x{w}xf32>
  return %y : tensor<?x?x{w}xf32>
}}
"""
    for c in sorted({qf, kf} - {0, 1}):
        m = m.replace("  %c1 = arith.constant 1 : index\n",
                      f"  %c1 = arith.constant 1 : index\n"
                      f"  %c{c} = arith.constant {c} : index\n", 1)
    with open(os.path.join(a.dir, "model.mlir"), "w") as f:
        f.write(m)

    rng = np.random.default_rng(h * 1000 + d * 10 + a.t)
    x = rng.standard_normal((a.b, a.t, w)).astype(np.float32)
    if a.nan >= 0:
        x[0, a.nan, 0] = np.nan
        x[0, a.nan, hkv * d] = np.nan
    np.save(os.path.join(a.dir, "x.npy"), x)
    xd = x.astype(np.float64)
    np.seterr(all="ignore")
    q = xd[:, qf:].reshape(a.b, a.t - qf, h, d)
    k = xd[:, kf:, :hkv * d].reshape(a.b, a.t - kf, hkv, d)
    v = xd[:, kf:, hkv * d:2 * hkv * d].reshape(a.b, a.t - kf, hkv, d)
    tq, s = q.shape[1], k.shape[1]
    o = np.zeros_like(q)
    for bi in range(a.b):
        for hi in range(h):
            kv = hi // (h // hkv)
            for t in range(tq):
                end = min(t + s - tq + 1, s) if not a.full else s
                if end <= 0:
                    continue
                sc = k[bi, :end, kv] @ q[bi, t, hi] / np.sqrt(d)
                p = np.exp(sc - sc.max())
                o[bi, t, hi] = (p / p.sum()) @ v[bi, :end, kv]
    y = np.zeros((a.b, a.t, w))
    y[:, qf:] = o.reshape(a.b, tq, w)
    np.save(os.path.join(a.dir, "ref.npy"), y.astype(np.float32))


if __name__ == "__main__":
    main()
