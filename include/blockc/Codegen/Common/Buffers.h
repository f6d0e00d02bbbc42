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

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
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

/// The buffers (as getRootBuffer returns them) that an operation and the
/// operations nested in it read and write; `unknown*` where one may read
/// (write) memory without saying which.
struct BufferAccesses {
  llvm::SmallVector<mlir::Value> reads, writes;
  bool unknownReads = false, unknownWrites = false;
};

/// The accesses of `root` and of every operation nested in it. An
/// operation without the memory-effect interface that takes no buffer (a
/// barrier, a shuffle, an intrinsic on registers) touches none, one that
/// takes a buffer may touch it in any way; allocations, frees, a thread's
/// stack slots and assertions (which write nothing) are left out.
inline BufferAccesses collectBufferAccesses(mlir::Operation *root) {
  BufferAccesses acc;
  root->walk([&](mlir::Operation *op) {
    if (mlir::isa<mlir::cf::AssertOp>(op))
      return;
    auto iface = mlir::dyn_cast<mlir::MemoryEffectOpInterface>(op);
    if (!iface) {
      // The nested operations of a region op are visited themselves.
      if (op->hasTrait<mlir::OpTrait::HasRecursiveMemoryEffects>())
        return;
      if (llvm::any_of(op->getOperandTypes(), [](mlir::Type type) {
            return mlir::isa<mlir::BaseMemRefType, mlir::LLVM::LLVMPointerType>(
                type);
          }))
        acc.unknownReads = acc.unknownWrites = true;
      return;
    }
    llvm::SmallVector<mlir::MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (mlir::MemoryEffects::EffectInstance &effect : effects) {
      bool isRead = mlir::isa<mlir::MemoryEffects::Read>(effect.getEffect());
      bool isWrite = mlir::isa<mlir::MemoryEffects::Write>(effect.getEffect());
      if ((!isRead && !isWrite) ||
          mlir::isa<mlir::SideEffects::AutomaticAllocationScopeResource>(
              effect.getResource()))
        continue;
      mlir::Value value = effect.getValue();
      if (!value)
        (isRead ? acc.unknownReads : acc.unknownWrites) = true;
      else
        (isRead ? acc.reads : acc.writes).push_back(getRootBuffer(value));
    }
  });
  return acc;
}

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_BUFFERS_H
