// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 vector-width=12" -verify-diagnostics
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 registers=4" 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=sse l2-bytes=0" 2>&1 | FileCheck %s --check-prefix=L2
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 avx512-bf16=true" 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: not blockc-opt %s --blockc-cpu-select-tiles="isa=sse9" 2>&1 | FileCheck %s --check-prefix=ISA
// RUN: not blockc-opt %s --blockc-cpu-select-tiles="isa=auto" 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 prefetch-bytes=100" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 prefetch-bytes=-2" 2>&1 | FileCheck %s --check-prefix=PREFETCHNEG
// RUN: not blockc-opt %s --blockc-cpu-select-tiles="isa=avx2 vendor=arm" 2>&1 | FileCheck %s --check-prefix=VENDOR

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
// A prefetch distance that is neither -1 (by the vendor), 0 nor a multiple
// of 64 up to 65536.
// PREFETCH: error: blockc-cpu-select-tiles: prefetch-bytes must be -1 (by the target's vendor), 0 (no prefetch) or a multiple of 64 up to 65536, got 100
// PREFETCHNEG: error: blockc-cpu-select-tiles: prefetch-bytes must be -1 (by the target's vendor), 0 (no prefetch) or a multiple of 64 up to 65536, got -2
// VENDOR: for the --vendor option: Cannot find option named 'arm'!

// The ISA is an enum option: other names (and `auto`: the pass does not
// read the host) are refused by the option parser.
// ISA: for the --isa option: Cannot find option named 'sse9'!
// AUTO: for the --isa option: Cannot find option named 'auto'!
