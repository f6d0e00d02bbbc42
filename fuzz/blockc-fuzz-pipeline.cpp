//===- blockc-fuzz-pipeline.cpp - fuzz the CPU and NVPTX pipelines --------===//
//
// The input bytes choose the configuration of one transformer.block (model
// width, heads, kv heads, head dim, d_ff, norm, placement, activation,
// gating, biases, causal, RoPE, static or dynamic batch and sequence, and a
// few deliberately inconsistent shapes). The block is printed as IR, parsed
// and verified; a verified block goes through the whole CPU pipeline and
// the NVPTX pipeline to PTX. Verifier and pass errors are expected; a
// crash, a sanitizer report or a pass that fails without a diagnostic is a
// finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "blockc/Compiler/Compiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

struct Bytes {
  const uint8_t *data;
  size_t size, pos = 0;
  uint8_t next() { return pos < size ? data[pos++] : 0; }
  int64_t pick(std::initializer_list<int64_t> values) {
    return *(values.begin() + next() % values.size());
  }
};

std::string tensor(llvm::ArrayRef<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + "f32>";
}

std::string buildBlock(Bytes &in) {
  int64_t heads = in.pick({1, 2, 3, 4, 8});
  int64_t kvHeads = in.pick({1, 2, 4, 8, 3});
  int64_t headDim = in.pick({1, 2, 8, 32, 64, 6, 0});
  // Usually d = heads * head_dim, sometimes not (the verifier must say so).
  int64_t d = in.next() % 8 == 0 ? in.pick({1, 16, 33}) : heads * headDim;
  int64_t dFF = in.pick({1, 8, 64, 96, 0});
  bool gated = in.next() % 2, layer = in.next() % 2, post = in.next() % 3 == 0;
  bool biases = in.next() % 2, causal = in.next() % 2;
  int64_t bDim = in.pick({-1, 1, 2, 0}), tDim = in.pick({-1, 1, 5, 0});
  static const char *const plainActs[] = {"relu", "gelu", "gelu_tanh", "silu"};
  static const char *const ropes[] = {"", "rotate_half", "interleaved"};
  const char *act =
      gated ? (in.next() % 2 ? "silu" : "gelu") : plainActs[in.next() % 4];
  const char *rope = ropes[in.next() % 3];
  int64_t kvDim = kvHeads * headDim;

  std::string args, ops;
  int argNo = 0;
  auto arg = [&](const char *name, llvm::ArrayRef<int64_t> shape) {
    std::string v = "%a" + std::to_string(argNo++);
    args += ", " + v + ": " + tensor(shape);
    ops += std::string(" ") + name + "(" + v + " : " + tensor(shape) + ")";
  };
  arg("attn_norm", {d});
  if (layer)
    arg("attn_norm_bias", {d});
  arg("q", {heads * headDim, d});
  if (biases)
    arg("q_bias", {heads * headDim});
  arg("k", {kvDim, d});
  if (biases)
    arg("k_bias", {kvDim});
  arg("v", {kvDim, d});
  if (biases)
    arg("v_bias", {kvDim});
  arg("o", {d, heads * headDim});
  if (biases)
    arg("o_bias", {d});
  arg("ffn_norm", {d});
  if (layer)
    arg("ffn_norm_bias", {d});
  if (gated)
    arg("gate", {dFF, d});
  arg("up", {dFF, d});
  if (biases)
    arg("up_bias", {dFF});
  arg("down", {d, dFF});
  if (biases)
    arg("down_bias", {d});

  std::string attrs = llvm::formatv(
      "num_heads = {0} : i64, num_kv_heads = {1} : i64, head_dim = {2} : "
      "i64, d_ff = {3} : i64, activation = #transformer.activation<{4}>",
      heads, kvHeads, headDim, dFF, act);
  if (layer)
    attrs += ", norm = #transformer.norm<layer>";
  if (post)
    attrs += ", norm_placement = #transformer.placement<post>";
  if (causal)
    attrs += ", causal";
  if (*rope)
    attrs += std::string(", rope = #transformer.rope<") + rope + ">";
  std::string x = tensor({bDim, tDim, d});
  return "func.func @forward(%x: " + x + args + ") -> " + x +
         " {\n  %y = transformer.block %x" + ops + " {" + attrs + "} : " + x +
         "\n  return %y : " + x + "\n}\n";
}

void runPipeline(mlir::ModuleOp module,
                 llvm::function_ref<void(mlir::OpPassManager &)> build) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
  mlir::PassManager pm(copy->getContext(), "builtin.module");
  build(pm);
  (void)pm.run(*copy); // a failure with a diagnostic is a correct outcome
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = blockc::fuzz::context();
  Bytes in{data, size};
  std::string text = buildBlock(in);
  mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz-block");
  if (!module)
    return 0;
  // The compile flow of the tools (lib/Compiler), for each target.
  for (blockc::CompileTarget target :
       {blockc::CompileTarget::CPU, blockc::CompileTarget::NVPTX}) {
    blockc::CompileOptions options;
    options.target = target;
    runPipeline(*module, [&](mlir::OpPassManager &pm) {
      blockc::buildCompilePipeline(
          pm, options, blockc::CompileStage::LLVMDialect, "forward");
    });
  }
  return 0;
}
