//===- CodegenDialect.cpp - blockc_codegen dialect ------------------------===//
//
// Registers the attributes of the `blockc_codegen` dialect and verifies them,
// both as attributes and under their discardable names.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Codegen/IR/FragmentOps.h"

#include "mlir/IR/BuiltinOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace blockc::codegen;

#include "blockc/Dialect/Codegen/IR/CodegenDialect.cpp.inc"
#include "blockc/Dialect/Codegen/IR/CodegenEnums.cpp.inc"

#include "blockc/Dialect/Codegen/IR/CodegenAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "blockc/Dialect/Codegen/IR/CodegenAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "blockc/Dialect/Codegen/IR/CodegenOps.cpp.inc"

void CodegenDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "blockc/Dialect/Codegen/IR/CodegenAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "blockc/Dialect/Codegen/IR/CodegenOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "blockc/Dialect/Codegen/IR/FragmentOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Attribute verifiers
//===----------------------------------------------------------------------===//

LogicalResult
CPUTargetAttr::verify(function_ref<InFlightDiagnostic()> emitError, ISA isa,
                      int64_t vectorWidth, int64_t registers, int64_t l1Bytes,
                      int64_t l2Bytes, bool avx512BF16, bool avx512VNNI,
                      bool avxVNNI, bool amxBF16, CPUVendor vendor) {
  if (vectorWidth < 1 || !llvm::isPowerOf2_64(vectorWidth))
    return emitError() << "vector_width must be a power of two >= 1, got "
                       << vectorWidth;
  if (registers < 8)
    return emitError() << "registers must be >= 8, got " << registers;
  if (l1Bytes < 1)
    return emitError() << "l1_bytes must be positive, got " << l1Bytes;
  if (l2Bytes < 1)
    return emitError() << "l2_bytes must be positive, got " << l2Bytes;
  if (avx512BF16 && isa != ISA::avx512)
    return emitError() << "avx512_bf16 needs isa = avx512, got isa = "
                       << stringifyISA(isa);
  if (avx512VNNI && isa != ISA::avx512)
    return emitError() << "avx512_vnni needs isa = avx512, got isa = "
                       << stringifyISA(isa);
  if (amxBF16 && isa != ISA::avx512)
    return emitError() << "amx_bf16 needs isa = avx512, got isa = "
                       << stringifyISA(isa);
  if (avxVNNI && isa == ISA::sse)
    return emitError() << "avx_vnni needs isa = avx512 or avx2, got isa = sse";
  return success();
}

LogicalResult
PackedWeightAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t rows, int64_t cols, int64_t panelK,
                         int64_t panelN, bool pairs) {
  std::pair<StringRef, int64_t> sizes[] = {
      {"rows", rows}, {"cols", cols}, {"panel_k", panelK}, {"panel_n", panelN}};
  for (auto [name, value] : sizes)
    if (value < 1)
      return emitError() << name << " must be >= 1, got " << value;
  if (pairs && (panelK % 2 != 0 || cols % 2 != 0))
    return emitError() << "pairs = true needs an even panel_k and cols, got "
                          "panel_k = "
                       << panelK << " and cols = " << cols;
  return success();
}

LogicalResult QuantizedWeightAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t rows, int64_t cols,
    int64_t bits, int64_t groupSize, int64_t interleave, bool rowLanes) {
  if (interleave < 1 || interleave > 16 || (interleave & (interleave - 1)))
    return emitError() << "interleave must be 1, 2, 4, 8 or 16, got "
                       << interleave;
  if (rowLanes && !(bits == 4 && (interleave == 8 || interleave == 16)) &&
      !(bits == 8 && interleave == 8))
    return emitError() << "row_lanes needs bits = 4 and interleave = 8 or 16, "
                          "or bits = 8 and interleave = 8, got bits = "
                       << bits << " and interleave = " << interleave;
  if (interleave > 1 && bits != 4 && !rowLanes)
    return emitError() << "interleave " << interleave
                       << " needs bits = 4 or row_lanes (int8 rows are "
                          "interleaved only in lanes)";
  if (rows < 1 || cols < 1)
    return emitError() << "rows and cols must be >= 1, got " << rows << " and "
                       << cols;
  if (bits == 8) {
    if (groupSize != cols)
      return emitError() << "bits = 8 has one scale per row: group_size must "
                            "be cols ("
                         << cols << "), got " << groupSize;
    return success();
  }
  if (bits != 4)
    return emitError() << "bits must be 8 or 4, got " << bits;
  if (groupSize != 32 && groupSize != 64 && groupSize != 128)
    return emitError() << "bits = 4 needs group_size 32, 64 or 128, got "
                       << groupSize;
  if (cols % groupSize != 0)
    return emitError() << "group_size " << groupSize << " does not divide cols "
                       << cols;
  return success();
}

