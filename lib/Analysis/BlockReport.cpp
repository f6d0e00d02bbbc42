//===- BlockReport.cpp - walk a tensor through a transformer block --------===//
//
// Builds and prints the report of BlockReport.h. The FLOP conventions are
// those of the seed decks (docs/Report.md): 2 FLOPs per weight per token for
// projections, 4 H D L per token for attention scores and A V, and small
// elementwise counts (RMSNorm 4d, LayerNorm 7d, softmax 3HL, RoPE 3 per
// rotated element, residual d, gated activation 3 d_ff, plain d_ff).
// Weights count as stored: quantised projections in their int8 bytes or
// int4 nibbles with their f32 scales (docs/Quantization.md).
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/BlockReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

using namespace blockc;
using namespace blockc::transformer;

namespace {

/// The K/V heads of the whole block that `op`, one rank's part of a
/// partitioned block, holds some of: the rows of w_k that the ranks read
/// together (its #transformer.shard_slice), in heads; 0 when unknown.
int64_t modelKVHeadsOf(BlockOp op) {
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(op.getWK());
  if (!arg)
    return 0;
  auto func = llvm::dyn_cast<mlir::func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func)
    return 0;
  auto slice = func.getArgAttrOfType<ShardSliceAttr>(
      arg.getArgNumber(), TransformerDialect::kShardSliceAttr);
  if (!slice || slice.getAxis() != 0)
    return 0;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (unsigned r = 0; r < slice.getRanks().size(); ++r) {
    llvm::ArrayRef<int64_t> flat = slice.getRanges(r);
    for (size_t i = 0; i + 1 < flat.size(); i += 2)
      ranges.push_back({flat[i], flat[i + 1]});
  }
  llvm::sort(ranges);
  int64_t rows = 0, end = 0;
  for (auto [b, e] : ranges) {
    b = std::max(b, end);
    if (e > b) {
      rows += e - b;
      end = e;
    }
  }
  return rows / op.getHeadDim();
}

} // namespace

BlockShape BlockShape::fromOp(BlockOp op) {
  BlockShape s;
  s.modelDim = op.getInput().getType().getDimSize(2);
  s.numHeads = op.getNumHeads();
  s.numKVHeads = op.getNumKvHeads();
  s.headDim = op.getHeadDim();
  s.dff = op.getDFf();
  s.layerNorm = op.getNorm() == NormKind::layer;
  s.preNorm = op.isPreNorm();
  s.gated = op.isGated();
  s.rope = op.getRope().has_value();
  s.causal = op.getCausal();
  s.activation = op.getActivation();
  s.biasQ = static_cast<bool>(op.getBQ());
  s.biasK = static_cast<bool>(op.getBK());
  s.biasV = static_cast<bool>(op.getBV());
  s.biasO = static_cast<bool>(op.getBO());
  s.biasGate = static_cast<bool>(op.getBGate());
  s.biasUp = static_cast<bool>(op.getBUp());
  s.biasDown = static_cast<bool>(op.getBDown());
  // The verifier gives every operand of a block one element type.
  mlir::Type element = op.getInput().getType().getElementType();
  s.elementBytes = element.getIntOrFloatBitWidth() / 8;
  s.elementType.clear();
  llvm::raw_string_ostream(s.elementType) << element;
  if (WeightQuantAttr quant = op.getWeightQuantAttr()) {
    s.weightStorage = quant.getType() == WeightQuantType::int8
                          ? WeightStorage::Int8
                          : WeightStorage::Int4;
    s.quantGroupSize = quant.getGroupSize();
    s.quantizedActivations = quant.quantizesActivations();
  }
  if (op->hasAttr(TransformerDialect::kAllReduceOverAttr))
    s.modelKVHeads = modelKVHeadsOf(op);
  return s;
}

int64_t BlockShape::projectionBytes(int64_t out, int64_t in) const {
  switch (weightStorage) {
  case WeightStorage::Element:
    return out * in * elementBytes;
  case WeightStorage::Int8:
    // A byte per weight, an f32 scale per output row.
    return out * in + 4 * out;
  case WeightStorage::Int4: {
    // Two weights per byte, an f32 scale per group of G input columns (the
    // verifier makes G divide the input dimension).
    int64_t g = quantGroupSize > 0 ? quantGroupSize : in;
    return out * ((in + 1) / 2) + 4 * out * ((in + g - 1) / g);
  }
  }
  return 0;
}

