//===- blockc-import.cpp - model.mlir from a Hugging Face config.json -----===//
//
//   blockc-import --hf-config=config.json [--model=stack|causal-lm]
//                 [--layers=N] [--dtype=f32|bf16|f16]
//                 [--quantize=none|int8|int4 [--group-size=32|64|128]
//                  [--quantize-activations=int8]]
//                 -o model.mlir
//
// Writes a blockc model whose weight arguments are bound to the
// checkpoint's own tensor names (see HFImport.h).
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Import/HFImport.h"
#include "blockc/InitAllDialects.h"
#include "blockc/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("blockc-import options");
cl::opt<std::string> configFile("hf-config",
                                cl::desc("Hugging Face config.json"),
                                cl::value_desc("file"), cl::Required,
                                cl::cat(category));
cl::opt<std::string> model(
    "model",
    cl::desc("What to write: stack (default: @forward maps activations "
             "[B, T, d] to activations through the blocks) or causal-lm (the "
             "whole model: token ids [B, T] i32 to logits [B, T, vocab] f32 "
             "through the embedding, the blocks, the final norm and the LM "
             "head)"),
    cl::init("stack"), cl::cat(category));
cl::opt<int64_t>
    layers("layers",
           cl::desc("Import the first N layers (default 1; 0 = all of them)"),
           cl::init(1), cl::cat(category));
cl::opt<std::string> dtype("dtype",
                           cl::desc("Element type: f32 (default), bf16, f16"),
                           cl::init("f32"), cl::cat(category));
cl::opt<bool> finalNorm(
    "final-norm",
    cl::desc("Append the model's final norm (model.norm.weight, GPT-2 "
             "ln_f) after the last imported layer"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> quantize(
    "quantize",
    cl::desc("Weight-only quantisation of the projections: none (default), "
             "int8 (a scale per output row) or int4 (a scale per group of "
             "--group-size input columns); done by the compiled prepare "
             "entry at load"),
    cl::init("none"), cl::cat(category));
cl::opt<int64_t> groupSize("group-size",
                           cl::desc("int4: input columns per scale, 32 "
                                    "(default), 64 or 128"),
                           cl::init(32), cl::cat(category));
cl::opt<std::string> quantizeActivations(
    "quantize-activations",
    cl::desc("With --quantize: int8 also quantises each projection's input "
             "at run time (per token row and run of 32 input columns; "
             "integer dot products), none (default) keeps it weight-only"),
    cl::init("none"), cl::cat(category));
cl::opt<int64_t> tensorParallel(
    "tensor-parallel",
    cl::desc("Write the model partitioned over N ranks (Megatron-style "
             "tensor parallelism, docs/TensorParallel.md): each block's "
             "local heads and d_ff, each weight's part per rank; blockc and "
             "blockc-run then run it under mpirun -np N"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output model (default: -)"),
                                cl::init("-"), cl::value_desc("file"),
                                cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "blockc-import") << message << "\n";
  return 1;
}

/// Sets activations = int8 on every weight_quant of `module`; the message of
/// the first op whose projections do not hold whole runs of 32 input
/// columns (the op's verifier names the projection), or "".
std::string quantizeActivationsOf(ModuleOp module) {
  using namespace blockc::transformer;
  std::string message;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    if (message.empty())
      message = diag.str();
    return success();
  });
  module.walk([&](Operation *op) -> WalkResult {
    auto quant = op->getAttrOfType<WeightQuantAttr>("weight_quant");
    if (!quant)
      return WalkResult::advance();
    op->setAttr("weight_quant",
                WeightQuantAttr::get(op->getContext(), quant.getType(),
                                     quant.getGroupSize(),
                                     ActivationQuantType::int8));
    if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return message;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "blockc-import: model.mlir from a Hugging Face config\n");
  if (layers < 0)
    return fail("--layers must be >= 0");
  auto buffer = llvm::MemoryBuffer::getFile(configFile);
  if (!buffer)
    return fail(configFile + ": cannot read: " + buffer.getError().message());
  DialectRegistry registry;
  blockc::registerAllDialects(registry);
  MLIRContext context(registry);
  blockc::ImportOptions options;
  std::optional<blockc::ImportModel> kind = blockc::parseImportModel(model);
  if (!kind)
    return fail("--model must be stack or causal-lm, got '" + model + "'");
  options.model = *kind;
  options.layers = layers;
  options.dtype = dtype;
  options.finalNorm = finalNorm;
  options.quantize = quantize;
  options.groupSize = groupSize;
  if (groupSize.getNumOccurrences() && quantize != "int4")
    return fail("--group-size is for --quantize=int4");
  if (quantizeActivations != "none" && quantizeActivations != "int8")
    return fail("--quantize-activations must be int8 or none, got '" +
                quantizeActivations + "'");
  if (quantizeActivations == "int8" && quantize != "int8" && quantize != "int4")
    return fail("--quantize-activations=int8 needs --quantize=int8 or "
                "--quantize=int4 (it quantises the inputs of quantised "
                "projections)");
  auto module = blockc::importHFConfig(&context, (*buffer)->getBuffer(),
                                       configFile, options);
  if (!module)
    return fail(llvm::toString(module.takeError()));
  if (tensorParallel < 0)
    return fail("--tensor-parallel must be at least 1");
  if (llvm::Error e =
          blockc::partitionForTensorParallel(**module, tensorParallel))
    return fail(configFile + ": " + llvm::toString(std::move(e)));
  if (quantizeActivations == "int8") {
    std::string message = quantizeActivationsOf(**module);
    if (!message.empty())
      return fail(configFile + ": --quantize-activations=int8: " + message);
  }
  std::string errorMessage;
  auto output = openOutputFile(outputFile, &errorMessage);
  if (!output)
    return fail(errorMessage);
  output->os() << "// Imported by blockc-import from " << configFile << "\n";
  (*module)->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