LogicalResult LinearTilesAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t rows, int64_t cols,
    int64_t blockN, int64_t blockK, int64_t packRows, int64_t packCols,
    int64_t panelK, int64_t panelN, int64_t packMinRows, int64_t panelGroup,
    int64_t rowBlock, int64_t blockAlign, bool bf16Dot, bool amx,
    int64_t prefetchBytes) {
  std::pair<StringRef, int64_t> sizes[] = {{"rows", rows},
                                           {"cols", cols},
                                           {"block_n", blockN},
                                           {"block_k", blockK},
                                           {"pack_rows", packRows},
                                           {"pack_cols", packCols},
                                           {"panel_k", panelK},
                                           {"panel_n", panelN},
                                           {"pack_min_rows", packMinRows},
                                           {"panel_group", panelGroup},
                                           {"block_align", blockAlign}};
  for (auto [name, value] : sizes)
    if (value < 1)
      return emitError() << name << " must be >= 1, got " << value;
  if (rowBlock < 0)
    return emitError() << "row_block must be >= 0, got " << rowBlock;
  if (amx && !bf16Dot)
    return emitError() << "amx needs bf16_dot";
  if (prefetchBytes < 0 || prefetchBytes > 65536 || prefetchBytes % 64 != 0)
    return emitError() << "prefetch_bytes must be 0 (no prefetch) or a "
                          "multiple of 64 (a cache line) up to 65536, got "
                       << prefetchBytes;
  return success();
}

LogicalResult AttentionTilesAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t width, bool multiRow,
    int64_t rowVectors, int64_t keyGroup, int64_t valueGroup, int64_t keyTile,
    int64_t qkUnroll, int64_t prefetchDistance, int64_t prefetchLocality) {
  if (width != 4 && width != 8 && width != 16)
    return emitError() << "width must be 4, 8 or 16, got " << width;
  std::pair<StringRef, int64_t> sizes[] = {{"row_vectors", rowVectors},
                                           {"key_group", keyGroup},
                                           {"value_group", valueGroup},
                                           {"key_tile", keyTile},
                                           {"qk_unroll", qkUnroll}};
  for (auto [name, value] : sizes)
    if (value < 1)
      return emitError() << name << " must be >= 1, got " << value;
  if (keyTile % keyGroup != 0)
    return emitError() << "key_tile (" << keyTile
                       << ") must be a multiple of key_group (" << keyGroup
                       << ")";
  if (prefetchDistance < 0)
    return emitError() << "prefetch_distance must be >= 0, got "
                       << prefetchDistance;
  if (prefetchLocality < 0 || prefetchLocality > 3)
    return emitError() << "prefetch_locality must be in [0, 3], got "
                       << prefetchLocality;
  return success();
}

LogicalResult QuantizedTilesAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t rows, int64_t cols,
    int64_t blockN, int64_t panelK, int64_t panelRows, int64_t panelMinRows,
    int64_t prefetchTiles, int64_t interleave, int64_t actPanelMinRows,
    bool rowLanes) {
  if (interleave < 1 || interleave > 16 || (interleave & (interleave - 1)))
    return emitError() << "interleave must be 1, 2, 4, 8 or 16, got "
                       << interleave;
  if (rowLanes && interleave != 8 && interleave != 16)
    return emitError() << "row_lanes needs interleave = 8 or 16, got "
                       << interleave;
  std::pair<StringRef, int64_t> sizes[] = {
      {"rows", rows}, {"cols", cols}, {"panel_rows", panelRows}};
  for (auto [name, value] : sizes)
    if (value < 1 || value > 8)
      return emitError() << name << " must be in [1, 8], got " << value;
  if (blockN < 32 || blockN % 32 != 0)
    return emitError() << "block_n must be a positive multiple of 32, got "
                       << blockN;
  if (panelK < 32 || panelK % 32 != 0)
    return emitError() << "panel_k must be a positive multiple of 32, got "
                       << panelK;
  if (panelK * blockN * 4 > (int64_t{1} << 20))
    return emitError() << "the f32 panel of panel_k x block_n (" << panelK
                       << " x " << blockN << ") must fit 1 MiB";
  if (panelMinRows < 1)
    return emitError() << "panel_min_rows must be >= 1, got " << panelMinRows;
  if (prefetchTiles < 0)
    return emitError() << "prefetch_tiles must be >= 0, got " << prefetchTiles;
  if (actPanelMinRows < 0)
    return emitError() << "act_panel_min_rows must be >= 0 (0: never), got "
                       << actPanelMinRows;
  return success();
}

LogicalResult
ElementwiseTilesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             int64_t rows, int64_t width) {
  if (rows < 1)
    return emitError() << "rows must be >= 1, got " << rows;
  if (width < 0 || width > 64 || (width & (width - 1)) != 0)
    return emitError() << "width must be 0 or a power of two up to 64, got "
                       << width;
  return success();
}

