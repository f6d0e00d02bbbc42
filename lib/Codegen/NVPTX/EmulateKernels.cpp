//===- EmulateKernels.cpp - GPU kernels as host functions for the emulator ===//
//
// Moves every kernel of every gpu.module into a host function that runs one
// GPU thread on the emulator runtime (include/blockc/Runtime/
// EmulatorRuntime.h) and replaces each gpu.module by a gpu.binary whose
// object names it for the runtime's mgpuModuleLoad. See
// Codegen/NVPTX/Passes.td (GPUEmulateKernelsPass) and docs/GPUEmulator.md.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Codegen/IR/FragmentOps.h"
#include "blockc/Runtime/EmulatorRuntime.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

#include <cstddef>
#include <type_traits>

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUEMULATEKERNELSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using blockc::codegen::CodegenDialect;
using blockc::codegen::EmulatedKernelAttr;

namespace {

/// The flags of blockcEmuAccess.
constexpr int64_t kAccessStore = BLOCKC_EMU_ACCESS_STORE;
constexpr int64_t kAccessShared = BLOCKC_EMU_ACCESS_SHARED;
constexpr int64_t kAccessConstant = BLOCKC_EMU_ACCESS_CONSTANT;
constexpr int64_t kAccessCheck = BLOCKC_EMU_ACCESS_CHECK;
constexpr int64_t kAccessUncounted = BLOCKC_EMU_ACCESS_UNCOUNTED;

/// Byte offsets of the BlockcEmuThread fields that kernels load: each an
/// int32_t (threadField), the dimensions x, y, z of a vector 4 bytes apart.
constexpr int64_t kThreadIdOffset = offsetof(BlockcEmuThread, threadId);
constexpr int64_t kBlockIdOffset = offsetof(BlockcEmuThread, blockId);
constexpr int64_t kBlockDimOffset = offsetof(BlockcEmuThread, blockDim);
constexpr int64_t kGridDimOffset = offsetof(BlockcEmuThread, gridDim);
constexpr int64_t kLaneIdOffset = offsetof(BlockcEmuThread, laneId);
template <typename Field> constexpr bool isI32Vector(int64_t lanes) {
  return std::is_same_v<std::remove_all_extents_t<Field>, int32_t> &&
         sizeof(Field) == lanes * sizeof(int32_t);
}
static_assert(isI32Vector<decltype(BlockcEmuThread::threadId)>(3) &&
                  isI32Vector<decltype(BlockcEmuThread::blockId)>(3) &&
                  isI32Vector<decltype(BlockcEmuThread::blockDim)>(3) &&
                  isI32Vector<decltype(BlockcEmuThread::gridDim)>(3) &&
                  isI32Vector<decltype(BlockcEmuThread::laneId)>(1),
              "the kernels load BlockcEmuThread's ids as int32_t values");

/// `type` without a memory space (#gpu.address_space or numeric: the host
/// has one address space).
Type stripAddressSpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.getMemorySpace())
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout(), Attribute());
}

/// The host type of a kernel value: memrefs lose their memory space, and
/// the Hopper nvgpu types become what the emulator passes around: an
/// mbarrier group and a TMA tensor map are pointers (into the block's shared
/// memory, to the runtime's map), a warpgroup matrix descriptor is its
/// 64-bit encoding, and a warpgroup accumulator of 64 x N f32 is this
/// thread's N / 2 floats (the PTX ISA's fragment; checkNVGPUOp rejects other
/// shapes).
Type hostType(Type type) {
  MLIRContext *ctx = type.getContext();
  if (isa<nvgpu::MBarrierGroupType, nvgpu::TensorMapDescriptorType>(type))
    return LLVM::LLVMPointerType::get(ctx);
  if (isa<nvgpu::WarpgroupMatrixDescriptorType>(type))
    return IntegerType::get(ctx, 64);
  if (auto acc = dyn_cast<nvgpu::WarpgroupAccumulatorType>(type)) {
    VectorType fragmented = acc.getFragmented();
    return VectorType::get({fragmented.getDimSize(1) / 2},
                           fragmented.getElementType());
  }
  return stripAddressSpace(type);
}

/// "file:line:col" of the first file location inside `loc`.
std::string describeLocation(Location loc) {
  std::string text = "an unknown location";
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// The runtime functions the emulated kernels call, declared once.
struct RuntimeDecls {
  func::FuncOp barrier, namedBarrier, shuffle32, outOfBounds, access, flops,
      ldMatrix, mma, cpAsync, cpAsyncCommit, cpAsyncWait, mbarrierInit,
      mbarrierArrive, mbarrierTryWaitParity, tmaLoad, tmaStore, bulkCommit,
      bulkWait, fenceProxyAsync, wgmma, wgmmaCommit, wgmmaWait, wgmmaRead,
      wgmmaWrite;

  static func::FuncOp declare(ModuleOp module, StringRef name,
                              FunctionType type) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
    fn.setPrivate();
    return fn;
  }

  explicit RuntimeDecls(ModuleOp module) {
    MLIRContext *ctx = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    barrier = declare(module, "blockcEmuBarrier",
                      FunctionType::get(ctx, {ptr, ptr}, {}));
    namedBarrier = declare(module, "blockcEmuNamedBarrier",
                           FunctionType::get(ctx, {ptr, i32, i32, ptr}, {}));
    shuffle32 =
        declare(module, "blockcEmuShuffle32",
                FunctionType::get(ctx, {ptr, i32, i32, i32, i32, ptr}, {i64}));
    outOfBounds =
        declare(module, "blockcEmuOutOfBounds",
                FunctionType::get(ctx, {ptr, ptr, i64, i64, i64}, {}));
    access =
        declare(module, "blockcEmuAccess",
                FunctionType::get(ctx, {ptr, i32, ptr, i32, i32, ptr}, {}));
    flops = declare(module, "blockcEmuFlops",
                    FunctionType::get(ctx, {ptr, i64}, {}));
    ldMatrix =
        declare(module, "blockcEmuLdMatrix",
                FunctionType::get(ctx, {ptr, ptr, ptr, i32, i32, ptr}, {}));
    mma = declare(
        module, "blockcEmuMma",
        FunctionType::get(ctx, {ptr, i32, ptr, ptr, ptr, ptr, ptr}, {}));
    cpAsync =
        declare(module, "blockcEmuCpAsync",
                FunctionType::get(ctx, {ptr, ptr, ptr, i32, i32, ptr}, {}));
    cpAsyncCommit = declare(module, "blockcEmuCpAsyncCommit",
                            FunctionType::get(ctx, {ptr}, {}));
    cpAsyncWait = declare(module, "blockcEmuCpAsyncWait",
                          FunctionType::get(ctx, {ptr, i32, ptr}, {}));
    mbarrierInit = declare(module, "blockcEmuMbarrierInit",
                           FunctionType::get(ctx, {ptr, ptr, i32, ptr}, {}));
    mbarrierArrive = declare(module, "blockcEmuMbarrierArrive",
                             FunctionType::get(ctx, {ptr, ptr, i32, ptr}, {}));
    mbarrierTryWaitParity =
        declare(module, "blockcEmuMbarrierTryWaitParity",
                FunctionType::get(ctx, {ptr, ptr, i32, ptr}, {}));
    tmaLoad = declare(
        module, "blockcEmuTmaLoad",
        FunctionType::get(ctx, {ptr, ptr, ptr, i32, ptr, ptr, ptr}, {}));
    tmaStore =
        declare(module, "blockcEmuTmaStore",
                FunctionType::get(ctx, {ptr, ptr, ptr, i32, ptr, ptr}, {}));
    bulkCommit = declare(module, "blockcEmuBulkCommit",
                         FunctionType::get(ctx, {ptr, ptr}, {}));
    bulkWait = declare(module, "blockcEmuBulkWait",
                       FunctionType::get(ctx, {ptr, i32, ptr}, {}));
    fenceProxyAsync = declare(module, "blockcEmuFenceProxyAsync",
                              FunctionType::get(ctx, {ptr, ptr}, {}));
    wgmmaCommit = declare(module, "blockcEmuWgmmaCommit",
                          FunctionType::get(ctx, {ptr, i32, ptr}, {}));
    wgmmaWait = declare(module, "blockcEmuWgmmaWait",
                        FunctionType::get(ctx, {ptr, i32, ptr}, {}));
    wgmmaRead = declare(module, "blockcEmuWgmmaRead",
                        FunctionType::get(ctx, {ptr, i32, ptr}, {}));
    wgmmaWrite = declare(module, "blockcEmuWgmmaWrite",
                         FunctionType::get(ctx, {ptr, i32, ptr}, {}));
    wgmma = declare(
        module, "blockcEmuWgmma",
        FunctionType::get(
            ctx, {ptr, i32, i64, i64, i32, i32, i32, ptr, i32, ptr}, {}));
  }
};

