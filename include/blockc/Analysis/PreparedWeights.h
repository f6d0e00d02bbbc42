//===- PreparedWeights.h - an entry's prepare function ----------*- C++ -*-===//
//
// Reads what blockc-cpu-prepare-weights recorded (see Codegen/CPU/Passes.td):
// an entry @E whose packed weights are made once by @E_prepare. The records
// are attributes of stage 1's output (blockc_codegen.prepare_for, .source_arg,
// .prepared); stage 3 strips them, so the drivers read them between stages.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_ANALYSIS_PREPAREDWEIGHTS_H
#define BLOCKC_ANALYSIS_PREPAREDWEIGHTS_H

#include "blockc/Support/TensorFiles.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace blockc {

/// One result of a prepare function: the prepared form of an entry
/// argument.
struct PreparedWeight {
  /// The entry argument it replaces (its index in the entry's signature).
  unsigned argIndex = 0;
  /// Static shape of the prepared tensor.
  std::vector<int64_t> shape;
  /// The packed-panel layout it is in: W[rows, cols] in panels of
  /// panelK x panelN (0 for a quantised weight).
  int64_t rows = 0, cols = 0, panelK = 0, panelN = 0;
  /// A quantised weight (#blockc_codegen.quantized_weight): 8 or 4 bits per
  /// value, one scale per groupSize columns; 0 for packed panels.
  int64_t bits = 0, groupSize = 0;
  /// Rows stored together (the quantised weight's `interleave`; 1: one
  /// row after the other).
  int64_t interleave = 1;
  /// int4 rows in vector lanes (the quantised weight's `row_lanes`, with
  /// an interleave of 16): per group, 8 k of the 16 rows per 16 words.
  bool rowLanes = false;
  /// The prepared tensor's elements: f32 panels (or the int32 words of a
  /// quantised weight, 4 bytes too), or bf16/f16 panels of a weight stored
  /// in that type.
  ElementType elementType = ElementType::F32;

  /// Panels of bf16 k pairs (packed_weight pairs = true): the packed layout
  /// of rank 6, [.., 1, panelK / 2, panelN, 2].
  bool pairs() const { return bits == 0 && shape.size() == 6; }
};

/// The layout of `w`, prepared from a weight of type `source`, as one
/// line, e.g. "packed_weight rows=4096 cols=4096 panel_k=256 panel_n=16
/// type=bf16 shape=[256, 16, 256, 16] from=bf16" or "quantized_weight
/// rows=... cols=... bits=4 group_size=32 shape=[...] from=f32": what a
/// file of prepared weights records per tensor, and must match (words
/// quantised from an f32 weight differ from words quantised from its bf16
/// rounding).
std::string describePreparedLayout(const PreparedWeight &w, ElementType source);

struct PrepareEntry {
  /// The prepare function, e.g. "forward_prepare".
  std::string funcName;
  /// The entry arguments it reads, in order (its first arguments).
  std::vector<unsigned> inputs;
  /// What it makes, in order: its remaining arguments are one destination
  /// buffer per result (of the result's shape, filled in place), and it
  /// returns them.
  std::vector<PreparedWeight> results;

  /// Its parts (functions marked blockc_codegen.prepare_part_of, which it
  /// calls), in order: each makes one of its results alone, from the entry
  /// arguments it reads, so that a caller may release each original as soon
  /// as its prepared form exists. Empty, or one per result.
  std::vector<PrepareEntry> parts;

  /// The result replacing entry argument `argIndex`, if any.
  const PreparedWeight *find(unsigned argIndex) const;
};

/// The prepare function of `entry` in `module` (after stage 1), with its
/// parts, none when the entry reads no prepared weights. Malformed records
/// (an index out of range, a result whose type differs from the entry
/// argument it replaces, a missing record, a part that does not make
/// exactly one of the results or parts for only some of them) are an error
/// emitted at the prepare function or the part.
mlir::FailureOr<std::optional<PrepareEntry>>
findPrepareEntry(mlir::ModuleOp module, llvm::StringRef entry);

/// A line-based text form of `entry` (empty text for none), for the
/// metadata of compile-cache entries: "prepare <func>", "inputs <i>...",
/// then one "result <arg> <rows> <cols> <panel_k> <panel_n> <bits>
/// <group_size> <type> <shape>..." per result; then each part the same way,
/// starting with "part <func>".
std::string serializePrepareEntry(const std::optional<PrepareEntry> &entry);

/// Parses serializePrepareEntry's text; failure on anything else.
mlir::FailureOr<std::optional<PrepareEntry>>
parsePrepareEntry(llvm::StringRef text);

} // namespace blockc

#endif // BLOCKC_ANALYSIS_PREPAREDWEIGHTS_H
