// RUN: blockc-opt %s --blockc-cpu-lower-sdpa="key-tile=0" -verify-diagnostics

// The multi-row kernel's online softmax needs at least one key per tile.
// expected-error @+1 {{blockc-cpu-lower-sdpa: key-tile must be >= 1}}
func.func @bad_sdpa_key_tile() {
  return
}
