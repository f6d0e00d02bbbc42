//===- HFImport.h - transformer models from Hugging Face configs -*- C++
//-*-===//
//
// Builds a blockc model (func.func @forward with one transformer.block per
// layer, or a whole causal language model from token ids to logits) from a
// Hugging Face config.json of model_type llama, mistral, qwen2 or gpt2.
// Every weight argument is bound to that model's own safetensors tensor
// name, so `blockc-run --weights=model.safetensors` runs a real
// checkpoint's layers. Unsupported settings are errors naming the field.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_IMPORT_HFIMPORT_H
#define BLOCKC_IMPORT_HFIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace blockc {

/// What blockc-import writes (--model).
enum class ImportModel {
  /// @forward maps activations [B, T, d] to activations: the blocks (and
  /// the final norm with `finalNorm`). The default.
  Stack,
  /// A causal language model: @forward maps token ids [B, T] (i32) to
  /// logits [B, T, vocab] (f32): the token embedding (GPT-2: plus the
  /// learned position embedding), the blocks, the final norm and the LM
  /// head (tied to the embedding table when the config says so).
  CausalLM
};

/// Parses a --model value ("stack" or "causal-lm").
std::optional<ImportModel> parseImportModel(llvm::StringRef name);

struct ImportOptions {
  /// The stack of blocks, or the whole causal language model.
  ImportModel model = ImportModel::Stack;
  /// Layers to import (the first N); 0 = num_hidden_layers / n_layer.
  int64_t layers = 1;
  /// Element type of activations and weights: "f32", "bf16" or "f16".
  std::string dtype = "f32";
  /// Append the model's final norm (`model.norm` / GPT-2 `ln_f`) after the
  /// last imported layer.
  bool finalNorm = false;
  /// Weight-only quantisation of every projection: "none", "int8" or
  /// "int4" (a #transformer.weight_quant on each block, and on a causal
  /// language model's LM head; never on the embedding table).
  std::string quantize = "none";
  /// int4: input columns per scale (32, 64 or 128).
  int64_t groupSize = 32;
};

/// Parses `configText` (the contents of config.json; `path` names it in
/// errors) and builds the model.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importHFConfig(mlir::MLIRContext *context, llvm::StringRef configText,
               llvm::StringRef path, const ImportOptions &options);

} // namespace blockc

#endif // BLOCKC_IMPORT_HFIMPORT_H
