//===- AsyncLaunches.cpp - a host function's kernels on one stream --------===//
//
// Gives the stream-less launches of each host function one stream created at
// entry, passes it to the runtime's allocation, copy and free calls, and
// makes the host wait for it only before memory accesses, unknown calls and
// returns. See Codegen/NVPTX/Passes.td (GPUAsyncLaunchesPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSwitch.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUASYNCLAUNCHESPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

constexpr StringLiteral kStreamCreate = "mgpuStreamCreate";
constexpr StringLiteral kStreamSynchronize = "mgpuStreamSynchronize";
constexpr StringLiteral kStreamDestroy = "mgpuStreamDestroy";

/// The position of the stream among the arguments of the runtime's memory
/// functions (the order of upstream's gpu-to-llvm calls), none for others.
std::optional<unsigned> streamArgument(StringRef callee) {
  return llvm::StringSwitch<std::optional<unsigned>>(callee)
      .Case("mgpuMemAlloc", 1)
      .Case("mgpuMemFree", 1)
      .Case("mgpuMemcpy", 3)
      .Case("mgpuMemset32", 3)
      .Case("mgpuMemset16", 3)
      .Default(std::nullopt);
}

/// Runtime and C library functions that touch no memory a kernel uses
/// (beyond the memory functions above, which get the stream).
bool isHostOnlyCall(StringRef callee) {
  return callee.starts_with("mgpuStream") || callee.starts_with("mgpuEvent") ||
         callee == "mgpuTensorMapEncodeTiledMemref" || callee == "malloc" ||
         callee == "aligned_alloc" || streamArgument(callee).has_value();
}

/// Whether `ptr` points into a stack slot of the function (an llvm.alloca,
/// through address computations), which no kernel can read.
bool isStackAddress(Value ptr) {
  while (ptr) {
    Operation *def = ptr.getDefiningOp();
    if (!def)
      return false;
    if (isa<LLVM::AllocaOp>(def))
      return true;
    if (auto gep = dyn_cast<LLVM::GEPOp>(def)) {
      ptr = gep.getBase();
      continue;
    }
    if (isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def)) {
      ptr = def->getOperand(0);
      continue;
    }
    return false;
  }
  return false;
}

/// Whether the host must wait for the queued kernels before `op`: it may
/// read or write memory that they use.
bool needsWait(Operation *op) {
  if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    std::optional<StringRef> callee = call.getCallee();
    return !callee || !isHostOnlyCall(*callee);
  }
  if (isMemoryEffectFree(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](MemoryEffects::EffectInstance &effect) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()))
      return false;
    Value value = effect.getValue();
    return !value || !isStackAddress(value);
  });
}

/// The declaration of the runtime function `name`, added if missing.
LLVM::LLVMFuncOp declare(ModuleOp module, StringRef name, Type result,
                         ArrayRef<Type> arguments) {
  if (auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return func;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(
      builder, module.getLoc(), name,
      LLVM::LLVMFunctionType::get(result, arguments));
}

bool isCallTo(Operation *op, StringRef name) {
  auto call = dyn_cast<LLVM::CallOp>(op);
  return call && call.getCallee() == name;
}

struct GPUAsyncLaunchesPass
    : blockc::nvptx::impl::GPUAsyncLaunchesPassBase<GPUAsyncLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> functions;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (func.isExternal())
        continue;
      bool streamless = false, streamed = false;
      func.walk([&](gpu::LaunchFuncOp launch) {
        if (launch.getAsyncObject() || !launch.getAsyncDependencies().empty())
          streamed = true;
        else
          streamless = true;
      });
      if (streamless && !streamed)
        functions.push_back(func);
    }
    for (LLVM::LLVMFuncOp func : functions)
      rewrite(module, func);
  }

  void rewrite(ModuleOp module, LLVM::LLVMFuncOp func) {
    MLIRContext *ctx = &getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type none = LLVM::LLVMVoidType::get(ctx);
    LLVM::LLVMFuncOp create = declare(module, kStreamCreate, ptr, {});
    LLVM::LLVMFuncOp synchronize =
        declare(module, kStreamSynchronize, none, {ptr});
    LLVM::LLVMFuncOp destroy = declare(module, kStreamDestroy, none, {ptr});

    OpBuilder builder(ctx);
    builder.setInsertionPointToStart(&func.getBody().front());
    auto streamCall =
        LLVM::CallOp::create(builder, func.getLoc(), create, ValueRange{});
    Value stream = streamCall.getResult();
    auto wait = [&](Operation *before) {
      builder.setInsertionPoint(before);
      LLVM::CallOp::create(builder, before->getLoc(), synchronize, stream);
    };

    for (Block &block : func.getBody()) {
      // Whether nothing was queued in this block since the host last
      // waited (unknown at the block's start).
      bool idle = false;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        if (&op == streamCall)
          continue;
        if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
          launch.getAsyncObjectMutable().assign(stream);
          idle = false;
          continue;
        }
        if (auto call = dyn_cast<LLVM::CallOp>(op)) {
          std::optional<StringRef> callee = call.getCallee();
          if (callee)
            if (std::optional<unsigned> index = streamArgument(*callee)) {
              if (*index < call.getNumOperands()) {
                call->setOperand(*index, stream);
                idle = false;
              }
              continue;
            }
        }
        if (isa<LLVM::ReturnOp>(op)) {
          wait(&op);
          LLVM::CallOp::create(builder, op.getLoc(), destroy, stream);
          continue;
        }
        if (!idle && needsWait(&op)) {
          wait(&op);
          idle = true;
        }
      }
    }

    // The streams that the memory calls had of their own are now created,
    // waited for and destroyed around nothing.
    SmallVector<LLVM::CallOp> unused;
    func.walk([&](LLVM::CallOp call) {
      if (call != streamCall && call.getCallee() == kStreamCreate &&
          llvm::all_of(call->getUsers(), [](Operation *user) {
            return isCallTo(user, kStreamSynchronize) ||
                   isCallTo(user, kStreamDestroy);
          }))
        unused.push_back(call);
    });
    for (LLVM::CallOp call : unused) {
      for (Operation *user : llvm::make_early_inc_range(call->getUsers()))
        user->erase();
      call->erase();
    }
  }
};

} // namespace