std::string BlockShape::weightStorageName() const {
  switch (weightStorage) {
  case WeightStorage::Element:
    return elementType;
  case WeightStorage::Int8:
    return "int8";
  case WeightStorage::Int4:
    return "int4 g" + std::to_string(quantGroupSize);
  }
  return "?";
}

double ReportStep::flops(int64_t seqLen) const {
  return static_cast<double>(seqLen) *
         (flopsPerToken + flopsPerTokenLDependent);
}

double ReportStep::intensity(int64_t seqLen) const {
  return bytes > 0 ? flops(seqLen) / bytes : 0.0;
}

namespace {

const char *activationName(ActivationKind kind) {
  switch (kind) {
  case ActivationKind::silu:
    return "SiLU";
  case ActivationKind::gelu:
    return "GeLU";
  case ActivationKind::gelu_tanh:
    return "GeLU(tanh)";
  case ActivationKind::relu:
    return "ReLU";
  }
  return "?";
}

struct Builder {
  const BlockShape &s;
  const ReportOptions &o;
  BlockReport &r;
  double e; // bytes per element

  double act(int64_t width) const {
    return static_cast<double>(o.seqLen) * width * e;
  }

  void add(std::string name, std::string operation, std::string component,
           std::vector<int64_t> shape, double flops, double flopsL,
           double bytes) {
    ReportStep step;
    step.name = std::move(name);
    step.operation = std::move(operation);
    step.component = std::move(component);
    step.outputShape = std::move(shape);
    step.flopsPerToken = flops;
    step.flopsPerTokenLDependent = flopsL;
    step.bytes = bytes;
    r.steps.push_back(std::move(step));
  }

  void norm(const std::string &which, const std::string &in,
            const std::string &out) {
    int64_t d = s.modelDim;
    std::string kind = s.layerNorm ? "LayerNorm" : "RMSNorm";
    add(which == "attn" ? "norm (attention)" : "norm (FFN)",
        out + " = " + kind + "(" + in + ")", "norm", {o.seqLen, d},
        (s.layerNorm ? 7.0 : 4.0) * d, 0,
        2 * act(d) + (s.layerNorm ? 2 : 1) * d * e);
  }

  void projection(const std::string &name, const std::string &operation,
                  const std::string &component, int64_t in, int64_t out,
                  bool bias, std::vector<int64_t> shape) {
    double weights = static_cast<double>(in) * out;
    add(name, operation + (bias ? " + b" : ""), component, std::move(shape),
        2 * weights + (bias ? out : 0), 0,
        static_cast<double>(s.projectionBytes(out, in)) + act(in) + act(out) +
            (bias ? out * e : 0));
  }

  void residual(const std::string &operation) {
    int64_t d = s.modelDim;
    add("residual", operation, "residual", {o.seqLen, d},
        static_cast<double>(d), 0, 3 * act(d));
  }

  void attention(const std::string &in) {
    int64_t d = s.modelDim, h = s.numHeads, hkv = s.numKVHeads, dh = s.headDim,
            L = o.kvLen, T = o.seqLen;
    int64_t qDim = h * dh, kvDim = hkv * dh;
    projection("Q", "q = " + in + " W_Q^T", "attention", d, qDim, s.biasQ,
               {T, h, dh});
    projection("K", "k = " + in + " W_K^T", "attention", d, kvDim, s.biasK,
               {T, hkv, dh});
    projection("V", "v = " + in + " W_V^T", "attention", d, kvDim, s.biasV,
               {T, hkv, dh});
    if (s.rope)
      add("RoPE", "q, k = RoPE(q, k)", "attention", {T, h + hkv, dh},
          3.0 * (h + hkv) * dh, 0, 2 * act(qDim + kvDim));
    double scoreBytes = static_cast<double>(h) * T * L * e;
    add("scores",
        std::string("S = q K^T / sqrt(d_h)") +
            (s.causal ? ", causal mask" : ""),
        "attention", {h, T, L}, 0, 2.0 * h * dh * L,
        act(qDim) + static_cast<double>(L) * kvDim * e + scoreBytes);
    add("softmax", "A = softmax(S) row-wise", "attention", {h, T, L}, 0,
        3.0 * h * L, 2 * scoreBytes);
    add("A V", "o = A V (heads concatenated)", "attention", {T, qDim}, 0,
        2.0 * h * dh * L,
        scoreBytes + static_cast<double>(L) * kvDim * e + act(qDim));
    projection("O", "attn = o W_O^T", "attention", qDim, d, s.biasO, {T, d});
  }