/// Rewrites one kernel into its host function.
class KernelEmulation {
public:
  KernelEmulation(gpu::GPUFuncOp kernel, StringRef moduleToken,
                  const RuntimeDecls &runtime,
                  blockc::codegen::GPUTargetAttr target, bool checkBounds,
                  bool profile, unsigned &siteCounter)
      : kernel(kernel), moduleToken(moduleToken), runtime(runtime),
        target(target), checkBounds(checkBounds), profile(profile),
        siteCounter(siteCounter), ctx(kernel.getContext()),
        ptrType(LLVM::LLVMPointerType::get(ctx)),
        i8Type(IntegerType::get(ctx, 8)), i32Type(IntegerType::get(ctx, 32)),
        i64Type(IntegerType::get(ctx, 64)) {}

  LogicalResult run(ModuleOp module);

private:
  LogicalResult checkOps();
  Value threadField(OpBuilder &b, Location loc, int64_t offset);
  Value loadParam(OpBuilder &b, Location loc, Type type);
  Value unpackMemRef(OpBuilder &b, Location loc, MemRefType type,
                     std::function<Value(Type)> next);
  /// A global string naming `op` for the runtime's messages. Sync points
  /// are told apart by the string's address: `numbered` gives a second op
  /// at the same location a numbered text; access hooks need no such
  /// distinction.
  Value siteString(OpBuilder &b, Operation *op, StringRef what,
                   bool numbered = true);
  Value getSharedBuffer(OpBuilder &b, Location loc);
  void replaceGPUOps();
  LogicalResult checkNVGPUOp(Operation *op);
  Value address(OpBuilder &b, Location loc, Value memref, ValueRange indices);
  Value scratch(Type elem, int64_t size, unsigned slot = 0);
  Value spill(OpBuilder &b, Location loc, Value vector, unsigned slot = 0);
  Value reload(OpBuilder &b, Location loc, Value buffer, VectorType type);
  void replaceNVGPUOps();
  void replaceWarpgroupOp(Operation *op);
  Value linearThreadId(OpBuilder &b, Location loc);
  void insertBoundsChecks();
  void numberAccumulators();
  Value accumulatorId(OpBuilder &b, Location loc, Operation *op);
  void classifyAccesses();
  void insertAccessHooks();
  void insertFlopCounts();

  gpu::GPUFuncOp kernel;
  std::string moduleToken;
  const RuntimeDecls &runtime;
  blockc::codegen::GPUTargetAttr target;
  bool checkBounds;
  bool profile;
  /// The global and shared memory accesses of the kernel and their
  /// BLOCKC_EMU_ACCESS_* flags (classified by memory space before the
  /// spaces are dropped); private memory is not listed.
  llvm::MapVector<Operation *, int32_t> accessFlags;
  /// The flags of each nvgpu.warpgroup.mma.store's element stores.
  DenseMap<Operation *, int32_t> warpgroupStoreFlags;
  /// Whether the kernel issues warpgroup MMAs: its shared stores are then
  /// checked against the shared memory that wgmma groups in flight read.
  bool hasWgmma = false;
  /// The number of the accumulator (numberAccumulators) that each
  /// warpgroup MMA, accumulator init, store and fragment op reads or
  /// writes.
  DenseMap<Operation *, int32_t> accumulatorIds;
  unsigned &siteCounter;
  MLIRContext *ctx;
  Type ptrType, i8Type, i32Type, i64Type;

  func::FuncOp host;
  Value params, thread, shared, sharedBytes;
  /// How often each site text was used in this kernel.
  llvm::StringMap<unsigned> siteTexts;
  /// The block's shared memory as a memref<?xi8>, built once.
  Value sharedBuffer;
  /// Bytes of the workgroup attributions and mbarriers (dynamic shared
  /// memory follows).
  int64_t staticSharedBytes = 0;
  /// The shared-memory offset of each nvgpu.mbarrier.create's barriers.
  DenseMap<Operation *, int64_t> mbarrierOffsets;
  /// What the Hopper ops' types say (read before the values are retyped):
  /// per warpgroup.generate.descriptor {swizzle width, mode, rows of the
  /// map's box}; per warpgroup.mma {element bytes, N, k steps (k16, or
  /// one k8 for tf32), multiplicand type (emu::MmaType: 0 bf16, 1 f16, 2
  /// tf32), rows of B's tensor}.
  DenseMap<Operation *, SmallVector<int64_t>> hopperTypes;
  int64_t paramSlot = 0;
  bool synchronizes = false;
  /// Stack buffers of the entry block that carry fragments to and from the
  /// runtime, one per (element type, size, slot): the operands of one call
  /// that have the same type and size (tf32 mma.sync's A and C: 4 f32 each)
  /// take different slots.
  DenseMap<std::tuple<Type, int64_t, unsigned>, Value> scratchBuffers;
};

/// The block's shared memory (static, then dynamic) as a memref<?xi8>,
/// built once, at `b`'s insertion point in the entry block.
Value KernelEmulation::getSharedBuffer(OpBuilder &b, Location loc) {
  if (sharedBuffer)
    return sharedBuffer;
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
  SmallVector<Value> fields = {shared, shared, zero, sharedBytes, one};
  unsigned field = 0;
  sharedBuffer =
      unpackMemRef(b, loc, MemRefType::get({ShapedType::kDynamic}, i8Type),
                   [&](Type) { return fields[field++]; });
  return sharedBuffer;
}

/// The nvgpu ops the emulator models, with the forms it supports.
LogicalResult KernelEmulation::checkNVGPUOp(Operation *op) {
  auto fail = [&](const Twine &what) {
    return op->emitError() << "the GPU emulator " << what << " (kernel '"
                           << kernel.getName() << "')";
  };
  auto isSixteen = [](Type t) { return t.isBF16() || t.isF16(); };
  if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    auto type = cast<VectorType>(ld.getRes().getType());
    // Two 16-bit or one 32-bit element per register (the data movement is
    // the same: b16 pairs).
    Type elem = type.getElementType();
    int64_t perRegister = isSixteen(elem) ? 2 : elem.isF32() ? 1 : 0;
    if (!perRegister || type.getRank() != 2 ||
        type.getDimSize(1) != perRegister ||
        type.getDimSize(0) != ld.getNumTiles() ||
        (ld.getTranspose() && perRegister == 1))
      return fail("models ldmatrix into vector<tiles x 2 x bf16/f16> or "
                  "(not transposed) vector<tiles x 1 x f32> only");
    return success();
  }
  if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
    Type elem = getElementTypeOrSelf(mma.getMatrixA().getType());
    auto shape = [](Value v) {
      return cast<VectorType>(v.getType()).getShape();
    };
    bool sixteen =
        mma.getMmaShapeAsArray() == std::array<int64_t, 3>{16, 8, 16} &&
        isSixteen(elem) && shape(mma.getMatrixA()) == ArrayRef<int64_t>{4, 2} &&
        shape(mma.getMatrixB()) == ArrayRef<int64_t>{2, 2};
    bool tf32 = mma.getMmaShapeAsArray() == std::array<int64_t, 3>{16, 8, 8} &&
                elem.isF32() && mma.getTf32EnabledAttr() &&
                shape(mma.getMatrixA()) == ArrayRef<int64_t>{4, 1} &&
                shape(mma.getMatrixB()) == ArrayRef<int64_t>{2, 1};
    if ((!sixteen && !tf32) ||
        !getElementTypeOrSelf(mma.getMatrixC().getType()).isF32() ||
        shape(mma.getMatrixC()) != ArrayRef<int64_t>{2, 2})
      return fail("models mma.sync m16n8k16 with bf16 or f16 multiplicands "
                  "and m16n8k8 with tf32 multiplicands (tf32Enabled), with "
                  "f32 accumulators, only");
    return success();
  }
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    // The token may only feed groups (and a group's token only waits): a
    // token carried through a loop or a branch is not modelled.
    for (Operation *user : copy.getAsyncToken().getUsers())
      if (!isa<nvgpu::DeviceAsyncCreateGroupOp>(user))
        return fail("models cp.async tokens used by "
                    "nvgpu.device_async_create_group only");
    return success();
  }
  if (auto group = dyn_cast<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
    for (Operation *user : group.getAsyncToken().getUsers())
      if (!isa<nvgpu::DeviceAsyncWaitOp>(user))
        return fail("models cp.async group tokens used by "
                    "nvgpu.device_async_wait only");
    return success();
  }
  if (isa<nvgpu::DeviceAsyncWaitOp>(op))
    return success();
  // Hopper: mbarriers in shared memory, TMA loads from maps passed as kernel
  // arguments, warpgroup MMAs on 64-row f32 accumulators.
  if (auto create = dyn_cast<nvgpu::MBarrierCreateOp>(op)) {
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        create.getBarriers().getType().getMemorySpace());
    if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
      return fail("models mbarriers in workgroup (shared) memory only");
    return success();
  }
  if (isa<nvgpu::MBarrierInitOp, nvgpu::MBarrierArriveExpectTxOp,
          nvgpu::MBarrierTryWaitParityOp>(op))
    return success();
  if (auto gen = dyn_cast<nvgpu::WarpgroupGenerateDescriptorOp>(op)) {
    nvgpu::TensorMapDescriptorType map = gen.getTensorMap().getType();
    int64_t width = 1, mode = 0;
    switch (map.getSwizzle()) {
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B:
      width = 128;
      mode = 1;
      break;
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B:
      width = 64;
      mode = 2;
      break;
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B:
      width = 32;
      mode = 3;
      break;
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE:
      break;
    }
    hopperTypes[op] = {width, mode, map.getTensor().getDimSize(0)};
    return success();
  }
  if (auto load = dyn_cast<nvgpu::TmaAsyncLoadOp>(op)) {
    if (load.getMulticastMask())
      return fail("does not model TMA multicast (clusters)");
    return success();
  }
  if (isa<nvgpu::TmaAsyncStoreOp>(op))
    return success();
  auto isWarpgroupAcc = [](Type type) {
    VectorType v = cast<nvgpu::WarpgroupAccumulatorType>(type).getFragmented();
    return v.getDimSize(0) == 64 && v.getElementType().isF32();
  };
  if (isa<nvgpu::WarpgroupMmaInitAccumulatorOp, nvgpu::WarpgroupMmaOp,
          nvgpu::WarpgroupMmaStoreOp>(op)) {
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults()))
      if (isa<nvgpu::WarpgroupAccumulatorType>(v.getType()) &&
          !isWarpgroupAcc(v.getType()))
        return fail("models warpgroup accumulators of 64 x N f32 only (one "
                    "m64 wgmma per warpgroup)");
    if (auto mma = dyn_cast<nvgpu::WarpgroupMmaOp>(op)) {
      MemRefType aTensor = mma.getDescriptorA().getType().getTensor();
      MemRefType bTensor = mma.getDescriptorB().getType().getTensor();
      Type a = aTensor.getElementType(), b = bTensor.getElementType();
      if (!(isSixteen(a) || a.isTF32()) || a != b)
        return fail("models warpgroup MMA with bf16, f16 or tf32 "
                    "multiplicands only");
      // tf32 (32-bit words in shared memory): one m64nNk8 per op, as the
      // kernels build it (convert-nvgpu-to-nvvm advances a descriptor by
      // the element type's bit width / 8, 19 / 8 bytes for tf32).
      if (a.isTF32() && aTensor.getDimSize(1) != 8)
        return fail("models tf32 warpgroup MMA of one k8 step per op only");
      // {element bytes, N, k steps, multiplicand type (emu::MmaType), rows
      // of B's tensor}
      hopperTypes[op] = {a.isTF32() ? 4 : aTensor.getElementTypeBitWidth() / 8,
                         bTensor.getDimSize(1),
                         a.isTF32() ? 1 : aTensor.getDimSize(1) / 16,
                         a.isTF32()   ? 2
                         : a.isBF16() ? 0
                                      : 1,
                         bTensor.getDimSize(0)};
    }
    return success();
  }
  return fail("does not model '" + op->getName().getStringRef() + "'");
}

