//===- PagedDecodeTest.cpp - ragged batches over paged K/V pools ----------===//
//
// The paged entry (transformer-derive-paged-decode) of a tiny two-layer GQA
// model (d = 64, 4 query heads, 2 KV heads of 16, RoPE, page size 4) run
// through BlockJit::runPaged: four sequences of 1, 7, 13 and 30 prompt
// tokens in one call (pages crossing, a one-token sequence beside a long
// one), then single-token steps of all four, with the pool pages handed
// out in a shuffled order. Every sequence's rows are compared with the
// dense forward entry run over that sequence's whole prefix alone
// (BlockJit::run), in f32 (AVX2 and, where the host has it, AVX-512
// kernels) and with bf16 and f16 models (16-bit K/V pools). Also the
// host-side errors of runPaged.
//
//===----------------------------------------------------------------------===//

#include "blockc/Compiler/Compiler.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/InitAllDialects.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace blockc;

namespace {

/// Two Llama-style blocks, GQA 4 / 2 heads of 16, in element type `e`.
std::string model(const std::string &e) {
  std::string t = "tensor<";
  auto w = [&](const std::string &shape) { return t + shape + "x" + e + ">"; };
  std::string block;
  for (int layer = 0; layer < 2; ++layer) {
    std::string l = std::to_string(layer);
    std::string in = layer == 0 ? "%x" : "%y0";
    block += "  %y" + l + " = transformer.block " + in + " attn_norm(%g" + l +
             " : " + w("64") + ") q(%wq" + l + " : " + w("64x64") + ") k(%wk" +
             l + " : " + w("32x64") + ") v(%wv" + l + " : " + w("32x64") +
             ") o(%wo" + l + " : " + w("64x64") + ") ffn_norm(%h" + l + " : " +
             w("64") + ") gate(%wg" + l + " : " + w("128x64") + ") up(%wu" + l +
             " : " + w("128x64") + ") down(%wd" + l + " : " + w("64x128") +
             ") {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 "
             ": i64, d_ff = 128 : i64, causal, rope = "
             "#transformer.rope<rotate_half>, transformer.layer = " +
             l + " : i64} : " + w("?x?x64") + "\n";
  }
  std::string args;
  for (int layer = 0; layer < 2; ++layer) {
    std::string l = std::to_string(layer);
    args += ", %g" + l + ": " + w("64") + ", %wq" + l + ": " + w("64x64") +
            ", %wk" + l + ": " + w("32x64") + ", %wv" + l + ": " + w("32x64") +
            ", %wo" + l + ": " + w("64x64") + ", %h" + l + ": " + w("64") +
            ", %wg" + l + ": " + w("128x64") + ", %wu" + l + ": " +
            w("128x64") + ", %wd" + l + ": " + w("64x128");
  }
  return "func.func @forward(%x: " + w("?x?x64") + args + ") -> " +
         w("?x?x64") + " {\n" + block + "  return %y1 : " + w("?x?x64") +
         "\n}\n";
}

mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

/// The dense forward entry and the paged entry of one model, compiled for
/// AVX2 (every x86-64 host this runs on has it; the kernels' shapes do not
/// depend on the host), with prepared weights (the default).
struct Compiled {
  ModelSignature signature;
  /// The same random weights, prepared (packed) by each entry's prepare
  /// function.
  std::vector<HostTensor> denseWeights, pagedWeights;
  std::unique_ptr<BlockJit> dense, paged;
};

/// Runs `jit`'s prepare function on `weights` (the arguments after the
/// input).
void prepareWeights(BlockJit &jit, std::vector<HostTensor> &weights) {
  std::vector<HostTensor *> args = {nullptr};
  for (HostTensor &w : weights)
    args.push_back(&w);
  llvm::Expected<int64_t> bytes = jit.prepare(args);
  ASSERT_TRUE(static_cast<bool>(bytes)) << llvm::toString(bytes.takeError());
}

constexpr int64_t kPageSize = 4, kD = 64;

/// The paged entry is compiled for `target` (NVPTX: under the emulator),
/// the dense reference entry always for the CPU.
void compileModel(const std::string &element, Compiled &c,
                  CPUISA isa = CPUISA::AVX2,
                  CompileTarget target = CompileTarget::CPU) {
  mlir::registerPassManagerCLOptions();
  registerAllPasses();
  auto module =
      mlir::parseSourceString<mlir::ModuleOp>(model(element), &context());
  ASSERT_TRUE(module);
  auto sig = analyzeModel(*module, "forward");
  ASSERT_TRUE(succeeded(sig));
  c.signature = *sig;
  c.denseWeights = makeRandomWeights(c.signature, /*seed=*/7);
  c.pagedWeights = c.denseWeights;
  CompileOptions options;
  options.cpu.isa = isa;
  auto dense = BlockJit::compile(*module, *sig, options);
  ASSERT_TRUE(static_cast<bool>(dense)) << llvm::toString(dense.takeError());
  c.dense = std::move(*dense);
  prepareWeights(*c.dense, c.denseWeights);

  mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
  auto name = derivePagedEntry(*copy, "forward", kPageSize,
                               /*keepEntry=*/false);
  ASSERT_TRUE(succeeded(name));
  ModelSignature pagedSig = *sig;
  pagedSig.funcName = *name;
  if (target == CompileTarget::NVPTX) {
    options.target = CompileTarget::NVPTX;
    options.emulate = true;
  }
  auto paged = BlockJit::compile(*copy, pagedSig, options);
  ASSERT_TRUE(static_cast<bool>(paged)) << llvm::toString(paged.takeError());
  c.paged = std::move(*paged);
  prepareWeights(*c.paged, c.pagedWeights);
}

/// Rows [begin, end) of a [N, d] tensor.
HostTensor rows(const HostTensor &t, int64_t begin, int64_t end) {
  HostTensor r;
  r.shape = {end - begin, t.shape[1]};
  r.data.assign(t.data.begin() + begin * t.shape[1],
                t.data.begin() + end * t.shape[1]);
  return r;
}

/// Runs four sequences (prompts of 1, 7, 13, 30 tokens, then `steps`
/// single-token steps) through the paged entry and checks each call's rows
/// against the dense entry over the sequence's prefix: |paged - dense| <=
/// tolerance x max |dense|.
void checkAgainstDense(Compiled &c, double tolerance, int64_t steps = 3) {
  const std::vector<int64_t> prompts = {1, 7, 13, 30};
  const int64_t numSeq = prompts.size();
  // Each sequence's tokens (prompt and steps), random activations.
  std::vector<HostTensor> tokens;
  for (int64_t b = 0; b < numSeq; ++b)
    tokens.push_back(makeRandomTensor({prompts[b] + steps, kD}, 100 + b));
  // Pages: as many as the longest sequence needs, per sequence, in a
  // shuffled order over a pool with spare pages.
  int64_t maxPages = (prompts.back() + steps + kPageSize - 1) / kPageSize;
  int64_t numPages = numSeq * maxPages + 3;
  std::vector<int32_t> order(numPages);
  for (int64_t i = 0; i < numPages; ++i)
    order[i] = i;
  std::mt19937 rng(11);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int32_t> blockTable(numSeq * maxPages);
  for (int64_t i = 0; i < numSeq * maxPages; ++i)
    blockTable[i] = order[i];
  // The pools, zero: [num_pages, S, H_kv, D] in the model's type.
  ElementType kvType = getHostElementType(c.signature.getModelElementType());
  std::vector<HostTensor> pools(4);
  std::vector<HostTensor *> poolPtrs;
  for (HostTensor &p : pools) {
    p.shape = {numPages, kPageSize, 2, 16};
    p.elementType = kvType;
    if (kvType == ElementType::F32)
      p.data.assign(p.numElements(), 0.0f);
    else
      p.bits16.assign(p.numElements(), 0);
    poolPtrs.push_back(&p);
  }
  std::vector<const HostTensor *> weightPtrs, denseWeightPtrs;
  for (const HostTensor &w : c.pagedWeights)
    weightPtrs.push_back(&w);
  for (const HostTensor &w : c.denseWeights)
    denseWeightPtrs.push_back(&w);

  std::vector<int32_t> cached(numSeq, 0);
  for (int64_t step = 0; step <= steps; ++step) {
    SCOPED_TRACE(testing::Message() << "call " << step);
    // New tokens: the prompts, then one per sequence.
    std::vector<int32_t> cu = {0};
    std::vector<int64_t> counts;
    for (int64_t b = 0; b < numSeq; ++b) {
      counts.push_back(step == 0 ? prompts[b] : 1);
      cu.push_back(cu.back() + counts.back());
    }
    HostTensor x;
    x.shape = {cu.back(), kD};
    for (int64_t b = 0; b < numSeq; ++b) {
      HostTensor r = rows(tokens[b], cached[b], cached[b] + counts[b]);
      x.data.insert(x.data.end(), r.data.begin(), r.data.end());
    }
    HostTensor out;
    out.shape = {cu.back(), kD};
    out.data.assign(out.numElements(), 0.0f);
    std::vector<const HostTensor *> args = {&x};
    args.insert(args.end(), weightPtrs.begin(), weightPtrs.end());
    llvm::Error e = c.paged->runPaged(args, cu, cached, blockTable, maxPages,
                                      poolPtrs, out);
    ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));

