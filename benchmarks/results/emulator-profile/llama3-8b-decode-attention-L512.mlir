// One decode step's attention of a Llama-3-8B-shaped bf16 layer (32 query
// heads, 8 KV heads: GQA groups of 4, head dim 128) over L + 1 = 513 cached
// keys, the caches token-major [B, L, H_kv, D]. For
// benchmarks/results/emulator-profile/llama3-8b-bf16-decode-attention-h200.txt;
// the L = 4096 module is this one with 513 replaced by 4097, the FMA kernel
// ("before") this one with the sdpa's attribute pinned to
// #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>.
func.func @forward(%x: tensor<?x?x4096xbf16>,
    %k: tensor<1x513x8x128xbf16> {transformer.weight_name = "k"},
    %v: tensor<1x513x8x128xbf16> {transformer.weight_name = "v"}) -> tensor<?x?x4096xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x4096xbf16>
  %t = tensor.dim %x, %c1 : tensor<?x?x4096xbf16>
  %q = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%b, %t, 32, 128] : tensor<?x?x4096xbf16> into tensor<?x?x32x128xbf16>
  %qc = tensor.cast %q : tensor<?x?x32x128xbf16> to tensor<1x1x32x128xbf16>
  %qf = arith.extf %qc : tensor<1x1x32x128xbf16> to tensor<1x1x32x128xf32>
  %kf = arith.extf %k : tensor<1x513x8x128xbf16> to tensor<1x513x8x128xf32>
  %vf = arith.extf %v : tensor<1x513x8x128xbf16> to tensor<1x513x8x128xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal} : tensor<1x1x32x128xf32>, tensor<1x513x8x128xf32>, tensor<1x513x8x128xf32> -> tensor<1x1x32x128xf32>
  %ob = arith.truncf %o : tensor<1x1x32x128xf32> to tensor<1x1x32x128xbf16>
  %oc = tensor.cast %ob : tensor<1x1x32x128xbf16> to tensor<?x?x32x128xbf16>
  %r = tensor.collapse_shape %oc [[0], [1], [2, 3]] : tensor<?x?x32x128xbf16> into tensor<?x?x4096xbf16>
  return %r : tensor<?x?x4096xbf16>
}