Value KernelEmulation::address(OpBuilder &b, Location loc, Value memref,
                               ValueRange indices) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = meta.getOffset();
  for (auto [index, stride] : llvm::zip(indices, meta.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  int64_t bytes = llvm::divideCeil(
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth(), 8);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value at = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, linear,
                            arith::ConstantIndexOp::create(b, loc, bytes)));
  Value integer = arith::IndexCastUIOp::create(b, loc, i64Type, at);
  return LLVM::IntToPtrOp::create(b, loc, ptrType, integer);
}

Value KernelEmulation::scratch(Type elem, int64_t size, unsigned slot) {
  Value &buffer = scratchBuffers[{elem, size, slot}];
  if (!buffer) {
    OpBuilder b = OpBuilder::atBlockBegin(&host.getBody().front());
    buffer = memref::AllocaOp::create(b, host.getLoc(),
                                      MemRefType::get({size}, elem));
  }
  return buffer;
}

Value KernelEmulation::spill(OpBuilder &b, Location loc, Value vector,
                             unsigned slot) {
  auto type = cast<VectorType>(vector.getType());
  int64_t n = type.getNumElements();
  Value buffer = scratch(type.getElementType(), n, slot);
  Value flat = vector::ShapeCastOp::create(
      b, loc, VectorType::get({n}, type.getElementType()), vector);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  vector::StoreOp::create(b, loc, flat, buffer, ValueRange{zero});
  return address(b, loc, buffer, ValueRange{zero});
}

Value KernelEmulation::reload(OpBuilder &b, Location loc, Value buffer,
                              VectorType type) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value flat = vector::LoadOp::create(
      b, loc, VectorType::get({type.getNumElements()}, type.getElementType()),
      buffer, ValueRange{zero});
  return vector::ShapeCastOp::create(b, loc, type, flat);
}

