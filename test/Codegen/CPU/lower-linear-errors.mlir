// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-linear -verify-diagnostics

// The mechanism only reads the configuration: the vector width is the
// function's cpu_target's (blockc-cpu-select-tiles writes it) ...
// expected-error @+1 {{blockc-cpu-lower-linear: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target(%x: tensor<2x3x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x3x8xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 16, pack_rows = 8, pack_cols = 2, panel_k = 16, panel_n = 32, pack_min_rows = 32>} : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// ... and the tiles are the op's linear_tiles.
func.func @no_tiles(%x: tensor<2x3x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x3x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>} {
  // expected-error @+1 {{'transformer.linear' op has no 'blockc_codegen.linear_tiles' (run blockc-cpu-select-tiles first)}}
  %y = transformer.linear %x, %w : tensor<2x3x16xf32>, tensor<8x16xf32> -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// A function with nothing to lower needs no target.
func.func @nothing_to_lower(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %y = transformer.linear %x, %w : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// bf16_dot needs a target with avx512_bf16 ...
func.func @bf16_dot_no_feature(%x: tensor<1x3x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<1x3x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  %xf = arith.extf %x : tensor<1x3x64xbf16> to tensor<1x3x64xf32>
  // expected-error @+1 {{'transformer.linear' op has linear_tiles bf16_dot but the function's cpu_target has no avx512_bf16 with 16 lanes}}
  %y = transformer.linear %xf, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true>} : tensor<1x3x64xf32>, tensor<8x64xbf16> -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// ... a bf16 weight ...
func.func @bf16_dot_f16_weight(%x: tensor<1x3x64xbf16>, %w: tensor<8x64xf16>) -> tensor<1x3x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x3x64xbf16> to tensor<1x3x64xf32>
  // expected-error @+1 {{'transformer.linear' op has linear_tiles bf16_dot but its weight is not bf16}}
  %y = transformer.linear %xf, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true>} : tensor<1x3x64xf32>, tensor<8x64xf16> -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// ... with an even K when prepared (panels of k pairs) ...
func.func @bf16_dot_prepared_odd_k(%x: tensor<1x3x65xbf16>, %w: tensor<8x65xbf16>) -> tensor<1x3x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x3x65xbf16> to tensor<1x3x65xf32>
  // expected-error @+1 {{'transformer.linear' op has linear_tiles bf16_dot but its weight is read as prepared panels of k pairs and K is odd}}
  %y = transformer.linear %xf, %w {blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>, blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true>} : tensor<1x3x65xf32>, tensor<8x65xbf16> -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// ... and an input that holds bf16 values (widened from bf16).
func.func @bf16_dot_f32_input(%x: tensor<1x3x64xf32>, %w: tensor<8x64xbf16>) -> tensor<1x3x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  // expected-error @+1 {{'transformer.linear' op has linear_tiles bf16_dot but its input is not widened from bf16 (arith.extf)}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true>} : tensor<1x3x64xf32>, tensor<8x64xbf16> -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// amx needs a target with amx_bf16 ...
func.func @amx_no_feature(%x: tensor<1x3x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<1x3x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x3x64xbf16> to tensor<1x3x64xf32>
  // expected-error @+1 {{'transformer.linear' op has linear_tiles amx but the function's cpu_target has no amx_bf16}}
  %y = transformer.linear %xf, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true, amx = true>} : tensor<1x3x64xf32>, tensor<8x64xbf16> -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// ... and whole 32-k steps.
func.func @amx_k(%x: tensor<1x3x48xbf16>, %w: tensor<8x48xbf16>) -> tensor<1x3x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true, amx_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x3x48xbf16> to tensor<1x3x48xf32>
  // expected-error @+1 {{'transformer.linear' op has linear_tiles amx but K is not a multiple of 32}}
  %y = transformer.linear %xf, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true, amx = true>} : tensor<1x3x48xf32>, tensor<8x48xbf16> -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}
