//===- SelectTiles.cpp - tile-size heuristic for the CPU kernels ----------===//
//
// Attaches blockc.cpu_tiles to transformer.linear ops; see
// Codegen/CPU/Passes.td (CPUSelectTilesPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUSELECTTILESPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;

namespace {

struct IsaTiles {
  int64_t width, rows, cols;
  // Packed outer-product kernel: packRows x packCols vectors of
  // accumulators, panels of panelN weight rows.
  int64_t packRows, packCols, panelN;
};

/// The register tiles of each ISA. Dot-product kernel: accumulators plus
/// the operand vectors of one k step (rows + cols) fit the register file.
/// Packed kernel: packRows * packCols accumulators, packCols panel vectors
/// and a broadcast; at least 8 independent FMA chains (latency 4, two FMA
/// pipes).
std::optional<IsaTiles> tilesFor(llvm::StringRef isa) {
  if (isa == "avx512")
    return IsaTiles{16, 4, 4, 8, 2, 32}; // 16 + 8 / 16 + 3 of 32 zmm
  if (isa == "avx2")
    return IsaTiles{8, 2, 4, 6, 2, 16}; // 8 + 6 / 12 + 3 of 16 ymm
  if (isa == "generic")
    return IsaTiles{4, 2, 4, 6, 2, 8}; // 8 + 6 / 12 + 3 of 16 xmm
  return std::nullopt;
}

/// Rows (tokens) from which the packed kernel is used: below, packing a
/// panel costs more than the horizontal reductions it saves (measured on
/// Zen 4: the two kernels tie at T = 32 for d = 512 / d_ff = 1408).
constexpr int64_t kPackMinRows = 32;
/// Reduction length of one packed panel (panel_k x panel_n x 4 bytes: 32
/// KiB with AVX-512, L1-sized).
constexpr int64_t kPanelK = 256;

std::string hostIsa() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return "avx512";
  if (features.lookup("avx2") && features.lookup("fma"))
    return "avx2";
  return "generic";
}

struct CPUSelectTilesPass
    : blockc::cpu::impl::CPUSelectTilesPassBase<CPUSelectTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string chosen = isa == "auto" ? hostIsa() : std::string(isa);
    std::optional<IsaTiles> t = tilesFor(chosen);
    if (!t || l2Bytes < 1024) {
      getOperation().emitError()
          << "blockc-cpu-select-tiles: isa must be auto, avx512, avx2 or "
             "generic and l2-bytes at least 1024";
      return signalPassFailure();
    }
    Builder b(&getContext());
    getOperation().walk([&](LinearOp op) {
      if (op->hasAttr(blockc::cpu::kCpuTilesAttrName))
        return; // a user's (or an earlier) choice is kept
      int64_t k = op.getWeight().getType().getDimSize(1);
      int64_t blockK = std::min<int64_t>(
          2048, std::max<int64_t>(t->width,
                                  (k + t->width - 1) / t->width * t->width));
      int64_t budget = l2Bytes / 8; // bytes of one weight block
      int64_t blockN = budget / (blockK * 4);
      blockN = std::max(t->cols, blockN / t->cols * t->cols);
      // The panel need not be longer than the (padded) reduction.
      int64_t panelK = std::min(
          kPanelK, std::max<int64_t>(t->width,
                                     (k + t->width - 1) / t->width * t->width));
      op->setAttr(
          blockc::cpu::kCpuTilesAttrName,
          b.getDictionaryAttr({
              b.getNamedAttr("rows", b.getI64IntegerAttr(t->rows)),
              b.getNamedAttr("cols", b.getI64IntegerAttr(t->cols)),
              b.getNamedAttr("vector_width", b.getI64IntegerAttr(t->width)),
              b.getNamedAttr("block_n", b.getI64IntegerAttr(blockN)),
              b.getNamedAttr("block_k", b.getI64IntegerAttr(blockK)),
              b.getNamedAttr("pack_rows", b.getI64IntegerAttr(t->packRows)),
              b.getNamedAttr("pack_cols", b.getI64IntegerAttr(t->packCols)),
              b.getNamedAttr("panel_k", b.getI64IntegerAttr(panelK)),
              b.getNamedAttr("panel_n", b.getI64IntegerAttr(t->panelN)),
              b.getNamedAttr("pack_min_rows",
                             b.getI64IntegerAttr(kPackMinRows)),
          }));
      ++numAnnotated;
    });
  }
};

} // namespace
