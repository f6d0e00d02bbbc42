//===- BlockReport.cpp - walk a tensor through a transformer block --------===//
//
// Builds and prints the report of BlockReport.h. The FLOP conventions are
// those of the seed decks (docs/Report.md): 2 FLOPs per weight per token for
// projections, 4 H D L per token for attention scores and A V, and small
// elementwise counts (RMSNorm 4d, LayerNorm 7d, softmax 3HL, RoPE 3 per
// rotated element, residual d, gated activation 3 d_ff, plain d_ff).
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/BlockReport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <cmath>

using namespace blockc;
using namespace blockc::transformer;

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
  s.elementBytes =
      op.getInput().getType().getElementType().getIntOrFloatBitWidth() / 8;
  return s;
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
        weights * e + act(in) + act(out) + (bias ? out * e : 0));
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

  void component(std::string name, std::string kind,
                 std::vector<int64_t> shape) {
    ReportComponent c;
    c.name = std::move(name);
    c.kind = std::move(kind);
    c.shape = std::move(shape);
    c.params = 1;
    for (int64_t d : c.shape)
      c.params *= d;
    c.bytes = c.params * static_cast<int64_t>(e);
    r.components.push_back(std::move(c));
  }

  void components() {
    int64_t d = s.modelDim, q = s.numHeads * s.headDim,
            kv = s.numKVHeads * s.headDim, f = s.dff;
    component("attn_norm.g", "norm", {d});
    if (s.layerNorm)
      component("attn_norm.b", "norm", {d});
    component("W_Q", "attention", {q, d});
    component("W_K", "attention", {kv, d});
    component("W_V", "attention", {kv, d});
    component("W_O", "attention", {d, q});
    if (s.biasQ)
      component("b_Q", "bias", {q});
    if (s.biasK)
      component("b_K", "bias", {kv});
    if (s.biasV)
      component("b_V", "bias", {kv});
    if (s.biasO)
      component("b_O", "bias", {d});
    component("ffn_norm.g", "norm", {d});
    if (s.layerNorm)
      component("ffn_norm.b", "norm", {d});
    if (s.gated)
      component("W_gate", "ffn", {f, d});
    component("W_up", "ffn", {f, d});
    component("W_down", "ffn", {d, f});
    if (s.biasGate)
      component("b_gate", "bias", {f});
    if (s.biasUp)
      component("b_up", "bias", {f});
    if (s.biasDown)
      component("b_down", "bias", {d});
  }
};

} // namespace

std::vector<BlockReport> blockc::buildReports(mlir::ModuleOp module,
                                              const ReportOptions &options) {
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
