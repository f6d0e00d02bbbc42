//===- PrepareWeights.cpp - prepare functions for packed weights ----------===//
//
// See Codegen/CPU/Passes.td (CPUPrepareWeightsPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUPREPAREWEIGHTSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
namespace codegen = blockc::codegen;
using codegen::CodegenDialect;

namespace {

/// One prepared weight that moves into the prepare function: a marked
/// `linalg.pack` (packed panels) or `linalg.generic` (quantised weights),
/// both in destination-passing style with one init.
struct Prepared {
  DestinationStyleOpInterface pack;
  Attribute layout;
  unsigned argIndex; // the packed weight's argument of the entry
  SetVector<Operation *> slice;
  SetVector<unsigned> leaves; // entry arguments the slice reads
};

/// The weight the pack `op` packs, as an argument of `entry`'s body: its
/// source, seen through the elementwise producers that fold other weights
/// into it (a norm gain) and the expansion of k into pairs (bf16 pairs).
BlockArgument packedArgument(Operation *op, Block *body) {
  auto pack = dyn_cast<linalg::PackOp>(op);
  if (!pack)
    return {};
  Value v = pack.getSource();
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>())
    v = expand.getSrc();
  while (auto generic = v.getDefiningOp<linalg::GenericOp>()) {
    if (generic.getNumDpsInputs() == 0)
      return {};
    v = generic.getDpsInputOperand(0)->get();
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != body)
    return {};
  return arg;
}

/// The computation in `body` (top-level ops) that `pack` depends on, if it
/// reads only arguments of `body` and constants and has no side effects.
LogicalResult collectSlice(Operation *pack, Block *body, Prepared &prepared) {
  SmallVector<Operation *> worklist = {pack};
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    if (op->getBlock() != body || !isMemoryEffectFree(op))
      return failure();
    SmallVector<Value> operands(op->getOperands());
    // Values the op's regions capture from above.
    SetVector<Value> captured;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, captured);
    operands.append(captured.begin(), captured.end());
    for (Value operand : operands) {
      if (auto arg = dyn_cast<BlockArgument>(operand)) {
        if (arg.getOwner() != body)
          return failure();
        prepared.leaves.insert(arg.getArgNumber());
        continue;
      }
      worklist.push_back(operand.getDefiningOp());
    }
  }
  // In block order, so that cloning keeps definitions before uses.
  for (Operation &op : *body)
    if (seen.contains(&op))
      prepared.slice.insert(&op);
  return success();
}

/// The entry arguments that `moves` read, in entry order.
SmallVector<unsigned> sortedLeaves(ArrayRef<const Prepared *> moves) {
  SetVector<unsigned> inputs;
  for (const Prepared *p : moves)
    inputs.insert(p->leaves.begin(), p->leaves.end());
  SmallVector<unsigned> order(inputs.begin(), inputs.end());
  llvm::sort(order);
  return order;
}

/// A prepare function `name` for `moves` (at `b`'s insertion point, with
/// an empty entry block): the arguments of `entry` that they read, in entry
/// order (their attributes copied, plus source_arg), then one writable
/// destination per prepared weight, each returned (source_arg and the
/// prepared layout on both).
func::FuncOp createPrepareFunction(OpBuilder &b, func::FuncOp entry,
                                   StringRef name,
                                   ArrayRef<const Prepared *> moves) {
  Block *body = &entry.getBody().front();
  SmallVector<unsigned> order = sortedLeaves(moves);
  SmallVector<Type> argTypes, resultTypes;
  for (unsigned i : order)
    argTypes.push_back(body->getArgument(i).getType());
  for (const Prepared *p : moves) {
    argTypes.push_back(p->pack->getResult(0).getType());
    resultTypes.push_back(p->pack->getResult(0).getType());
  }
  auto prepare = func::FuncOp::create(b, entry.getLoc(), name,
                                      b.getFunctionType(argTypes, resultTypes));
  // The entry's target shapes the prepare function's code too.
  if (Attribute target = entry->getAttr(CodegenDialect::kCpuTargetAttrName))
    prepare->setAttr(CodegenDialect::kCpuTargetAttrName, target);
  for (auto [j, i] : llvm::enumerate(order)) {
    if (DictionaryAttr dict = entry.getArgAttrDict(i))
      for (NamedAttribute attr : dict)
        prepare.setArgAttr(j, attr.getName(), attr.getValue());
    prepare.setArgAttr(j, CodegenDialect::kSourceArgAttrName,
                       b.getI64IntegerAttr(i));
  }
  for (auto [j, p] : llvm::enumerate(moves)) {
    unsigned dest = order.size() + j;
    prepare.setArgAttr(dest, CodegenDialect::kSourceArgAttrName,
                       b.getI64IntegerAttr(p->argIndex));
    prepare.setArgAttr(dest, CodegenDialect::kPreparedAttrName, p->layout);
    prepare.setArgAttr(dest,
                       bufferization::BufferizationDialect::kWritableAttrName,
                       b.getBoolAttr(true));
    prepare.setResultAttr(j, CodegenDialect::kSourceArgAttrName,
                          b.getI64IntegerAttr(p->argIndex));
    prepare.setResultAttr(j, CodegenDialect::kPreparedAttrName, p->layout);
  }
  prepare.addEntryBlock();
  return prepare;
}

