//===- BlockReport.h - walk a tensor through a transformer block -*- C++
//-*-===//
//
// The per-step walk of a transformer.block that `blockc --report` prints:
// every step in execution order with its output shape, FLOPs per token,
// bytes moved and arithmetic intensity; every weight component with its
// shape, parameter count and bytes as stored (quantised projections in
// their int8/int4 bytes with their scales); totals per block and for N
// layers, the attention / FFN split and the KV-cache size. A block of a
// tensor-parallel module is one rank's part; the totals add the figures of
// the whole model over all ranks. Everything is computed from the op's
// configuration and operand types (docs/Report.md defines each figure).
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

/// How a block's projection weights (Q, K, V, O, gate, up, down) are
/// stored: in the model's element type, or quantised by `weight_quant`
/// (docs/Quantization.md).
enum class WeightStorage {
  Element, // the element type (f32: 4 bytes, bf16/f16: 2)
  Int8,    // 1 byte per weight + one f32 scale per output row
  Int4,    // half a byte per weight + one f32 scale per group of G columns
};

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
  /// The element type: activations, KV cache, norms, biases and the
  /// unquantised weights.
  int64_t elementBytes = 4;
  std::string elementType = "f32";
  /// The projection weights as stored; `quantGroupSize` is int4's G.
  WeightStorage weightStorage = WeightStorage::Element;
  int64_t quantGroupSize = 0;
  /// weight_quant's activations = int8 (run-time quantised inputs).
  bool quantizedActivations = false;
  /// For one rank's part of a tensor-parallel block: the K/V heads of the
  /// whole block (when the ranks do not divide them, ranks hold copies of
  /// the same heads). 0: numKVHeads x the rank count.
  int64_t modelKVHeads = 0;

  /// The bytes a projection weight `[out, in]` is stored in, scales
  /// included.
  int64_t projectionBytes(int64_t out, int64_t in) const;
  /// "f32", "bf16", "int8", "int4 g32".
  std::string weightStorageName() const;

  static BlockShape fromOp(transformer::BlockOp op);
};

struct ReportOptions {
  int64_t seqLen = 1; // tokens processed together (T)
  int64_t kvLen = 1;  // keys attended to (L), incl. the new tokens
  int64_t layers = 1; // blocks in the model (N)
  /// Tensor parallelism: the ranks the blocks are split over (each
  /// BlockShape is then one rank's part, with its local heads and d_ff);
  /// 1: not split. buildReports(module) takes it from the module.
  int64_t ranks = 1;
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
  int64_t bytes = 0;   // as stored (quantised weights with their scales)
  std::string storage; // "f32", "bf16", "int8", "int4 g32"
  /// The whole tensor of a tensor-parallel model this component is one
  /// rank's part of, every element counted once (replicated norms and
  /// biases once; K/V rows once however many ranks hold them); params and
  /// bytes when not split.
  int64_t modelParams = 0;
  int64_t modelBytes = 0;
};

struct BlockReport {
  BlockShape shape;
  ReportOptions options;
  std::vector<ReportStep> steps;
  std::vector<ReportComponent> components;

  int64_t totalParams() const;
  int64_t params(llvm::StringRef kind) const;
  /// Bytes of all components as stored (weight bytes of the block).
  int64_t weightBytes() const;
  /// Stored bytes of the projection weights per projection weight
  /// (4 for f32, 2 for bf16, 1.00x for int8, 0.625 for int4 g32).
  double bytesPerProjectionWeight() const;
  /// The whole model's parameters and weight bytes in this block, each
  /// element counted once over all ranks (= totalParams / weightBytes when
  /// not split).
  int64_t modelParams() const;
  int64_t modelWeightBytes() const;
  /// Static (weight) FLOPs per token: 2 per projection weight.
  double staticFlopsPerToken() const;
  /// L-dependent attention FLOPs per token (4 H D L: scores and A V).
  double attentionFlopsPerToken() const;
  /// All counted FLOPs per token (static, attention, elementwise).
  double flopsPerToken() const;
  double kvCacheBytesPerToken() const;
};

BlockReport buildReport(const BlockShape &shape, const ReportOptions &options);

/// The report of every transformer.block in `module`, in order; a module
/// partitioned for tensor parallelism (transformer.tensor_parallel) sets
/// options.ranks.
std::vector<BlockReport> buildReports(mlir::ModuleOp module,
                                      ReportOptions options);

/// A causal language model's ops outside its blocks (the token embedding
/// with GPT-2's position table, the final norm and the LM head), as steps
/// and components like a block's; empty for a model of activations.
struct ModelPartsReport {
  ReportOptions options;
  std::vector<ReportStep> steps;
  std::vector<ReportComponent> components;

  bool empty() const { return steps.empty(); }
  int64_t params() const;
  int64_t weightBytes() const;
  /// All counted FLOPs per token (the head's 2 d vocab and the elementwise
  /// work).
  double flopsPerToken() const;
};

/// The ModelPartsReport of the entry function of `module` (the one with a
/// transformer.embedding).
ModelPartsReport buildModelPartsReport(mlir::ModuleOp module,
                                       const ReportOptions &options);

enum class ReportFormat { Text, Markdown, JSON, HTML };

/// Prints the report of `blocks` (one per transformer.block of the model,
/// in order; `title` names the model), and of a causal language model's
/// other ops (`parts`, when given and not empty).
void printReport(llvm::raw_ostream &os, llvm::StringRef title,
                 const std::vector<BlockReport> &blocks, ReportFormat format,
                 const ModelPartsReport *parts = nullptr);

} // namespace blockc

#endif // BLOCKC_ANALYSIS_BLOCKREPORT_H
