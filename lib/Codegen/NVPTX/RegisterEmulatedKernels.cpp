//===- RegisterEmulatedKernels.cpp - emulated kernels known at start-up ---===//
//
// Emits the global constructor and destructor that register the host
// functions of emulated kernels with the emulator runtime. See
// Codegen/NVPTX/Passes.td (GPURegisterEmulatedKernelsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Runtime/EmulatorRuntime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringMap.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUREGISTEREMULATEDKERNELSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using blockc::codegen::CodegenDialect;
using blockc::codegen::EmulatedKernelAttr;

namespace {

/// Runs before the constructors of gpu.binary (module loads).
constexpr int32_t kRegisterPriority = 101;

ArrayAttr getFunctions(LLVM::GlobalCtorsOp op) { return op.getCtors(); }
ArrayAttr getFunctions(LLVM::GlobalDtorsOp op) { return op.getDtors(); }

/// Appends `fn` with `priority` to the module's llvm.mlir.global_ctors (or
/// _dtors), creating the op if needed.
template <typename GlobalOp>
void appendToGlobalList(ModuleOp module, LLVM::LLVMFuncOp fn,
                        int32_t priority) {
  MLIRContext *ctx = module.getContext();
  SmallVector<Attribute> fns, priorities, data;
  GlobalOp existing;
  for (auto op : module.getOps<GlobalOp>())
    existing = op;
  if (existing) {
    llvm::append_range(fns, getFunctions(existing));
    llvm::append_range(priorities, existing.getPriorities());
    llvm::append_range(data, existing.getData());
  }
  fns.push_back(FlatSymbolRefAttr::get(fn));
  priorities.push_back(IntegerAttr::get(IntegerType::get(ctx, 32), priority));
  data.push_back(LLVM::ZeroAttr::get(ctx));
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  GlobalOp::create(b, module.getLoc(), b.getArrayAttr(fns),
                   b.getArrayAttr(priorities), b.getArrayAttr(data));
  if (existing)
    existing.erase();
}

struct GPURegisterEmulatedKernelsPass
    : blockc::nvptx::impl::GPURegisterEmulatedKernelsPassBase<
          GPURegisterEmulatedKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<LLVM::LLVMFuncOp, EmulatedKernelAttr>> kernels;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (auto attr = fn->getAttrOfType<EmulatedKernelAttr>(
              CodegenDialect::kEmulatedKernelAttrName))
        kernels.push_back({fn, attr});
    if (kernels.empty())
      return;

    MLIRContext *ctx = &getContext();
    Location loc = module.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    Type voidType = LLVM::LLVMVoidType::get(ctx);
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto declare = [&](StringRef name, ArrayRef<Type> args) {
      if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
        return fn;
      return LLVM::LLVMFuncOp::create(
          mb, loc, name, LLVM::LLVMFunctionType::get(voidType, args));
    };
    LLVM::LLVMFuncOp registerFn =
        declare("blockcEmuRegisterKernel",
                {ptr, ptr, ptr, i64, i64, i32, i32, i32, i32});
    LLVM::LLVMFuncOp unregisterFn = declare("blockcEmuUnregisterKernel", {ptr});

    auto makeFn = [&](StringRef name) {
      auto fn = LLVM::LLVMFuncOp::create(
          mb, loc, name, LLVM::LLVMFunctionType::get(voidType, {}),
          LLVM::Linkage::Internal);
      fn.addEntryBlock(mb);
      return fn;
    };
    LLVM::LLVMFuncOp ctor = makeFn("__blockc_emu_register");
    LLVM::LLVMFuncOp dtor = makeFn("__blockc_emu_unregister");
    OpBuilder cb = OpBuilder::atBlockBegin(&ctor.getBody().front());
    OpBuilder db = OpBuilder::atBlockBegin(&dtor.getBody().front());
    unsigned counter = 0;
    llvm::StringMap<Value> strings;
    auto cstring = [&](StringRef text) {
      Value &address = strings[text];
      if (!address) {
        std::string value = text.str();
        value.push_back('\0');
        address = LLVM::createGlobalString(
            loc, cb, ("__blockc_emu_name_" + Twine(counter++)).str(), value,
            LLVM::Linkage::Internal);
      }
      return address;
    };
    for (auto [fn, attr] : kernels) {
      auto i32c = [&](int64_t v) -> Value {
        return LLVM::ConstantOp::create(cb, loc, i32, v);
      };
      auto i64c = [&](int64_t v) -> Value {
        return LLVM::ConstantOp::create(cb, loc, i64, v);
      };
      Value address = LLVM::AddressOfOp::create(cb, loc, fn);
      LLVM::CallOp::create(
          cb, loc, registerFn,
          ValueRange{cstring(attr.getModule()), cstring(attr.getKernel()),
                     address, i64c(attr.getStaticShared()),
                     i64c(attr.getMaxShared()),
                     i32c(attr.getSynchronizes() ? BLOCKC_EMU_SYNCHRONIZES : 0),
                     i32c(attr.getBlockX()), i32c(attr.getBlockY()),
                     i32c(attr.getBlockZ())});
      Value dtorAddress = LLVM::AddressOfOp::create(db, loc, fn);
      LLVM::CallOp::create(db, loc, unregisterFn, ValueRange{dtorAddress});
      // The attribute is consumed: the LLVM IR translation does not know
      // blockc_codegen.
      fn->removeAttr(CodegenDialect::kEmulatedKernelAttrName);
    }
    LLVM::ReturnOp::create(cb, loc, ValueRange{});
    LLVM::ReturnOp::create(db, loc, ValueRange{});
    appendToGlobalList<LLVM::GlobalCtorsOp>(module, ctor, kRegisterPriority);
    appendToGlobalList<LLVM::GlobalDtorsOp>(module, dtor, kRegisterPriority);
  }
};

} // namespace
