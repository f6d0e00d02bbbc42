// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 vector-width=12" -verify-diagnostics
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 registers=4" 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=sse l2-bytes=0" 2>&1 | FileCheck %s --check-prefix=L2
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 avx512-bf16=true" 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: not blockc-opt %s --blockc-cpu-select-tiles="isa=sse9" 2>&1 | FileCheck %s --check-prefix=ISA
// RUN: not blockc-opt %s --blockc-cpu-select-tiles="isa=auto" 2>&1 | FileCheck %s --check-prefix=AUTO

// Options that make an invalid target are an error at the function, with
// the target verifier's message (test/Dialect/Codegen/invalid.mlir has one
// case per message).
// expected-error @+1 {{blockc-cpu-select-tiles: vector_width must be a power of two >= 1, got 12}}
func.func @bad_target() {
  return
}
// REGS: error: blockc-cpu-select-tiles: registers must be >= 8, got 4
// L2: error: blockc-cpu-select-tiles: l2_bytes must be positive, got 0
// BF16: error: blockc-cpu-select-tiles: avx512_bf16 needs isa = avx512, got isa = avx2

// The ISA is an enum option: other names (and `auto`: the pass does not
// read the host) are refused by the option parser.
// ISA: for the --isa option: Cannot find option named 'sse9'!
// AUTO: for the --isa option: Cannot find option named 'auto'!
