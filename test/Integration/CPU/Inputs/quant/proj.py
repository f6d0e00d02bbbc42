"""Two projections for weight-quant-shapes.test and reduced-precision.test.

  proj.py DIR K N Q1 Q2 T [--batch B] [--dtype bf16|f16] [--panels]
          [--activations]

writes DIR/model.mlir (@forward(x [B, T, K]) = (x W1'^T) W2'^T with W1
[N, K] quantised as Q1 and W2 [K, N] as Q2: int8 or int4-G), DIR/w.safetensors,
DIR/x.npy, DIR/ref.npy (float64 on the weights dequantised by
blockc_ref.fake_quant, the f32 rules of #transformer.weight_quant) and
DIR/ref.f32.npy (the same on the unquantised weights). Q "none" is an
unquantised projection. With --dtype the model's tensors are bf16 or f16 and
the reference rounds the input, the weights and each projection's result
to that type (docs/Precision.md); --panels sets a packed-panel
blockc_codegen.weight_layout on both projections by hand. --activations
adds `activations = int8` to the quantised projections (their inputs
quantised per row and run of 32 columns, blockc_ref.quantize_activations)
and writes DIR/ref.wo.npy, the weight-only reference.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), *[".."] * 5,
                                "utils"))
import blockc_ref  # noqa: E402


def attr(q):
    if q == "none":
        return "", None
    if q == "int8":
        return "#transformer.weight_quant<int8>", ("int8", 32)
    g = int(q.split("-")[1])
    return ("#transformer.weight_quant<int4, group_size = %d>" % g,
            ("int4", g))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("k", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("q1")
    ap.add_argument("q2")
    ap.add_argument("t", type=int)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="f32")
    ap.add_argument("--panels", action="store_true")
    ap.add_argument("--activations", action="store_true")
    a = ap.parse_args()
    k, n, t = a.k, a.n, a.dtype
    a1, r1 = attr(a.q1)
    a2, r2 = attr(a.q2)
    if a.activations:
        a1 = a1 and a1[:-1] + ", activations = int8>"
        a2 = a2 and a2[:-1] + ", activations = int8>"
    rnd = blockc_ref.storage_rounding(t)

    def attrs(quant):
        parts = []
        if quant:
            parts.append("weight_quant = " + quant)
        if a.panels:
            parts.append("blockc_codegen.weight_layout = "
                         "#blockc_codegen.weight_layout<packed_panels>")
        return " {" + ", ".join(parts) + "}" if parts else ""

    model = f"""func.func @forward(%x: tensor<?x?x{k}x{t}>,
    %w1: tensor<{n}x{k}x{t}> {{transformer.weight_name = "w1"}},
    %w2: tensor<{k}x{n}x{t}> {{transformer.weight_name = "w2"}}) -> tensor<?x?x{k}x{t}> {{
  %y = transformer.linear %x, %w1{attrs(a1)} : tensor<?x?x{k}x{t}>, tensor<{n}x{k}x{t}> -> tensor<?x?x{n}x{t}>
  %z = transformer.linear %y, %w2{attrs(a2)} : tensor<?x?x{n}x{t}>, tensor<{k}x{n}x{t}> -> tensor<?x?x{k}x{t}>
  return %z : tensor<?x?x{k}x{t}>
}}
"""
    with open(os.path.join(a.dir, "model.mlir"), "w") as f:
        f.write(model)
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
    # A zero row and one large value: s = 0 and a clamp-free extreme.
    w1[3] = 0
    w2[5, 1] = 4.0
    blockc_ref.write_safetensors(
        os.path.join(a.dir, "w.safetensors"),
        [("w1", "F32", w1.shape, w1.tobytes()),
         ("w2", "F32", w2.shape, w2.tobytes())])
    x = rng.standard_normal((a.batch, a.t, k)).astype(np.float32)
    blockc_ref.save_npy(os.path.join(a.dir, "x.npy"), x)
    # The weights as the model holds them (rounded to its type), then as the
    # projections use them (dequantised).
    h1, h2 = rnd(w1.astype(np.float64)), rnd(w2.astype(np.float64))
    d1 = blockc_ref.fake_quant(h1, *r1).astype(np.float64) if r1 else h1
    d2 = blockc_ref.fake_quant(h2, *r2).astype(np.float64) if r2 else h2
    def qa(inp, quant):
        if a.activations and quant:
            return blockc_ref.quantize_activations(inp)
        return inp

    ref = rnd(qa(rnd(qa(rnd(x.astype(np.float64)), r1) @ d1.T), r2) @ d2.T)
    blockc_ref.save_npy(os.path.join(a.dir, "ref.npy"), ref)
    if a.activations:
        wo = rnd(rnd(rnd(x.astype(np.float64)) @ d1.T) @ d2.T)
        blockc_ref.save_npy(os.path.join(a.dir, "ref.wo.npy"), wo)
    f32 = (x.astype(np.float64) @ w1.T.astype(np.float64)) @ w2.T.astype(
        np.float64)
    blockc_ref.save_npy(os.path.join(a.dir, "ref.f32.npy"), f32)


if __name__ == "__main__":
    main()