/// ldmatrix and mma.sync become warp collectives of the runtime, cp.async
/// its per-thread copy queue (EmulatorRuntime.h).
void KernelEmulation::replaceNVGPUOps() {
  SmallVector<Operation *> ops;
  SmallVector<Operation *> done;
  host.walk([&](Operation *op) {
    if (op->getDialect() && isa<nvgpu::NVGPUDialect>(op->getDialect()))
      ops.push_back(op);
    // The TMA stores' bulk groups become runtime calls (below), as do
    // async-proxy fences.
    if (isa<NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp>(op))
      done.push_back(op);
    // wgmma.wait_group: the runtime retires all but the newest N groups;
    // the warp-specialised kernels' register reallocation (nothing to do
    // on the host), warp and named barriers.
    if (isa<NVVM::WgmmaWaitGroupSyncOp, NVVM::SetMaxRegisterOp,
            NVVM::SyncWarpOp, NVVM::BarrierOp, NVVM::FenceProxyOp>(op))
      done.push_back(op);
    // Tensor-map arguments (blockc-gpu-lower-tensor-map-args) are pointers
    // on both sides of their casts now.
    if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
        cast && cast->getNumOperands() == 1 && cast->getNumResults() == 1 &&
        cast.getOperand(0).getType() == cast.getResult(0).getType()) {
      cast.getResult(0).replaceAllUsesWith(cast.getOperand(0));
      done.push_back(op);
    }
  });
  // A warpgroup accumulator is this thread's fragment already (hostType):
  // reading it is the check that its wgmma groups were waited for, then the
  // value itself; writing it is the value.
  host.walk([&](blockc::codegen::AccumulatorToFragmentOp op) {
    synchronizes = true;
    OpBuilder b(op);
    func::CallOp::create(
        b, op.getLoc(), runtime.wgmmaRead,
        ValueRange{
            thread, accumulatorId(b, op.getLoc(), op),
            siteString(b, op, "blockc_codegen.accumulator_to_fragment")});
    op.getFragment().replaceAllUsesWith(op.getAccumulator());
    done.push_back(op);
  });
  host.walk([&](blockc::codegen::FragmentToAccumulatorOp op) {
    // Writing an accumulator that a wgmma group in flight still writes
    // (O rescaled while P V is in flight) is the same race.
    OpBuilder b(op);
    func::CallOp::create(
        b, op.getLoc(), runtime.wgmmaWrite,
        ValueRange{
            thread, accumulatorId(b, op.getLoc(), op),
            siteString(b, op, "blockc_codegen.fragment_to_accumulator")});
    op.getAccumulator().replaceAllUsesWith(op.getFragment());
    done.push_back(op);
  });
  for (Operation *op : done) {
    if (isa<NVVM::SyncWarpOp>(op)) {
      // A rendezvous of the warp's 32 lanes (checkOps: the full mask): an
      // idx shuffle of lane 0's value, whose result is unused.
      synchronizes = true;
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
      func::CallOp::create(
          b, loc, runtime.shuffle32,
          ValueRange{
              thread, zero, zero, arith::ConstantIntOp::create(b, loc, 32, 32),
              arith::ConstantIntOp::create(
                  b, loc, static_cast<int64_t>(gpu::ShuffleMode::IDX), 32),
              siteString(b, op, "nvvm.bar.warp.sync")});
    } else if (auto bar = dyn_cast<NVVM::BarrierOp>(op)) {
      synchronizes = true;
      OpBuilder b(op);
      func::CallOp::create(b, op->getLoc(), runtime.namedBarrier,
                           ValueRange{thread, bar.getBarrierId(),
                                      bar.getNumberOfThreads(),
                                      siteString(b, op, "nvvm.barrier")});
    }
    if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op);
        fence && (fence.getKind() == NVVM::ProxyKind::async ||
                  fence.getKind() == NVVM::ProxyKind::async_shared)) {
      OpBuilder b(op);
      func::CallOp::create(
          b, op->getLoc(), runtime.fenceProxyAsync,
          ValueRange{thread, siteString(b, op, "nvvm.fence.proxy.async")});
    } else if (isa<NVVM::CpAsyncBulkCommitGroupOp>(op)) {
      OpBuilder b(op);
      func::CallOp::create(
          b, op->getLoc(), runtime.bulkCommit,
          ValueRange{thread,
                     siteString(b, op, "nvvm.cp.async.bulk.commit.group")});
    } else if (auto wait = dyn_cast<NVVM::CpAsyncBulkWaitGroupOp>(op)) {
      OpBuilder b(op);
      func::CallOp::create(
          b, op->getLoc(), runtime.bulkWait,
          ValueRange{
              thread,
              arith::ConstantIntOp::create(
                  b, op->getLoc(), static_cast<int64_t>(wait.getGroup()), 32),
              siteString(b, op, "nvvm.cp.async.bulk.wait_group")});
    }
    if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
      OpBuilder b(op);
      func::CallOp::create(
          b, op->getLoc(), runtime.wgmmaWait,
          ValueRange{
              thread,
              arith::ConstantIntOp::create(
                  b, op->getLoc(), static_cast<int64_t>(wait.getGroup()), 32),
              siteString(b, op, "wgmma.wait_group")});
    }
    op->erase();
  }
  SmallVector<Operation *> erase;
  auto i32 = [&](OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op)) {
      synchronizes = true;
      auto type = cast<VectorType>(ld.getRes().getType());
      Value buffer = scratch(type.getElementType(), type.getNumElements());
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      func::CallOp::create(
          b, loc, runtime.ldMatrix,
          ValueRange{
              thread, address(b, loc, ld.getSrcMemref(), ld.getIndices()),
              address(b, loc, buffer, ValueRange{zero}),
              i32(b, loc, ld.getNumTiles()), i32(b, loc, ld.getTranspose()),
              siteString(b, op, "nvgpu.ldmatrix")});
      ld.replaceAllUsesWith(reload(b, loc, buffer, type));
      op->erase();
    } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
      synchronizes = true;
      // blockc::emu::MmaType: 0 bf16, 1 f16, 2 tf32.
      Type elem = getElementTypeOrSelf(mma.getMatrixA().getType());
      int64_t mmaType = elem.isBF16() ? 0 : elem.isF16() ? 1 : 2;
      Value a = spill(b, loc, mma.getMatrixA(), /*slot=*/1);
      Value bb = spill(b, loc, mma.getMatrixB(), /*slot=*/2);
      Value c = spill(b, loc, mma.getMatrixC(), /*slot=*/3);
      auto type = cast<VectorType>(mma.getType());
      Value buffer = scratch(type.getElementType(), type.getNumElements());
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      func::CallOp::create(b, loc, runtime.mma,
                           ValueRange{thread, i32(b, loc, mmaType), a, bb, c,
                                      address(b, loc, buffer, ValueRange{zero}),
                                      siteString(b, op, "nvgpu.mma.sync")});
      mma.replaceAllUsesWith(reload(b, loc, buffer, type));
      op->erase();
    } else if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
      int64_t bytes = llvm::divideCeil(
          cast<MemRefType>(copy.getDst().getType()).getElementTypeBitWidth(),
          8);
      int64_t dstBytes = copy.getDstElements().getZExtValue() * bytes;
      Value srcBytes = i32(b, loc, dstBytes);
      if (Value elements = copy.getSrcElements())
        srcBytes = arith::IndexCastOp::create(
            b, loc, i32Type,
            arith::MulIOp::create(
                b, loc, elements,
                arith::ConstantIndexOp::create(b, loc, bytes)));
      Value src = address(b, loc, copy.getSrc(), copy.getSrcIndices());
      Value site = siteString(b, op, "nvgpu.device_async_copy");
      // Bounds checking: the source (its first byte; a zero-filled tail
      // may end past the tensor) must be device memory. The runtime counts
      // the copy itself for the profile.
      if (checkBounds)
        func::CallOp::create(
            b, loc, runtime.access,
            ValueRange{thread, i32(b, loc, siteCounter++), src, i32(b, loc, 1),
                       i32(b, loc, kAccessCheck | kAccessUncounted), site});
      func::CallOp::create(
          b, loc, runtime.cpAsync,
          ValueRange{thread,
                     address(b, loc, copy.getDst(), copy.getDstIndices()), src,
                     i32(b, loc, dstBytes), srcBytes, site});
      erase.push_back(op);
    } else if (isa<nvgpu::MBarrierCreateOp, nvgpu::MBarrierInitOp,
                   nvgpu::MBarrierArriveExpectTxOp,
                   nvgpu::MBarrierTryWaitParityOp, nvgpu::TmaAsyncLoadOp,
                   nvgpu::TmaAsyncStoreOp, nvgpu::WarpgroupGenerateDescriptorOp,
                   nvgpu::WarpgroupMmaInitAccumulatorOp, nvgpu::WarpgroupMmaOp,
                   nvgpu::WarpgroupMmaStoreOp>(op)) {
      replaceWarpgroupOp(op);
    } else if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
      func::CallOp::create(b, loc, runtime.cpAsyncCommit, ValueRange{thread});
      erase.push_back(op);
    } else if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
      func::CallOp::create(
          b, loc, runtime.cpAsyncWait,
          ValueRange{thread, i32(b, loc, wait.getNumGroups().value_or(0)),
                     siteString(b, op, "nvgpu.device_async_wait")});
      erase.push_back(op);
    }
  }
  // Waits use groups, groups use copies (checkNVGPUOp).
  for (Operation *op : llvm::reverse(erase))
    op->erase();
}

LogicalResult KernelEmulation::checkOps() {
  for (Type type : kernel.getArgumentTypes())
    if (!type.isIntOrIndexOrFloat() &&
        !isa<MemRefType, LLVM::LLVMPointerType>(type))
      return kernel.emitError()
             << "the GPU emulator cannot pass a kernel argument of type "
             << type << " (kernel '" << kernel.getName() << "')";
  WalkResult result = kernel.walk([&](Operation *op) {
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::GlobalIdOp, gpu::LaneIdOp, gpu::BarrierOp, gpu::ReturnOp,
            gpu::DynamicSharedMemoryOp, gpu::GPUFuncOp>(op))
      return WalkResult::advance();
    if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      if (shuffle.getValue().getType().getIntOrFloatBitWidth() != 32) {
        op->emitError() << "the GPU emulator supports 32-bit shuffles only, "
                           "in kernel '"
                        << kernel.getName() << "'";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (isa<LLVM::InlineAsmOp>(op)) {
      op->emitError() << "PTX inline assembly cannot run on the host (kernel '"
                      << kernel.getName()
                      << "'); the emulator's pipeline expands math with "
                         "blockc-gpu-expand-math{portable=true}";
      return WalkResult::interrupt();
    }
    if (isa<nvgpu::NVGPUDialect>(op->getDialect()))
      return failed(checkNVGPUOp(op)) ? WalkResult::interrupt()
                                      : WalkResult::advance();
    // wgmma.wait_group: the runtime's group count (blockcEmuWgmmaWait);
    // setmaxnreg changes nothing on the host, nor does a proxy fence to the
    // data (the emulator's wgmma and TMA stores read shared memory as the
    // generic stores left it; an async-proxy fence is recorded for the TMA
    // store's check, blockcEmuFenceProxyAsync).
    if (isa<NVVM::WgmmaWaitGroupSyncOp, NVVM::SetMaxRegisterOp,
            NVVM::FenceProxyOp>(op))
      return WalkResult::advance();
    // The bulk groups of TMA stores: the runtime's per-thread groups
    // (blockcEmuBulkCommit, blockcEmuBulkWait).
    if (isa<NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp>(op))
      return WalkResult::advance();
    // A whole warp's rendezvous.
    if (auto sync = dyn_cast<NVVM::SyncWarpOp>(op)) {
      APInt mask;
      if (!matchPattern(sync.getMask(), m_ConstantInt(&mask)) ||
          !mask.isAllOnes()) {
        op->emitError() << "the GPU emulator models 'nvvm.bar.warp.sync' "
                           "with the full mask (-1) only, in kernel '"
                        << kernel.getName() << "'";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    // A named barrier: an id and a thread count, no reduction.
    if (auto bar = dyn_cast<NVVM::BarrierOp>(op)) {
      if (!bar.getBarrierId() || !bar.getNumberOfThreads() ||
          bar.getReductionOp()) {
        op->emitError() << "the GPU emulator models 'nvvm.barrier' with an "
                           "id and a thread count (and no reduction) only, "
                           "in kernel '"
                        << kernel.getName() << "'";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (isa<gpu::GPUDialect, NVVM::NVVMDialect>(op->getDialect())) {
      op->emitError() << "the GPU emulator does not model '" << op->getName()
                      << "' (kernel '" << kernel.getName() << "')";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

Value KernelEmulation::threadField(OpBuilder &b, Location loc, int64_t offset) {
  Value address = LLVM::GEPOp::create(b, loc, ptrType, i8Type, thread,
                                      ArrayRef<LLVM::GEPArg>{offset},
                                      LLVM::GEPNoWrapFlags::inbounds);
  Value value = LLVM::LoadOp::create(b, loc, i32Type, address);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), value);
}

Value KernelEmulation::loadParam(OpBuilder &b, Location loc, Type type) {
  Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, params,
                                   ArrayRef<LLVM::GEPArg>{paramSlot++},
                                   LLVM::GEPNoWrapFlags::inbounds);
  Value address = LLVM::LoadOp::create(b, loc, ptrType, slot);
  return LLVM::LoadOp::create(b, loc, type, address);
}

/// A memref of `type` from its descriptor fields in the order of MLIR's
/// unpacked descriptors (allocated, aligned, offset, sizes, strides), each
/// produced by `next`.
Value KernelEmulation::unpackMemRef(OpBuilder &b, Location loc, MemRefType type,
                                    std::function<Value(Type)> next) {
  int64_t rank = type.getRank();
  SmallVector<Type> fields = {ptrType, ptrType, i64Type};
  if (rank > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64Type, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64Type, rank));
  }
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value desc = LLVM::PoisonOp::create(b, loc, structType);
  for (int64_t i = 0; i < 3; ++i)
    desc = LLVM::InsertValueOp::create(b, loc, desc, next(fields[i]), i);
  for (int64_t part = 3; part < 5 && rank > 0; ++part)
    for (int64_t d = 0; d < rank; ++d)
      desc = LLVM::InsertValueOp::create(b, loc, desc, next(i64Type),
                                         ArrayRef<int64_t>{part, d});
  return UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
}

Value KernelEmulation::siteString(OpBuilder &b, Operation *op, StringRef what,
                                  bool numbered) {
  // The runtime tells sync points apart by the string's address; a second
  // op at the same location gets a numbered text so that no two sites can
  // be merged into one constant.
  std::string text = (what + " at " + describeLocation(op->getLoc())).str();
  if (numbered)
    if (unsigned seen = siteTexts[text]++)
      text += " (#" + std::to_string(seen + 1) + ")";
  text.push_back('\0');
  return LLVM::createGlobalString(
      op->getLoc(), b, ("__blockc_emu_site_" + Twine(siteCounter++)).str(),
      text, LLVM::Linkage::Internal);
}

/// The thread's linear index in its block (x fastest).
Value KernelEmulation::linearThreadId(OpBuilder &b, Location loc) {
  Value x = threadField(b, loc, kThreadIdOffset);
  Value y = threadField(b, loc, kThreadIdOffset + 4);
  Value z = threadField(b, loc, kThreadIdOffset + 8);
  Value dx = threadField(b, loc, kBlockDimOffset);
  Value dy = threadField(b, loc, kBlockDimOffset + 4);
  Value zy =
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, z, dy), y);
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, zy, dx),
                               x);
}