    for (int64_t b = 0; b < numSeq; ++b) {
      SCOPED_TRACE(testing::Message() << "sequence " << b);
      int64_t end = cached[b] + counts[b];
      HostTensor prefix = rows(tokens[b], 0, end);
      prefix.shape = {1, end, kD};
      HostTensor dense;
      dense.shape = {1, end, kD};
      dense.data.assign(dense.numElements(), 0.0f);
      std::vector<const HostTensor *> denseArgs = {&prefix};
      denseArgs.insert(denseArgs.end(), denseWeightPtrs.begin(),
                       denseWeightPtrs.end());
      llvm::Error de = c.dense->run(denseArgs, dense);
      ASSERT_FALSE(static_cast<bool>(de)) << llvm::toString(std::move(de));
      double scale = 0, diff = 0;
      for (int64_t i = 0; i < counts[b]; ++i)
        for (int64_t j = 0; j < kD; ++j) {
          float want = dense.data[(cached[b] + i) * kD + j];
          float got = out.data[(cu[b] + i) * kD + j];
          scale = std::max(scale, double(std::fabs(want)));
          diff = std::max(diff, double(std::fabs(got - want)));
        }
      EXPECT_GT(scale, 0.0);
      EXPECT_LE(diff, tolerance * scale) << "scale " << scale;
    }
    for (int64_t b = 0; b < numSeq; ++b)
      cached[b] += counts[b];
  }
}