LogicalResult
HorizontalGroupAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t id) {
  if (id < 0)
    return emitError() << "horizontal group id must be non-negative, got "
                       << id;
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel configurations: the pass that reads each
//===----------------------------------------------------------------------===//

StringRef LinearTilesAttr::getKernelPass() const {
  return "blockc-cpu-lower-linear";
}
StringRef AttentionTilesAttr::getKernelPass() const {
  return "blockc-cpu-lower-sdpa";
}
StringRef QuantizedTilesAttr::getKernelPass() const {
  return "blockc-cpu-lower-quantized-linear";
}
StringRef ElementwiseTilesAttr::getKernelPass() const {
  return "blockc-cpu-tile-elementwise";
}
StringRef HorizontalGroupAttr::getKernelPass() const {
  return "blockc-cpu-lower-linear";
}
StringRef GPUMatmulTilesAttr::getKernelPass() const {
  return "blockc-gpu-tile-matmul";
}
StringRef GPUMmaTilesAttr::getKernelPass() const {
  return "blockc-gpu-tile-matmul";
}
StringRef GPUWarpgroupTilesAttr::getKernelPass() const {
  return "blockc-gpu-tile-matmul";
}
StringRef GPUMapAttr::getKernelPass() const {
  // The thread map of every kernel these passes build in the function.
  return "blockc-gpu-tile-and-map, blockc-gpu-tile-reductions, "
         "blockc-gpu-tile-elementwise";
}
StringRef GPUAttentionAttr::getKernelPass() const {
  return "blockc-gpu-lower-sdpa";
}
StringRef GPUMmaAttentionAttr::getKernelPass() const {
  return "blockc-gpu-lower-sdpa";
}
StringRef GPUPagedAttentionAttr::getKernelPass() const {
  return "blockc-gpu-lower-paged";
}
StringRef GPUGemvAttr::getKernelPass() const { return "blockc-gpu-tile-gemv"; }

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

LogicalResult CodegenDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  auto expect = [&](bool ok, StringRef kind) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << name << "' must be a #blockc_codegen."
                           << kind << " attribute";
  };
  if (name == kCpuTargetAttrName)
    return expect(isa<CPUTargetAttr>(value), "cpu_target");
  if (name == kLinearTilesAttrName)
    return expect(isa<LinearTilesAttr>(value), "linear_tiles");
  if (name == kAttentionTilesAttrName)
    return expect(isa<AttentionTilesAttr>(value), "attention_tiles");
  if (name == kQuantizedTilesAttrName)
    return expect(isa<QuantizedTilesAttr>(value), "quantized_tiles");
  if (name == kElementwiseTilesAttrName)
    return expect(isa<ElementwiseTilesAttr>(value), "elementwise_tiles");
  if (name == kHorizontalGroupAttrName)
    return expect(isa<HorizontalGroupAttr>(value), "horizontal_group");
  if (name == kKernelAttrName)
    return expect(isa<KernelKindAttr>(value), "kernel");
  if (name == kWeightLayoutAttrName)
    return expect(isa<WeightLayoutAttr>(value), "weight_layout");
  if (name == kPreparedAttrName)
    return expect(isa<PackedWeightAttr, QuantizedWeightAttr>(value),
                  "packed_weight or #blockc_codegen.quantized_weight");
  if (name == kPrepareForAttrName) {
    if (isa<StringAttr>(value))
      return success();
    return op->emitError() << "'" << name
                           << "' must be a string (the entry's name)";
  }
  if (name == kPreparePartOfAttrName) {
    if (isa<StringAttr>(value))
      return success();
    return op->emitError()
           << "'" << name << "' must be a string (the prepare function's name)";
  }
  if (name == kGpuMatmulTilesAttrName)
    return expect(isa<GPUMatmulTilesAttr>(value), "gpu_matmul_tiles");
  if (name == kGpuMmaTilesAttrName)
    return expect(isa<GPUMmaTilesAttr>(value), "gpu_mma_tiles");
  if (name == kGpuWarpgroupTilesAttrName)
    return expect(isa<GPUWarpgroupTilesAttr>(value), "gpu_warpgroup_tiles");
  if (name == kGpuMapAttrName)
    return expect(isa<GPUMapAttr>(value), "gpu_map");
  if (name == kGpuAttentionAttrName)
    return expect(isa<GPUAttentionAttr>(value), "gpu_attention");
  if (name == kGpuMmaAttentionAttrName)
    return expect(isa<GPUMmaAttentionAttr>(value), "gpu_mma_attention");
  if (name == kGpuPagedAttentionAttrName)
    return expect(isa<GPUPagedAttentionAttr>(value), "gpu_paged_attention");
  if (name == kGpuGemvAttrName)
    return expect(isa<GPUGemvAttr>(value), "gpu_gemv");
  if (name == kEmulatedKernelAttrName)
    return expect(isa<EmulatedKernelAttr>(value), "emulated_kernel");
  if (name == kGpuTargetAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << name << "' belongs on a builtin.module";
    return expect(isa<GPUTargetAttr>(value), "gpu_target");
  }
  return op->emitError() << "unknown blockc_codegen attribute '" << name << "'";
}
