// RUN: blockc-opt %s --blockc-gpu-tile-reductions -verify-diagnostics

// The warps per block come from blockc-gpu-select-tiles: a function with a
// row reduction and no blockc_codegen.gpu_map is an error.
#x = affine_map<(b, k) -> (b, k)>
#r = affine_map<(b, k) -> (b)>
// expected-error @+1 {{blockc-gpu-tile-reductions: @unconfigured has row reductions and no 'blockc_codegen.gpu_map' (run blockc-gpu-select-tiles first)}}
func.func @unconfigured(%x: memref<?x64xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [#x, #r],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %out, %in : f32
    linalg.yield %v : f32
  }
  return
}
