// RUN: blockc-opt %s --blockc-cpu-select-tiles="isa=sse9" -verify-diagnostics

// An unknown ISA is refused.
// expected-error @+1 {{blockc-cpu-select-tiles: isa must be auto, avx512, avx2 or generic and l2-bytes at least 1024}}
func.func @bad_isa() {
  return
}
