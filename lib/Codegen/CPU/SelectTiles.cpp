//===- SelectTiles.cpp - tile-size heuristic for the CPU kernels ----------===//
//
// The heuristic half of the CPU code generation: attaches the function's
// #blockc_codegen.cpu_target and each transformer.linear's
// #blockc_codegen.linear_tiles; see Codegen/CPU/Passes.td
// (CPUSelectTilesPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Target/CPUISA.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <optional>

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUSELECTTILESPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;
namespace codegen = blockc::codegen;
using codegen::CodegenDialect;

namespace {

/// Weight rows per dot-product kernel and output vectors per packed
/// micro-kernel.
constexpr int64_t kCols = 4, kPackCols = 2;
/// At most this many rows per packed micro-kernel: 8 x 2 accumulators are
/// 16 independent FMA chains, enough to cover the FMA latency.
constexpr int64_t kMaxPackRows = 8;
/// Rows (tokens) from which the packed kernel is used: below, packing a
/// panel costs more than the horizontal reductions it saves (measured on
/// Zen 4: the two kernels tie at T = 32 for d = 512 / d_ff = 1408).
constexpr int64_t kPackMinRows = 32;
/// Reduction length of one packed panel (panel_k x panel_n x 4 bytes: 32
/// KiB with AVX-512, L1-sized), at most what fits the L1 cache.
constexpr int64_t kPanelK = 256;
/// Longest reduction of one dot-product cache block.
constexpr int64_t kMaxBlockK = 2048;
/// Quantised projections with activations = int8: rows (B x T) from which
/// the kernel takes the f32 panels on q_x s_x instead of the integer tiles
/// (quantized_tiles' act_panel_min_rows), as the weight-only panels. The
/// 4096 x 14336 int4 + act pair on 2 threads (Xeon f6m167, interleaved
/// A/B against the integer tiles): 16 rows 21.6 -> 19.1-20.3 ms, 32 rows
/// 42-43 -> 31-33 ms, 512 rows 693-704 -> 478-512 ms. int4 weights only:
/// with int8 weights the pair at one token on 2 threads was 4-7% slower
/// with the branch in the same A/B (2.56-2.88 -> 2.73-3.00 ms; its decode
/// kernel is the same, the cause not found), so int8 keeps the integer
/// tiles for every row count (0). int4 on rows in lanes without VNNI (AVX2)
/// keeps its integer tiles for every row count too: they outrun the panels
/// there (7B int4 + act block at T = 128, 1 thread, Zen 3 f25m1, interleaved
/// A/B: 689-735 ms with the panels, 440-484 ms without).
constexpr int64_t kActPanelMinRows = 16;

int64_t roundUp(int64_t a, int64_t m) { return (a + m - 1) / m * m; }

/// How far ahead the few-row projection kernels prefetch their weight
/// stream (linear_tiles' prefetch_bytes) on `vendor`'s cores.
///
/// Intel: 1024 bytes. The hardware prefetchers alone keep too few lines in
/// flight on its server cores: a C probe of the 4096 x 14336 up + down pair
/// at one token, 1 thread (Xeon f6m167, huge pages): bf16 panels of k
/// pairs 21.1 -> 15.4 ms at 1024 bytes ahead (15.4 at 2048, 17.8 at 4096),
/// bf16 rows 18.6 -> 16.2 ms (16.3 at 512, 16.4 at 2048), f32 rows 32.5 ->
/// 29.9 ms; the 7B bf16 one-token step 48 -> 33 ms. A generic target (a
/// pinned ISA) keeps that choice.
///
/// AMD: none. Its decode streamed the weights at the triad's rate without
/// software prefetch (Zen 3 AVX2, Zen 5: the 7B f32 step at 100% of the
/// triad), and a prefetch of each int8 row 512 or 2048 bytes ahead was
/// slower on Zen 3 (mid one token 3.7-4.6 against 3.56-3.74 ms). Not
/// measured on Zen 4 and 5 with these kernels.
int64_t choosePrefetchBytes(codegen::CPUVendor vendor) {
  switch (vendor) {
  case codegen::CPUVendor::amd:
    return 0;
  case codegen::CPUVendor::intel:
  case codegen::CPUVendor::generic:
    break;
  }
  return 1024;
}

/// The head dim D when `op`'s only use but tensor.dim splits its last dim
/// into heads (tensor.expand_shape [..., H * D] -> [..., H, D]) whose only
/// use is a transformer.rope.
std::optional<int64_t> ropeHeadDim(LinearOp op) {
  tensor::ExpandShapeOp expand;
  for (Operation *user : op->getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    auto e = dyn_cast<tensor::ExpandShapeOp>(user);
    if (!e || expand)
      return std::nullopt;
    expand = e;
  }
  if (!expand || !expand->hasOneUse() ||
      !isa<RoPEOp>(*expand->getUsers().begin()))
    return std::nullopt;
  RankedTensorType type = expand.getResultType();
  if (type.getRank() != 4 || ShapedType::isDynamic(type.getDimSize(3)))
    return std::nullopt;
  return type.getDimSize(3);
}

/// The attention kernel's schedule for head dim `headDim` on a target of
/// `width` lanes and `registers` registers (see
/// #blockc_codegen.attention_tiles), or null when blockc-cpu-lower-sdpa
/// leaves the op alone (not f32, a dynamic head dim).
codegen::AttentionTilesAttr chooseAttentionTiles(MLIRContext *ctx,
                                                 int64_t width,
                                                 int64_t registers,
                                                 int64_t headDim) {
  // The widest vector (down to 4 lanes) that divides the head dim rounded
  // up to 4, so that no row is copied.
  int64_t d = roundUp(headDim, 4);
  while (width > 4 && d % width != 0)
    width /= 2;
  // At most this many head dims accumulated per P.V step, keys per
  // online-softmax tile (Zen 5, mid config, T = S = 2048: 8 and 32
  // measured best), and one head dim per q.k step.
  constexpr int64_t kPVChunk = 8, kKeyTile = 32, kQKUnroll = 1;
  // Rows of the multi-row kernel: 4 vectors with 32 registers, 2 with 16;
  // the score and P.V tiles as wide as the registers allow (powers of two
  // with 32 registers), keeping two for the row vectors' operands.
  int64_t rowVectors = registers >= 32 ? 4 : 2, keyGroup, valueGroup;
  if (registers >= 32) {
    auto fits = [&](int64_t n) {
      return rowVectors * n + rowVectors + 1 <= registers - 2;
    };
    keyGroup = 1;
    while (fits(2 * keyGroup))
      keyGroup *= 2;
    valueGroup = 1;
    while (fits(2 * valueGroup) && 2 * valueGroup <= kPVChunk &&
           d % (2 * valueGroup) == 0)
      valueGroup *= 2;
  } else {
    int64_t n =
        std::max<int64_t>(1, (registers - 1 - rowVectors - 1) / rowVectors);
    keyGroup = n;
    valueGroup = std::clamp<int64_t>(std::min(n, kPVChunk), 1, d);
  }
  int64_t keyTile = std::max(keyGroup, kKeyTile / keyGroup * keyGroup);
  // The single-row kernel prefetches the next key tile into L2 (Zen 5, 7B
  // decode at L = 4096: 11.6-14.1 ms against 13.6-15.9 without).
  return codegen::AttentionTilesAttr::get(
      ctx, width, /*multiRow=*/true, rowVectors, keyGroup, valueGroup, keyTile,
      kQKUnroll, /*prefetchDistance=*/1, /*prefetchLocality=*/2);
}

/// Elements per work item of an elementwise loop nest: 64 KiB of f32, so a
/// work item outweighs its scheduling (and a [T, 4096] op at T = 128 still
/// has 32 items).
constexpr int64_t kElementwiseItemElements = 16384;

/// The loops of an all-parallel linalg.generic or linalg.fill on tensors
/// that sits directly in `func` (what no kernel absorbed) and reads every
/// operand through a projected permutation, or null for any other op: vectors
/// of the target's width along the innermost loop when its size is a static
/// multiple of it and every operand is contiguous along that loop (or
/// independent of it), else element by element.
codegen::ElementwiseTilesAttr
chooseElementwiseTiles(func::FuncOp func, linalg::LinalgOp op, int64_t width) {
  if (!isa<linalg::GenericOp, linalg::FillOp>(op.getOperation()) ||
      op->getParentOp() != func.getOperation() ||
      !op.hasPureTensorSemantics() || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return nullptr;
  // Tiles of an operand read through another map (e.g. RoPE's rotate-half
  // partner, (d + D/2) mod D) are not what upstream's slices compute.
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return nullptr;
  unsigned n = op.getNumLoops();
  int64_t inner = op.getStaticLoopRanges()[n - 1];
  bool contiguous = llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap m) {
    std::optional<unsigned> pos =
        m.getResultPosition(getAffineDimExpr(n - 1, func.getContext()));
    return !pos || *pos == m.getNumResults() - 1;
  });
  // A body of arithmetic and the math that has vector code (blockc's
  // polynomials, or an x86 instruction); no index computations (tables
  // built from linalg.index, e.g. RoPE's, stay element loops).
  bool vectorBody =
      llvm::all_of(op.getBlock()->getOperations(), [](Operation &inner) {
        if (isa<linalg::IndexOp>(inner))
          return false;
        if (isa<math::MathDialect>(inner.getDialect()))
          return isa<math::ExpOp, math::ErfOp, math::ErfcOp, math::TanhOp,
                     math::AbsFOp, math::SqrtOp, math::FmaOp>(inner) &&
                 getElementTypeOrSelf(inner.getResult(0).getType()).isF32();
        return true;
      });
  bool vectors = !ShapedType::isDynamic(inner) && inner % width == 0 &&
                 contiguous && vectorBody;
  int64_t rows = ShapedType::isDynamic(inner)
                     ? 1
                     : std::max<int64_t>(1, kElementwiseItemElements / inner);
  return codegen::ElementwiseTilesAttr::get(func.getContext(), rows,
                                            vectors ? width : 0);
}