/// The Hopper ops: mbarriers and TMA loads and stores become runtime calls
/// (EmulatorRuntime.h), warpgroup matrix descriptors their 64-bit encoding
/// (as convert-nvgpu-to-nvvm computes it, from the shared-memory offset),
/// each wgmma instruction of a warpgroup MMA (as convert-nvgpu-to-nvvm
/// splits it, with its descriptor arithmetic) a runtime call on this
/// thread's fragment, and the accumulator store this thread's stores at the
/// PTX ISA's fragment positions.
void KernelEmulation::replaceWarpgroupOp(Operation *op) {
  // The values have their host types already (hostType): operands and
  // results are read untyped, what the nvgpu types said is in hopperTypes.
  OpBuilder b(op);
  Location loc = op->getLoc();
  synchronizes = true;
  auto i32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  auto toI32 = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, i32Type, index);
  };
  // Barrier `id` of a group: 8 bytes each.
  auto barrierAt = [&](Value group, Value id) -> Value {
    return LLVM::GEPOp::create(
        b, loc, ptrType, i64Type, group,
        ValueRange{arith::IndexCastOp::create(b, loc, i64Type, id)});
  };
  // Runs `body` under `predicate` if the op has one.
  auto guarded = [&](Value predicate, function_ref<void()> body) {
    if (!predicate)
      return body();
    auto ifOp = scf::IfOp::create(b, loc, predicate, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  if (auto create = dyn_cast<nvgpu::MBarrierCreateOp>(op)) {
    op->getResult(0).replaceAllUsesWith(LLVM::GEPOp::create(
        b, loc, ptrType, i8Type, shared,
        ArrayRef<LLVM::GEPArg>{mbarrierOffsets.lookup(op)}));
  } else if (auto init = dyn_cast<nvgpu::MBarrierInitOp>(op)) {
    guarded(init.getPredicate(), [&] {
      func::CallOp::create(
          b, loc, runtime.mbarrierInit,
          ValueRange{
              thread,
              barrierAt(init.getBarriersMutable().get(), init.getMbarId()),
              toI32(init.getCount()),
              siteString(b, op, "nvgpu.mbarrier.init")});
    });
  } else if (auto arrive = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op)) {
    guarded(arrive.getPredicate(), [&] {
      func::CallOp::create(
          b, loc, runtime.mbarrierArrive,
          ValueRange{
              thread,
              barrierAt(arrive.getBarriersMutable().get(), arrive.getMbarId()),
              toI32(arrive.getTxcount()),
              siteString(b, op, "nvgpu.mbarrier.arrive.expect_tx")});
    });
  } else if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
    func::CallOp::create(
        b, loc, runtime.mbarrierTryWaitParity,
        ValueRange{
            thread,
            barrierAt(wait.getBarriersMutable().get(), wait.getMbarId()),
            arith::ExtUIOp::create(b, loc, i32Type, wait.getPhaseParity()),
            siteString(b, op, "nvgpu.mbarrier.try_wait.parity")});
  } else if (auto load = dyn_cast<nvgpu::TmaAsyncLoadOp>(op)) {
    guarded(load.getPredicate(), [&] {
      int64_t rank = load.getCoordinates().size();
      Value coords = scratch(i32Type, rank);
      for (auto [i, c] : llvm::enumerate(load.getCoordinates()))
        memref::StoreOp::create(
            b, loc, toI32(c), coords,
            ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      auto dstType = cast<MemRefType>(load.getDst().getType());
      SmallVector<Value> origin(dstType.getRank(), zero);
      func::CallOp::create(
          b, loc, runtime.tmaLoad,
          ValueRange{
              thread, address(b, loc, load.getDst(), origin),
              load.getTensorMapDescriptorMutable().get(), i32(rank),
              address(b, loc, coords, ValueRange{zero}),
              barrierAt(load.getBarriersMutable().get(), load.getMbarId()),
              siteString(b, op, "nvgpu.tma.async.load")});
    });
  } else if (auto store = dyn_cast<nvgpu::TmaAsyncStoreOp>(op)) {
    guarded(store.getPredicate(), [&] {
      int64_t rank = store.getCoordinates().size();
      Value coords = scratch(i32Type, rank);
      for (auto [i, c] : llvm::enumerate(store.getCoordinates()))
        memref::StoreOp::create(
            b, loc, toI32(c), coords,
            ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      auto srcType = cast<MemRefType>(store.getSrc().getType());
      SmallVector<Value> origin(srcType.getRank(), zero);
      func::CallOp::create(
          b, loc, runtime.tmaStore,
          ValueRange{thread, address(b, loc, store.getSrc(), origin),
                     store.getTensorMapDescriptorMutable().get(), i32(rank),
                     address(b, loc, coords, ValueRange{zero}),
                     siteString(b, op, "nvgpu.tma.async.store")});
    });
  } else if (auto gen = dyn_cast<nvgpu::WarpgroupGenerateDescriptorOp>(op)) {
    // convert-nvgpu-to-nvvm's encoding: start address >> 4 (14 bits),
    // leading byte offset (rows of the map's box x swizzle width) >> 4,
    // stride byte offset (8 rows x swizzle width) >> 4, swizzle mode.
    ArrayRef<int64_t> info = hopperTypes[op];
    int64_t width = info[0], mode = info[1];
    int64_t lead = (info[2] * width) >> 4;
    int64_t stride = (width * 8) >> 4;
    auto memrefType = cast<MemRefType>(gen.getTensor().getType());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<Value> origin(memrefType.getRank(), zero);
    Value at = LLVM::PtrToIntOp::create(
        b, loc, i64Type, address(b, loc, gen.getTensor(), origin));
    Value offset = arith::SubIOp::create(
        b, loc, at, LLVM::PtrToIntOp::create(b, loc, i64Type, shared));
    Value start = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, offset, i64(4)), i64(0x3FFF));
    uint64_t fields = (static_cast<uint64_t>(mode) << 62) |
                      (static_cast<uint64_t>(stride) << 32) |
                      (static_cast<uint64_t>(lead) << 16);
    op->getResult(0).replaceAllUsesWith(
        arith::OrIOp::create(b, loc, start, i64(static_cast<int64_t>(fields))));
  } else if (auto init = dyn_cast<nvgpu::WarpgroupMmaInitAccumulatorOp>(op)) {
    func::CallOp::create(
        b, loc, runtime.wgmmaWrite,
        ValueRange{thread, accumulatorId(b, loc, op),
                   siteString(b, op, "nvgpu.warpgroup.mma.init.accumulator")});
    auto type = cast<VectorType>(op->getResult(0).getType());
    op->getResult(0).replaceAllUsesWith(
        arith::ConstantOp::create(b, loc, b.getZeroAttr(type)).getResult());
  } else if (auto mma = dyn_cast<nvgpu::WarpgroupMmaOp>(op)) {
    // One m64nNk16 wgmma per k16 of A's tile, the descriptors advanced as
    // convert-nvgpu-to-nvvm advances them (A: 16 k of its elements; B: the
    // first dimension of its tensor times 16 k).
    ArrayRef<int64_t> info = hopperTypes[op];
    int64_t bytes = info[0], n = info[1], steps = info[2], bRows = info[4];
    int64_t multiplicand = info[3];
    auto type = cast<VectorType>(op->getResult(0).getType());
    Value acc = spill(b, loc, mma.getMatrixCMutable().get());
    Value site = siteString(b, op, "nvgpu.warpgroup.mma");
    Value id = accumulatorId(b, loc, op);
    for (int64_t k = 0; k < steps; ++k) {
      Value descA =
          arith::AddIOp::create(b, loc, mma.getDescriptorAMutable().get(),
                                i64((16 * k * bytes) >> 4));
      Value descB =
          arith::AddIOp::create(b, loc, mma.getDescriptorBMutable().get(),
                                i64((bRows * 16 * k * bytes) >> 4));
      func::CallOp::create(
          b, loc, runtime.wgmma,
          ValueRange{thread, i32(multiplicand), descA, descB, i32(n),
                     i32(mma.getTransposeA().has_value()),
                     i32(mma.getTransposeB().has_value()), acc, id, site});
    }
    // As convert-nvgpu-to-nvvm lowers it: the MMAs are one group
    // (wgmma.commit_group), then wgmma.wait_group with the op's depth.
    func::CallOp::create(
        b, loc, runtime.wgmmaCommit,
        ValueRange{thread, i32(static_cast<int64_t>(mma.getWaitGroup())),
                   site});
    Value buffer = scratch(type.getElementType(), type.getNumElements());
    op->getResult(0).replaceAllUsesWith(reload(b, loc, buffer, type));
  } else if (auto store = dyn_cast<nvgpu::WarpgroupMmaStoreOp>(op)) {
    // As convert-nvgpu-to-nvvm lowers it: thread t (lane 4g + q) stores
    // element 4j + 2h + e at (16 w + g + 8h, 8j + 2q + e) with w = t / 32,
    // the warp of the whole block, not of its warpgroup (t / 32 % 4, the
    // PTX ISA's layout). A warpgroup after the block's first thus stores
    // 64 rows further down per warpgroup, as on the GPU.
    auto type = cast<VectorType>(op->getOperand(0).getType());
    // Reading the accumulator needs every group that writes it waited for.
    func::CallOp::create(
        b, loc, runtime.wgmmaRead,
        ValueRange{thread, accumulatorId(b, loc, op),
                   siteString(b, op, "nvgpu.warpgroup.mma.store")});
    Value tid = linearThreadId(b, loc);
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value warp = arith::DivUIOp::create(b, loc, tid, c(32));
    Value lane = arith::RemUIOp::create(b, loc, tid, c(32));
    Value row0 = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, warp, c(16)),
        arith::DivUIOp::create(b, loc, lane, c(4)));
    Value col0 = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, lane, c(4)), c(2));
    for (int64_t j = 0; j < type.getDimSize(0) / 4; ++j)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e) {
          Value value =
              vector::ExtractOp::create(b, loc, store.getMatrixDMutable().get(),
                                        ArrayRef<int64_t>{4 * j + 2 * h + e});
          auto element = memref::StoreOp::create(
              b, loc, value, store.getDstMemref(),
              ValueRange{arith::AddIOp::create(b, loc, row0, c(8 * h)),
                         arith::AddIOp::create(b, loc, col0, c(8 * j + e))});
          auto flags = warpgroupStoreFlags.find(op);
          if (flags != warpgroupStoreFlags.end())
            accessFlags[element] = flags->second;
        }
  }
  op->erase();
}

