//===- CHeader.h - The C header of a compiled model -------------*- C++ -*-===//
//
// The C header that declares the entry points of an object blockc emits
// (`blockc -emit=obj` writes it beside the object): the memref descriptor
// structs, the entry, its prepare function, the decode entry and, for
// tensor-parallel objects, the part of each weight every rank passes.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_TARGET_CHEADER_H
#define BLOCKC_TARGET_CHEADER_H

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Analysis/PreparedWeights.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace blockc {

/// The decode entry compiled beside the model's entry (blockc --decode), or
/// the paged entry (blockc --paged).
struct DecodeEntry {
  std::string funcName;
  /// The K and V cache arguments in order (k_0, v_0, k_1, ...), as tensors
  /// [B, L_max, H_kv, D]; a paged entry's pools [num_pages, S, H_kv, D].
  std::vector<mlir::RankedTensorType> caches;
  /// A paged entry (transformer-derive-paged-decode): its packed input
  /// ([total, d], or [total] token ids) and result ([total, width]) and its
  /// page size S. Empty types for a dense decode entry.
  bool paged = false;
  mlir::RankedTensorType pagedInput, pagedResult;
  int64_t pageSize = 0;
  /// Head-major memory order ([B][H_kv][L_max][D]) of every cache.
  bool headMajor = true;
  /// Its prepare function, if it reads prepared weights.
  std::optional<PrepareEntry> prepare;
};

/// The C header declaring `_mlir_ciface_<entry>` and the memref descriptor
/// structs it takes, with the weight names and shapes as comments.
/// With `gpu`, the header documents the NVPTX object's memory contract:
/// arguments in device-accessible (managed) memory, the result released
/// with mgpuMemFree from blockc's CUDA runtime (`emulated`: the GPU
/// emulator's runtime). With `decode`, it also declares the decode entry
/// (or the paged entry).
/// With `prepare` (the entry's prepare function, blockc-cpu-prepare-weights)
/// the header also declares it, and the entry's prepared arguments take the
/// prepared (packed) descriptors.
std::string emitCHeader(const ModelSignature &signature,
                        llvm::StringRef headerName, bool gpu = false,
                        const DecodeEntry *decode = nullptr,
                        bool emulated = false,
                        const PrepareEntry *prepare = nullptr);

} // namespace blockc

#endif // BLOCKC_TARGET_CHEADER_H