struct CPUSelectTilesPass
    : blockc::cpu::impl::CPUSelectTilesPassBase<CPUSelectTilesPass> {
  using Base::Base;

  /// The function's target: the one already there (pinned), or the one the
  /// options describe (null, with an error at the function, if invalid).
  codegen::CPUTargetAttr target() {
    func::FuncOp func = getOperation();
    if (auto pinned = func->getAttrOfType<codegen::CPUTargetAttr>(
            CodegenDialect::kCpuTargetAttrName))
      return pinned;
    const blockc::CPUISAInfo &shape = blockc::getCPUISAInfo(isa.getValue());
    return codegen::CPUTargetAttr::getChecked(
        [&] { return func.emitError("blockc-cpu-select-tiles: "); },
        &getContext(), isa.getValue(),
        vectorWidth ? vectorWidth.getValue() : shape.vectorWidth,
        registers ? registers.getValue() : shape.registers, l1Bytes.getValue(),
        l2Bytes.getValue(), avx512BF16.getValue(), avx512VNNI.getValue(),
        avxVNNI.getValue(), amxBF16.getValue(), vendor.getValue());
  }

  void runOnOperation() override {
    if (elementwise) {
      // What the kernels left as elementwise ops (the run after
      // blockc-fuse-elementwise), in a function the kernel passes saw (one
      // with a target; not a prepare function). Its target stays as is.
      func::FuncOp func = getOperation();
      auto t = func->getAttrOfType<codegen::CPUTargetAttr>(
          CodegenDialect::kCpuTargetAttrName);
      if (!t || func->hasAttr(CodegenDialect::kPrepareForAttrName))
        return;
      func.walk([&](linalg::LinalgOp op) {
        if (op->hasAttr(CodegenDialect::kElementwiseTilesAttrName))
          return; // a user's choice is kept
        if (auto tiles = chooseElementwiseTiles(func, op, t.getVectorWidth())) {
          op->setAttr(CodegenDialect::kElementwiseTilesAttrName, tiles);
          ++numAnnotated;
        }
      });
      return;
    }
    codegen::CPUTargetAttr t = target();
    if (!t)
      return signalPassFailure();
    int64_t pinnedPrefetch = prefetchBytes.getValue();
    if (pinnedPrefetch != -1 && (pinnedPrefetch < 0 || pinnedPrefetch > 65536 ||
                                 pinnedPrefetch % 64 != 0)) {
      getOperation().emitError()
          << "blockc-cpu-select-tiles: prefetch-bytes must be -1 (by the "
             "target's vendor), 0 (no prefetch) or a multiple of 64 up to "
             "65536, got "
          << pinnedPrefetch;
      return signalPassFailure();
    }
    int64_t linearPrefetch = pinnedPrefetch >= 0
                                 ? pinnedPrefetch
                                 : choosePrefetchBytes(t.getVendor());
    getOperation()->setAttr(CodegenDialect::kCpuTargetAttrName, t);
    int64_t width = t.getVectorWidth(), regs = t.getRegisters();
    // Dot-product kernel: rows x kCols accumulators plus the operand
    // vectors of one k step (rows + kCols) fit the register file: the
    // largest power-of-two row count that does (4 x 4 = 16 + 8 of 32
    // registers, 2 x 4 = 8 + 6 of 16).
    int64_t rows = 1;
    while (2 * rows * kCols + 2 * rows + kCols <= regs)
      rows *= 2;
    // Packed kernel: packRows x kPackCols accumulators, kPackCols panel
    // vectors and a broadcast (8 x 2 with 32 registers, 6 x 2 with 16).
    int64_t packRows = std::clamp<int64_t>((regs - kPackCols - 1) / kPackCols,
                                           1, kMaxPackRows);
    // One micro-kernel width per panel, and a panel within L1.
    int64_t panelN = kPackCols * width;
    int64_t maxPanelK =
        std::max(width, t.getL1Bytes() / (panelN * 4) / width * width);
    MLIRContext *ctx = &getContext();
    func::FuncOp func = getOperation();
    // bf16 pairs on vdpbf16ps: a bf16 weight and an input that holds bf16
    // values (widened from a bf16 tensor); AMX on top for whole 32-k steps.
    auto bf16Pairs = [&](LinearOp op) {
      auto widened = op.getInput().getDefiningOp<arith::ExtFOp>();
      return t.getAvx512Bf16() &&
             op.getWeight().getType().getElementType().isBF16() && widened &&
             getElementTypeOrSelf(widened.getIn()).isBF16();
    };
    auto amxTiles = [&](LinearOp op) {
      return bf16Pairs(op) && t.getAmxBf16() && !op.getWeightQuantAttr() &&
             op.getWeight().getType().getDimSize(1) % 32 == 0;
    };
    if (prepareWeights && func.isPublic())
      func.walk([&](LinearOp op) {
        auto arg = dyn_cast<BlockArgument>(op.getWeight());
        // A weight stored in a 16-bit float is read in place by default:
        // its decode streams rows at 22 GB/s, where one stream of 16-bit
        // panels reached 16 GB/s (Zen 3, 8192 x 8192 bf16). Prefill then
        // packs per call (0.88x of prepared f32 on the 7B block, against
        // 0.97x with 16-bit panels, which a weight_layout set by hand
        // still selects). On AMX the per-call packing into k pairs is
        // what bounds prefill, so such a bf16 weight is prepared as
        // panels of k pairs (packed_weight pairs = true).
        if (!arg || arg.getOwner() != &func.getBody().front() ||
            !(op.getWeight().getType().getElementType().isF32() ||
              amxTiles(op)) ||
            op->hasAttr(CodegenDialect::kWeightLayoutAttrName))
          return;
        op->setAttr(CodegenDialect::kWeightLayoutAttrName,
                    codegen::WeightLayoutAttr::get(
                        ctx, codegen::WeightLayout::packed_panels));
      });
    getOperation().walk([&](LinearOp op) {
      if (op->hasAttr(CodegenDialect::kLinearTilesAttrName))
        return; // a user's (or an earlier) choice is kept
      int64_t k = op.getWeight().getType().getDimSize(1);
      int64_t paddedK = std::max(width, roundUp(k, width));
      int64_t blockK = std::min(kMaxBlockK, paddedK);
      int64_t budget = t.getL2Bytes() / 4; // bytes of one weight block
      int64_t blockN = budget / (blockK * 4);
      blockN = std::max(kCols, blockN / kCols * kCols);
      // The panel need not be longer than the (padded) reduction.
      int64_t panelK = std::min({kPanelK, maxPanelK, paddedK});
      // Prepared weights: G panels per parallel block, as many as half of
      // L2 holds, but at least 4 blocks (work for the threads); row blocks
      // whose slice of the input (rows x panelK) fills about a quarter of
      // L2, whole micro-kernel rows (measured on Zen 3, mid block at T = 2048:
      // a quarter of L2 of panels, or no row blocks, is 3-20% slower).
      // (Others keep the defaults: one panel, no row blocks.)
      int64_t panelGroup = 1, rowBlock = 0;
      auto layout = op->getAttrOfType<codegen::WeightLayoutAttr>(
          CodegenDialect::kWeightLayoutAttrName);
      // A 16-bit weight read in place gets the same groups and row blocks:
      // its prefill packs each panel per row block into the same loops.
      bool narrowInPlace =
          !layout && !op.getWeight().getType().getElementType().isF32();
      if ((layout &&
           layout.getValue() == codegen::WeightLayout::packed_panels) ||
          narrowInPlace) {
        int64_t n = op.getWeight().getType().getDimSize(0);
        int64_t numPanels = (n + panelN - 1) / panelN;
        panelGroup =
            std::clamp<int64_t>(t.getL2Bytes() / 2 / (panelK * panelN * 4), 1,
                                std::max<int64_t>(1, numPanels / 4));
        // Rounded up to whole micro-kernel rows: with 512 KiB of L2 and
        // panels of 256 k a quarter of L2 holds 128 rows, and a block of
        // 132 (not 126) takes a prefill of 128 tokens in one row block,
        // which streams the weights once (Zen 3, 7B f32 prefill at T =
        // 128, interleaved A/B: faster in 6 of 6 rounds, medians 776 ->
        // 730 ms).
        rowBlock = std::max(
            packRows, roundUp(t.getL2Bytes() / 4 / (panelK * 4), packRows));
      }
      // A projection rotated by RoPE (Q, K): blocks of whole heads, so that
      // blockc-cpu-fuse-rope can rotate each block in the kernel.
      int64_t blockAlign = 1;
      if (layout && layout.getValue() == codegen::WeightLayout::packed_panels)
        blockAlign = ropeHeadDim(op).value_or(1);
      // bf16 pairs read in place, or prepared as panels of k pairs (an even
      // K).
      bool bf16Dot = bf16Pairs(op) && (!layout || k % 2 == 0);
      // Quantised weights: int4 values as exact bf16 pairs on vdpbf16ps
      // (weight-only, AVX-512), where vdpbf16ps issues at the FMA rate.
      // Intel's cores with AMX issue its zmm form every other cycle, and
      // there the f32 table lookups are faster (one token through the
      // 4096 x 14336 int4 pair, Xeon f6m167: 5.1 ms on vdpbf16ps, 4.3 ms
      // with the lookups); int8 widens to f32 as cheaply as to bf16.
      if (WeightQuantAttr quant = op.getWeightQuantAttr())
        bf16Dot = bf16Dot && quant.getType() == WeightQuantType::int4 &&
                  !quant.quantizesActivations() && width == 16 &&
                  !t.getAmxBf16();
      op->setAttr(CodegenDialect::kLinearTilesAttrName,
                  codegen::LinearTilesAttr::get(
                      ctx, rows, kCols, blockN, blockK, packRows, kPackCols,
                      panelK, panelN, kPackMinRows, panelGroup, rowBlock,
                      blockAlign, bf16Dot, bf16Dot && amxTiles(op),
                      linearPrefetch));
      ++numAnnotated;
    });
    // Quantised projections (blockc-cpu-lower-quantized-linear's kernel):
    // rows x 4 register tiles beside the row vectors and one weight vector
    // (2 x 4 in 16 registers, 4 x 4 in 32), 32 weight rows per work item,
    // panels of widened weights (1024 k: 128 KiB, in L2) from 16 input
    // rows on, in 6 x 2 (16 registers) or 8 x 2 (32) vector tiles as the
    // f32 kernel's; rows prefetched 2 tiles ahead (Xeon f6m167, 7B int4
    // step: 22 ms without, 13.6-14.4 ms two tiles ahead), 4 with int8
    // activations (7B int4+act step: 12.4 ms prefetching 256 bytes ahead
    // in the row, 10.6 ms four tiles ahead). int4 weights are prepared
    // with 8 rows interleaved, the rows of one decode tile (1 x 8: 2 x
    // cols), so that a tile reads one sequential stream (7B int4+act step,
    // interleaved A/B, 1 thread: 9.1-9.6 ms against 10.3-11.8 ms with one
    // row after the other; the weight-only int4 step unchanged, 11.1-12.5
    // against 10.9-12.0 ms: it is bound by its table lookups).
    getOperation().walk([&](LinearOp op) {
      if (!op.getWeightQuantAttr() ||
          op->hasAttr(CodegenDialect::kQuantizedTilesAttrName))
        return;
      bool int4 = op.getWeightQuantAttr().getType() == WeightQuantType::int4;
      bool act = op.getWeightQuantAttr().quantizesActivations();
      // int4 weight-only in groups of 32 with 16 lanes (not on bf16
      // pairs): the 16 rows of a tile in the vector lanes (row_lanes),
      // fewer vector operations per weight than the 8-row tables (5.8
      // instead of 7 per 32 weights). The 4096 x 14336 pair at one token,
      // 2 threads (Xeon f6m167, interleaved A/B): 1.08 -> 0.88 ms. Groups
      // of 64 and 128 keep the tables (6.25 operations at 128), which
      // were faster there (0.99 against 1.20 ms with rows in lanes).
      auto linearTiles = op->getAttrOfType<codegen::LinearTilesAttr>(
          CodegenDialect::kLinearTilesAttrName);
      int64_t k = op.getWeight().getType().getDimSize(1);
      // With 8 lanes (AVX2, no 16-entry table lookup) every group size:
      // the tables' replacement there converted each nibble vector with a
      // cross-lane vpmovzxbd (the port pressure: 7.1 cycles per 32 weights
      // in llvm-mca's Zen 3 model and in cache, 3.1 in rows in lanes).
      int64_t groupSize = op.getWeightQuantAttr().getGroupSizeFor(k);
      // With int8 activations on 8 lanes without VNNI too: there the
      // k-in-lanes integer tiles spend 10 vector operations per 32 weights
      // (a cross-lane vinserti128 among them) against 4 with the rows in
      // lanes (vpmaddubsw on the masked nibbles, sums in i16).
      bool vnni = t.getAvxVnni() || t.getAvx512Vnni();
      bool rowLanes = int4 && (width == 16 || width == 8) &&
                      (groupSize == 32 || width == 8) &&
                      (!act || (width == 8 && !vnni)) &&
                      !(linearTiles && linearTiles.getBf16Dot());
      // int8 weights with int8 activations on 8 lanes without VNNI too: 4
      // vector operations per 32 products (vpsignb, vpmaddubsw, vpmaddwd,
      // vpaddd) against the k-in-lanes tiles' 5 plus a horizontal sum per
      // output (llvm-mca 22, Zen 3: 44.9 against 48.4 cycles per 1024
      // products in the 2-row tiles). Zen 3 f25m1, interleaved A/B: 7B
      // int8 + act step, 1 thread, 14.2-14.6 -> 10.2-13.3 ms; the 4096 x
      // 14336 pair at 512 tokens, 2 threads, 934-994 -> 763-785 ms.
      if (!int4 && act && width == 8 && !vnni)
        rowLanes = true;
      // Weight-only int8 on 8 lanes with K a multiple of 32 too: per 32
      // weights one xor (the bytes offset to u = q + 128), 3 masks and a
      // shift, 4 conversions and 4 FMAs against x 256^-j, nothing
      // cross-lane; the k-in-lanes tiles sign-extend each 8 bytes with a
      // cross-lane vpmovsxbd (llvm-mca 22, Zen 3: 12.9 cycles per 64
      // weights in the single-row tile, 16.4 per 128 with rows in lanes).
      if (!int4 && !act && width == 8 && k % 32 == 0)
        rowLanes = true;
      op->setAttr(CodegenDialect::kQuantizedTilesAttrName,
                  codegen::QuantizedTilesAttr::get(
                      ctx, /*rows=*/regs >= 32 ? 4 : 2, /*cols=*/4,
                      /*block_n=*/rowLanes ? 64 : 32, /*panel_k=*/1024,
                      /*panel_rows=*/regs >= 32 ? 8 : 6,
                      /*panel_min_rows=*/16,
                      /*prefetch_tiles=*/act ? 4 : 2,
                      /*interleave=*/rowLanes ? width : (int4 ? 8 : 1),
                      /*act_panel_min_rows=*/act && int4 && !rowLanes
                          ? kActPanelMinRows
                          : 0,
                      rowLanes));
      ++numAnnotated;
    });
    // Attention: the schedule of each f32 sdpa with a static head dim.
    getOperation().walk([&](SDPAOp op) {
      RankedTensorType q = op.getQuery().getType();
      if (op->hasAttr(CodegenDialect::kAttentionTilesAttrName) ||
          !q.getElementType().isF32() || q.isDynamicDim(3))
        return;
      op->setAttr(CodegenDialect::kAttentionTilesAttrName,
                  chooseAttentionTiles(ctx, width, regs, q.getDimSize(3)));
      ++numAnnotated;
    });
  }
};

} // namespace
