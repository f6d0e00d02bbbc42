//===- HFImport.cpp - transformer models from Hugging Face configs --------===//
//
// config.json is parsed with llvm::json; the model is built with MLIR
// builders and verified before it is returned.
//
//===----------------------------------------------------------------------===//

#include "blockc/Import/HFImport.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace blockc;
using namespace blockc::transformer;

namespace {

/// Layers a config may declare (a module holds one block per layer).
constexpr int64_t kMaxLayers = 4096;

llvm::Error error(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

/// The resolved configuration of one family's block.
struct Config {
  std::string family;
  int64_t d = 0, heads = 0, kvHeads = 0, headDim = 0, dff = 0, layers = 0;
  double eps = 1e-6, theta = 10000.0;
  bool layerNorm = false, rope = true, gated = true;
  ActivationKind act = ActivationKind::silu;
  bool bq = false, bk = false, bv = false, bo = false;
  bool bgate = false, bup = false, bdown = false, normBias = false;
  /// Causal language models: the vocabulary, GPT-2's learned positions
  /// (0: none) and whether the LM head is the embedding table.
  int64_t vocab = 0, maxPositions = 0;
  bool tied = false;
};

/// Reads config.json fields with errors that name the field.
struct Reader {
  const llvm::json::Object &obj;
  llvm::StringRef path;
  /// The first problem found (later ones are usually consequences).
  std::optional<std::string> firstError;

  bool failedAlready() const { return firstError.has_value(); }

  void fail(const llvm::Twine &message) {
    if (!firstError)
      firstError = message.str();
  }

  const llvm::json::Value *get(llvm::StringRef key) {
    const llvm::json::Value *v = obj.get(key);
    return v && v->kind() != llvm::json::Value::Null ? v : nullptr;
  }

  /// Sizes above this are rejected: they are far beyond any published
  /// model, and products of them (4 * n_embd, d * d_ff) must not overflow.
  static constexpr int64_t kMaxSize = int64_t(1) << 24;

  int64_t integer(llvm::StringRef key, std::optional<int64_t> dflt,
                  int64_t max = kMaxSize) {
    const llvm::json::Value *v = get(key);
    if (!v) {
      if (!dflt)
        fail("missing required field '" + key + "'");
      return dflt.value_or(0);
    }
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || *i < 1) {
      fail("field '" + key + "' must be a positive integer");
      return 0;
    }
    if (*i > max) {
      fail("field '" + key + "' = " + llvm::Twine(*i) +
           " is too large (at most " + llvm::Twine(max) + ")");
      return 0;
    }
    return *i;
  }

  double number(llvm::StringRef key, double dflt) {
    const llvm::json::Value *v = get(key);
    if (!v)
      return dflt;
    std::optional<double> n = v->getAsNumber();
    if (!n || !(*n > 0)) {
      fail("field '" + key + "' must be a positive number");
      return dflt;
    }
    return *n;
  }

  bool boolean(llvm::StringRef key, bool dflt) {
    const llvm::json::Value *v = get(key);
    if (!v)
      return dflt;
    std::optional<bool> b = v->getAsBoolean();
    if (!b) {
      fail("field '" + key + "' must be true or false");
      return dflt;
    }
    return *b;
  }

  std::string string(llvm::StringRef key, llvm::StringRef dflt) {
    const llvm::json::Value *v = get(key);
    if (!v)
      return dflt.str();
    std::optional<llvm::StringRef> s = v->getAsString();
    if (!s) {
      fail("field '" + key + "' must be a string");
      return dflt.str();
    }
    return s->str();
  }

  /// Fields whose presence changes the model in ways blockc cannot express.
  void rejectIfSet(llvm::StringRef key, llvm::StringRef why) {
    const llvm::json::Value *v = get(key);
    if (!v)
      return;
    if (std::optional<bool> b = v->getAsBoolean(); b && !*b)
      return;
    fail("field '" + key + "' is not supported (" + why + ")");
  }

  ActivationKind activation(llvm::StringRef key, llvm::StringRef dflt) {
    std::string name = string(key, dflt);
    if (name == "silu" || name == "swish")
      return ActivationKind::silu;
    if (name == "gelu")
      return ActivationKind::gelu;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" ||
        name == "gelu_fast")
      return ActivationKind::gelu_tanh;
    if (name == "relu")
      return ActivationKind::relu;
    fail("field '" + key + "' = '" + name +
         "' is not supported (silu, gelu, gelu_new, gelu_pytorch_tanh, relu)");
    return ActivationKind::silu;
  }
};