void KernelEmulation::replaceGPUOps() {
  SmallVector<Operation *> ops;
  host.walk([&](Operation *op) {
    if (op->getDialect() && isa<gpu::GPUDialect>(op->getDialect()))
      ops.push_back(op);
  });
  auto dimIndex = [](gpu::Dimension d) { return static_cast<int64_t>(d); };
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value replacement;
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      replacement = threadField(
          b, loc, kThreadIdOffset + 4 * dimIndex(id.getDimension()));
    } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      replacement =
          threadField(b, loc, kBlockIdOffset + 4 * dimIndex(id.getDimension()));
    } else if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
      replacement = threadField(
          b, loc, kBlockDimOffset + 4 * dimIndex(dim.getDimension()));
    } else if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
      replacement = threadField(
          b, loc, kGridDimOffset + 4 * dimIndex(dim.getDimension()));
    } else if (auto id = dyn_cast<gpu::GlobalIdOp>(op)) {
      int64_t d = 4 * dimIndex(id.getDimension());
      Value block = threadField(b, loc, kBlockIdOffset + d);
      Value size = threadField(b, loc, kBlockDimOffset + d);
      Value local = threadField(b, loc, kThreadIdOffset + d);
      replacement = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, block, size), local);
    } else if (isa<gpu::LaneIdOp>(op)) {
      replacement = threadField(b, loc, kLaneIdOffset);
    } else if (isa<gpu::DynamicSharedMemoryOp>(op)) {
      // Dynamic shared memory starts after the static part (the runtime
      // allocates static plus dynamic bytes per block).
      Value buffer = getSharedBuffer(b, loc);
      Value offset = arith::ConstantIndexOp::create(b, loc, staticSharedBytes);
      Value size = arith::SubIOp::create(
          b, loc,
          arith::IndexCastOp::create(b, loc, b.getIndexType(), sharedBytes),
          offset);
      replacement = memref::ViewOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, i8Type), buffer,
          offset, ValueRange{size});
    } else if (isa<gpu::BarrierOp>(op)) {
      synchronizes = true;
      func::CallOp::create(
          b, loc, runtime.barrier,
          ValueRange{thread, siteString(b, op, "gpu.barrier")});
      op->erase();
      continue;
    } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      synchronizes = true;
      Value value = shuffle.getValue();
      Type type = value.getType();
      Value bits = type.isInteger(32)
                       ? value
                       : arith::BitcastOp::create(b, loc, i32Type, value);
      Value mode = arith::ConstantIntOp::create(
          b, loc, static_cast<int64_t>(shuffle.getMode()), 32);
      Value result =
          func::CallOp::create(
              b, loc, runtime.shuffle32,
              ValueRange{thread, bits, shuffle.getOffset(), shuffle.getWidth(),
                         mode,
                         siteString(b, op,
                                    ("gpu.shuffle " + gpu::stringifyShuffleMode(
                                                          shuffle.getMode()))
                                        .str())})
              .getResult(0);
      Value low = arith::TruncIOp::create(b, loc, i32Type, result);
      Value shuffled = type.isInteger(32)
                           ? low
                           : arith::BitcastOp::create(b, loc, type, low);
      Value high = arith::ShRUIOp::create(
          b, loc, result, arith::ConstantIntOp::create(b, loc, 32, 64));
      Value valid =
          arith::TruncIOp::create(b, loc, IntegerType::get(ctx, 1), high);
      op->replaceAllUsesWith(ValueRange{shuffled, valid});
      op->erase();
      continue;
    } else if (isa<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, loc);
      op->erase();
      continue;
    }
    op->replaceAllUsesWith(ValueRange{replacement});
    op->erase();
  }
}