  void ffn(const std::string &in) {
    int64_t d = s.modelDim, f = s.dff, T = o.seqLen;
    if (s.gated)
      projection("gate", "g = " + in + " W_gate^T", "ffn", d, f, s.biasGate,
                 {T, f});
    projection("up", "u = " + in + " W_up^T", "ffn", d, f, s.biasUp, {T, f});
    std::string act = activationName(s.activation);
    if (s.gated)
      add("activation", "a = " + act + "(g) * u", "ffn", {T, f}, 3.0 * f, 0,
          3 * this->act(f));
    else
      add("activation", "a = " + act + "(u)", "ffn", {T, f},
          static_cast<double>(f), 0, 2 * this->act(f));
    projection("down", "ffn = a W_down^T", "ffn", f, d, s.biasDown, {T, d});
  }

  /// How a component of one rank's part relates to the whole tensor of a
  /// tensor-parallel model (docs/TensorParallel.md).
  enum class Split {
    Whole,   // replicated (norms) or read by one rank (b_O, b_down)
    Rows,    // column-parallel: the rank's rows (axis 0)
    Columns, // row-parallel: the rank's columns (axis 1)
    KV,      // the rank's K/V heads, possibly copies of other ranks' ones
  };

  int64_t bytesOf(bool projection, const std::vector<int64_t> &shape) const {
    if (projection)
      return s.projectionBytes(shape[0], shape[1]);
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n * s.elementBytes;
  }

  void component(std::string name, std::string kind, std::vector<int64_t> shape,
                 Split split) {
    ReportComponent c;
    c.name = std::move(name);
    c.kind = std::move(kind);
    c.shape = std::move(shape);
    c.params = 1;
    for (int64_t d : c.shape)
      c.params *= d;
    bool projection = c.kind == "attention" || c.kind == "ffn";
    c.bytes = bytesOf(projection, c.shape);
    c.storage = projection ? s.weightStorageName() : s.elementType;
    std::vector<int64_t> whole = c.shape;
    if (o.ranks > 1) {
      int64_t kvHeads =
          s.modelKVHeads > 0 ? s.modelKVHeads : s.numKVHeads * o.ranks;
      switch (split) {
      case Split::Whole:
        break;
      case Split::Rows:
        whole[0] *= o.ranks;
        break;
      case Split::Columns:
        whole[1] *= o.ranks;
        break;
      case Split::KV:
        whole[0] = kvHeads * s.headDim;
        break;
      }
    }
    c.modelParams = 1;
    for (int64_t d : whole)
      c.modelParams *= d;
    c.modelBytes = bytesOf(projection, whole);
    r.components.push_back(std::move(c));
  }

  void components() {
    int64_t d = s.modelDim, q = s.numHeads * s.headDim,
            kv = s.numKVHeads * s.headDim, f = s.dff;
    component("attn_norm.g", "norm", {d}, Split::Whole);
    if (s.layerNorm)
      component("attn_norm.b", "norm", {d}, Split::Whole);
    component("W_Q", "attention", {q, d}, Split::Rows);
    component("W_K", "attention", {kv, d}, Split::KV);
    component("W_V", "attention", {kv, d}, Split::KV);
    component("W_O", "attention", {d, q}, Split::Columns);
    if (s.biasQ)
      component("b_Q", "bias", {q}, Split::Rows);
    if (s.biasK)
      component("b_K", "bias", {kv}, Split::KV);
    if (s.biasV)
      component("b_V", "bias", {kv}, Split::KV);
    if (s.biasO)
      component("b_O", "bias", {d}, Split::Whole);
    component("ffn_norm.g", "norm", {d}, Split::Whole);
    if (s.layerNorm)
      component("ffn_norm.b", "norm", {d}, Split::Whole);
    if (s.gated)
      component("W_gate", "ffn", {f, d}, Split::Rows);
    component("W_up", "ffn", {f, d}, Split::Rows);
    component("W_down", "ffn", {d, f}, Split::Columns);
    if (s.biasGate)
      component("b_gate", "bias", {f}, Split::Rows);
    if (s.biasUp)
      component("b_up", "bias", {f}, Split::Rows);
    if (s.biasDown)
      component("b_down", "bias", {d}, Split::Whole);
  }
};

} // namespace