llvm::Expected<Config> readConfig(const llvm::json::Object &obj,
                                  llvm::StringRef path, bool causalLM) {
  Reader r{obj, path, std::nullopt};
  Config c;
  std::optional<llvm::StringRef> type = obj.getString("model_type");
  if (!type)
    return error(path, "missing required field 'model_type'");
  c.family = type->str();
  if (c.family == "llama" || c.family == "mistral" || c.family == "qwen2") {
    c.d = r.integer("hidden_size", std::nullopt);
    c.dff = r.integer("intermediate_size", std::nullopt);
    c.heads = r.integer("num_attention_heads", std::nullopt);
    c.kvHeads = r.integer("num_key_value_heads", c.heads);
    c.headDim = r.integer("head_dim", c.heads ? c.d / c.heads : 1);
    c.layers = r.integer("num_hidden_layers", 1, kMaxLayers);
    c.eps = r.number("rms_norm_eps", 1e-6);
    c.theta = r.number("rope_theta", 10000.0);
    c.act = r.activation("hidden_act", "silu");
    r.rejectIfSet("rope_scaling", "scaled RoPE variants are not implemented");
    if (causalLM) {
      c.vocab = r.integer("vocab_size", std::nullopt);
      // Llama, Mistral and Qwen2 configs default to separate heads.
      c.tied = r.boolean("tie_word_embeddings", false);
    }
    if (c.family == "qwen2") {
      // Qwen2 has q/k/v biases and no o bias.
      c.bq = c.bk = c.bv = true;
      r.rejectIfSet("use_sliding_window",
                    "blockc attends to every previous position");
    } else {
      bool attnBias = r.boolean("attention_bias", false);
      c.bq = c.bk = c.bv = c.bo = attnBias;
      bool mlpBias = r.boolean("mlp_bias", false);
      c.bgate = c.bup = c.bdown = mlpBias;
      if (c.family == "mistral")
        r.rejectIfSet("sliding_window",
                      "blockc attends to every previous position");
    }
  } else if (c.family == "gpt2") {
    c.d = r.integer("n_embd", std::nullopt);
    c.heads = r.integer("n_head", std::nullopt);
    c.kvHeads = c.heads;
    c.headDim = c.heads ? c.d / c.heads : 1;
    c.dff = r.integer("n_inner", 4 * c.d);
    c.layers = r.integer("n_layer", 1, kMaxLayers);
    c.eps = r.number("layer_norm_epsilon", 1e-5);
    c.act = r.activation("activation_function", "gelu_new");
    c.layerNorm = true;
    c.rope = false;
    c.gated = false;
    c.bq = c.bk = c.bv = c.bo = c.bup = c.bdown = c.normBias = true;
    if (causalLM) {
      c.vocab = r.integer("vocab_size", std::nullopt);
      c.maxPositions = r.integer("n_positions", 1024);
      // GPT2LMHeadModel always ties its head to wte.
      c.tied = true;
    }
    r.rejectIfSet("scale_attn_by_inverse_layer_idx",
                  "per-layer attention scaling is not implemented");
    r.rejectIfSet("reorder_and_upcast_attn",
                  "only the standard attention is implemented");
    r.rejectIfSet("add_cross_attention",
                  "cross-attention blocks are not implemented");
    if (!r.boolean("scale_attn_weights", true))
      r.fail("field 'scale_attn_weights' = false is not supported (blockc "
             "always scales scores by 1/sqrt(head_dim))");
  } else {
    return error(path, "field 'model_type' = '" + c.family +
                           "' is not supported (llama, mistral, qwen2, gpt2)");
  }
  if (r.failedAlready())
    return error(path, *r.firstError);
  if (c.d % c.heads != 0 && c.family == "gpt2")
    return error(path, "field 'n_head' must divide 'n_embd'");
  if (c.family != "gpt2") {
    // The block's own verifier would say the same of the op; these name
    // the config's fields.
    if (!obj.get("head_dim") && c.d % c.heads != 0)
      return error(path,
                   "field 'num_attention_heads' (" + llvm::Twine(c.heads) +
                       ") must divide 'hidden_size' (" + llvm::Twine(c.d) +
                       ") when there is no 'head_dim'");
    if (c.kvHeads < 1 || c.heads % c.kvHeads != 0)
      return error(path, "field 'num_key_value_heads' (" +
                             llvm::Twine(c.kvHeads) +
                             ") must divide 'num_attention_heads' (" +
                             llvm::Twine(c.heads) +
                             "): each key/value head serves a whole group "
                             "of query heads");
  }
  return c;
}

