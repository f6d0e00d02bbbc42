// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 avx512-bf16=true avx512-vnni=true" | FileCheck %s --check-prefix=BF16
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | FileCheck %s --check-prefix=NONE
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 avx512-bf16=true amx-bf16=true" | FileCheck %s --check-prefix=AMX
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 avx512-bf16=true amx-bf16=true prepare-weights=true" | FileCheck %s --check-prefix=PREP
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 avx512-bf16=true prepare-weights=true" | FileCheck %s --check-prefix=PREP-NOAMX

// ISA extensions of the options go into the function's cpu_target. With
// avx512_bf16, a projection with a bf16 weight whose input is widened from
// bf16 (a bf16 block after transformer-compute-in-f32) gets bf16_dot;
// with amx_bf16 too, and K a multiple of 32, also amx (the packed
// kernel's row blocks on AMX tiles); without the extensions, none does
// (select-tiles-errors.mlir: an extension the ISA cannot have).

// BF16-LABEL: func.func @bf16_block
// BF16-SAME: cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true, avx512_vnni = true>
// BF16: linear_tiles<{{.*}}, bf16_dot = true>
// AMX-LABEL: func.func @bf16_block
// AMX-SAME: avx512_bf16 = true, amx_bf16 = true>
// AMX: linear_tiles<{{.*}}, bf16_dot = true, amx = true>
// AMX: linear_tiles<{{.*}}, bf16_dot = true>
// With prepare-weights, the weight on AMX (K = 64) is prepared (panels of
// k pairs); the one with K = 48 (vdpbf16ps only) and, without AMX, both
// are read in place, as bf16 weights are by default.
// PREP-LABEL: func.func @bf16_block
// PREP: linear_tiles<{{.*}}, bf16_dot = true, amx = true>, blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>}
// PREP: transformer.linear
// PREP-NOT: weight_layout
// PREP-SAME: bf16_dot = true>}
// PREP-NOAMX-LABEL: func.func @bf16_block
// PREP-NOAMX-NOT: weight_layout
// PREP-NOAMX: return
// NONE-LABEL: func.func @bf16_block
// NONE-SAME: cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>
// NONE-NOT: bf16_dot
func.func @bf16_block(%x: tensor<1x?x64xbf16>, %w: tensor<40x64xbf16>, %x2: tensor<1x?x48xbf16>, %w2: tensor<40x48xbf16>) -> (tensor<1x?x40xf32>, tensor<1x?x40xf32>) {
  %xf = arith.extf %x : tensor<1x?x64xbf16> to tensor<1x?x64xf32>
  %y = transformer.linear %xf, %w : tensor<1x?x64xf32>, tensor<40x64xbf16> -> tensor<1x?x40xf32>
  %xf2 = arith.extf %x2 : tensor<1x?x48xbf16> to tensor<1x?x48xf32>
  %y2 = transformer.linear %xf2, %w2 : tensor<1x?x48xf32>, tensor<40x48xbf16> -> tensor<1x?x40xf32>
  return %y, %y2 : tensor<1x?x40xf32>, tensor<1x?x40xf32>
}

// -----

// An f32 input (not known to hold bf16 values), an f16 weight, an input
// widened from f16: the f32 kernels.
// BF16-LABEL: func.func @not_bf16
// BF16-NOT: bf16_dot
// BF16: return
func.func @not_bf16(%x: tensor<1x?x64xf32>, %w: tensor<40x64xbf16>, %h: tensor<1x?x64xf16>, %wh: tensor<40x64xf16>) -> (tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>) {
  %a = transformer.linear %x, %w : tensor<1x?x64xf32>, tensor<40x64xbf16> -> tensor<1x?x40xf32>
  %hf = arith.extf %h : tensor<1x?x64xf16> to tensor<1x?x64xf32>
  %b = transformer.linear %hf, %wh : tensor<1x?x64xf32>, tensor<40x64xf16> -> tensor<1x?x40xf32>
  %c = transformer.linear %hf, %w : tensor<1x?x64xf32>, tensor<40x64xbf16> -> tensor<1x?x40xf32>
  return %a, %b, %c : tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>
}

// -----

// Quantised weights in a bf16 block: int4 weight-only gets bf16_dot (its
// values as exact bf16 pairs on vdpbf16ps) with avx512_bf16, but not with
// amx_bf16 too (Intel's AMX cores issue vdpbf16ps at half the FMA rate;
// the f32 table lookups stay) and never amx; int8 and activations = int8
// never get bf16_dot; with prepare-weights, no weight_layout is set.
// BF16-LABEL: func.func @quantized
// BF16: bf16_dot = true>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<{{.*}}>, weight_quant = #transformer.weight_quant<int4, group_size = 32>}
// BF16-NOT: bf16_dot
// BF16: return
// AMX-LABEL: func.func @quantized
// AMX-NOT: bf16_dot
// AMX: return
// PREP-LABEL: func.func @quantized
// PREP-NOT: weight_layout
// PREP: return
func.func @quantized(%x: tensor<1x?x64xbf16>, %w: tensor<40x64xbf16>) -> (tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>) {
  %xf = arith.extf %x : tensor<1x?x64xbf16> to tensor<1x?x64xf32>
  %a = transformer.linear %xf, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<1x?x64xf32>, tensor<40x64xbf16> -> tensor<1x?x40xf32>
  %b = transformer.linear %xf, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<1x?x64xf32>, tensor<40x64xbf16> -> tensor<1x?x40xf32>
  %c = transformer.linear %xf, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32, activations = int8>} : tensor<1x?x64xf32>, tensor<40x64xbf16> -> tensor<1x?x40xf32>
  return %a, %b, %c : tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>
}
