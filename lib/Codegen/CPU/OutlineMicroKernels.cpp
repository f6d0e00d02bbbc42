//===- OutlineMicroKernels.cpp - shared register-tile micro-kernels -------===//
//
// See Codegen/CPU/Passes.td (CPUOutlineMicroKernelsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"

#include "blockc/Codegen/Common/Outlining.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

#include <unordered_map>

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUOUTLINEMICROKERNELSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;

namespace {

/// A register tile: an scf.for that carries only vectors (the accumulators
/// of a micro-kernel along its reduction).
bool isRegisterTile(scf::ForOp loop) {
  return loop.getNumResults() > 0 &&
         llvm::all_of(loop.getResultTypes(), llvm::IsaPred<VectorType>);
}

/// The micro-kernel around `tile`: the outermost of the result-less scf.for
/// loops directly around it that hold no other register tile, or null.
scf::ForOp enclosingMicroKernel(scf::ForOp tile) {
  scf::ForOp found;
  for (auto loop = dyn_cast<scf::ForOp>(tile->getParentOp());
       loop && loop.getNumResults() == 0;
       loop = dyn_cast<scf::ForOp>(loop->getParentOp())) {
    int tiles = 0;
    loop.walk([&](scf::ForOp inner) { tiles += isRegisterTile(inner); });
    if (tiles != 1)
      break;
    found = loop;
  }
  return found;
}

/// Whether the body can take its memrefs in their canonical types: the only
/// memrefs it makes are subviews (whose types follow their source's) and it
/// holds no OpenMP op.
bool canOutline(scf::ForOp loop) {
  WalkResult result = loop.walk([&](Operation *op) {
    if (isa<omp::OpenMPDialect>(op->getDialect()))
      return WalkResult::interrupt();
    if (!isa<memref::SubViewOp>(op) &&
        llvm::any_of(op->getResultTypes(), llvm::IsaPred<MemRefType>))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The type a micro-kernel takes `type` in: a strided memref with every size,
/// the offset and every non-unit stride dynamic (unit strides stay, so that
/// vector accesses stay contiguous loads and stores); other types as they
/// are. Kernels over operands of other static shapes then share it.
Type canonicalType(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return type;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return type;
  for (int64_t &stride : strides)
    if (stride != 1)
      stride = ShapedType::kDynamic;
  SmallVector<int64_t> shape(memref.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(memref.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, memref.getElementType(), layout,
                         memref.getMemorySpace());
}

/// A micro-kernel loop, the values it reads from above (its arguments, in
/// order of first use) and the function that would replace it.
struct Candidate {
  scf::ForOp loop;
  SmallVector<Value> inputs;
  func::FuncOp func;
};

/// Builds `c.func`: the loop cloned over arguments of the canonical types,
/// its constants cloned in, every subview's type inferred again from its
/// (now dynamic) source.
void buildFunction(Candidate &c, func::FuncOp parent, Operation *&after,
                   SymbolTable &symbols) {
  SetVector<Value> used(c.loop->getOperands().begin(),
                        c.loop->getOperands().end());
  getUsedValuesDefinedAbove(c.loop->getRegions(), used);
  SmallVector<Value> constants;
  SmallVector<Type> types;
  for (Value v : used) {
    if (blockc::isClonableConstant(v)) {
      constants.push_back(v);
      continue;
    }
    c.inputs.push_back(v);
    types.push_back(canonicalType(v.getType()));
  }

  OpBuilder b(parent);
  Location loc = c.loop.getLoc();
  c.func = blockc::createOutlinedFunction(
      b, loc, (parent.getSymName() + "_micro").str(), types, after, symbols);
  after = c.func;
  Block *body = &c.func.front();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(c.inputs, body->getArguments());
  for (Value v : constants)
    mapping.map(v, b.clone(*v.getDefiningOp())->getResult(0));
  b.clone(*c.loop, mapping);
  func::ReturnOp::create(b, loc);

  // Pre-order: a subview's source is retyped before the subview.
  c.func.walk<WalkOrder::PreOrder>([](memref::SubViewOp subview) {
    subview.getResult().setType(memref::SubViewOp::inferRankReducedResultType(
        subview.getType().getShape(), subview.getSourceType(),
        subview.getMixedOffsets(), subview.getMixedSizes(),
        subview.getMixedStrides()));
  });
}

/// Replaces `c.loop` with a call of `callee`, casting its memrefs to the
/// canonical types.
void replaceWithCall(Candidate &c, func::FuncOp callee) {
  OpBuilder b(c.loop);
  Location loc = c.loop.getLoc();
  SmallVector<Value> operands;
  for (auto [input, type] :
       llvm::zip_equal(c.inputs, callee.getFunctionType().getInputs())) {
    operands.push_back(input.getType() == type
                           ? input
                           : memref::CastOp::create(b, loc, type, input));
  }
  func::CallOp::create(b, loc, callee, operands);
  c.loop.erase();
}

struct CPUOutlineMicroKernelsPass
    : blockc::cpu::impl::CPUOutlineMicroKernelsPassBase<
          CPUOutlineMicroKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<Candidate> candidates;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      SetVector<Operation *> loops;
      func.walk([&](scf::ForOp loop) {
        if (!isRegisterTile(loop))
          return;
        if (scf::ForOp kernel = enclosingMicroKernel(loop))
          if (canOutline(kernel))
            loops.insert(kernel);
      });
      Operation *after = func;
      for (Operation *loop : loops) {
        candidates.push_back({cast<scf::ForOp>(loop), {}, {}});
        buildFunction(candidates.back(), func, after, symbols);
      }
    }

    // Equal functions share one; a micro-kernel without an equal stays
    // where it is, over its own static types.
    std::unordered_map<size_t, SmallVector<SmallVector<Candidate *>>> groups;
    for (Candidate &c : candidates) {
      auto &buckets =
          groups[static_cast<size_t>(blockc::hashFunctionBody(c.func))];
      auto equal = llvm::find_if(buckets, [&](ArrayRef<Candidate *> group) {
        return blockc::areEquivalentFunctions(group.front()->func, c.func);
      });
      if (equal == buckets.end())
        buckets.push_back({&c});
      else
        equal->push_back(&c);
    }
    for (auto &[hash, buckets] : groups) {
      for (ArrayRef<Candidate *> group : buckets) {
        func::FuncOp kept = group.front()->func;
        if (group.size() > 1) {
          for (Candidate *c : group)
            replaceWithCall(*c, kept);
          numOutlined += group.size();
          ++numFunctions;
        }
        for (Candidate *c : group)
          if (c->func != kept || group.size() == 1)
            c->func.erase();
      }
    }
  }
};

} // namespace
