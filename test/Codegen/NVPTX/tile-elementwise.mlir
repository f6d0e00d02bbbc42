// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-elementwise --canonicalize --cse | FileCheck %s

// Elementwise ops whose output is written along its innermost loop become
// kernels of threads_x * threads_y = 256 threads per block in which each
// thread computes w consecutive elements, w = 16 bytes of the narrowest
// operand accessed by vectors (8 here: bf16). A check on the host (unit
// innermost stride, offset and strides multiples of w, 16-byte aligned
// base, innermost size a multiple of w; canonicalization folds what the
// types already say) chooses, uniformly over the grid, between one
// vector.load per vector input and one vector.store, and the fallback: the
// block's 256 w elements one at a time, 256 apart.

// RoPE's rotate-half: x read at d and at (d + 64) mod 128 (a multiple of
// w, in a dimension of 128: each run of 8 stays a run), the cos table by d.
// Both reads of x are 16-byte loads; x's check is emitted once.
// CHECK-LABEL: func.func @rope
// CHECK-SAME:    (%[[X:.+]]: memref<?x32x128xbf16>, %[[C:.+]]: memref<128xf32>, %[[Y:.+]]: memref<?x32x128xbf16>)
// CHECK:         %[[T:.+]] = memref.dim %[[X]], %c0
// CHECK:         %[[TOTAL:.+]] = arith.muli %[[T]], %c4096
// CHECK:         %[[XP:.+]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:         %[[XR:.+]] = arith.remui %[[XP]], %c16
// CHECK:         %[[XOK:.+]] = arith.cmpi eq, %[[XR]], %c0
// CHECK:         %[[CP:.+]] = memref.extract_aligned_pointer_as_index %[[C]]
// CHECK:         %[[CR:.+]] = arith.remui %[[CP]], %c16
// CHECK:         %[[COK:.+]] = arith.cmpi eq, %[[CR]], %c0
// CHECK:         %[[OK1:.+]] = arith.andi %[[XOK]], %[[COK]]
// CHECK:         %[[YP:.+]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK:         %[[YR:.+]] = arith.remui %[[YP]], %c16
// CHECK:         %[[YOK:.+]] = arith.cmpi eq, %[[YR]], %c0
// CHECK:         %[[OK:.+]] = arith.andi %[[OK1]], %[[YOK]]
// CHECK:         %[[CHUNKS:.+]] = arith.muli %[[T]], %c512
// CHECK:         %[[GRID:.+]] = arith.ceildivui %[[CHUNKS]], %c256
// CHECK:         gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[GRID]], %{{.+}} = %c1, %{{.+}} = %c1) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256, %{{.+}} = %c1, %{{.+}} = %c1)
// CHECK-NEXT:      %[[FIRST:.+]] = arith.muli %[[BX]], %c256
// CHECK-NEXT:      scf.if %[[OK]] {
// CHECK-NEXT:        %[[CH:.+]] = arith.addi %[[FIRST]], %[[TX]]
// CHECK-NEXT:        %[[IN:.+]] = arith.cmpi ult, %[[CH]], %[[CHUNKS]]
// CHECK-NEXT:        scf.if %[[IN]] {
// CHECK-NEXT:          %[[ROW:.+]] = arith.divui %[[CH]], %c16
// CHECK-NEXT:          %[[H:.+]] = arith.remui %[[ROW]], %c32
// CHECK-NEXT:          %[[TI:.+]] = arith.divui %[[ROW]], %c32
// CHECK-NEXT:          %[[V:.+]] = arith.remui %[[CH]], %c16
// CHECK-NEXT:          %[[K:.+]] = arith.muli %[[V]], %c8
// CHECK-NEXT:          vector.load %[[X]][%[[TI]], %[[H]], %[[K]]] {alignment = 16 : i64} : memref<?x32x128xbf16>, vector<8xbf16>
// CHECK-COUNT-8:       vector.extract
// CHECK-NEXT:          %[[KR:.+]] = arith.addi %[[K]], %c64
// CHECK-NEXT:          %[[KM:.+]] = arith.remsi %[[KR]], %c128
// CHECK:               %[[KROT:.+]] = arith.select %{{.+}}, %{{.+}}, %[[KM]]
// CHECK-NEXT:          vector.load %[[X]][%[[TI]], %[[H]], %[[KROT]]] {alignment = 16 : i64} : memref<?x32x128xbf16>, vector<8xbf16>
// CHECK-COUNT-8:       vector.extract
// CHECK-NEXT:          vector.load %[[C]][%[[K]]] {alignment = 16 : i64} : memref<128xf32>, vector<8xf32>
// CHECK-COUNT-8:       arith.truncf
// CHECK-NOT:           memref.load
// CHECK:               %[[R:.+]] = vector.from_elements {{.+}} : vector<8xbf16>
// CHECK-NEXT:          vector.store %[[R]], %[[Y]][%[[TI]], %[[H]], %[[K]]] {alignment = 16 : i64} : memref<?x32x128xbf16>, vector<8xbf16>
// CHECK-NEXT:        }
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.for %[[J:.+]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:          %[[B0:.+]] = arith.muli %[[BX]], %c2048
// CHECK-NEXT:          %[[B1:.+]] = arith.muli %[[J]], %c256
// CHECK-NEXT:          %[[B2:.+]] = arith.addi %[[B0]], %[[B1]]
// CHECK-NEXT:          %[[E:.+]] = arith.addi %[[B2]], %[[TX]]
// CHECK-NEXT:          %[[EIN:.+]] = arith.cmpi ult, %[[E]], %[[TOTAL]]
// CHECK-NEXT:          scf.if %[[EIN]] {
// CHECK-NOT:             vector.
// CHECK:                 memref.load %[[X]]
// CHECK:                 memref.load %[[X]]
// CHECK:                 memref.load %[[C]]
// CHECK:                 memref.store %{{.+}}, %[[Y]]
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
#id = affine_map<(t, h, d) -> (t, h, d)>
#rot = affine_map<(t, h, d) -> (t, h, (d + 64) mod 128)>
#dim = affine_map<(t, h, d) -> (d)>

func.func @rope(%x: memref<?x32x128xbf16>, %c: memref<128xf32>,
                %y: memref<?x32x128xbf16>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#id, #rot, #dim, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %x, %c : memref<?x32x128xbf16>, memref<?x32x128xbf16>, memref<128xf32>)
      outs(%y : memref<?x32x128xbf16>) {
  ^bb0(%a: bf16, %r: bf16, %cs: f32, %out: bf16):
    %d = linalg.index 2 : index
    %c64 = arith.constant 64 : index
    %lo = arith.cmpi ult, %d, %c64 : index
    %af = arith.extf %a : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %nr = arith.negf %rf : f32
    %s = arith.select %lo, %nr, %rf : f32
    %m = arith.mulf %af, %cs : f32
    %v = arith.addf %m, %s : f32
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// f32 in, bf16 out: w = 8 (two 16-byte loads of f32 per thread). A
// strided input is checked at run time and read through a view with a
// static unit stride; the input read at the row only is loaded once per
// thread on the vector path.
// CHECK-LABEL: func.func @strided
// CHECK-SAME:    (%[[X:.+]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[S:.+]]: memref<?xf32>, %[[Y:.+]]: memref<?x?xbf16>)
// CHECK:         %[[LEN:.+]] = memref.dim %[[X]], %c1
// CHECK:         %[[LREM:.+]] = arith.remui %[[LEN]], %c8
// CHECK:         %[[LOK:.+]] = arith.cmpi eq, %[[LREM]], %c0
// CHECK:         %{{.+}}, %[[OFF:.+]], %[[SIZES:.+]]:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK:         %[[BITS:.+]] = arith.ori %[[OFF]], %[[STRIDES]]#0
// CHECK:         %[[UNIT:.+]] = arith.cmpi eq, %[[STRIDES]]#1, %c1
// CHECK:         arith.andi %[[LOK]], %[[UNIT]]
// CHECK:         arith.remui %[[BITS]], %c8
// CHECK:         memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:         %[[VIEW:.+]] = memref.reinterpret_cast %[[X]] to offset: [%[[OFF]]], sizes: [%[[SIZES]]#0, %[[SIZES]]#1], strides: [%[[STRIDES]]#0, 1]
// CHECK:         memref.extract_strided_metadata %[[Y]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK:         %[[OK:.+]] = arith.andi
// CHECK-NEXT:    arith.ceildivui %[[LEN]], %c8
// CHECK:         gpu.launch
// CHECK:           scf.if %[[OK]] {
// CHECK:               vector.load %[[VIEW]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
// CHECK-COUNT-8:       vector.extract
// CHECK-NEXT:          memref.load %[[S]]
// CHECK-NOT:           memref.load
// CHECK:               vector.store %{{.+}}, %[[Y]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x?xbf16>, vector<8xbf16>
// CHECK:           } else {
// CHECK:               memref.load %[[X]]
// CHECK:               memref.load %[[S]]
// CHECK:               memref.store %{{.+}}, %[[Y]]
#id2 = affine_map<(t, d) -> (t, d)>
#row = affine_map<(t, d) -> (t)>
func.func @strided(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>, %s: memref<?xf32>,
                   %y: memref<?x?xbf16>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#id2, #row, #id2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32>)
      outs(%y : memref<?x?xbf16>) {
  ^bb0(%a: f32, %r: f32, %out: bf16):
    %m = arith.mulf %a, %r : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// A static innermost size that is not a multiple of w (36 bf16) keeps the
// scalar kernel of blockc-gpu-tile-and-map (the op stays). A rotation that
// w does not divide ((d + 12) mod 24) and a transposed read are read
// element by element, the output still by vectors.
// CHECK-LABEL: func.func @negative
// CHECK-SAME:    (%[[ODD:.+]]: memref<?x36xbf16>, %{{.+}}: memref<?x36xbf16>, %[[X:.+]]: memref<?x24xbf16>, %[[XT:.+]]: memref<24x?xbf16>, %[[Y:.+]]: memref<?x24xbf16>)
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[ODD]] : memref<?x36xbf16>)
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK-NOT:           vector.load
// CHECK-COUNT-8:       memref.load %[[X]]
// CHECK-NOT:           vector.load
// CHECK:               vector.store %{{.+}}, %[[Y]]{{.+}} vector<8xbf16>
// CHECK:           } else {
#id2 = affine_map<(t, d) -> (t, d)>
#tr = affine_map<(t, d) -> (d, t)>
#rot24 = affine_map<(t, d) -> (t, (d + 12) mod 24)>
func.func @negative(%odd: memref<?x36xbf16>, %oddy: memref<?x36xbf16>,
                    %x: memref<?x24xbf16>, %xt: memref<24x?xbf16>,
                    %y: memref<?x24xbf16>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.generic {indexing_maps = [#id2, #id2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%odd : memref<?x36xbf16>) outs(%oddy : memref<?x36xbf16>) {
  ^bb0(%a: bf16, %out: bf16):
    linalg.yield %a : bf16
  }
  linalg.generic {indexing_maps = [#rot24, #tr, #id2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %xt : memref<?x24xbf16>, memref<24x?xbf16>)
      outs(%y : memref<?x24xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %s = arith.addf %a, %b : bf16
    linalg.yield %s : bf16
  }
  return
}

// -----

// A copy into a strided view (a decode step's K/V rows into the cache):
// generalized, then 16-byte loads and stores.
// CHECK-LABEL: func.func @copy
// CHECK-SAME:    (%[[K:.+]]: memref<?x2x32xbf16>, %[[CACHE:.+]]: memref<?x2x32xbf16, strided<[?, ?, 1], offset: ?>>)
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK:               %[[V:.+]] = vector.load %[[K]]{{.+}} vector<8xbf16>
// CHECK-NEXT:          vector.store %[[V]], %[[CACHE]]{{.+}} vector<8xbf16>
// CHECK:           } else {
// CHECK:               memref.load %[[K]]
// CHECK-NEXT:          memref.store %{{.+}}, %[[CACHE]]
// CHECK-NOT:     linalg.copy
func.func @copy(%k: memref<?x2x32xbf16>, %cache: memref<?x2x32xbf16, strided<[?, ?, 1], offset: ?>>)
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  linalg.copy ins(%k : memref<?x2x32xbf16>) outs(%cache : memref<?x2x32xbf16, strided<[?, ?, 1], offset: ?>>)
  return
}