/// Lowers a marked pack (`P[i, j, k, n] = W[i * PN + n, j * PK + k]`, zero
/// past W) to vector code: the n-blocks in parallel (scf.forall), each V x V
/// block of a panel one masked 2-D read of W, one in-register transpose and
/// one write. Returns failure when the pack is not of that form or the
/// panels are not whole V x V blocks.
LogicalResult lowerPackedWeight(RewriterBase &rewriter, linalg::PackOp pack,
                                int64_t v) {
  RankedTensorType srcType = pack.getSourceType();
  RankedTensorType dstType = pack.getDestType();
  if (srcType.getRank() != 2 || dstType.getRank() != 4 ||
      !dstType.hasStaticShape() || !srcType.hasStaticShape() ||
      pack.getInnerDimsPos() != ArrayRef<int64_t>{1, 0} ||
      !pack.getOuterDimsPerm().empty())
    return failure();
  int64_t nb = dstType.getDimSize(0), kb = dstType.getDimSize(1);
  int64_t pk = dstType.getDimSize(2), pn = dstType.getDimSize(3);
  if (pk % v != 0 || pn % v != 0)
    return failure();
  Location loc = pack.getLoc();
  rewriter.setInsertionPoint(pack);
  auto idx = [&](int64_t i) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, i);
  };
  // A bf16/f16 weight's blocks are transposed as f32 (exact both ways), with
  // the f32 in-register transposes.
  Type elt = srcType.getElementType(), f32 = rewriter.getF32Type();
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(elt));
  Value zeroF32 =
      elt == f32
          ? zero
          : arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32))
                .getResult();
  auto block = VectorType::get({v, v}, elt);
  auto wideBlock = VectorType::get({v, v}, f32);
  // A folded norm gain (blockc-cpu-fuse-norm: W[n, k] * g[k]) is applied
  // to the blocks as they are read, instead of in a pass of its own.
  Value w = pack.getSource(), gain;
  if (auto generic = w.getDefiningOp<linalg::GenericOp>()) {
    Block &body = generic.getRegion().front();
    auto mul = dyn_cast<arith::MulFOp>(body.front());
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
    AffineMap col = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
    if (generic.getNumDpsInputs() == 2 && generic.getNumDpsInits() == 1 &&
        generic.getNumParallelLoops() == 2 && mul &&
        body.getOperations().size() == 2 &&
        mul.getLhs() == body.getArgument(0) &&
        mul.getRhs() == body.getArgument(1) &&
        generic.getIndexingMapsArray() == SmallVector<AffineMap>{id, col, id}) {
      gain = generic.getDpsInputOperand(1)->get();
      w = generic.getDpsInputOperand(0)->get();
    }
  }
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(nb)},
      ValueRange{pack.getDest()}, /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(forall.getBody());
  Value i = forall.getInductionVar(0);
  Value out = forall.getRegionIterArgs()[0];
  // This n-block's panels, [KB, PK, PN].
  OpFoldResult one = rewriter.getIndexAttr(1), z = rewriter.getIndexAttr(0);
  auto sliceType = RankedTensorType::get({kb, pk, pn}, elt);
  Value slice = tensor::ExtractSliceOp::create(
      rewriter, loc, sliceType, out, ArrayRef<OpFoldResult>{i, z, z, z},
      ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(kb),
                             rewriter.getIndexAttr(pk),
                             rewriter.getIndexAttr(pn)},
      ArrayRef<OpFoldResult>{one, one, one, one});
  Value rowBase = arith::MulIOp::create(rewriter, loc, i, idx(pn));
  auto loop = [&](int64_t n, int64_t step, Value init,
                  function_ref<Value(Value, Value)> body) {
    auto f = scf::ForOp::create(
        rewriter, loc, idx(0), idx(n), idx(step), ValueRange{init},
        [&](OpBuilder &nb, Location, Value iv, ValueRange iter) {
          OpBuilder::InsertionGuard g(rewriter);
          rewriter.setInsertionPoint(nb.getInsertionBlock(),
                                     nb.getInsertionPoint());
          scf::YieldOp::create(rewriter, loc, body(iv, iter[0]));
        });
    return f.getResult(0);
  };
  Value filled = loop(kb, 1, slice, [&](Value j, Value acc) {
    Value colBase = arith::MulIOp::create(rewriter, loc, j, idx(pk));
    return loop(pk, v, acc, [&](Value k0, Value acc2) {
      return loop(pn, v, acc2, [&](Value n0, Value acc3) {
        // W[rowBase + n0 : +V, colBase + k0 : +V], zero past W.
        Value r = arith::AddIOp::create(rewriter, loc, rowBase, n0);
        Value c = arith::AddIOp::create(rewriter, loc, colBase, k0);
        Value wb = vector::TransferReadOp::create(rewriter, loc, block, w,
                                                  ValueRange{r, c}, zero,
                                                  ArrayRef<bool>{false, false});
        if (elt != f32)
          wb = arith::ExtFOp::create(rewriter, loc, wideBlock, wb);
        if (gain) {
          Value g = vector::TransferReadOp::create(
              rewriter, loc, VectorType::get({v}, f32), gain, ValueRange{c},
              zeroF32, ArrayRef<bool>{false});
          wb = arith::MulFOp::create(
              rewriter, loc, wb,
              vector::BroadcastOp::create(rewriter, loc, wideBlock, g));
        }
        Value t = vector::TransposeOp::create(rewriter, loc, wb, {1, 0});
        if (elt != f32)
          t = arith::TruncFOp::create(rewriter, loc, block, t);
        return vector::TransferWriteOp::create(rewriter, loc, t, acc3,
                                               ValueRange{j, k0, n0},
                                               ArrayRef<bool>{true, true})
            .getResult();
      });
    });
  });
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, filled, out, ArrayRef<OpFoldResult>{i, z, z, z},
      ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(kb),
                             rewriter.getIndexAttr(pk),
                             rewriter.getIndexAttr(pn)},
      ArrayRef<OpFoldResult>{one, one, one, one});
  Operation *producer = pack.getSource().getDefiningOp();
  rewriter.replaceOp(pack, forall.getResults());
  if (gain && producer->use_empty())
    rewriter.eraseOp(producer);
  return success();
}

