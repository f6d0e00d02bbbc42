// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | FileCheck %s --check-prefix=GENERIC
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 vendor=intel" | FileCheck %s --check-prefix=INTEL
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 vendor=amd" | FileCheck %s --check-prefix=AMD
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 vendor=amd prefetch-bytes=2048" | FileCheck %s --check-prefix=PIN
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 vendor=intel prefetch-bytes=0" | FileCheck %s --check-prefix=OFF

// The software prefetch distance of the few-row projection kernels
// (linear_tiles' prefetch_bytes) follows the target's vendor: 1024 bytes on
// Intel and on a generic target (the default, not printed), none on AMD;
// prefetch-bytes pins it for every projection the pass configures.
// GENERIC-LABEL: func.func @decode
// GENERIC-SAME:  #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>}
// GENERIC:       linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>}
// INTEL-LABEL:   func.func @decode
// INTEL-SAME:    #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, vendor = intel>}
// INTEL:         linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>}
// AMD-LABEL:     func.func @decode
// AMD-SAME:      #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576, vendor = amd>}
// AMD:           linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 2048, pack_rows = 6, pack_cols = 2, panel_k = 256, panel_n = 16, pack_min_rows = 32, prefetch_bytes = 0>}
// PIN-LABEL:     func.func @decode
// PIN:           linear_tiles = #blockc_codegen.linear_tiles<{{.+}}, prefetch_bytes = 2048>}
// OFF-LABEL:     func.func @decode
// OFF:           linear_tiles = #blockc_codegen.linear_tiles<{{.+}}, prefetch_bytes = 0>}
func.func @decode(%x: tensor<1x1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x1x4096xf32> {
  %y = transformer.linear %x, %w : tensor<1x1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x1x4096xf32>
  return %y : tensor<1x1x4096xf32>
}

// -----

// A target already on the function is the one the heuristic reads: its
// vendor, not the options'. Tiles already on an op are kept.
// GENERIC-LABEL: func.func @pinned_target
// GENERIC-SAME:  vendor = amd>}
// GENERIC:       linear_tiles<{{.+}}, prefetch_bytes = 0>}
// GENERIC:       linear_tiles<{{.+}}, prefetch_bytes = 512>}
// INTEL-LABEL:   func.func @pinned_target
// INTEL:         linear_tiles<{{.+}}, prefetch_bytes = 0>}
// INTEL:         linear_tiles<{{.+}}, prefetch_bytes = 512>}
// PIN-LABEL:     func.func @pinned_target
// PIN:           linear_tiles<{{.+}}, prefetch_bytes = 2048>}
// PIN:           linear_tiles<{{.+}}, prefetch_bytes = 512>}
func.func @pinned_target(%x: tensor<1x1x64xf32>, %w: tensor<64x64xf32>) -> tensor<1x1x64xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 524288, vendor = amd>} {
  %y = transformer.linear %x, %w : tensor<1x1x64xf32>, tensor<64x64xf32> -> tensor<1x1x64xf32>
  %z = transformer.linear %y, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 64, pack_rows = 6, pack_cols = 2, panel_k = 64, panel_n = 16, pack_min_rows = 32, prefetch_bytes = 512>} : tensor<1x1x64xf32>, tensor<64x64xf32> -> tensor<1x1x64xf32>
  return %z : tensor<1x1x64xf32>
}
