//===- Outlining.cpp - outlined functions and their equality --------------===//
//
// See blockc/Codegen/Common/Outlining.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Outlining.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/OperationSupport.h"

using namespace mlir;

bool blockc::isClonableConstant(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

func::FuncOp blockc::createOutlinedFunction(OpBuilder &b, Location loc,
                                            StringRef name, TypeRange inputs,
                                            Operation *after,
                                            SymbolTable &symbols) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(after);
  auto func = func::FuncOp::create(b, loc, name, b.getFunctionType(inputs, {}));
  func.setPrivate();
  func.setNoInline(true);
  // What func-to-llvm carries over: internal linkage (no symbol in the
  // object) and LLVM's noinline (func.func's no_inline is not carried).
  MLIRContext *ctx = b.getContext();
  func->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  symbols.insert(func); // uniques the name
  func.addEntryBlock();
  return func;
}

llvm::hash_code blockc::hashFunctionBody(func::FuncOp func) {
  llvm::hash_code hash = llvm::hash_combine(
      func.getFunctionType(), func.getArgAttrsAttr(), func.getResAttrsAttr());
  func.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool blockc::areEquivalentFunctions(func::FuncOp a, func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      a.getArgAttrsAttr() != b.getArgAttrsAttr() ||
      a.getResAttrsAttr() != b.getResAttrsAttr() ||
      a.getNoInline() != b.getNoInline() ||
      a->getDiscardableAttrDictionary() != b->getDiscardableAttrDictionary())
    return false;
  return OperationEquivalence::isRegionEquivalentTo(
      &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}