TEST(PagedDecodeTest, F32MatchesDenseForward) {
  ASSERT_FALSE(static_cast<bool>(setCpuThreads(2)));
  // AVX-512 kernels too where the host runs them.
  for (CPUISA isa : {CPUISA::AVX2, CPUISA::AVX512}) {
    if (!missingHostFeature(isa).empty())
      continue;
    SCOPED_TRACE(testing::Message() << "isa " << stringifyCPUISA(isa).str());
    Compiled c;
    compileModel("f32", c, isa);
    if (HasFatalFailure())
      return;
    checkAgainstDense(c, 1e-5);
  }
}

TEST(PagedDecodeTest, F16MatchesDenseForward) {
  Compiled c;
  compileModel("f16", c);
  if (HasFatalFailure())
    return;
  // As bf16, with 3 more mantissa bits.
  checkAgainstDense(c, 0x1p-9);
}

TEST(PagedDecodeTest, BF16MatchesDenseForward) {
  Compiled c;
  compileModel("bf16", c);
  if (HasFatalFailure())
    return;
  // bf16 K/V pools and activations: the same roundings as the dense
  // entry's, but sums in another order may round an intermediate bf16
  // value to its neighbour (2^-8 relative).
  checkAgainstDense(c, 0x1p-6);
}

// The same entry on NVPTX, its kernels run by the GPU emulator (page
// writes, token positions and the paged attention as GPU kernels), against
// the dense forward on the CPU; two single-token steps keep it short.
TEST(PagedDecodeTest, EmulatedNVPTXF32MatchesDenseForward) {
  Compiled c;
  compileModel("f32", c, CPUISA::AVX2, CompileTarget::NVPTX);
  if (HasFatalFailure())
    return;
  checkAgainstDense(c, 1e-5, /*steps=*/2);
}

