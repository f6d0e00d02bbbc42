//===- BlockReport.h - walk a tensor through a transformer block -*- C++
//-*-===//
//
// The per-step walk of a transformer.block that `blockc --report` prints:
// every step in execution order with its output shape, FLOPs per token,
// bytes moved and arithmetic intensity; every weight component with its
// shape, parameter count and bytes; totals per block and for N layers, the
// attention / FFN split and the KV-cache size. Everything is computed from
// the op's configuration and operand types (docs/Report.md defines each
// figure).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_ANALYSIS_BLOCKREPORT_H
#define BLOCKC_ANALYSIS_BLOCKREPORT_H

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blockc {

/// The configuration a report is computed from (read off a BlockOp, or
/// built directly in unit tests).
struct BlockShape {
  int64_t modelDim = 0, numHeads = 0, numKVHeads = 0, headDim = 0, dff = 0;
  bool layerNorm = false, preNorm = true, gated = true, rope = true;
  bool causal = true;
  transformer::ActivationKind activation = transformer::ActivationKind::silu;
  /// Which biases exist.
  bool biasQ = false, biasK = false, biasV = false, biasO = false;
  bool biasGate = false, biasUp = false, biasDown = false;
  int64_t elementBytes = 4;

  static BlockShape fromOp(transformer::BlockOp op);
};

struct ReportOptions {
  int64_t seqLen = 1; // tokens processed together (T)
  int64_t kvLen = 1;  // keys attended to (L), incl. the new tokens
  int64_t layers = 1; // blocks in the model (N)
};

/// One step of the walk.
struct ReportStep {
  std::string name;                 // "Q projection"
  std::string operation;            // "q = x_norm W_Q^T"
  std::string component;            // "attention" | "ffn" | "norm" | "residual"
  std::vector<int64_t> outputShape; // for T tokens, heads split where so
  /// FLOPs for one token: static-weight work, and the part that grows with
  /// the attended length L.
  double flopsPerToken = 0, flopsPerTokenLDependent = 0;
  double bytes = 0;                   // bytes read + written for the T tokens
  double flops(int64_t seqLen) const; // for T tokens at this L
  /// FLOPs per byte moved for T tokens.
  double intensity(int64_t seqLen) const;
};

/// One weight tensor (or bias / norm parameter) of the block.
struct ReportComponent {
  std::string name; // "W_Q", "b_Q", "attn_norm.g"
  std::string kind; // "attention" | "ffn" | "norm" | "bias"
  std::vector<int64_t> shape;
  int64_t params = 0;
  int64_t bytes = 0;
};

struct BlockReport {
  BlockShape shape;
  ReportOptions options;
  std::vector<ReportStep> steps;
  std::vector<ReportComponent> components;

  int64_t totalParams() const;
  int64_t params(llvm::StringRef kind) const;
  /// Static (weight) FLOPs per token: 2 per projection weight.
  double staticFlopsPerToken() const;
  /// L-dependent attention FLOPs per token (4 H D L: scores and A V).
  double attentionFlopsPerToken() const;
  /// All counted FLOPs per token (static, attention, elementwise).
  double flopsPerToken() const;
  double kvCacheBytesPerToken() const;
};

BlockReport buildReport(const BlockShape &shape, const ReportOptions &options);

/// The report of every transformer.block in `module`, in order.
std::vector<BlockReport> buildReports(mlir::ModuleOp module,
                                      const ReportOptions &options);

enum class ReportFormat { Text, Markdown, JSON, HTML };

/// Prints the report of `blocks` (one per transformer.block of the model,
/// in order; `title` names the model).
void printReport(llvm::raw_ostream &os, llvm::StringRef title,
                 const std::vector<BlockReport> &blocks, ReportFormat format);

} // namespace blockc

#endif // BLOCKC_ANALYSIS_BLOCKREPORT_H
