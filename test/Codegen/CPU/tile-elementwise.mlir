// RUN: blockc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(blockc-cpu-tile-elementwise))' | FileCheck %s
// The heuristic's choices (blockc-cpu-select-tiles{elementwise=true}) for
// the same ops without the pinned attributes:
// RUN: sed -e 's/attrs = {blockc_codegen.elementwise_tiles = [^}]*}//' -e 's/{blockc_codegen.elementwise_tiles = [^}]*}//' %s \
// RUN:   | blockc-opt --split-input-file --pass-pipeline='builtin.module(func.func(blockc-cpu-select-tiles{elementwise=true}))' \
// RUN:   | FileCheck %s --check-prefix=SELECT

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2) -> (d2)>
#target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 2097152>

// A bf16 norm gain: work items of 4 rows of [B, T, 64] (one batch index),
// 16 lanes along d, the gain read as a vector of the same 16 columns.
// CHECK-LABEL: func.func @gain
// CHECK:       scf.forall (%[[B:.*]], %[[T:.*]]) = (0, 0) to (%{{.*}}, %{{.*}}) step (1, 4)
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c16
// CHECK:           vector.transfer_read {{.*}} : tensor<16xf32>, vector<16xf32>
// CHECK:           vector.transfer_read {{.*}} : tensor<16xbf16>, vector<16xbf16>
// CHECK:           arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK:           arith.mulf {{.*}} : vector<16xf32>
// CHECK:           vector.transfer_write {{.*}} : vector<16xbf16>, tensor<16xbf16>
// CHECK:       scf.forall.in_parallel
// CHECK-NOT:   linalg.generic
// SELECT-LABEL: func.func @gain
// SELECT:       blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 256, width = 16>
func.func @gain(%x: tensor<?x?x64xf32>, %g: tensor<64xbf16>, %e: tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
    attributes {blockc_codegen.cpu_target = #target} {
  %y = linalg.generic {indexing_maps = [#id, #w, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %g : tensor<?x?x64xf32>, tensor<64xbf16>) outs(%e : tensor<?x?x64xbf16>)
      attrs = {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 4, width = 16>} {
  ^bb0(%in: f32, %gi: bf16, %out: bf16):
    %0 = arith.truncf %in : f32 to bf16
    %1 = arith.extf %0 : bf16 to f32
    %2 = arith.extf %gi : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.truncf %3 : f32 to bf16
    linalg.yield %4 : bf16
  } -> tensor<?x?x64xbf16>
  return %y : tensor<?x?x64xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 524288>

// SiLU on vectors of 8: math.exp becomes blockc's polynomial (no math op
// is left); a zero fill, generalized, writes vectors too.
// CHECK-LABEL: func.func @silu
// CHECK:       scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (2)
// CHECK:         scf.for
// CHECK-NOT:       math.exp
// CHECK:           arith.divf {{.*}} : vector<8xf32>
// CHECK:       scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (2)
// CHECK:         vector.transfer_write {{.*}} : vector<8xf32>, tensor<8xf32>
// SELECT-LABEL: func.func @silu
// SELECT:       elementwise_tiles<rows = 1024, width = 8>
// SELECT:       elementwise_tiles<rows = 1024, width = 8>
func.func @silu(%x: tensor<?x16xf32>, %e: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
    attributes {blockc_codegen.cpu_target = #target} {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x16xf32>) outs(%e : tensor<?x16xf32>)
      attrs = {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 2, width = 8>} {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<?x16xf32>
  %z = linalg.fill {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 2, width = 8>}
      ins(%zero : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y, %z : tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rot = affine_map<(d0, d1, d2) -> (d0, d1, (d2 + 8) mod 16)>
#target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 2097152>

// Element loops: a size that is no multiple of the width (12) and an index
// computation are tiled for the threads only; a rotate-half read and a
// reduction get no configuration.
// CHECK-LABEL: func.func @scalar
// CHECK:       scf.forall
// CHECK:         linalg.generic
// CHECK-NOT:     vector.
// SELECT-LABEL: func.func @scalar
// SELECT:       elementwise_tiles<rows = 1365, width = 0>
// SELECT-NOT:   elementwise_tiles
// SELECT:       blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 1024, width = 0>
// SELECT-NEXT:  ^bb0(%out: f32):
// SELECT-NOT:   elementwise_tiles
// SELECT:       return
func.func @scalar(%x: tensor<?x?x12xf32>, %e: tensor<?x?x12xf32>, %r: tensor<?x?x16xf32>, %re: tensor<?x?x16xf32>, %s: tensor<?x?xf32>) -> (tensor<?x?x12xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xf32>)
    attributes {blockc_codegen.cpu_target = #target} {
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x12xf32>) outs(%e : tensor<?x?x12xf32>)
      attrs = {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 1365, width = 0>} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x?x12xf32>
  %rot = linalg.generic {indexing_maps = [#rot, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<?x?x16xf32>) outs(%re : tensor<?x?x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?x16xf32>
  %idx = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%re : tensor<?x?x16xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 2 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  } -> tensor<?x?x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%r : tensor<?x?x16xf32>) outs(%s : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  return %y, %rot, %idx, %sum : tensor<?x?x12xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xf32>
}
