// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-linear --blockc-cpu-fuse-norm | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-linear --blockc-cpu-fuse-norm | FileCheck %s --check-prefix=AVX2 --implicit-check-not="vector<16xf32>"

// RMSNorm read only by projection kernels (Q and K here): no normalised
// tensor is built. One loop nest computes the row scales r[b, t]
// (overflow-safe: max |x|, then the sum of squares of x / max|x| where that
// is needed); both kernels read x itself, multiply it (or the weight) by
// the gain g at the same k, and scale each finished tile row by r. The
// vectors have the width of the function's cpu_target: 16 lanes with
// AVX-512, 8 with AVX2 (the row scales, the gain and the tile scaling too).
// CHECK-LABEL: func.func @qk
// CHECK-SAME:  (%[[X:.+]]: tensor<2x3x40xf32>, %[[G:.+]]: tensor<40xf32>, %[[WQ:.+]]: tensor<24x40xf32>, %[[WK:.+]]: tensor<8x40xf32>)
// CHECK-NOT:   transformer.rms_norm
// CHECK:       %[[E:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?xf32>
// CHECK:       %[[R:.+]] = scf.for {{.*}} iter_args(%{{.+}} = %[[E]]) -> (tensor<?x?xf32>)
// CHECK:       arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:       vector.reduction <maximumf>
// CHECK:       arith.cmpf ogt, %{{.+}}, %{{.+}} : f32
// CHECK:       math.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:       vector.reduction <add>
// CHECK:       math.rsqrt
// CHECK:       tensor.insert
// T = 3 uses the dot-product kernel: its x vector reads get the gain (the
// weight reads, more numerous, are left alone).
// CHECK:       %[[Q:.+]] = scf.forall
// CHECK:       %[[XV:.+]] = vector.transfer_read %[[X]]
// CHECK-NEXT:  %[[GV:.+]] = vector.transfer_read %[[G]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<40xf32>, vector<16xf32>
// CHECK-NEXT:  arith.mulf %[[XV]], %[[GV]] : vector<16xf32>
// CHECK-COUNT-3: vector.transfer_read %[[G]]
// CHECK-NOT:   vector.transfer_read %[[G]]
// CHECK-COUNT-4: vector.transfer_read %[[WQ]]
// CHECK-NEXT:  vector.fma
// CHECK:       %[[RS:.+]] = tensor.extract %[[R]][%{{.+}}, %{{.+}}] : tensor<?x?xf32>
// CHECK:       %[[RV:.+]] = vector.broadcast %[[RS]] : f32 to vector<16xf32>
// CHECK:       arith.mulf %{{.+}}, %[[RV]] : vector<16xf32>
// CHECK:       tensor.parallel_insert_slice
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK:       %[[K:.+]] = scf.forall
// CHECK:       vector.transfer_read %[[X]]
// CHECK-NEXT:  vector.transfer_read %[[G]]
// CHECK:       tensor.extract %[[R]]
// CHECK:       } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>{{.*}}}
// CHECK:       return %[[Q]], %[[K]]
// AVX2-LABEL:  func.func @qk
// AVX2:        arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// AVX2:        math.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<8xf32>
// AVX2:        scf.forall
// AVX2:        vector.transfer_read %{{.+}} {in_bounds = [true]} : tensor<40xf32>, vector<8xf32>
// AVX2:        vector.broadcast %{{.+}} : f32 to vector<8xf32>
// AVX2:        arith.mulf %{{.+}}, %{{.+}} : vector<8xf32>
func.func @qk(%x: tensor<2x3x40xf32>, %g: tensor<40xf32>, %wq: tensor<24x40xf32>, %wk: tensor<8x40xf32>) -> (tensor<2x3x24xf32>, tensor<2x3x8xf32>) {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<2x3x40xf32>, tensor<40xf32>
  %q = transformer.linear %n, %wq : tensor<2x3x40xf32>, tensor<24x40xf32> -> tensor<2x3x24xf32>
  %k = transformer.linear %n, %wk : tensor<2x3x40xf32>, tensor<8x40xf32> -> tensor<2x3x8xf32>
  return %q, %k : tensor<2x3x24xf32>, tensor<2x3x8xf32>
}

// -----