struct CPUPrepareWeightsPass
    : blockc::cpu::impl::CPUPrepareWeightsPassBase<CPUPrepareWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          !func->hasAttr(CodegenDialect::kPrepareForAttrName) &&
          SymbolTable::symbolKnownUseEmpty(func, module))
        entries.push_back(func);
    for (func::FuncOp entry : entries)
      if (failed(prepare(entry, symbols)))
        return signalPassFailure();

    // Lower every marked pack that is left (in prepare functions, and those
    // that still pack per call).
    SmallVector<linalg::PackOp> packs;
    module.walk([&](linalg::PackOp pack) {
      if (pack->hasAttr(CodegenDialect::kPreparedAttrName))
        packs.push_back(pack);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::PackOp pack : packs) {
      // Vector code with the function's vector width; anything else (or a
      // function without a target) through upstream's pad + transpose.
      auto func = pack->getParentOfType<func::FuncOp>();
      auto target = func ? func->getAttrOfType<codegen::CPUTargetAttr>(
                               CodegenDialect::kCpuTargetAttrName)
                         : codegen::CPUTargetAttr();
      if (target &&
          succeeded(lowerPackedWeight(rewriter, pack, target.getVectorWidth())))
        continue;
      rewriter.setInsertionPoint(pack);
      if (failed(linalg::lowerPack(rewriter, pack))) {
        pack.emitOpError("blockc-cpu-prepare-weights could not lower it");
        return signalPassFailure();
      }
    }
  }

  LogicalResult prepare(func::FuncOp entry, SymbolTable &symbols) {
    Block *body = &entry.getBody().front();
    SmallVector<Prepared> moves;
    DenseSet<unsigned> packedArgs;
    for (Operation &op : *body) {
      Attribute layout = op.getAttr(CodegenDialect::kPreparedAttrName);
      auto pack = dyn_cast<DestinationStyleOpInterface>(&op);
      if (!layout || !pack || pack.getNumDpsInits() != 1 ||
          !isa<codegen::PackedWeightAttr, codegen::QuantizedWeightAttr>(layout))
        continue;
      Prepared p{pack, layout, 0, {}, {}};
      if (failed(collectSlice(pack, body, p))) {
        ++numLeft;
        continue;
      }
      // A quantisation reads one weight (whatever its ops' operands); a
      // pack, the weight its source chain starts from.
      BlockArgument arg;
      if (isa<linalg::PackOp>(&op))
        arg = packedArgument(pack, body);
      else if (p.leaves.size() == 1)
        arg = body->getArgument(p.leaves.front());
      if (!arg || !packedArgs.insert(arg.getArgNumber()).second) {
        ++numLeft;
        continue;
      }
      p.argIndex = arg.getArgNumber();
      moves.push_back(std::move(p));
    }
    // A packed weight argument must have no use outside its own slice (a
    // use in a region counts as its top-level op's).
    llvm::erase_if(moves, [&](Prepared &p) {
      for (OpOperand &use : body->getArgument(p.argIndex).getUses())
        if (!p.slice.contains(body->findAncestorOpInBlock(*use.getOwner()))) {
          ++numLeft;
          return true;
        }
      return false;
    });
    if (moves.empty())
      return success();
    llvm::sort(moves, [](const Prepared &a, const Prepared &b) {
      return a.argIndex < b.argIndex;
    });

    std::string name = (entry.getSymName() + "_prepare").str();
    SmallVector<std::string> partNames;
    for (Prepared &p : moves)
      partNames.push_back(name + "_" + std::to_string(p.argIndex));
    SmallVector<std::string> names = {name};
    llvm::append_range(names, partNames);
    for (StringRef n : names)
      if (symbols.lookup(n))
        return entry.emitError()
               << "blockc-cpu-prepare-weights: a function named '" << n
               << "' already exists";

    // One part per prepared weight, which makes it alone (so that a caller
    // can release each original as soon as its prepared form exists), and
    // @E_prepare, which calls every part in turn.
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    b.setInsertionPointAfter(entry);
    Location loc = entry.getLoc();
    SmallVector<const Prepared *> all;
    for (Prepared &p : moves)
      all.push_back(&p);
    func::FuncOp prepare = createPrepareFunction(b, entry, name, all);
    // A string, not a symbol reference: the entry must stay an entry (no
    // symbol uses) for the passes that look for callers.
    prepare->setAttr(CodegenDialect::kPrepareForAttrName,
                     entry.getSymNameAttr());
    SmallVector<func::FuncOp> parts;
    for (auto [p, partName] : llvm::zip_equal(moves, partNames)) {
      b.setInsertionPointAfter(parts.empty() ? prepare : parts.back());
      func::FuncOp part = createPrepareFunction(b, entry, partName, {&p});
      part->setAttr(CodegenDialect::kPreparePartOfAttrName,
                    b.getStringAttr(name));
      Block *partBody = &part.getBody().front();
      unsigned numInputs = part.getNumArguments() - 1;
      IRMapping map;
      for (auto [j, i] : llvm::enumerate(sortedLeaves({&p})))
        map.map(body->getArgument(i), partBody->getArgument(j));
      b.setInsertionPointToStart(partBody);
      for (Operation *op : p.slice)
        b.clone(*op, map);
      auto pack =
          cast<DestinationStyleOpInterface>(map.lookup(p.pack.getOperation()));
      pack.getDpsInitsMutable()[0].assign(partBody->getArgument(numInputs));
      func::ReturnOp::create(b, loc, pack->getResult(0));
      parts.push_back(part);
    }
    Block *prepBody = &prepare.getBody().front();
    SmallVector<unsigned> order = sortedLeaves(all);
    b.setInsertionPointToStart(prepBody);
    SmallVector<Value> results;
    for (auto [j, part] : llvm::enumerate(parts)) {
      SmallVector<Value> operands;
      for (unsigned i : sortedLeaves({&moves[j]}))
        operands.push_back(
            prepBody->getArgument(llvm::find(order, i) - order.begin()));
      operands.push_back(prepBody->getArgument(order.size() + j));
      results.push_back(
          func::CallOp::create(b, loc, part, operands).getResult(0));
    }
    func::ReturnOp::create(b, loc, results);

    // The entry reads the prepared weights from the packed arguments.
    for (Prepared &p : moves) {
      BlockArgument arg = body->getArgument(p.argIndex);
      Value packed = p.pack->getResult(0);
      arg.setType(packed.getType());
      packed.replaceAllUsesWith(arg);
      entry.setArgAttr(p.argIndex, CodegenDialect::kPreparedAttrName, p.layout);
      ++numPrepared;
    }
    // Erase the moved computation (in reverse order, what is now unused).
    SetVector<Operation *> moved;
    for (Prepared &p : moves)
      moved.insert(p.slice.begin(), p.slice.end());
    SmallVector<Operation *> reversed;
    for (Operation &op : *body)
      if (moved.contains(&op))
        reversed.push_back(&op);
    for (Operation *op : llvm::reverse(reversed))
      if (op->use_empty())
        op->erase();
    SmallVector<Type> newArgs(body->getArgumentTypes());
    entry.setType(
        FunctionType::get(ctx, newArgs, entry.getFunctionType().getResults()));
    for (func::FuncOp part : parts)
      symbols.insert(part);
    symbols.insert(prepare);
    return success();
  }
};

} // namespace
