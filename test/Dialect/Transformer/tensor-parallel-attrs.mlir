// RUN: blockc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The attributes of tensor-parallel modules (transformer-tensor-parallel):
// round trips and one case per verifier message.

// CHECK: module attributes {transformer.tensor_parallel = 2 : i64}
// CHECK: func.func @slices(%{{.+}}: tensor<16x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16, 24, 40, 48>]>}, %{{.+}}: tensor<64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64>]>})
module attributes {transformer.tensor_parallel = 2 : i64} {
  func.func @slices(
      %w: tensor<16x64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16, 24, 40, 48>]>},
      %b: tensor<64xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 64>, array<i64>]>}) {
    return
  }
}

// -----

// expected-error @+1 {{axis must be >= 0, got -1}}
func.func @axis(%w: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = -1, ranks = [array<i64: 0, 16>, array<i64: 16, 32>]>}) {
  return
}

// -----

// expected-error @+1 {{needs the ranges of at least 2 ranks, got 1}}
func.func @one_rank(%w: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>]>}) {
  return
}

// -----

// expected-error @+1 {{rank 1 needs an array<i64> of [begin, end) pairs}}
func.func @odd(%w: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16>]>}) {
  return
}

// -----

// expected-error @+1 {{rank 0 has the range [8, 8): needs 0 <= begin < end}}
func.func @empty_range(%w: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 8, 8>, array<i64: 16, 32>]>}) {
  return
}

// -----

// expected-error @+1 {{rank 1 reads 8 elements, another rank 16 (every reading rank must read as many)}}
func.func @unequal(%w: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64: 0, 16>, array<i64: 16, 24>]>}) {
  return
}

// -----

// expected-error @+1 {{no rank reads anything}}
func.func @nothing(%w: tensor<16xf32> {transformer.shard_slice = #transformer.shard_slice<axis = 0, ranks = [array<i64>, array<i64>]>}) {
  return
}

// -----

// expected-error @+1 {{'transformer.shard_slice' on argument #0 must be a #transformer.shard_slice}}
func.func @wrong_kind(%w: tensor<16xf32> {transformer.shard_slice = array<i64: 0, 16>}) {
  return
}

// -----

// expected-error @+1 {{'transformer.tensor_parallel' must be an integer >= 2 on a module}}
module attributes {transformer.tensor_parallel = 1 : i64} {
}

// -----

func.func @all_reduce_over_on_norm(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'transformer.all_reduce_over' must be a flat symbol reference (a shard.grid) on a transformer.block}}
  %y = transformer.rms_norm %x, %g {transformer.all_reduce_over = @grid}
      : tensor<?x?x8xf32>, tensor<8xf32>
  return
}