void KernelEmulation::insertBoundsChecks() {
  SmallVector<Operation *> accesses;
  host.walk([&](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp>(op))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value memref;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      memref = load.getMemRef();
      indices = load.getIndices();
    } else {
      auto store = cast<memref::StoreOp>(op);
      memref = store.getMemRef();
      indices = store.getIndices();
    }
    SmallVector<Value> sizes, inside;
    Value all = arith::ConstantIntOp::create(b, loc, 1, 1);
    for (auto [d, index] : llvm::enumerate(indices)) {
      Value size = memref::DimOp::create(b, loc, memref, d);
      // Unsigned: a negative index is out of bounds too.
      Value ok =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, size);
      sizes.push_back(size);
      inside.push_back(ok);
      all = arith::AndIOp::create(b, loc, all, ok);
    }
    Value site = siteString(b, op, op->getName().getStringRef());
    auto ifOp = scf::IfOp::create(b, loc, op->getResultTypes(), all,
                                  /*withElseRegion=*/true);
    // Then: the access itself.
    Block *thenBlock = ifOp.thenBlock();
    if (op->getNumResults() > 0) {
      op->getResult(0).replaceAllUsesWith(ifOp.getResult(0));
      OpBuilder tb = OpBuilder::atBlockEnd(thenBlock);
      scf::YieldOp::create(tb, loc, op->getResult(0));
    } else if (thenBlock->empty()) {
      OpBuilder tb = OpBuilder::atBlockEnd(thenBlock);
      scf::YieldOp::create(tb, loc);
    }
    op->moveBefore(thenBlock->getTerminator());
    // Else: report every index out of bounds; a load yields 0.
    Block *elseBlock = ifOp.elseBlock();
    OpBuilder eb = OpBuilder::atBlockBegin(elseBlock);
    if (!elseBlock->empty())
      eb.setInsertionPoint(elseBlock->getTerminator());
    for (auto [d, index] : llvm::enumerate(indices)) {
      Value outside = arith::XOrIOp::create(
          eb, loc, inside[d], arith::ConstantIntOp::create(eb, loc, 1, 1));
      auto report = scf::IfOp::create(eb, loc, outside);
      OpBuilder rb = OpBuilder::atBlockBegin(report.thenBlock());
      func::CallOp::create(
          rb, loc, runtime.outOfBounds,
          ValueRange{thread, site, arith::ConstantIntOp::create(rb, loc, d, 64),
                     arith::IndexCastOp::create(rb, loc, i64Type, index),
                     arith::IndexCastOp::create(rb, loc, i64Type, sizes[d])});
    }
    if (op->getNumResults() > 0) {
      Type type = op->getResult(0).getType();
      Value zero = arith::ConstantOp::create(
          eb, loc, cast<TypedAttr>(eb.getZeroAttr(type)));
      scf::YieldOp::create(eb, loc, zero);
    } else if (elseBlock->empty() || !elseBlock->mightHaveTerminator()) {
      scf::YieldOp::create(eb, loc);
    }
  }
}

namespace {

/// The memref an access op reads or writes, with its indices and the bytes
/// it moves; null for other ops.
std::tuple<Value, ValueRange, int64_t> accessOf(Operation *op) {
  auto bytesOf = [](Type type) {
    if (auto vector = dyn_cast<VectorType>(type))
      return vector.getNumElements() *
             llvm::divideCeil(vector.getElementTypeBitWidth(), 8);
    return static_cast<int64_t>(
        llvm::divideCeil(type.getIntOrFloatBitWidth(), 8));
  };
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return {load.getMemRef(), load.getIndices(), bytesOf(load.getType())};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return {store.getMemRef(), store.getIndices(),
            bytesOf(store.getValueToStore().getType())};
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return {load.getBase(), load.getIndices(), bytesOf(load.getType())};
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return {store.getBase(), store.getIndices(),
            bytesOf(store.getValueToStore().getType())};
  return {Value(), ValueRange(), 0};
}

/// Whether `memref` is a view of a memref.get_global (a constant of the GPU
/// module, not an allocation).
bool isGlobalConstant(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (isa<memref::GetGlobalOp>(def))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return false;
    memref = view.getViewSource();
  }
  return false;
}

} // namespace

/// Warpgroup accumulators that are the same registers on a GPU get one
/// number: a wgmma's accumulator and its result (the MMA accumulates in
/// place), and the values that loops and branches carry (an scf.for's
/// init, iteration argument, yield and result; an scf.if's results and
/// yields; branch operands and block arguments). The runtime then checks a
/// read of one accumulator against the group of the MMA that last wrote
/// it, not against every group in flight.
void KernelEmulation::numberAccumulators() {
  llvm::EquivalenceClasses<Value> classes;
  auto isAccumulator = [](Value v) {
    return v && isa<nvgpu::WarpgroupAccumulatorType>(v.getType());
  };
  auto join = [&](Value a, Value b) {
    if (isAccumulator(a) && isAccumulator(b))
      classes.unionSets(a, b);
  };
  host.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (isAccumulator(v))
        classes.insert(v);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isAccumulator(arg))
            classes.insert(arg);
    if (auto mma = dyn_cast<nvgpu::WarpgroupMmaOp>(op))
      join(mma.getMatrixC(), mma.getMatrixD());
    if (auto loop = dyn_cast<scf::ForOp>(op))
      for (auto [init, arg, yielded, result] :
           llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                     loop.getYieldedValues(), loop.getResults())) {
        join(init, arg);
        join(arg, yielded);
        join(yielded, result);
      }
    if (auto branch = dyn_cast<scf::IfOp>(op))
      for (auto [i, result] : llvm::enumerate(branch.getResults())) {
        join(result, branch.thenYield().getOperand(i));
        if (!branch.getElseRegion().empty())
          join(result, branch.elseYield().getOperand(i));
      }
    if (auto branch = dyn_cast<BranchOpInterface>(op))
      for (unsigned s = 0; s < op->getNumSuccessors(); ++s) {
        SuccessorOperands operands = branch.getSuccessorOperands(s);
        Block *successor = op->getSuccessor(s);
        for (unsigned i = 0; i < operands.size(); ++i)
          join(operands[i], successor->getArgument(i));
      }
  });
  DenseMap<Value, int32_t> numbers;
  auto number = [&](Value v) {
    Value leader = classes.getLeaderValue(v);
    auto [it, inserted] =
        numbers.try_emplace(leader, static_cast<int32_t>(numbers.size()));
    return it->second;
  };
  host.walk([&](Operation *op) {
    if (auto mma = dyn_cast<nvgpu::WarpgroupMmaOp>(op))
      accumulatorIds[op] = number(mma.getMatrixD());
    else if (auto init = dyn_cast<nvgpu::WarpgroupMmaInitAccumulatorOp>(op))
      accumulatorIds[op] = number(init.getMatrixC());
    else if (auto store = dyn_cast<nvgpu::WarpgroupMmaStoreOp>(op))
      accumulatorIds[op] = number(store.getMatrixD());
    else if (auto read = dyn_cast<blockc::codegen::AccumulatorToFragmentOp>(op))
      accumulatorIds[op] = number(read.getAccumulator());
    else if (auto write =
                 dyn_cast<blockc::codegen::FragmentToAccumulatorOp>(op))
      accumulatorIds[op] = number(write.getAccumulator());
  });
}

/// The accumulator number of `op` as an i32 constant (-1: not numbered).
Value KernelEmulation::accumulatorId(OpBuilder &b, Location loc,
                                     Operation *op) {
  auto it = accumulatorIds.find(op);
  return arith::ConstantIntOp::create(
      b, loc, it == accumulatorIds.end() ? -1 : it->second, 32);
}

void KernelEmulation::classifyAccesses() {
  host.walk([&](Operation *op) {
    // The stores that replace nvgpu.warpgroup.mma.store get its flags.
    if (auto store = dyn_cast<nvgpu::WarpgroupMmaStoreOp>(op)) {
      auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
          store.getDstMemref().getType().getMemorySpace());
      bool shared = space && space.getValue() == gpu::AddressSpace::Workgroup;
      warpgroupStoreFlags[op] =
          kAccessStore |
          (shared ? kAccessShared : (checkBounds ? kAccessCheck : 0));
      return;
    }
    auto [memref, indices, bytes] = accessOf(op);
    if (!memref)
      return;
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type)
      return;
    int32_t flags =
        isa<memref::StoreOp, vector::StoreOp>(op) ? kAccessStore : 0;
    if (auto space =
            dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace())) {
      if (space.getValue() == gpu::AddressSpace::Private)
        return;
      if (space.getValue() == gpu::AddressSpace::Workgroup)
        flags |= kAccessShared;
    }
    // Memrefs defined in the kernel by an alloca are its private memory.
    if (Operation *def = memref.getDefiningOp())
      if (isa<memref::AllocaOp>(def))
        return;
    if (!(flags & kAccessShared) && isGlobalConstant(memref))
      flags |= kAccessConstant;
    // Bounds checking also checks that global memory is device memory.
    if (checkBounds && !(flags & kAccessShared))
      flags |= kAccessCheck;
    // Without bounds checks or the profile, only a wgmma kernel's shared
    // stores need a hook (the check against wgmma groups in flight).
    if (!checkBounds && !profile &&
        (flags & (kAccessShared | kAccessStore)) !=
            (kAccessShared | kAccessStore))
      return;
    accessFlags[op] = flags;
  });
}

/// Before each global or shared access: blockcEmuAccess (the device-memory
/// check, and the profile's counts). After the bounds checks, so that an
/// index out of bounds is reported as such and skipped.
void KernelEmulation::insertAccessHooks() {
  for (auto [op, flags] : accessFlags) {
    auto [memref, indices, bytes] = accessOf(op);
    if (!memref)
      continue;
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value at = address(b, loc, memref, indices);
    Value site = siteString(b, op, op->getName().getStringRef(),
                            /*numbered=*/false);
    func::CallOp::create(
        b, loc, runtime.access,
        ValueRange{thread,
                   arith::ConstantIntOp::create(b, loc, siteCounter++, 32), at,
                   arith::ConstantIntOp::create(b, loc, bytes, 32),
                   arith::ConstantIntOp::create(b, loc, flags, 32), site});
  }
}

