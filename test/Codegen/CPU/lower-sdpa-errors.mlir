// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-sdpa -verify-diagnostics

// The vector width (also the key tile and the query row block) is the
// function's cpu_target's: without one, an sdpa to lower is an error.
// expected-error @+1 {{blockc-cpu-lower-sdpa: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

// A function without an sdpa needs no target.
func.func @nothing_to_lower(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// The schedule comes from blockc-cpu-select-tiles (or by hand): an sdpa
// without one is an error.
func.func @no_tiles(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  // expected-error @+1 {{'transformer.sdpa' op has no 'blockc_codegen.attention_tiles' (run blockc-cpu-select-tiles first)}}
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

// A width that does not divide the head dim (12), or above the target's.
func.func @bad_width(%q: tensor<1x4x2x12xf32>) -> tensor<1x4x2x12xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  // expected-error @+1 {{'transformer.sdpa' op attention_tiles width 8 must divide the head dim rounded up to 4 (12) and be at most the target's 16}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 8, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>} : tensor<1x4x2x12xf32>, tensor<1x4x2x12xf32>, tensor<1x4x2x12xf32> -> tensor<1x4x2x12xf32>
  return %o : tensor<1x4x2x12xf32>
}

// -----

func.func @wider_than_target(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>} {
  // expected-error @+1 {{'transformer.sdpa' op attention_tiles width 16 must divide the head dim rounded up to 4 (16) and be at most the target's 8}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 16, multi_row = true, row_vectors = 2, key_group = 6, value_group = 6, key_tile = 30, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}
