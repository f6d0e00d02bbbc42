//===- Passes.td - blockc conversion passes ----------------*- tablegen -*-===//
//
// Conversions between dialects (CIRCT / upstream style: all conversion
// passes in one file, one directory per conversion under lib/Conversion).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CONVERSION_PASSES_TD
#define BLOCKC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTransformerToLinalgPass : Pass<"convert-transformer-to-linalg"> {
  let summary = "Lower primitive transformer ops to linalg on tensors";
  let description = [{
    Converts `rms_norm`, `layer_norm`, `linear`, `rope`, `sdpa`,
    `activation` and `residual_add` into `linalg.generic` / `linalg.fill`
    ops on tensors in destination-passing style (`tensor.empty` inits), with
    `arith` and `math` bodies. Composite ops must have been decomposed first
    (`--transformer-decompose`); any transformer op left is an error at its
    location.

    * norms: a row reduction (sum of squares; mean and biased variance for
      LayerNorm) and a broadcasting elementwise op;
    * `linear`: one contraction `[..., n, k]` with W read transposed
      (`[out, in]` storage), initialised with the broadcast bias or zero;
    * `rope`: a `[T, D]` cos/sin table (inv_freq folded into an f64
      constant; the angle and its reduction to [-pi, pi] in f64, so exact
      for long positions; cos/sin in f32), then one elementwise op whose
      partner element is read through an affine map (`(j + R/2) mod R` or
      `j xor 1`);
    * `sdpa`: scores `[B, H, T, S]` with GQA expressed in the key/value
      indexing maps (`h floordiv (H / H_kv)`, no copy), a masked row max,
      `exp` of the shifted scores, row sums and a guarded normalisation
      (masked entries are exactly 0; fully masked rows give 0, not NaN), then
      the P V contraction.

    * `kv_cache_append`: a `cf.assert` that `0 <= position` and
      `position + T <= L_max`, then one `tensor.insert_slice` of the new
      rows (in place after bufferization of a writable cache argument).

    * `embedding`: one all-parallel `linalg.generic` over `[B, T, d]` whose
      body casts the id of `(b, t)` to an index, clamps it into
      `[0, vocab)` and extracts `table[id, c]` (`tensor.extract`), plus
      `positions[t + offset, c]` (clamped into the table) when there is a
      position table; in the table's element type (a 16-bit sum is computed
      in f32 and rounded once).

    Only f32 is lowered today; f16/bf16 ops are reported as unsupported.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def ConvertWeightQuantToLinalgPass : Pass<"convert-weight-quant-to-linalg"> {
  let summary = "Compute the dequantised weights of quantised projections "
                "with linalg ops";
  let description = [{
    Rewrites every `transformer.linear` that carries a `weight_quant`
    (`#transformer.weight_quant<int8>` or `<int4, group_size = G>`) into a
    `transformer.linear` without it, whose weight is the dequantised weight
    `W' = q * s` computed from the stored weight by two `linalg.generic`s on
    tensors: the maxima of |W| per row (int8) or per group of G consecutive
    input columns (int4; W viewed as `[N, K/G, G]` by a
    `tensor.expand_shape`), then one elementwise op over W,
    `s = amax / L, W' = s == 0 ? 0 : clamp(roundeven(W / s), -L, L) * s`
    with L = 127 or 7, in f32 (a bf16/f16 weight is extended first and the
    result truncated back). These are exactly the rules of
    `#transformer.weight_quant`; the NumPy reference (`utils/blockc_ref.py
    --quantize`) applies the same f32 operations, so both see bitwise the
    same W'.

    It runs after the targets' kernel passes and handles the quantised
    projections no kernel took: on NVPTX all of them (the GPU kernels on
    quantised weights are [5/6]'s), on the CPU those of non-f32 models
    (`blockc-cpu-lower-quantized-linear` takes the f32 ones, with weights
    quantised once at load). There the dequantised weight is computed on
    every call. A weight that several projections quantise the same way is
    dequantised once. The composites must have been decomposed first
    (`transformer-decompose` gives their `weight_quant` to each projection).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // BLOCKC_CONVERSION_PASSES_TD
