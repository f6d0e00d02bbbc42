// RUN: blockc-opt %s | blockc-opt | FileCheck %s

// blockc_codegen.accumulator_to_fragment and fragment_to_accumulator print
// and parse back: a 64 x N f32 accumulator and this thread's N / 2 f32.

// CHECK-LABEL: func.func @round_trip
// CHECK:         %[[F:.+]] = blockc_codegen.accumulator_to_fragment %{{.+}} : !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>> -> vector<64xf32>
// CHECK:         blockc_codegen.fragment_to_accumulator %[[F]] : vector<64xf32> -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
func.func @round_trip(%acc: !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>) -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>> {
  %f = blockc_codegen.accumulator_to_fragment %acc : !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>> -> vector<64xf32>
  %a = blockc_codegen.fragment_to_accumulator %f : vector<64xf32> -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
  return %a : !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
}
