// RUN: blockc-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the warpgroup accumulator fragment ops
// (FragmentOps.cpp), for each op.

func.func @rows(%acc: !nvgpu.warpgroup.accumulator<fragmented = vector<128x64xf32>>) {
  // expected-error @+1 {{'blockc_codegen.accumulator_to_fragment' op needs an accumulator of 64 rows of f32 (one m64 wgmma per warpgroup), not '!nvgpu.warpgroup.accumulator<fragmented = vector<128x64xf32>>'}}
  %f = blockc_codegen.accumulator_to_fragment %acc : !nvgpu.warpgroup.accumulator<fragmented = vector<128x64xf32>> -> vector<32xf32>
  return
}

// -----

func.func @f16(%acc: !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf16>>) {
  // expected-error @+1 {{'blockc_codegen.accumulator_to_fragment' op needs an accumulator of 64 rows of f32 (one m64 wgmma per warpgroup), not '!nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf16>>'}}
  %f = blockc_codegen.accumulator_to_fragment %acc : !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf16>> -> vector<32xf32>
  return
}

// -----

func.func @length(%acc: !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>) {
  // expected-error @+1 {{'blockc_codegen.accumulator_to_fragment' op needs a fragment of 32 f32 (a thread's share of the 64 x 64 accumulator), not 'vector<64xf32>'}}
  %f = blockc_codegen.accumulator_to_fragment %acc : !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>> -> vector<64xf32>
  return
}

// -----

func.func @to_rows(%f: vector<32xf32>) {
  // expected-error @+1 {{'blockc_codegen.fragment_to_accumulator' op needs an accumulator of 64 rows of f32 (one m64 wgmma per warpgroup), not '!nvgpu.warpgroup.accumulator<fragmented = vector<128x64xf32>>'}}
  %a = blockc_codegen.fragment_to_accumulator %f : vector<32xf32> -> !nvgpu.warpgroup.accumulator<fragmented = vector<128x64xf32>>
  return
}

// -----

func.func @to_length(%f: vector<16xf32>) {
  // expected-error @+1 {{'blockc_codegen.fragment_to_accumulator' op needs a fragment of 32 f32 (a thread's share of the 64 x 64 accumulator), not 'vector<16xf32>'}}
  %a = blockc_codegen.fragment_to_accumulator %f : vector<16xf32> -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
  return
}

// -----

// The fragment's type is checked by the op's definition: f32 vectors of
// rank 1.
func.func @fragment_type(%f: vector<32xf16>) {
  // expected-error @+1 {{'blockc_codegen.fragment_to_accumulator' op operand #0 must be vector of 32-bit float values of ranks 1}}
  %a = blockc_codegen.fragment_to_accumulator %f : vector<32xf16> -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
  return
}