std::vector<BlockReport> blockc::buildReports(mlir::ModuleOp module,
                                              ReportOptions options) {
  if (auto ranks = module->getAttrOfType<mlir::IntegerAttr>(
          TransformerDialect::kTensorParallelAttr))
    options.ranks = std::max<int64_t>(ranks.getInt(), 1);
  std::vector<BlockReport> reports;
  module->walk([&](BlockOp block) {
    reports.push_back(buildReport(BlockShape::fromOp(block), options));
  });
  return reports;
}

BlockReport blockc::buildReport(const BlockShape &shape,
                                const ReportOptions &options) {
  BlockReport r;
  r.shape = shape;
  r.options = options;
  Builder b{shape, options, r, static_cast<double>(shape.elementBytes)};
  if (shape.preNorm) {
    b.norm("attn", "x", "x_norm");
    b.attention("x_norm");
    b.residual("h = x + attn");
    b.norm("ffn", "h", "h_norm");
    b.ffn("h_norm");
    b.residual("y = h + ffn");
  } else {
    b.attention("x");
    b.residual("s = x + attn");
    b.norm("attn", "s", "h");
    b.ffn("h");
    b.residual("s2 = h + ffn");
    b.norm("ffn", "s2", "y");
  }
  b.components();
  return r;
}

int64_t BlockReport::totalParams() const {
  int64_t n = 0;
  for (const ReportComponent &c : components)
    n += c.params;
  return n;
}

int64_t BlockReport::params(llvm::StringRef kind) const {
  int64_t n = 0;
  for (const ReportComponent &c : components)
    if (c.kind == kind)
      n += c.params;
  return n;
}

int64_t BlockReport::weightBytes() const {
  int64_t n = 0;
  for (const ReportComponent &c : components)
    n += c.bytes;
  return n;
}

double BlockReport::bytesPerProjectionWeight() const {
  int64_t params = 0, bytes = 0;
  for (const ReportComponent &c : components)
    if (c.kind == "attention" || c.kind == "ffn") {
      params += c.params;
      bytes += c.bytes;
    }
  return params ? static_cast<double>(bytes) / params : 0.0;
}

int64_t BlockReport::modelParams() const {
  int64_t n = 0;
  for (const ReportComponent &c : components)
    n += c.modelParams;
  return n;
}

int64_t BlockReport::modelWeightBytes() const {
  int64_t n = 0;
  for (const ReportComponent &c : components)
    n += c.modelBytes;
  return n;
}

double BlockReport::staticFlopsPerToken() const {
  return 2.0 * static_cast<double>(params("attention") + params("ffn"));
}

double BlockReport::attentionFlopsPerToken() const {
  return 4.0 * shape.numHeads * shape.headDim * options.kvLen;
}

double BlockReport::flopsPerToken() const {
  double f = 0;
  for (const ReportStep &s : steps)
    f += s.flopsPerToken + s.flopsPerTokenLDependent;
  return f;
}

double BlockReport::kvCacheBytesPerToken() const {
  return 2.0 * shape.numKVHeads * shape.headDim * shape.elementBytes;
}

//===----------------------------------------------------------------------===//
// A causal language model's ops outside the blocks
//===----------------------------------------------------------------------===//

int64_t ModelPartsReport::params() const {
  int64_t n = 0;
  for (const ReportComponent &c : components)
    n += c.params;
  return n;
}

int64_t ModelPartsReport::weightBytes() const {
  int64_t n = 0;
  for (const ReportComponent &c : components)
    n += c.bytes;
  return n;
}

double ModelPartsReport::flopsPerToken() const {
  double n = 0;
  for (const ReportStep &s : steps)
    n += s.flopsPerToken;
  return n;
}

