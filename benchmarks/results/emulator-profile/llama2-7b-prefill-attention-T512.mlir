// The causal prefill attention of a Llama-2-7B bf16 layer (32 heads, head
// dim 128) at T = S = 512: q from the input [1, 512, 4096], K and V
// [1, 512, 32, 128] bf16 as the module's "weights", the sdpa widened from
// bf16 as transformer-compute-in-f32 writes it in a bf16 block (so that
// blockc-gpu-select-tiles gives it the tensor-core kernels). For
// benchmarks/results/emulator-profile/llama2-7b-bf16-prefill-attention-h200.txt.
func.func @forward(%x: tensor<?x?x4096xbf16>,
    %k: tensor<1x512x32x128xbf16> {transformer.weight_name = "k"},
    %v: tensor<1x512x32x128xbf16> {transformer.weight_name = "v"}) -> tensor<?x?x4096xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x4096xbf16>
  %t = tensor.dim %x, %c1 : tensor<?x?x4096xbf16>
  %q = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%b, %t, 32, 128] : tensor<?x?x4096xbf16> into tensor<?x?x32x128xbf16>
  %qc = tensor.cast %q : tensor<?x?x32x128xbf16> to tensor<1x512x32x128xbf16>
  %qf = arith.extf %qc : tensor<1x512x32x128xbf16> to tensor<1x512x32x128xf32>
  %kf = arith.extf %k : tensor<1x512x32x128xbf16> to tensor<1x512x32x128xf32>
  %vf = arith.extf %v : tensor<1x512x32x128xbf16> to tensor<1x512x32x128xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal} : tensor<1x512x32x128xf32>, tensor<1x512x32x128xf32>, tensor<1x512x32x128xf32> -> tensor<1x512x32x128xf32>
  %ob = arith.truncf %o : tensor<1x512x32x128xf32> to tensor<1x512x32x128xbf16>
  %oc = tensor.cast %ob : tensor<1x512x32x128xbf16> to tensor<?x?x32x128xbf16>
  %r = tensor.collapse_shape %oc [[0], [1], [2, 3]] : tensor<?x?x32x128xbf16> into tensor<?x?x4096xbf16>
  return %r : tensor<?x?x4096xbf16>
}
