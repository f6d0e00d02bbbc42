// RUN: blockc-opt %s -split-input-file --blockc-gpu-expand-math | FileCheck %s

// Inside gpu.launch bodies, math ops that convert-gpu-to-nvvm would send to
// libdevice become native PTX instructions (inline assembly) or arithmetic,
// so that the PTX needs no CUDA toolkit. Results are stored so that they
// stay live.

// rsqrt(x) = 1 / sqrt.rn(x).
// CHECK-LABEL: func.func @rsqrt_f32
// CHECK-SAME:    (%[[X:.+]]: f32, %[[M:.+]]: memref<1xf32>)
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           %[[S:.+]] = llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK-NEXT:      %[[R:.+]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT:      memref.store %[[R]], %[[M]]
// CHECK-NOT:       math.
func.func @rsqrt_f32(%x: f32, %m: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.rsqrt %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// The f64 form uses the f64 instruction and register class.
// CHECK-LABEL: func.func @rsqrt_f64
// CHECK-SAME:    (%[[X:.+]]: f64, %[[M:.+]]: memref<1xf64>)
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK:         gpu.launch
// CHECK:           %[[S:.+]] = llvm.inline_asm "sqrt.rn.f64 $0, $1;", "=d,d" %[[X]] : (f64) -> f64
// CHECK-NEXT:      %[[R:.+]] = arith.divf %[[ONE]], %[[S]] : f64
// CHECK-NEXT:      memref.store %[[R]], %[[M]]
// CHECK-NOT:       math.
func.func @rsqrt_f64(%x: f64, %m: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.rsqrt %x : f64
    memref.store %r, %m[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}

// -----

// sqrt is sqrt.rn (IEEE-rounded), on f32 and f64.
// CHECK-LABEL: func.func @sqrt
// CHECK-SAME:    (%[[X:.+]]: f32, %[[D:.+]]: f64, %[[M:.+]]: memref<1xf32>, %[[MD:.+]]: memref<1xf64>)
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           %[[S:.+]] = llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK-NEXT:      memref.store %[[S]], %[[M]]
// CHECK-NEXT:      %[[SD:.+]] = llvm.inline_asm "sqrt.rn.f64 $0, $1;", "=d,d" %[[D]] : (f64) -> f64
// CHECK-NEXT:      memref.store %[[SD]], %[[MD]]
// CHECK-NOT:       math.
func.func @sqrt(%x: f32, %d: f64, %m: memref<1xf32>, %md: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.sqrt %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    %rd = math.sqrt %d : f64
    memref.store %rd, %md[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}

// -----

// absf is abs.
// CHECK-LABEL: func.func @absf
// CHECK-SAME:    (%[[X:.+]]: f32, %[[D:.+]]: f64
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "abs.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK:           llvm.inline_asm "abs.f64 $0, $1;", "=d,d" %[[D]] : (f64) -> f64
// CHECK-NOT:       math.
func.func @absf(%x: f32, %d: f64, %m: memref<1xf32>, %md: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.absf %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    %rd = math.absf %d : f64
    memref.store %rd, %md[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}

// -----

// floor rounds towards minus infinity (cvt.rmi).
// CHECK-LABEL: func.func @floor
// CHECK-SAME:    (%[[X:.+]]: f32, %[[D:.+]]: f64
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK:           llvm.inline_asm "cvt.rmi.f64.f64 $0, $1;", "=d,d" %[[D]] : (f64) -> f64
// CHECK-NOT:       math.
func.func @floor(%x: f32, %d: f64, %m: memref<1xf32>, %md: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.floor %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    %rd = math.floor %d : f64
    memref.store %rd, %md[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}

// -----

// ceil rounds towards plus infinity (cvt.rpi).
// CHECK-LABEL: func.func @ceil
// CHECK-SAME:    (%[[X:.+]]: f32, %[[D:.+]]: f64
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "cvt.rpi.f32.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK:           llvm.inline_asm "cvt.rpi.f64.f64 $0, $1;", "=d,d" %[[D]] : (f64) -> f64
// CHECK-NOT:       math.
func.func @ceil(%x: f32, %d: f64, %m: memref<1xf32>, %md: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.ceil %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    %rd = math.ceil %d : f64
    memref.store %rd, %md[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}

// -----

// roundeven rounds to nearest even (cvt.rni).
// CHECK-LABEL: func.func @roundeven
// CHECK-SAME:    (%[[X:.+]]: f32, %[[D:.+]]: f64
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "cvt.rni.f32.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK:           llvm.inline_asm "cvt.rni.f64.f64 $0, $1;", "=d,d" %[[D]] : (f64) -> f64
// CHECK-NOT:       math.
func.func @roundeven(%x: f32, %d: f64, %m: memref<1xf32>, %md: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.roundeven %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    %rd = math.roundeven %d : f64
    memref.store %rd, %md[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}

// -----

// fma keeps its operand order (a * b + c) and rounds once (fma.rn).
// CHECK-LABEL: func.func @fma
// CHECK-SAME:    (%[[A:.+]]: f32, %[[B:.+]]: f32, %[[C:.+]]: f32, %[[D:.+]]: f64
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f" %[[A]], %[[B]], %[[C]] : (f32, f32, f32) -> f32
// CHECK:           llvm.inline_asm "fma.rn.f64 $0, $1, $2, $3;", "=d,d,d,d" %[[D]], %[[D]], %[[D]] : (f64, f64, f64) -> f64
// CHECK-NOT:       math.
func.func @fma(%a: f32, %b: f32, %c: f32, %d: f64, %m: memref<1xf32>,
               %md: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.fma %a, %b, %c : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    %rd = math.fma %d, %d, %d : f64
    memref.store %rd, %md[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}

// -----

// exp (Codegen/Common/Approximations.h): the argument clamped to
// [-104, 88.75] (NaN put back at the end), range reduction with floor, a
// polynomial of fmas, and 2^n applied as two exponent-bit factors (so that
// denormal results are rounded once); no math op (hence no __nv_expf) is
// left.
// CHECK-LABEL: func.func @exp_f32
// CHECK-SAME:    (%[[X:.+]]: f32, %[[M:.+]]: memref<1xf32>)
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           %[[LO:.+]] = arith.maxnumf %[[X]], %{{.+}} : f32
// CHECK:           arith.minnumf %[[LO]], %{{.+}} : f32
// CHECK:           %[[NAN:.+]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK:           llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;"
// CHECK:           llvm.inline_asm "fma.rn.f32 $0, $1, $2, $3;"
// CHECK:           arith.shrsi
// CHECK:           %[[P1:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK:           %[[Y1:.+]] = arith.mulf %{{.+}}, %[[P1]] : f32
// CHECK:           %[[P2:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK:           %[[Y2:.+]] = arith.mulf %[[Y1]], %[[P2]] : f32
// CHECK:           %[[R:.+]] = arith.select %[[NAN]], %[[X]], %[[Y2]] : f32
// CHECK-NEXT:      memref.store %[[R]], %[[M]]
// CHECK-NOT:       math.
func.func @exp_f32(%x: f32, %m: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.exp %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// tanh: an odd polynomial for |x| < 0.75, 1 - 2 / (e^{2|x|} + 1) above
// (one division), selected.
// CHECK-LABEL: func.func @tanh_f32
// CHECK-SAME:    (%[[X:.+]]: f32, %[[M:.+]]: memref<1xf32>)
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "fma.rn.f32 $0, $1, $2, $3;"
// CHECK:           arith.divf
// CHECK:           arith.select
// CHECK:           %[[R:.+]] = arith.select
// CHECK-NEXT:      memref.store %[[R]], %[[M]]
// CHECK-NOT:       math.
func.func @tanh_f32(%x: f32, %m: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.tanh %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// erf: an odd polynomial for |x| < 1, 1 - erfc(|x|) above (erfc with one
// division and an exp).
// CHECK-LABEL: func.func @erf_f32
// CHECK-SAME:    (%[[X:.+]]: f32, %[[M:.+]]: memref<1xf32>)
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "fma.rn.f32 $0, $1, $2, $3;"
// CHECK:           arith.divf
// CHECK:           memref.store %{{.+}}, %[[M]]
// CHECK-NOT:       math.
func.func @erf_f32(%x: f32, %m: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.erf %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// erfc (the exact GeLU of the linalg lowering uses it): as erf, blockc's
// polynomial; no __nv_erfcf is left.
// CHECK-LABEL: func.func @erfc_f32
// CHECK-SAME:    (%[[X:.+]]: f32, %[[M:.+]]: memref<1xf32>)
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "abs.f32 $0, $1;", "=f,f" %[[X]]
// CHECK:           arith.divf
// CHECK:           arith.select
// CHECK:           %[[R:.+]] = arith.select
// CHECK-NEXT:      memref.store %[[R]], %[[M]]
// CHECK-NOT:       math.
func.func @erfc_f32(%x: f32, %m: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %r = math.erfc %x : f32
    memref.store %r, %m[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// sin and cos: reduction by multiples of pi/2 (floor) and polynomials (RoPE
// takes them).
// CHECK-LABEL: func.func @sin_cos_f32
// CHECK-SAME:    (%[[X:.+]]: f32, %[[M:.+]]: memref<2xf32>)
// CHECK:         gpu.launch
// CHECK-NOT:       math.
// CHECK:           llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;"
// CHECK:           llvm.inline_asm "fma.rn.f32 $0, $1, $2, $3;"
// CHECK:           memref.store %{{.+}}, %[[M]]
// CHECK:           llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;"
// CHECK:           llvm.inline_asm "fma.rn.f32 $0, $1, $2, $3;"
// CHECK:           memref.store %{{.+}}, %[[M]]
// CHECK-NOT:       math.
func.func @sin_cos_f32(%x: f32, %m: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s = math.sin %x : f32
    memref.store %s, %m[%c0] : memref<2xf32>
    %c = math.cos %x : f32
    memref.store %c, %m[%c1] : memref<2xf32>
    gpu.terminator
  }
  return
}

// -----

// Ops nested in control flow inside the launch (the bounds checks that
// scf.parallel-to-gpu leaves) are expanded too.
// CHECK-LABEL: func.func @nested_in_if
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK-NOT:         math.
// CHECK:             llvm.inline_asm "sqrt.rn.f32 $0, $1;"
// CHECK:             arith.divf
// CHECK-NOT:       math.
func.func @nested_in_if(%x: f32, %p: i1, %m: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.if %p {
      %r = math.rsqrt %x : f32
      memref.store %r, %m[%c0] : memref<1xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Host code outside any gpu.launch is left to the host lowering.
// CHECK-LABEL: func.func @negative_outside_launch
// CHECK-SAME:    (%[[X:.+]]: f32, %[[D:.+]]: f64)
// CHECK-NOT:     llvm.inline_asm
// CHECK:         %[[E:.+]] = math.exp %[[X]] : f32
// CHECK:         %[[R:.+]] = math.rsqrt %[[E]] : f32
// CHECK:         %[[S:.+]] = math.sqrt %[[D]] : f64
// CHECK:         %[[T:.+]] = math.tanh %[[R]] : f32
// CHECK-NOT:     llvm.inline_asm
// CHECK:         return %[[T]], %[[S]]
func.func @negative_outside_launch(%x: f32, %d: f64) -> (f32, f64) {
  %e = math.exp %x : f32
  %r = math.rsqrt %e : f32
  %s = math.sqrt %d : f64
  %t = math.tanh %r : f32
  return %t, %s : f32, f64
}

// -----

// f64 exp has no polynomial approximation: it is left as it is.
// CHECK-LABEL: func.func @negative_exp_f64
// CHECK-SAME:    (%[[D:.+]]: f64, %[[M:.+]]: memref<1xf64>)
// CHECK:         gpu.launch
// CHECK:           %[[E:.+]] = math.exp %[[D]] : f64
// CHECK-NEXT:      memref.store %[[E]], %[[M]]
func.func @negative_exp_f64(%d: f64, %m: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %e = math.exp %d : f64
    memref.store %e, %m[%c0] : memref<1xf64>
    gpu.terminator
  }
  return
}
