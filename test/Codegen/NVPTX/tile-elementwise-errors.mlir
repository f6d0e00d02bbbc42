// RUN: blockc-opt %s --blockc-gpu-tile-elementwise -verify-diagnostics

// The threads per block come from blockc-gpu-select-tiles: a function with
// an elementwise op to rewrite and no blockc_codegen.gpu_map is an error.
#id = affine_map<(t, d) -> (t, d)>
// expected-error @+1 {{blockc-gpu-tile-elementwise: @unconfigured has elementwise ops and no 'blockc_codegen.gpu_map' (run blockc-gpu-select-tiles first)}}
func.func @unconfigured(%x: memref<?x64xf32>, %y: memref<?x64xbf16>) {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