TEST(PagedDecodeTest, EmulatedNVPTXBF16MatchesDenseForward) {
  Compiled c;
  compileModel("bf16", c, CPUISA::AVX2, CompileTarget::NVPTX);
  if (HasFatalFailure())
    return;
  // The GPU's projections sum in another order than the CPU's: as for the
  // CPU's bf16 paged entry.
  checkAgainstDense(c, 0x1p-6, /*steps=*/2);
}

TEST(PagedDecodeTest, HostChecksOfTheBatch) {
  Compiled c;
  compileModel("f32", c);
  if (HasFatalFailure())
    return;
  HostTensor x = makeRandomTensor({3, kD}, 1);
  HostTensor out;
  out.shape = {3, kD};
  out.data.assign(3 * kD, 0.0f);
  std::vector<HostTensor> pools(4);
  std::vector<HostTensor *> poolPtrs;
  for (HostTensor &p : pools) {
    p.shape = {2, kPageSize, 2, 16};
    p.data.assign(p.numElements(), 0.0f);
    poolPtrs.push_back(&p);
  }
  std::vector<const HostTensor *> args = {&x};
  for (const HostTensor &w : c.pagedWeights)
    args.push_back(&w);
  auto message = [&](std::vector<int32_t> cu, std::vector<int32_t> pos,
                     std::vector<int32_t> table, int64_t maxPages,
                     std::vector<HostTensor *> p) {
    llvm::Error e = c.paged->runPaged(args, cu, pos, table, maxPages, p, out);
    return e ? llvm::toString(std::move(e)) : std::string();
  };
  EXPECT_EQ(message({0, 3}, {0}, {0, 1}, 2, poolPtrs), "");
  EXPECT_EQ(message({0, 3}, {0, 0}, {0, 1}, 1, poolPtrs),
            "runPaged: cu_seqlens has 2 elements for 2 sequences (B + 1 "
            "expected)");
  EXPECT_EQ(message({1, 3}, {0}, {0, 1}, 2, poolPtrs),
            "runPaged: cu_seqlens[0] must be 0, got 1");
  EXPECT_EQ(message({0, 3}, {6}, {0, 1}, 2, poolPtrs),
            "runPaged: sequence 0 reaches position 8, past its 2 pages of 4 "
            "tokens");
  EXPECT_EQ(message({0, 3}, {2}, {0, 5}, 2, poolPtrs),
            "runPaged: block_table[0, 1] = 5 is not a page of the pools (0 .. "
            "1)");
  EXPECT_EQ(message({0, 3}, {0}, {0, 1}, 2, {poolPtrs[0]}),
            "runPaged: 1 pools given, the entry takes 4");
  EXPECT_EQ(message({0, 2}, {0}, {0, 1}, 2, poolPtrs),
            "runPaged: the packed input must have cu_seqlens[B] = 2 rows");
  // The dense entry is not a paged one (checked before its arguments).
  llvm::Error e =
      c.dense->runPaged(args, {0, 3}, {0}, {0, 1}, 2, poolPtrs, out);
  EXPECT_EQ(llvm::toString(std::move(e)),
            "runPaged: the compiled entry is not a paged entry "
            "(transformer-derive-paged-decode)");
}

} // namespace