// The packed kernel (T >= 32): the gain multiplies the weight vectors as
// they are packed, before the in-register transpose.
// CHECK-LABEL: func.func @packed
// CHECK-SAME:  (%[[X:.+]]: tensor<1x64x32xf32>, %[[G:.+]]: tensor<32xf32>, %[[W:.+]]: tensor<48x32xf32>)
// CHECK:       scf.forall
// CHECK:       %[[WV:.+]] = vector.transfer_read %[[W]]
// CHECK-NEXT:  %[[GV:.+]] = vector.transfer_read %[[G]]
// CHECK-NEXT:  arith.mulf %[[WV]], %[[GV]]
// CHECK:       vector.transpose %{{.+}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK:       tensor.extract %[[X]]
// CHECK-NOT:   transformer.rms_norm
func.func @packed(%x: tensor<1x64x32xf32>, %g: tensor<32xf32>, %w: tensor<48x32xf32>) -> tensor<1x64x48xf32> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-05 : f64} : tensor<1x64x32xf32>, tensor<32xf32>
  %y = transformer.linear %n, %w : tensor<1x64x32xf32>, tensor<48x32xf32> -> tensor<1x64x48xf32>
  return %y : tensor<1x64x48xf32>
}

// -----

// Not fused: the normalised tensor is also returned; a projection with a
// bias (its kernel starts from the bias, which r must not scale).
// CHECK-LABEL: func.func @other_use
// CHECK:       transformer.rms_norm
// CHECK-LABEL: func.func @bias
// CHECK:       transformer.rms_norm
func.func @other_use(%x: tensor<2x3x40xf32>, %g: tensor<40xf32>, %w: tensor<24x40xf32>) -> (tensor<2x3x24xf32>, tensor<2x3x40xf32>) {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<2x3x40xf32>, tensor<40xf32>
  %q = transformer.linear %n, %w : tensor<2x3x40xf32>, tensor<24x40xf32> -> tensor<2x3x24xf32>
  return %q, %n : tensor<2x3x24xf32>, tensor<2x3x40xf32>
}
func.func @bias(%x: tensor<2x3x40xf32>, %g: tensor<40xf32>, %w: tensor<24x40xf32>, %b: tensor<24xf32>) -> tensor<2x3x24xf32> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<2x3x40xf32>, tensor<40xf32>
  %q = transformer.linear %n, %w bias %b : tensor<2x3x40xf32>, tensor<24x40xf32>, tensor<24xf32> -> tensor<2x3x24xf32>
  return %q : tensor<2x3x24xf32>
}

// -----

// Not fused: a projection of a bf16 weight (read and widened in place; the
// gain would have to follow the widening) on a dynamic T, so that both
// kernels read the weight.
// CHECK-LABEL: func.func @bf16_weight
// CHECK:       transformer.rms_norm
// AVX2-LABEL: func.func @bf16_weight
// AVX2:       transformer.rms_norm
func.func @bf16_weight(%x: tensor<1x?x40xf32>, %g: tensor<40xf32>, %w: tensor<24x40xbf16>) -> tensor<1x?x24xf32> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<1x?x40xf32>, tensor<40xf32>
  %q = transformer.linear %n, %w : tensor<1x?x40xf32>, tensor<24x40xbf16> -> tensor<1x?x24xf32>
  return %q : tensor<1x?x24xf32>
}

// -----

// A horizontal group (K and V in one kernel): both members' tiles are
// scaled by r (one r read per member and row).
// CHECK-LABEL: func.func @group
// CHECK:       scf.forall (%{{.+}}) in (1) shared_outs(%[[OK:.+]] = %{{[^,]+}}, %[[OV:.+]] = %{{[^)]+}})
// CHECK-COUNT-2: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<?x?xf32>
// CHECK:       scf.forall.in_parallel
// CHECK-NOT:   transformer.rms_norm
func.func @group(%x: tensor<2x3x40xf32>, %g: tensor<40xf32>, %wk: tensor<8x40xf32>, %wv: tensor<8x40xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<2x3x40xf32>, tensor<40xf32>
  %k = transformer.linear %n, %wk {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x40xf32>, tensor<8x40xf32> -> tensor<2x3x8xf32>
  %v = transformer.linear %n, %wv {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<2x3x40xf32>, tensor<8x40xf32> -> tensor<2x3x8xf32>
  return %k, %v : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}