/// Collects the arguments of @forward while the blocks are built.
struct ArgumentList {
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
};

} // namespace

std::optional<ImportModel> blockc::parseImportModel(llvm::StringRef name) {
  if (name == "stack")
    return ImportModel::Stack;
  if (name == "causal-lm")
    return ImportModel::CausalLM;
  return std::nullopt;
}

llvm::Expected<OwningOpRef<ModuleOp>>
blockc::importHFConfig(MLIRContext *ctx, llvm::StringRef configText,
                       llvm::StringRef path, const ImportOptions &options) {
  ctx->loadDialect<TransformerDialect, func::FuncDialect,
                   arith::ArithDialect>();
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(configText);
  if (!json)
    return error(path, "invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *obj = json->getAsObject();
  if (!obj)
    return error(path, "not a JSON object");
  bool causalLM = options.model == ImportModel::CausalLM;
  llvm::Expected<Config> config = readConfig(*obj, path, causalLM);
  if (!config)
    return config.takeError();
  const Config &c = *config;
  int64_t layers = options.layers ? options.layers : c.layers;
  if (layers > c.layers)
    return error(path, "--layers=" + llvm::Twine(layers) +
                           " exceeds the model's " + llvm::Twine(c.layers) +
                           " layers");

  OpBuilder b(ctx);
  Type elt;
  if (options.dtype == "f32")
    elt = b.getF32Type();
  else if (options.dtype == "bf16")
    elt = b.getBF16Type();
  else if (options.dtype == "f16")
    elt = b.getF16Type();
  else
    return error(path, "unsupported --dtype '" + options.dtype +
                           "' (f32, bf16 or f16)");

  WeightQuantAttr quant;
  if (options.quantize == "int8") {
    quant = WeightQuantAttr::get(ctx, WeightQuantType::int8, 0);
  } else if (options.quantize == "int4") {
    int64_t g = options.groupSize;
    if (g != 32 && g != 64 && g != 128)
      return error(path, "--group-size=" + llvm::Twine(g) +
                             ": int4 groups are 32, 64 or 128 columns");
    // Every projection's input dimension K must hold whole groups.
    for (auto [what, k] :
         {std::pair<const char *, int64_t>{"hidden_size", c.d},
          {"num_attention_heads x head_dim", c.heads * c.headDim},
          {"intermediate_size", c.dff}})
      if (k % g != 0)
        return error(path, "--quantize=int4 --group-size=" + llvm::Twine(g) +
                               ": " + what + " = " + llvm::Twine(k) +
                               " (a projection's input dimension) is not a "
                               "multiple of " +
                               llvm::Twine(g));
    quant = WeightQuantAttr::get(ctx, WeightQuantType::int4, g);
  } else if (options.quantize != "none") {
    return error(path, "unsupported --quantize '" + options.quantize +
                           "' (none, int8 or int4)");
  }

  Location loc = NameLoc::get(b.getStringAttr(c.family),
                              FileLineColLoc::get(b.getStringAttr(path), 1, 1));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  int64_t dyn = ShapedType::kDynamic;
  auto actType = RankedTensorType::get({dyn, dyn, c.d}, elt);
  // A causal language model takes token ids [B, T] and returns f32 logits
  // [B, T, vocab]; a stack maps activations to activations.
  Type inputType = causalLM
                       ? Type(RankedTensorType::get({dyn, dyn}, b.getI32Type()))
                       : Type(actType);
  Type resultType =
      causalLM
          ? Type(RankedTensorType::get({dyn, dyn, c.vocab}, b.getF32Type()))
          : Type(actType);
  ArgumentList args;
  args.types.push_back(inputType);
  args.attrs.push_back(b.getDictionaryAttr({}));

  // Arguments and bindings are collected first; the body is built after
  // the function exists.
  struct Weight {
    std::string name;
    SmallVector<int64_t> shape;
    int64_t sliceAxis = -1, sliceBegin = 0, sliceEnd = 0;
    bool transpose = false;
  };
  struct LayerWeights {
    SmallVector<std::optional<unsigned>> slots; // per role, arg index
  };
  enum Role {
    AttnNorm,
    AttnNormBias,
    WQ,
    BQ,
    WK,
    BK,
    WV,
    BV,
    WO,
    BO,
    FfnNorm,
    FfnNormBias,
    WGate,
    BGate,
    WUp,
    BUp,
    WDown,
    BDown,
    NumRoles
  };
  std::vector<std::array<int, NumRoles>> slots(layers);
  auto addWeight = [&](const Weight &w) -> int {
    args.types.push_back(RankedTensorType::get(w.shape, elt));
    SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
        TransformerDialect::kWeightNameAttr, b.getStringAttr(w.name))};
    if (w.sliceAxis >= 0)
      attrs.push_back(b.getNamedAttr(
          TransformerDialect::kWeightSliceAttr,
          b.getDenseI64ArrayAttr({w.sliceAxis, w.sliceBegin, w.sliceEnd})));
    if (w.transpose)
      attrs.push_back(b.getNamedAttr(TransformerDialect::kWeightTransposeAttr,
                                     b.getUnitAttr()));
    args.attrs.push_back(b.getDictionaryAttr(attrs));
    return static_cast<int>(args.types.size()) - 1;
  };

  // The embeddings come first (the order of a Hugging Face checkpoint).
  bool gpt2 = c.family == "gpt2";
  int embedTokens = -1, embedPositions = -1;
  if (causalLM) {
    embedTokens = addWeight(
        {gpt2 ? "wte.weight" : "model.embed_tokens.weight", {c.vocab, c.d}});
    if (c.maxPositions)
      embedPositions = addWeight({"wpe.weight", {c.maxPositions, c.d}});
  }

  int64_t q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
  for (int64_t i = 0; i < layers; ++i) {
    std::array<int, NumRoles> &s = slots[i];
    s.fill(-1);
    if (c.family == "gpt2") {
      std::string p = "h." + std::to_string(i) + ".";
      s[AttnNorm] = addWeight({p + "ln_1.weight", {c.d}});
      s[AttnNormBias] = addWeight({p + "ln_1.bias", {c.d}});
      // c_attn: [d, 3d] stored [in, out]; q, k, v are column blocks.
      for (int j = 0; j < 3; ++j) {
        s[WQ + 2 * j] = addWeight({p + "attn.c_attn.weight",
                                   {c.d, c.d},
                                   1,
                                   j * c.d,
                                   (j + 1) * c.d,
                                   true});
        s[BQ + 2 * j] = addWeight(
            {p + "attn.c_attn.bias", {c.d}, 0, j * c.d, (j + 1) * c.d});
      }
      s[WO] = addWeight({p + "attn.c_proj.weight", {c.d, c.d}, -1, 0, 0, true});
      s[BO] = addWeight({p + "attn.c_proj.bias", {c.d}});
      s[FfnNorm] = addWeight({p + "ln_2.weight", {c.d}});
      s[FfnNormBias] = addWeight({p + "ln_2.bias", {c.d}});
      s[WUp] = addWeight({p + "mlp.c_fc.weight", {c.dff, c.d}, -1, 0, 0, true});
      s[BUp] = addWeight({p + "mlp.c_fc.bias", {c.dff}});
      s[WDown] =
          addWeight({p + "mlp.c_proj.weight", {c.d, c.dff}, -1, 0, 0, true});
      s[BDown] = addWeight({p + "mlp.c_proj.bias", {c.d}});
      continue;
    }
    std::string p = "model.layers." + std::to_string(i) + ".";
    s[AttnNorm] = addWeight({p + "input_layernorm.weight", {c.d}});
    s[WQ] = addWeight({p + "self_attn.q_proj.weight", {q, c.d}});
    if (c.bq)
      s[BQ] = addWeight({p + "self_attn.q_proj.bias", {q}});
    s[WK] = addWeight({p + "self_attn.k_proj.weight", {kv, c.d}});
    if (c.bk)
      s[BK] = addWeight({p + "self_attn.k_proj.bias", {kv}});
    s[WV] = addWeight({p + "self_attn.v_proj.weight", {kv, c.d}});
    if (c.bv)
      s[BV] = addWeight({p + "self_attn.v_proj.bias", {kv}});
    s[WO] = addWeight({p + "self_attn.o_proj.weight", {c.d, q}});
    if (c.bo)
      s[BO] = addWeight({p + "self_attn.o_proj.bias", {c.d}});
    s[FfnNorm] = addWeight({p + "post_attention_layernorm.weight", {c.d}});
    s[WGate] = addWeight({p + "mlp.gate_proj.weight", {c.dff, c.d}});
    if (c.bgate)
      s[BGate] = addWeight({p + "mlp.gate_proj.bias", {c.dff}});
    s[WUp] = addWeight({p + "mlp.up_proj.weight", {c.dff, c.d}});
    if (c.bup)
      s[BUp] = addWeight({p + "mlp.up_proj.bias", {c.dff}});
    s[WDown] = addWeight({p + "mlp.down_proj.weight", {c.d, c.dff}});
    if (c.bdown)
      s[BDown] = addWeight({p + "mlp.down_proj.bias", {c.d}});
  }

  // The model's final norm (Llama/Mistral/Qwen2 `model.norm`, GPT-2
  // `ln_f`), applied after the last imported layer.
  int finalNorm = -1, finalNormBias = -1;
  if (options.finalNorm || causalLM) {
    finalNorm = addWeight({gpt2 ? "ln_f.weight" : "model.norm.weight", {c.d}});
    if (c.layerNorm)
      finalNormBias =
          addWeight({gpt2 ? "ln_f.bias" : "model.norm.bias", {c.d}});
  }

  // The LM head: its own [vocab, d] weight, or the embedding table.
  int lmHead = -1;
  if (causalLM)
    lmHead =
        c.tied ? embedTokens : addWeight({"lm_head.weight", {c.vocab, c.d}});

  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, "forward",
                                   b.getFunctionType(args.types, {resultType}));
  func.setAllArgAttrs(args.attrs);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto arg = [&](int slot) -> Value {
    return slot < 0 ? Value() : entry->getArgument(slot);
  };
  Value x = entry->getArgument(0);
  if (causalLM)
    x = EmbeddingOp::create(b, NameLoc::get(b.getStringAttr("embedding"), loc),
                            x, arg(embedTokens), arg(embedPositions));
  for (int64_t i = 0; i < layers; ++i) {
    const std::array<int, NumRoles> &s = slots[i];
    Location layerLoc =
        NameLoc::get(b.getStringAttr("layers." + std::to_string(i)), loc);
    auto block = BlockOp::create(
        b, layerLoc, actType, x, arg(s[AttnNorm]), arg(s[AttnNormBias]),
        arg(s[WQ]), arg(s[BQ]), arg(s[WK]), arg(s[BK]), arg(s[WV]), arg(s[BV]),
        arg(s[WO]), arg(s[BO]), arg(s[FfnNorm]), arg(s[FfnNormBias]),
        arg(s[WGate]), arg(s[BGate]), arg(s[WUp]), arg(s[BUp]), arg(s[WDown]),
        arg(s[BDown]),
        NormKindAttr::get(ctx, c.layerNorm ? NormKind::layer : NormKind::rms),
        NormPlacementAttr::get(ctx, NormPlacement::pre),
        ActivationKindAttr::get(ctx, c.act), b.getI64IntegerAttr(c.heads),
        b.getI64IntegerAttr(c.kvHeads), b.getI64IntegerAttr(c.headDim),
        b.getI64IntegerAttr(c.dff), b.getF64FloatAttr(c.eps), b.getUnitAttr(),
        c.rope ? RoPELayoutAttr::get(ctx, RoPELayout::rotate_half)
               : RoPELayoutAttr(),
        b.getF64FloatAttr(c.theta), quant);
    block->setAttr(TransformerDialect::kLayerAttr, b.getI64IntegerAttr(i));
    x = block.getResult();
  }
  if (finalNorm >= 0) {
    Location normLoc = NameLoc::get(b.getStringAttr("final_norm"), loc);
    FloatAttr eps = b.getF64FloatAttr(c.eps);
    x = c.layerNorm
            ? LayerNormOp::create(b, normLoc, actType, x, arg(finalNorm),
                                  arg(finalNormBias), eps)
                  .getResult()
            : RMSNormOp::create(b, normLoc, actType, x, arg(finalNorm), eps)
                  .getResult();
  }
  if (causalLM) {
    // Logits in the model's type (Hugging Face's lm_head), widened to f32.
    Location headLoc = NameLoc::get(b.getStringAttr("lm_head"), loc);
    auto head = LinearOp::create(b, headLoc, x, arg(lmHead));
    if (quant)
      head.setWeightQuantAttr(quant);
    x = head.getResult();
    if (!elt.isF32())
      x = arith::ExtFOp::create(b, headLoc, resultType, x);
  }
  func::ReturnOp::create(b, loc, x);
  if (failed(verify(*module)))
    return error(path, "the imported model does not verify (see the "
                       "diagnostics above)");
  return std::move(module);
}