/// At the start of every block of code, blockcEmuFlops with the block's
/// floating-point operations: add, sub, mul and div count 1 per lane, an
/// FMA (math, vector or LLVM's fma / fmuladd) 2. Comparisons, min / max,
/// conversions and the kernels' own exp / erf polynomials' selects are not
/// FLOPs; the polynomials' multiplies and adds are.
void KernelEmulation::insertFlopCounts() {
  SmallVector<std::pair<Block *, int64_t>> counts;
  host.walk([&](Block *block) {
    int64_t n = 0;
    for (Operation &op : *block) {
      if (op.getNumResults() != 1)
        continue;
      Type type = op.getResult(0).getType();
      auto vector = dyn_cast<VectorType>(type);
      Type element = vector ? vector.getElementType() : type;
      if (!isa<FloatType>(element))
        continue;
      int64_t lanes = vector ? vector.getNumElements() : 1;
      if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
              LLVM::FAddOp, LLVM::FSubOp, LLVM::FMulOp, LLVM::FDivOp>(op))
        n += lanes;
      else if (isa<math::FmaOp, vector::FMAOp, LLVM::FMAOp, LLVM::FMulAddOp>(
                   op))
        n += 2 * lanes;
    }
    if (n > 0)
      counts.push_back({block, n});
  });
  for (auto [block, n] : counts) {
    OpBuilder b = OpBuilder::atBlockBegin(block);
    Location loc = block->getParentOp()->getLoc();
    func::CallOp::create(
        b, loc, runtime.flops,
        ValueRange{thread, arith::ConstantIntOp::create(b, loc, n, 64)});
  }
}

LogicalResult KernelEmulation::run(ModuleOp module) {
  if (!kernel.isKernel())
    return kernel.emitError() << "the GPU emulator runs kernels only; '"
                              << kernel.getName() << "' is a device function";
  if (failed(checkOps()))
    return failure();

  // Static shared memory: the workgroup attributions, in order, at 16-byte
  // aligned offsets.
  SmallVector<int64_t> sharedOffsets;
  int64_t staticShared = 0;
  for (BlockArgument attribution : kernel.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(attribution.getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !type.getElementType().isIntOrFloat())
      return kernel.emitError()
             << "the GPU emulator needs workgroup memory of static shape, "
                "identity layout and integer or float elements in kernel '"
             << kernel.getName() << "', got " << type;
    staticShared = llvm::alignTo(staticShared, 16);
    sharedOffsets.push_back(staticShared);
    staticShared += type.getNumElements() *
                    llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  // Then the mbarriers, 8 bytes each (upstream lowers each
  // nvgpu.mbarrier.create to a static shared global).
  kernel.walk([&](nvgpu::MBarrierCreateOp create) {
    staticShared = llvm::alignTo(staticShared, 8);
    mbarrierOffsets[create] = staticShared;
    staticShared += 8 * create.getBarriers().getType().getNumBarriers();
  });
  staticSharedBytes = staticShared;
  if (staticShared > target.getStaticSharedPerBlock())
    return kernel.emitError()
           << "kernel '" << kernel.getName() << "' declares " << staticShared
           << " bytes of static shared memory, more than the "
           << target.getStaticSharedPerBlock()
           << " a block may declare statically";

  // The host function: (params, thread, shared, shared bytes).
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  std::string name =
      ("__blockc_emu_" + kernel->getParentOfType<gpu::GPUModuleOp>().getName() +
       "_" + kernel.getName())
          .str();
  host = func::FuncOp::create(
      mb, kernel.getLoc(), name,
      FunctionType::get(ctx, {ptrType, ptrType, ptrType, i64Type}, {}));
  host.getBody().takeBody(kernel.getBody());
  Block &entry = host.getBody().front();
  unsigned numOld = entry.getNumArguments();
  Location loc = kernel.getLoc();
  params = entry.insertArgument(0u, ptrType, loc);
  thread = entry.insertArgument(1u, ptrType, loc);
  shared = entry.insertArgument(2u, ptrType, loc);
  sharedBytes = entry.insertArgument(3u, i64Type, loc);

  // Which accesses go to global and shared memory, read from the memory
  // spaces before they go; which accumulators share registers, from their
  // types.
  hasWgmma =
      host.walk([](nvgpu::WarpgroupMmaOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (hasWgmma)
    numberAccumulators();
  if (checkBounds || profile || hasWgmma)
    classifyAccesses();
  // Memory spaces go: the host has one address space.
  host.walk([&](Operation *op) {
    for (OpResult result : op->getResults())
      result.setType(hostType(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(hostType(arg.getType()));
  });

  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  unsigned numArgs = kernel.getNumArguments();
  unsigned numWorkgroup = kernel.getNumWorkgroupAttributions();
  for (unsigned i = 0; i < numOld; ++i) {
    BlockArgument old = entry.getArgument(4 + i);
    Type type = old.getType();
    Value value;
    if (i < numArgs) {
      if (type.isIndex()) {
        value = arith::IndexCastOp::create(b, loc, type,
                                           loadParam(b, loc, i64Type));
      } else if (type.isIntOrFloat() || isa<LLVM::LLVMPointerType>(type)) {
        value = loadParam(b, loc, type);
      } else if (auto memref = dyn_cast<MemRefType>(type)) {
        value = unpackMemRef(b, loc, memref,
                             [&](Type t) { return loadParam(b, loc, t); });
      } else {
        llvm_unreachable("argument types are checked by checkOps");
      }
    } else if (i < numArgs + numWorkgroup) {
      // Workgroup memory: a view of the block's shared buffer.
      auto memref = cast<MemRefType>(type);
      Value buffer = getSharedBuffer(b, loc);
      Value offset =
          arith::ConstantIndexOp::create(b, loc, sharedOffsets[i - numArgs]);
      value =
          memref::ViewOp::create(b, loc, memref, buffer, offset, ValueRange{});
    } else {
      // Private memory: this thread's stack.
      value = memref::AllocaOp::create(b, loc, cast<MemRefType>(type));
    }
    old.replaceAllUsesWith(value);
  }
  entry.eraseArguments(4, numOld);
  // Dynamic shared memory is a view of the same buffer.
  if (host.walk([](gpu::DynamicSharedMemoryOp) {
            return WalkResult::interrupt();
          })
          .wasInterrupted())
    getSharedBuffer(b, loc);

  replaceGPUOps();
  replaceNVGPUOps();
  if (checkBounds)
    insertBoundsChecks();
  if (checkBounds || profile || hasWgmma)
    insertAccessHooks();
  if (profile)
    insertFlopCounts();

  auto known = kernel.getKnownBlockSizeAttr();
  auto knownDim = [&](int i) -> int64_t { return known ? known[i] : 0; };
  host->setAttr(
      CodegenDialect::kEmulatedKernelAttrName,
      EmulatedKernelAttr::get(ctx, moduleToken, kernel.getName(), staticShared,
                              target.getSharedPerBlock(), synchronizes,
                              knownDim(0), knownDim(1), knownDim(2)));
  kernel.erase();
  return success();
}

struct GPUEmulateKernelsPass
    : blockc::nvptx::impl::GPUEmulateKernelsPassBase<GPUEmulateKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty())
      return;
    MLIRContext *ctx = &getContext();
    blockc::codegen::GPUTargetAttr gpu =
        blockc::nvptx::getGPUTarget(module, chip);
    if (!gpu) {
      module.emitError() << "blockc-gpu-emulate-kernels: unknown GPU "
                            "architecture '"
                         << chip << "' (known: "
                         << blockc::codegen::GPUTargetAttr::knownArchs() << ")";
      return signalPassFailure();
    }
    Attribute target = parseAttribute(
        "#nvvm.target<chip = \"" + gpu.getArch().str() + "\">", ctx);
    RuntimeDecls runtime(module);
    unsigned siteCounter = 0;
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      // The runtime finds the kernels under the module's name and a hash of
      // its contents, so that different programs in one process (a JIT
      // compiling two entries) do not shadow each other's kernels.
      std::string text;
      llvm::raw_string_ostream os(text);
      gpuModule->print(os);
      std::string token = (gpuModule.getName() + "#" +
                           llvm::utohexstr(llvm::xxh3_64bits(text), true))
                              .str();
      for (gpu::GPUFuncOp kernel :
           llvm::to_vector(gpuModule.getOps<gpu::GPUFuncOp>())) {
        KernelEmulation emulation(kernel, token, runtime, gpu, checkBounds,
                                  profile, siteCounter);
        if (failed(emulation.run(module)))
          return signalPassFailure();
      }
      OpBuilder b(gpuModule);
      auto object = gpu::ObjectAttr::get(
          ctx, target, gpu::CompilationTarget::Binary,
          StringAttr::get(ctx, "blockc-emulator:" + token), nullptr, nullptr);
      gpu::BinaryOp::create(b, gpuModule.getLoc(), gpuModule.getName(),
                            Attribute(), ArrayRef<Attribute>{object});
      gpuModule.erase();
    }
  }
};

} // namespace