ModelPartsReport blockc::buildModelPartsReport(mlir::ModuleOp module,
                                               const ReportOptions &options) {
  ModelPartsReport r;
  r.options = options;
  EmbeddingOp embedding;
  module->walk([&](EmbeddingOp op) {
    if (!embedding)
      embedding = op;
  });
  if (!embedding)
    return r;
  auto func = embedding->getParentOfType<mlir::func::FuncOp>();
  double t = static_cast<double>(options.seqLen);
  auto bytesOf = [](mlir::Type type) -> int64_t {
    return type.getIntOrFloatBitWidth() / 8;
  };
  auto storageOf = [](mlir::Type type) {
    std::string name;
    llvm::raw_string_ostream(name) << type;
    return name;
  };
  // A component per weight argument, each counted once (a tied head reads
  // the embedding's).
  llvm::DenseSet<mlir::Value> counted;
  auto component = [&](llvm::StringRef name, llvm::StringRef kind,
                       mlir::Value weight, int64_t bytes,
                       llvm::StringRef storage) {
    auto type = llvm::cast<mlir::RankedTensorType>(weight.getType());
    ReportComponent c;
    c.name = name.str();
    c.kind = kind.str();
    c.shape.assign(type.getShape().begin(), type.getShape().end());
    c.storage = storage.str();
    if (counted.insert(weight).second) {
      c.params = type.getNumElements();
      c.bytes = bytes;
    } else {
      c.storage = "tied: " + r.components.front().name;
    }
    c.modelParams = c.params;
    c.modelBytes = c.bytes;
    r.components.push_back(std::move(c));
  };

  // The embedding: B T rows gathered (and GPT-2's position rows added).
  {
    auto type = embedding.getType();
    int64_t d = type.getDimSize(2);
    int64_t e = bytesOf(type.getElementType());
    bool positions = static_cast<bool>(embedding.getPositions());
    ReportStep s;
    s.name = "embedding";
    s.operation = positions ? "x = E[ids] + P[pos]" : "x = E[ids]";
    s.component = "embedding";
    s.outputShape = {options.seqLen, d};
    s.flopsPerToken = positions ? d : 0;
    // The ids, the rows read (one or two per token) and the rows written.
    s.bytes = t * (4 + (positions ? 3 : 2) * d * e);
    r.steps.push_back(std::move(s));
    auto table = embedding.getTable();
    component(
        "embedding", "embedding", table,
        llvm::cast<mlir::RankedTensorType>(table.getType()).getNumElements() *
            e,
        storageOf(type.getElementType()));
    if (positions)
      component(
          "positions", "embedding", embedding.getPositions(),
          llvm::cast<mlir::RankedTensorType>(embedding.getPositions().getType())
                  .getNumElements() *
              e,
          storageOf(type.getElementType()));
  }

  // The final norm and the LM head: the entry's ops outside the blocks.
  for (mlir::Operation &op : func.getBody().front()) {
    if (auto norm = llvm::dyn_cast<RMSNormOp>(op)) {
      int64_t d = norm.getType().getShape().back();
      int64_t e = bytesOf(norm.getType().getElementType());
      ReportStep s{"final norm",
                   "x_norm = RMSNorm(h)",
                   "norm",
                   {options.seqLen, d},
                   4.0 * d,
                   0,
                   t * 2 * d * e + double(d * e)};
      r.steps.push_back(std::move(s));
      component("final_norm.g", "norm", norm.getWeight(), d * e,
                storageOf(norm.getType().getElementType()));
    } else if (auto norm = llvm::dyn_cast<LayerNormOp>(op)) {
      int64_t d = norm.getType().getShape().back();
      int64_t e = bytesOf(norm.getType().getElementType());
      ReportStep s{"final norm",
                   "x_norm = LayerNorm(h)",
                   "norm",
                   {options.seqLen, d},
                   7.0 * d,
                   0,
                   t * 2 * d * e + double(2 * d * e)};
      r.steps.push_back(std::move(s));
      component("final_norm.g", "norm", norm.getWeight(), d * e,
                storageOf(norm.getType().getElementType()));
      component("final_norm.b", "norm", norm.getBias(), d * e,
                storageOf(norm.getType().getElementType()));
    } else if (auto head = llvm::dyn_cast<LinearOp>(op)) {
      auto w = llvm::cast<mlir::RankedTensorType>(head.getWeight().getType());
      int64_t vocab = w.getDimSize(0), d = w.getDimSize(1);
      int64_t e = bytesOf(w.getElementType());
      // Stored as the blocks' projections are (BlockShape::projectionBytes).
      BlockShape storage;
      storage.elementBytes = e;
      storage.elementType = storageOf(w.getElementType());
      if (WeightQuantAttr quant = head.getWeightQuantAttr()) {
        storage.weightStorage = quant.getType() == WeightQuantType::int8
                                    ? WeightStorage::Int8
                                    : WeightStorage::Int4;
        storage.quantGroupSize = quant.getGroupSize();
      }
      int64_t weightBytes = storage.projectionBytes(vocab, d);
      int64_t out = bytesOf(head.getType().getElementType());
      ReportStep s{"LM head",
                   "logits = x_norm W_head^T",
                   "head",
                   {options.seqLen, vocab},
                   2.0 * d * vocab,
                   0,
                   double(weightBytes) + t * (d * e + vocab * out)};
      r.steps.push_back(std::move(s));
      component("W_head", "head", head.getWeight(), weightBytes,
                storage.weightStorageName());
    }
  }
  return r;
}
