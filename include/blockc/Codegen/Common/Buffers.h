//===- Buffers.h - which buffer an access touches --------------*- C++ -*-===//
//
// The alias questions that kernel builders and launch rewrites ask of
// memrefs on buffers: the buffer a value views, and whether two buffers
// are known to be distinct. An entry's arguments are distinct buffers
// (docs/RuntimeABI.md), as are distinct allocations.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_BUFFERS_H
#define BLOCKC_CODEGEN_COMMON_BUFFERS_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace blockc {

/// The buffer `v` views, through view-like ops (subviews, casts,
/// reshapes): an allocation, an argument, or what else made it.
inline mlir::Value getRootBuffer(mlir::Value v) {
  while (auto view = v.getDefiningOp<mlir::ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether `v` is a fresh allocation: a result that its op allocates
/// (`memref.alloc`, `gpu.alloc`, ...).
inline bool isAllocatedBuffer(mlir::Value v) {
  auto result = mlir::dyn_cast<mlir::OpResult>(v);
  if (!result)
    return false;
  auto effects =
      mlir::dyn_cast<mlir::MemoryEffectOpInterface>(result.getOwner());
  return effects &&
         effects.getEffectOnValue<mlir::MemoryEffects::Allocate>(v).has_value();
}

/// Whether `v` is an argument of a function's entry block.
inline bool isFunctionArgument(mlir::Value v) {
  auto arg = mlir::dyn_cast<mlir::BlockArgument>(v);
  return arg && arg.getOwner()->isEntryBlock() &&
         mlir::isa<mlir::FunctionOpInterface>(arg.getOwner()->getParentOp());
}

/// Whether the buffers `a` and `b` (as getRootBuffer returns them) are
/// known not to overlap: distinct allocations, an allocation and a
/// function argument, or distinct function arguments.
inline bool areDistinctBuffers(mlir::Value a, mlir::Value b) {
  if (a == b)
    return false;
  auto known = [](mlir::Value v) {
    return isAllocatedBuffer(v) || isFunctionArgument(v);
  };
  return known(a) && known(b);
}

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_BUFFERS_H
