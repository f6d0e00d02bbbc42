//===- OpenMPIABI.cpp - Open MPI fixes of the MPI lowering ----------------===//
//
// See Codegen/Common/Passes.td (OpenMPIABIPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"

namespace blockc {
#define GEN_PASS_DEF_OPENMPIABIPASS
#include "blockc/Codegen/Common/Passes.h.inc"
} // namespace blockc

using namespace mlir;

namespace {

/// Open MPI's predefined reduction ops (mpi.h: MPI_SUM is
/// &ompi_mpi_op_sum): the names MLIR's lowering uses, without "ompi_mpi_".
bool isReductionOp(StringRef name) {
  return llvm::is_contained({"max", "min", "sum", "prod", "land", "band", "lor",
                             "bor", "lxor", "bxor", "minloc", "maxloc",
                             "replace"},
                            name);
}

/// Open MPI's MPI_IN_PLACE (mpi.h: ((void *) 1)).
constexpr int64_t kOpenMPIInPlace = 1;

struct OpenMPIABIPass : blockc::impl::OpenMPIABIPassBase<OpenMPIABIPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // In-place all-reduces: the send buffer becomes MPI_IN_PLACE.
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee || *callee != "MPI_Allreduce" || call.getNumOperands() < 2 ||
          call.getOperand(0) != call.getOperand(1))
        return;
      OpBuilder b(call);
      Value one =
          LLVM::ConstantOp::create(b, call.getLoc(), b.getI64Type(),
                                   b.getI64IntegerAttr(kOpenMPIInPlace));
      call->setOperand(0, LLVM::IntToPtrOp::create(b, call.getLoc(),
                                                   call.getOperand(0).getType(),
                                                   one));
    });
    for (auto global :
         llvm::make_early_inc_range(module.getOps<LLVM::GlobalOp>())) {
      StringRef name = global.getSymName();
      bool declaration = global.getLinkage() == LLVM::Linkage::External &&
                         !global.getValueOrNull() &&
                         global.getInitializerRegion().empty();
      if (!declaration || !name.starts_with("ompi_mpi_") ||
          !isReductionOp(name.drop_front(strlen("ompi_mpi_"))))
        continue;
      std::string renamed =
          ("ompi_mpi_op_" + name.drop_front(strlen("ompi_mpi_"))).str();
      if (failed(SymbolTable::replaceAllSymbolUses(
              global, StringAttr::get(&getContext(), renamed), module)))
        return signalPassFailure();
      // Two lowerings may have declared it already.
      if (module.lookupSymbol(renamed))
        global.erase();
      else
        SymbolTable::setSymbolName(global, renamed);
    }
  }
};

} // namespace
