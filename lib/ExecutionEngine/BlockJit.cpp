//===- BlockJit.cpp - compile and run a model in-process ------------------===//
//
// The entry function is called through its C interface
// (_mlir_ciface_<name>, requested by the CPU pipeline), whose arguments are
// pointers to memref descriptors: {allocated, aligned, offset, sizes[R],
// strides[R]}, all 8-byte fields. The result comes first: a descriptor the
// callee fills (its buffer allocated by the callee, owned by the caller).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/Compiler/Compiler.h"
#include "blockc/ExecutionEngine/HostAllocator.h"
#include "blockc/Revision.inc"
#include "blockc/Runtime/EmulatorRuntime.h"
#include "blockc/Support/Error.h"
#include "blockc/Target/CPU.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace blockc;
using llvm::Error;
using llvm::Expected;

namespace {

/// A GPU runtime library: libblockc_cuda_runtime (a GPU through the CUDA
/// driver) or libblockc_emulator_runtime (the emulator). Both export the
/// mgpu* ABI; a process loads one of them (RTLD_GLOBAL so that the
/// JIT-compiled host code resolves mgpu* against it).
struct GPURuntime {
  void *handle = nullptr;
  const char *(*lastError)() = nullptr;
  /// The emulator's blockcEmuClearError: its errors are per run (no device
  /// context is poisoned), so every compile and run starts clean. Null for
  /// CUDA, whose errors stay (a failed context cannot be trusted).
  void (*clearError)() = nullptr;
  /// The emulator's blockcEmuCheckStreams: after host code returns, whether
  /// it left work queued on a stream without waiting for it (an error). Null
  /// for CUDA.
  int64_t (*checkStreams)() = nullptr;
  void *(*memAlloc)(uint64_t, void *, bool) = nullptr;
  void (*memFree)(void *, void *) = nullptr;
  std::string path;
};

Error loadSymbols(GPURuntime &runtime, void *handle, const char *lastError) {
  runtime.lastError =
      reinterpret_cast<const char *(*)()>(dlsym(handle, lastError));
  runtime.memAlloc = reinterpret_cast<void *(*)(uint64_t, void *, bool)>(
      dlsym(handle, "mgpuMemAlloc"));
  runtime.memFree =
      reinterpret_cast<void (*)(void *, void *)>(dlsym(handle, "mgpuMemFree"));
  if (!runtime.lastError || !runtime.memAlloc || !runtime.memFree)
    return makeError(Twine("the GPU runtime ") + runtime.path +
                     " lacks its entry points");
  return Error::success();
}

/// Where blockc's runtime library `fileName` is: beside the shared library
/// this code is linked into (<prefix>/lib/libblockc_session.so, loaded by
/// any program, e.g. Python), beside an installed tool (<prefix>/bin/<tool>
/// and <prefix>/lib/<fileName>, cmake --install), else in the build tree
/// the tool was built in (`buildPath`).
[[maybe_unused]] std::string runtimeLibraryPath(StringRef fileName,
                                                StringRef buildPath) {
  static int anchor;
  Dl_info self;
  if (dladdr(&anchor, &self) && self.dli_fname &&
      StringRef(self.dli_fname).contains(".so")) {
    SmallString<256> path(llvm::sys::path::parent_path(self.dli_fname));
    llvm::sys::path::append(path, fileName);
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  }
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  if (!exe.empty()) {
    SmallString<256> path(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(path, "lib", fileName);
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  }
  return buildPath.str();
}

Expected<GPURuntime *> loadCudaRuntime() {
#ifndef BLOCKC_CUDA_RUNTIME_PATH
  return makeError("-target=nvptx execution is unavailable: blockc was built "
                   "without its CUDA runtime (no CUDA toolkit at configure "
                   "time); --emulate runs the kernels without a GPU");
#else
  static GPURuntime runtime;
  if (runtime.handle)
    return &runtime;
  // The driver first, for a clear message on machines without a GPU.
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL))
    return makeError(Twine("no CUDA driver: libcuda.so.1 cannot be loaded (") +
                     dlerror() +
                     "); -target=nvptx needs an NVIDIA GPU and its driver, "
                     "or --emulate");
  runtime.path =
      runtimeLibraryPath("libblockc_cuda_runtime.so", BLOCKC_CUDA_RUNTIME_PATH);
  void *handle = dlopen(runtime.path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return makeError(Twine("cannot load the blockc CUDA runtime ") +
                     runtime.path + ": " + dlerror());
  if (Error e = loadSymbols(runtime, handle, "blockcCudaLastError"))
    return std::move(e);
  auto init = reinterpret_cast<int (*)()>(dlsym(handle, "blockcCudaInit"));
  if (!init)
    return makeError("the blockc CUDA runtime lacks blockcCudaInit");
  if (init() != 0)
    return makeError(Twine("no usable GPU: ") + runtime.lastError());
  runtime.handle = handle;
  return &runtime;
#endif
}

Expected<GPURuntime *> loadEmulatorRuntime() {
  static GPURuntime runtime;
  if (runtime.handle)
    return &runtime;
  runtime.path = runtimeLibraryPath("libblockc_emulator_runtime.so",
                                    BLOCKC_EMULATOR_RUNTIME_PATH);
  void *handle = dlopen(runtime.path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return makeError(Twine("cannot load the blockc GPU emulator runtime ") +
                     runtime.path + ": " + dlerror());
  if (Error e = loadSymbols(runtime, handle, "blockcEmuLastError"))
    return std::move(e);
  runtime.clearError =
      reinterpret_cast<void (*)()>(dlsym(handle, "blockcEmuClearError"));
  if (!runtime.clearError)
    return makeError("the GPU emulator runtime lacks blockcEmuClearError");
  runtime.checkStreams =
      reinterpret_cast<int64_t (*)()>(dlsym(handle, "blockcEmuCheckStreams"));
  if (!runtime.checkStreams)
    return makeError("the GPU emulator runtime lacks blockcEmuCheckStreams");
  runtime.handle = handle;
  return &runtime;
}

Expected<GPURuntime *> loadGPURuntime(bool emulated) {
  return emulated ? loadEmulatorRuntime() : loadCudaRuntime();
}

/// A memref descriptor laid out as the C interface expects.
std::vector<int64_t> makeDescriptor(const HostTensor &t) {
  size_t rank = t.shape.size();
  std::vector<int64_t> desc(3 + 2 * rank);
  auto ptr = reinterpret_cast<int64_t>(t.bytes());
  desc[0] = ptr;
  desc[1] = ptr;
  desc[2] = 0;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    desc[3 + i] = t.shape[i];
    desc[3 + rank + i] = stride;
    stride *= t.shape[i];
  }
  return desc;
}

} // namespace

llvm::Error blockc::beginEmulatorProfile(int64_t sampleBlocks) {
  Expected<GPURuntime *> runtime = loadEmulatorRuntime();
  if (!runtime)
    return runtime.takeError();
  auto begin = reinterpret_cast<void (*)(int64_t)>(
      dlsym((*runtime)->handle, "blockcEmuProfileBegin"));
  if (!begin)
    return makeError("the GPU emulator runtime lacks blockcEmuProfileBegin");
  begin(sampleBlocks);
  return Error::success();
}

llvm::Error blockc::observeEmulatedLaunches(
    std::function<void(llvm::StringRef kernel)> observer) {
  Expected<GPURuntime *> runtime = loadEmulatorRuntime();
  if (!runtime)
    return runtime.takeError();
  auto set = reinterpret_cast<void (*)(void (*)(const char *, void *), void *)>(
      dlsym((*runtime)->handle, "blockcEmuSetLaunchObserver"));
  if (!set)
    return makeError("the GPU emulator runtime lacks "
                     "blockcEmuSetLaunchObserver");
  // One observer per process: the emulator calls it from its launches.
  static std::function<void(llvm::StringRef)> current;
  current = std::move(observer);
  if (!current) {
    set(nullptr, nullptr);
    return Error::success();
  }
  set(
      [](const char *kernel, void *) {
        if (current)
          current(kernel);
      },
      nullptr);
  return Error::success();
}

llvm::Error blockc::beginCudaProfile() {
  Expected<GPURuntime *> runtime = loadCudaRuntime();
  if (!runtime)
    return runtime.takeError();
  auto start = reinterpret_cast<void (*)()>(
      dlsym((*runtime)->handle, "blockcCudaProfileStart"));
  if (!start)
    return makeError("the blockc CUDA runtime lacks blockcCudaProfileStart");
  start();
  return Error::success();
}

Expected<std::vector<MeasuredKernel>> blockc::endCudaProfile() {
  Expected<GPURuntime *> runtime = loadCudaRuntime();
  if (!runtime)
    return runtime.takeError();
  void *h = (*runtime)->handle;
  auto stop = reinterpret_cast<void (*)()>(dlsym(h, "blockcCudaProfileStop"));
  auto write = reinterpret_cast<int (*)(const char *)>(
      dlsym(h, "blockcCudaProfileWriteJSON"));
  if (!stop || !write)
    return makeError("the blockc CUDA runtime lacks its profile functions");
  stop();
  SmallString<128> path;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "blockc-cuda-profile", "json", path))
    return makeError("cannot create a temporary file: " + ec.message());
  llvm::FileRemover remove(path);
  if (write(path.c_str()) != 0)
    return makeError("the CUDA runtime could not write its profile");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError("cannot read the CUDA runtime's profile");
  Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return json.takeError();
  std::vector<MeasuredKernel> kernels;
  const llvm::json::Object *root = json->getAsObject();
  if (const llvm::json::Array *list =
          root ? root->getArray("kernels") : nullptr)
    for (const llvm::json::Value &v : *list)
      if (const llvm::json::Object *k = v.getAsObject())
        kernels.push_back({k->getString("name").value_or("").str(),
                           k->getInteger("launches").value_or(0),
                           k->getNumber("measured_us").value_or(0.0)});
  return kernels;
}

Expected<std::vector<GPULaunchCounters>> blockc::endEmulatorProfile() {
  Expected<GPURuntime *> runtime = loadEmulatorRuntime();
  if (!runtime)
    return runtime.takeError();
  void *h = (*runtime)->handle;
  auto end = reinterpret_cast<void (*)()>(dlsym(h, "blockcEmuProfileEnd"));
  auto count =
      reinterpret_cast<int64_t (*)()>(dlsym(h, "blockcEmuProfileLaunches"));
  auto get = reinterpret_cast<int (*)(int64_t, BlockcEmuLaunchProfile *)>(
      dlsym(h, "blockcEmuProfileGetLaunch"));
  if (!end || !count || !get)
    return makeError("the GPU emulator runtime lacks its profile functions");
  end();
  std::vector<GPULaunchCounters> launches;
  for (int64_t i = 0, n = count(); i < n; ++i) {
    BlockcEmuLaunchProfile p = {};
    if (get(i, &p) != 0)
      break;
    GPULaunchCounters c;
    c.kernel = p.kernel ? p.kernel : "";
    for (int d = 0; d < 3; ++d) {
      c.grid[d] = p.grid[d];
      c.block[d] = p.block[d];
    }
    c.sharedBytes = p.sharedBytes;
    c.blocksRun = p.blocksRun;
    c.blocksTotal = p.blocksTotal;
    c.flops = p.flops;
    c.tensorFlops16 = p.tensorFlops16;
    c.tensorFlopsTF32 = p.tensorFlopsTF32;
    c.globalRequests = p.globalRequests;
    c.globalSectors = p.globalSectors;
    c.globalBytes = p.globalBytes;
    c.uniqueBytes = p.uniqueBytes;
    c.sharedRequests = p.sharedRequests;
    c.sharedWavefronts = p.sharedWavefronts;
    c.barriers = p.barriers;
    launches.push_back(std::move(c));
  }
  return launches;
}

Error blockc::setCpuThreads(unsigned threads) {
  // libomp reads OMP_NUM_THREADS when it initialises, which happens when the
  // compiled code first runs; call this before that.
  std::string value = std::to_string(threads);
  if (setenv("OMP_NUM_THREADS", value.c_str(), /*overwrite=*/1) != 0)
    return makeError("cannot set OMP_NUM_THREADS");
  return Error::success();
}

BlockJit::~BlockJit() {
  // The compiled code (its destructors unregister emulated kernels) goes
  // before the buffers it may still refer to.
  engine.reset();
  lljit.reset();
  if (deviceArgs.empty())
    return;
  if (Expected<GPURuntime *> gpu = loadGPURuntime(emulated)) {
    for (DeviceCopy &copy : deviceArgs)
      if (copy.device)
        (*gpu)->memFree(copy.device, nullptr);
  } else {
    llvm::consumeError(gpu.takeError());
  }
}

Error blockc::checkCudaAvailable() {
  Expected<GPURuntime *> runtime = loadCudaRuntime();
  return runtime ? Error::success() : runtime.takeError();
}

Error blockc::checkGPURuntimeAvailable(bool emulated) {
  Expected<GPURuntime *> runtime = loadGPURuntime(emulated);
  return runtime ? Error::success() : runtime.takeError();
}

namespace {

/// Adds `_mlir_<f>(ptr args)` for every C-interface function `f`: loads
/// argument i from the pointer in args[i], calls f and stores a result
/// through args[n] (the packed convention of mlir::ExecutionEngine).
void addPackedWrappers(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *type =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  SmallVector<llvm::Function *> interfaces;
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && f.getName().starts_with("_mlir_ciface_"))
      interfaces.push_back(&f);
  for (llvm::Function *f : interfaces) {
    auto *wrapper = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage, "_mlir_" + f->getName(), m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrapper));
    llvm::Value *args = wrapper->getArg(0);
    SmallVector<llvm::Value *> operands;
    for (llvm::Argument &a : f->args()) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptr, args, a.getArgNo());
      operands.push_back(b.CreateLoad(a.getType(), b.CreateLoad(ptr, slot)));
    }
    llvm::Value *result = b.CreateCall(f, operands);
    if (!f->getReturnType()->isVoidTy())
      b.CreateStore(result, b.CreateLoad(ptr, b.CreateConstGEP1_64(
                                                  ptr, args, f->arg_size())));
    b.CreateRetVoid();
  }
}

/// The functions prepare() may call: the prepare function and its parts.
std::vector<PrepareEntry>
preparedFunctions(const std::optional<PrepareEntry> &entry) {
  std::vector<PrepareEntry> all;
  if (entry) {
    all.push_back(*entry);
    llvm::append_range(all, entry->parts);
  }
  return all;
}

/// Identifies the blockc build whose code generator made an object: the
/// source revision and the running executable's size and modification
/// time (a rebuilt blockc never reuses another build's objects).
std::string buildIdentity() {
  std::string id = BLOCKC_SOURCE_REVISION;
  llvm::sys::fs::file_status st;
  if (!llvm::sys::fs::status("/proc/self/exe", st))
    id += " " + std::to_string(st.getSize()) + " " +
          std::to_string(llvm::sys::toTimeT(st.getLastModificationTime()));
  return id;
}

} // namespace

Expected<std::unique_ptr<BlockJit>>
BlockJit::compile(ModuleOp module, const ModelSignature &sig,
                  const CompileOptions &options, const CompileCache *cache) {
  MLIRContext *ctx = module.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  JitTarget target = options.target;
  unsigned optLevel = options.optLevel;
  // A paged entry (transformer-derive-paged-decode): its pools' types.
  std::vector<RankedTensorType> pagedPools;
  PagedArguments paged =
      getPagedArguments(module.lookupSymbol<func::FuncOp>(sig.funcName));
  if (paged.isPaged()) {
    for (const PagedPoolArgument &pool : paged.pools)
      pagedPools.push_back(pool.type);
  }

  OwningOpRef<ModuleOp> lowered = module.clone();
  // The host target machine of blockc -emit=obj, with the target's default
  // relocation model (the JIT links in memory).
  CPUCodegenTarget codegenTarget = options.getCodegenTarget();
  auto tm = createHostTargetMachine(/*relocModel=*/std::nullopt, codegenTarget);
  if (!tm)
    return tm.takeError();

  // memref.copy of non-contiguous buffers calls memrefCopy from here.
  std::string cRunnerUtils = BLOCKC_MLIR_LIB_DIR "/libmlir_c_runner_utils.so";
  SmallVector<StringRef> libs;
  if (llvm::sys::fs::exists(cRunnerUtils))
    libs.push_back(cRunnerUtils);

  if (target == JitTarget::CPU) {
    // Parallel loops of the CPU pipeline are OpenMP (libomp from LLVM 22).
    std::string libomp = BLOCKC_MLIR_LIB_DIR "/libomp.so";
    if (!llvm::sys::fs::exists(libomp))
      return makeError("the CPU code needs the OpenMP runtime " + libomp +
                       " (Debian package libomp-22-dev)");
    libs.push_back(libomp);
    // The entry's intermediate buffers: reused pages across calls.
    keepFreedHostMemory();
    CPUTargetConfig c = options.getCPUConfig();
    // Code pinned to a larger ISA than the host's would stop on an illegal
    // instruction.
    std::string missing = missingHostFeature(c);
    if (!missing.empty())
      return makeError(Twine("the kernels are built for isa=") +
                       stringifyCPUISA(c.isa) + " but this CPU lacks " +
                       missing +
                       ": run them on a CPU that has it (an object from "
                       "blockc -emit=obj can be copied there) or choose "
                       "another -isa");

    // The cache key: everything the object depends on.
    std::string key, cacheState = "cache disabled";
    std::string object, metadata;
    std::optional<PrepareEntry> prepareEntry;
    bool cached = false;
    if (cache) {
      std::string moduleText, pipelineText;
      {
        llvm::raw_string_ostream os(moduleText);
        module->print(os,
                      OpPrintingFlags().printGenericOpForm().enableDebugInfo());
        PassManager pm(ctx, ModuleOp::getOperationName());
        buildCompilePipeline(pm, options, CompileStage::LLVMDialect,
                             sig.funcName);
        llvm::raw_string_ostream ps(pipelineText);
        pm.printAsTextualPipeline(ps);
      }
      std::string tmText =
          (Twine((*tm)->getTargetTriple().str()) + " " + (*tm)->getTargetCPU() +
           " " + codegenTarget.tuneCPU + " " + (*tm)->getTargetFeatureString())
              .str();
      std::string id = buildIdentity();
      // LLVM's own unrolling, when asked for, makes other code.
      std::string opt = std::to_string(optLevel) +
                        (llvmUnrollsAsIs() ? " llvm-unrolling" : "");
      key = CompileCache::key({"blockc-jit-object-v2", id, moduleText,
                               pipelineText, opt, tmText, sig.funcName});
      switch (cache->lookup(key, object, metadata)) {
      case CacheLookup::Hit: {
        FailureOr<std::optional<PrepareEntry>> parsed =
            parsePrepareEntry(metadata);
        if (succeeded(parsed)) {
          prepareEntry = std::move(*parsed);
          cached = true;
          cacheState = "cache hit";
        } else {
          cacheState = "cache entry corrupt, rebuilt";
        }
        break;
      }
      case CacheLookup::Miss:
        cacheState = "cache miss";
        break;
      case CacheLookup::Corrupt:
        cacheState = "cache entry corrupt, rebuilt";
        break;
      }
    }
    if (!cached) {
      // The staged compile of blockc -emit=obj: the prepare function's
      // records are read after stage 1 (stage 3 strips them).
      auto result = lowerModule(*lowered, options, CompileStage::LLVMDialect,
                                sig, DecodeMode::None, /*toolkit=*/"",
                                /*readPrepareRecords=*/true);
      if (!result)
        return result.takeError();
      prepareEntry = std::move(result->prepare);
      // prepare() calls the prepare function (or its parts) with the
      // inputs and the destinations only: the returned destinations must
      // have been dropped.
      for (const PrepareEntry &p : preparedFunctions(prepareEntry)) {
        auto wrapper = lowered->lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_" +
                                                               p.funcName);
        size_t expected = p.inputs.size() + p.results.size();
        if (!wrapper || wrapper.getNumArguments() != expected)
          return makeError("the C interface of @" + p.funcName +
                           " does not take exactly its " + Twine(expected) +
                           " inputs and destinations");
      }
      llvm::LLVMContext llvmContext;
      auto llvmModule = translateToLLVMIR(*lowered, llvmContext, **tm, optLevel,
                                          codegenTarget.tuneCPU);
      if (!llvmModule)
        return llvmModule.takeError();
      if ((*llvmModule)->getNamedGlobal("llvm.global_ctors"))
        return makeError("the CPU code has global constructors, which the "
                         "in-memory linker does not run");
      addPackedWrappers(**llvmModule);
      llvm::SmallString<0> buffer;
      llvm::raw_svector_ostream os(buffer);
      if (Error e = emitMachineCode(**llvmModule, **tm,
                                    llvm::CodeGenFileType::ObjectFile, os))
        return std::move(e);
      object = std::string(buffer.str());
      if (cache) {
        if (Error e =
                cache->store(key, object, serializePrepareEntry(prepareEntry)))
          cacheState += ", not stored: " + llvm::toString(std::move(e));
        else if (cacheState == "cache miss")
          cacheState += ", stored";
      }
    }

    // Link the object in memory with ORC; unresolved symbols come from the
    // process and the runtime libraries (loaded into it first).
    for (StringRef lib : libs) {
      std::string err;
      if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(lib.str().c_str(),
                                                            &err))
        return makeError("cannot load " + lib + ": " + err);
    }
    auto lljit =
        llvm::orc::LLJITBuilder()
            .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession &es)
                                              -> Expected<std::unique_ptr<
                                                  llvm::orc::ObjectLayer>> {
              auto layer =
                  std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                      es, [](const llvm::MemoryBuffer &) {
                        return std::make_unique<llvm::SectionMemoryManager>();
                      });
              if (getenv("BLOCKC_PERF_JIT"))
                if (auto *l =
                        llvm::JITEventListener::createPerfJITEventListener())
                  layer->registerJITEventListener(*l);
              return layer;
            })
            .create();
    if (!lljit)
      return lljit.takeError();
    const llvm::DataLayout &dl = (*lljit)->getDataLayout();
    auto generator =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            dl.getGlobalPrefix());
    if (!generator)
      return generator.takeError();
    (*lljit)->getMainJITDylib().addGenerator(std::move(*generator));
    if (Error e = (*lljit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
            object, "blockc-" + sig.funcName + ".o")))
      return std::move(e);

    std::unique_ptr<BlockJit> jit(new BlockJit());
    jit->lljit = std::move(*lljit);
    jit->cacheState = cacheState;
    jit->entry = "_mlir_ciface_" + sig.funcName;
    jit->activationType = getHostElementType(sig.resultType.getElementType());
    jit->prepareEntry = std::move(prepareEntry);
    jit->target = target;
    jit->pagedPools = std::move(pagedPools);
    // Link now, so that compile time is accounted here and not in the
    // first run, and a missing symbol is an error of compile().
    if (auto fn = jit->lljit->lookup("_mlir_" + jit->entry); !fn)
      return fn.takeError();
    for (const PrepareEntry &p : preparedFunctions(jit->prepareEntry))
      if (auto fn = jit->lljit->lookup("_mlir__mlir_ciface_" + p.funcName); !fn)
        return fn.takeError();
    return std::move(jit);
  }

  if (auto result =
          lowerModule(*lowered, options, CompileStage::LLVMDialect, sig);
      !result)
    return result.takeError();
  // The host code of a GPU run calls mgpu* from the GPU runtime, which
  // must be loaded before the JIT resolves them.
  bool emulated = options.emulate;
  Expected<GPURuntime *> runtime = loadGPURuntime(emulated);
  if (!runtime)
    return runtime.takeError();
  GPURuntime *gpu = *runtime;
  if (gpu->clearError)
    gpu->clearError();

  // The host code is optimised as the CPU path's (optimizeLLVMModule), for
  // a target machine of its own: the engine takes `tm` into its JIT.
  auto optTM =
      createHostTargetMachine(/*relocModel=*/std::nullopt, codegenTarget);
  if (!optTM)
    return optTM.takeError();
  std::shared_ptr<llvm::TargetMachine> machine = std::move(*optTM);
  // The options hold a function_ref: the lambda must outlive create().
  auto optimize = [machine, optLevel](llvm::Module *m) {
    return optimizeLLVMModule(*m, *machine, optLevel);
  };
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  libs.push_back(gpu->path);
  engineOptions.sharedLibPaths = libs;
  auto engine =
      ExecutionEngine::create(*lowered, engineOptions, std::move(*tm));
  if (!engine)
    return engine.takeError();

  std::unique_ptr<BlockJit> jit(new BlockJit());
  jit->cacheState = "not cached: NVPTX";
  jit->engine = std::move(*engine);
  jit->entry = "_mlir_ciface_" + sig.funcName;
  jit->activationType = getHostElementType(sig.resultType.getElementType());
  jit->target = target;
  jit->emulated = emulated;
  jit->pagedPools = std::move(pagedPools);
  // Materialise the code now (the JIT is lazy), so that compile time is
  // accounted here and not in the first run.
  auto fn = jit->engine->lookupPacked(jit->entry);
  if (!fn)
    return fn.takeError();
  // Run the global constructors now: on a GPU they load the kernels' module
  // (the PTX JIT of the driver), and a failure is reported here instead of
  // surfacing inside the first run.
  jit->engine->initialize();
  if (gpu->lastError())
    return makeError(Twine("loading the GPU kernels failed: ") +
                     gpu->lastError());
  return std::move(jit);
}

Error BlockJit::invokePacked(StringRef name, MutableArrayRef<void *> packed) {
  if (engine) {
    if (Error e = engine->invokePacked(name, packed))
      return e;
  } else {
    auto fn = lljit->lookup(("_mlir_" + name).str());
    if (!fn)
      return fn.takeError();
    fn->toPtr<void (*)(void **)>()(packed.data());
  }
  // Emulated, the host code must have waited for every stream it queued
  // work on before it returned, as it must on a GPU.
  if (target == JitTarget::NVPTX && emulated) {
    Expected<GPURuntime *> runtime = loadGPURuntime(/*emulated=*/true);
    if (!runtime)
      return runtime.takeError();
    if ((*runtime)->checkStreams() != 0)
      return makeError(Twine("GPU execution failed: ") +
                       (*runtime)->lastError());
  }
  return Error::success();
}

Expected<int64_t> BlockJit::prepare(ArrayRef<HostTensor *> args) {
  preparePeak = 0;
  if (!prepareEntry)
    return 0;
  const PrepareEntry &p = *prepareEntry;
  for (unsigned i : p.inputs)
    if (i >= args.size() || !args[i])
      return makeError("@" + p.funcName + " reads argument #" + Twine(i) +
                       ", which was not given");
  for (const PreparedWeight &w : p.results)
    if (w.argIndex >= args.size() || !args[w.argIndex])
      return makeError("@" + p.funcName + " prepares argument #" +
                       Twine(w.argIndex) + ", which was not given");
  // The weights held: the originals not yet replaced, and the prepared
  // tensors made so far.
  int64_t held = 0;
  for (const PreparedWeight &w : p.results)
    held += args[w.argIndex]->numElements() * args[w.argIndex]->elementBytes();
  // One weight at a time through the parts, so that the weights are held
  // about once (plus one prepared weight), not twice; all at once through
  // the prepare function itself when it has no parts.
  int64_t bytes = 0;
  for (const PrepareEntry &call :
       p.parts.empty() ? ArrayRef<PrepareEntry>(p) : ArrayRef(p.parts)) {
    Expected<int64_t> made = runPrepareFunction(call, args, held);
    if (!made)
      return made.takeError();
    bytes += *made;
  }
  return bytes;
}

Expected<int64_t> BlockJit::runPrepareFunction(const PrepareEntry &p,
                                               ArrayRef<HostTensor *> args,
                                               int64_t &held) {
  // The C interface: one descriptor pointer per input and per destination,
  // no results (blockc-drop-inplace-results drops the returned
  // destinations). The destinations are the prepared tensors' own storage:
  // the function packs into them in place.
  std::vector<HostTensor> prepared(p.results.size());
  std::vector<std::vector<int64_t>> descriptors;
  for (unsigned i : p.inputs)
    descriptors.push_back(makeDescriptor(*args[i]));
  int64_t bytes = 0;
  for (auto [w, t] : llvm::zip_equal(p.results, prepared)) {
    t.shape = w.shape;
    t.elementType = w.elementType;
    int64_t n = t.numElements();
    t.allocate(); // huge pages advised

    descriptors.push_back(makeDescriptor(t));
    bytes += n * static_cast<int64_t>(t.elementBytes());
  }
  held += bytes;
  preparePeak = std::max(preparePeak, held);
  std::vector<void *> argPtrs;
  for (std::vector<int64_t> &d : descriptors)
    argPtrs.push_back(d.data());
  std::vector<void *> packed;
  for (void *&ptr : argPtrs)
    packed.push_back(&ptr);
  if (Error e = invokePacked("_mlir_ciface_" + p.funcName, packed))
    return std::move(e);
  // Each prepared tensor replaces (and releases) its original.
  for (auto [w, t] : llvm::zip_equal(p.results, prepared)) {
    HostTensor &original = *args[w.argIndex];
    held -= original.numElements() * original.elementBytes();
    original.release();
    original = std::move(t);
  }
  return bytes;
}

Expected<std::vector<int64_t>>
BlockJit::deviceDescriptor(size_t slot, const HostTensor &t, bool copyData) {
  Expected<GPURuntime *> runtime = loadGPURuntime(emulated);
  if (!runtime)
    return runtime.takeError();
  GPURuntime *gpu = *runtime;
  if (deviceArgs.size() <= slot)
    deviceArgs.resize(slot + 1);
  DeviceCopy &copy = deviceArgs[slot];
  size_t count = t.numElements() * t.elementBytes(); // bytes
  bool reuse = copy.device && copy.count == count;
  if (!reuse) {
    if (copy.device)
      gpu->memFree(copy.device, nullptr);
    copy = {};
    size_t bytes = std::max<size_t>(count, 1);
    copy.device = gpu->memAlloc(bytes, nullptr, true);
    if (!copy.device)
      return makeError(Twine("GPU allocation failed: ") +
                       (gpu->lastError() ? gpu->lastError() : "unknown"));
    copy.count = count;
    copyData = true;
  }
  if ((copyData || copy.host != t.bytes()) && count > 0)
    std::memcpy(copy.device, t.bytes(), count);
  copy.host = t.bytes();
  std::vector<int64_t> desc = makeDescriptor(t);
  desc[0] = desc[1] = reinterpret_cast<int64_t>(copy.device);
  return desc;
}

Error BlockJit::argumentDescriptors(
    ArrayRef<const HostTensor *> args, WeightReuse reuseWeights,
    std::vector<std::vector<int64_t>> &descriptors) {
  bool gpu = target == JitTarget::NVPTX;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!gpu) {
      descriptors.push_back(makeDescriptor(*args[i]));
      continue;
    }
    // Kernels read device-accessible memory. Every argument is copied on
    // every run, unless the caller vouches that the weights (every argument
    // but the first) are the same tensors, unchanged since the previous
    // run: a weight updated in place at the same address must not be
    // missed.
    bool copyData = i == 0 || reuseWeights == WeightReuse::Copy;
    Expected<std::vector<int64_t>> desc =
        deviceDescriptor(i, *args[i], copyData);
    if (!desc)
      return desc.takeError();
    descriptors.push_back(std::move(*desc));
  }
  return Error::success();
}

/// The activation argument as the entry takes it: converted from the
/// host's f32 when the model's type is narrower (`storage` holds it).
static std::vector<const HostTensor *>
withEntryActivation(ArrayRef<const HostTensor *> args, ElementType type,
                    HostTensor &storage) {
  std::vector<const HostTensor *> result(args.begin(), args.end());
  if (!result.empty() && result[0]->elementType != type) {
    storage = convertElements(*result[0], type);
    result[0] = &storage;
  }
  return result;
}

Error BlockJit::run(ArrayRef<const HostTensor *> hostArgs, HostTensor &out,
                    WeightReuse reuseWeights) {
  HostTensor converted;
  std::vector<const HostTensor *> args =
      withEntryActivation(hostArgs, activationType, converted);
  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(args.size());
  if (Error e = argumentDescriptors(args, reuseWeights, descriptors))
    return e;
  return invoke(descriptors, std::nullopt, 0, out, target == JitTarget::NVPTX);
}

Error BlockJit::runDecode(ArrayRef<const HostTensor *> hostArgs,
                          int64_t position, ArrayRef<HostTensor *> caches,
                          bool headMajor, HostTensor &out,
                          WeightReuse reuseWeights) {
  HostTensor converted;
  std::vector<const HostTensor *> args =
      withEntryActivation(hostArgs, activationType, converted);
  bool gpu = target == JitTarget::NVPTX;
  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(args.size() + caches.size());
  if (Error e = argumentDescriptors(args, reuseWeights, descriptors))
    return e;
  for (size_t j = 0; j < caches.size(); ++j) {
    HostTensor *c = caches[j];
    if (c->shape.size() != 4)
      return makeError("a KV cache must have rank 4");
    std::vector<int64_t> desc;
    if (gpu) {
      // The caches live in device memory; the kernels append to them in
      // place. The host tensors mirror them: copied in before the step and
      // back after it (so a session can reset or inspect them).
      Expected<std::vector<int64_t>> device =
          deviceDescriptor(args.size() + j, *c, /*copyData=*/true);
      if (!device)
        return device.takeError();
      desc = std::move(*device);
    } else {
      desc = makeDescriptor(*c);
    }
    if (headMajor) {
      // Memory [B, H, L, D] seen as the tensor [B, L, H, D]: swap the sizes
      // and strides of dims 1 and 2.
      std::swap(desc[3 + 1], desc[3 + 2]);
      std::swap(desc[7 + 1], desc[7 + 2]);
    }
    descriptors.push_back(std::move(desc));
  }
  if (Error e = invoke(descriptors, position, caches.size(), out, gpu))
    return e;
  if (gpu)
    for (size_t j = 0; j < caches.size(); ++j)
      if (caches[j]->numElements() > 0)
        std::memcpy(caches[j]->bytes(), deviceArgs[args.size() + j].device,
                    caches[j]->numElements() * caches[j]->elementBytes());
  return Error::success();
}

Error BlockJit::runPaged(ArrayRef<const HostTensor *> hostArgs,
                         ArrayRef<int32_t> cuSeqlens,
                         ArrayRef<int32_t> seqPositions,
                         ArrayRef<int32_t> blockTable, int64_t maxPages,
                         ArrayRef<HostTensor *> pools, HostTensor &out,
                         WeightReuse reuseWeights, bool poolsOnDevice) {
  if (pagedPools.empty())
    return makeError("runPaged: the compiled entry is not a paged entry "
                     "(transformer-derive-paged-decode)");
  if (hostArgs.empty())
    return makeError("runPaged: no input");
  // The ragged batch, checked here so that the compiled code's asserts
  // stay a last resort.
  size_t numSeq = seqPositions.size();
  if (cuSeqlens.size() != numSeq + 1)
    return makeError("runPaged: cu_seqlens has " + Twine(cuSeqlens.size()) +
                     " elements for " + Twine(numSeq) +
                     " sequences (B + 1 expected)");
  if (cuSeqlens[0] != 0)
    return makeError("runPaged: cu_seqlens[0] must be 0, got " +
                     Twine(cuSeqlens[0]));
  if (maxPages < 1 ||
      blockTable.size() != numSeq * static_cast<size_t>(maxPages))
    return makeError("runPaged: the block table has " +
                     Twine(blockTable.size()) +
                     " entries, expected B x "
                     "max_pages = " +
                     Twine(numSeq) + " x " + Twine(maxPages));
  if (pools.size() != pagedPools.size())
    return makeError("runPaged: " + Twine(pools.size()) +
                     " pools given, the entry takes " +
                     Twine(pagedPools.size()));
  int64_t numPages = -1;
  for (auto [i, pool] : llvm::enumerate(pools)) {
    RankedTensorType type = pagedPools[i];
    ElementType elt = getHostElementType(type.getElementType());
    bool shapeOk = pool->shape.size() == 4 &&
                   pool->shape[1] == type.getDimSize(1) &&
                   pool->shape[2] == type.getDimSize(2) &&
                   pool->shape[3] == type.getDimSize(3) &&
                   (numPages < 0 || pool->shape[0] == numPages);
    if (!shapeOk || pool->elementType != elt)
      return makeError(
          "runPaged: pool #" + Twine(i) + " must be a " +
          stringifyElementType(elt) + " tensor [num_pages, " +
          Twine(type.getDimSize(1)) + ", " + Twine(type.getDimSize(2)) + ", " +
          Twine(type.getDimSize(3)) + "] (num_pages the same for every pool)");
    numPages = pool->shape[0];
  }
  int64_t pageSize = pagedPools.front().getDimSize(1);
  for (size_t b = 0; b < numSeq; ++b) {
    int64_t count = int64_t(cuSeqlens[b + 1]) - cuSeqlens[b];
    if (count < 0)
      return makeError("runPaged: cu_seqlens must not decrease (sequence " +
                       Twine(b) + ")");
    if (seqPositions[b] < 0)
      return makeError("runPaged: sequence " + Twine(b) +
                       " has a negative position " + Twine(seqPositions[b]));
    if (count == 0)
      continue;
    int64_t last = int64_t(seqPositions[b]) + count - 1;
    if (last / pageSize >= maxPages)
      return makeError("runPaged: sequence " + Twine(b) + " reaches position " +
                       Twine(last) + ", past its " + Twine(maxPages) +
                       " pages of " + Twine(pageSize) + " tokens");
    for (int64_t p = 0; p <= last / pageSize; ++p) {
      int32_t page = blockTable[b * maxPages + p];
      if (page < 0 || page >= numPages)
        return makeError("runPaged: block_table[" + Twine(b) + ", " + Twine(p) +
                         "] = " + Twine(page) +
                         " is not a page of the pools (0 .. " +
                         Twine(numPages - 1) + ")");
    }
  }
  int64_t total = cuSeqlens[numSeq];
  if (hostArgs[0]->shape.empty() || hostArgs[0]->shape[0] != total)
    return makeError("runPaged: the packed input must have cu_seqlens[B] = " +
                     Twine(total) + " rows");
  if (out.shape.empty() || out.shape[0] != total)
    return makeError("runPaged: the output must have cu_seqlens[B] = " +
                     Twine(total) + " rows");

  HostTensor converted;
  std::vector<const HostTensor *> args =
      withEntryActivation(hostArgs, activationType, converted);
  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(args.size() + 3 + pools.size());
  if (Error e = argumentDescriptors(args, reuseWeights, descriptors))
    return e;
  // The int32 arrays, read only by the entry.
  auto int32Descriptor = [](ArrayRef<int32_t> a, ArrayRef<int64_t> shape) {
    auto ptr = reinterpret_cast<int64_t>(a.data());
    std::vector<int64_t> desc = {ptr, ptr, 0};
    desc.insert(desc.end(), shape.begin(), shape.end());
    int64_t stride = 1;
    std::vector<int64_t> strides(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= shape[i];
    }
    desc.insert(desc.end(), strides.begin(), strides.end());
    return desc;
  };
  descriptors.push_back(int32Descriptor(cuSeqlens, {int64_t(numSeq) + 1}));
  descriptors.push_back(int32Descriptor(seqPositions, {int64_t(numSeq)}));
  descriptors.push_back(
      int32Descriptor(blockTable, {int64_t(numSeq), maxPages}));
  bool gpu = target == JitTarget::NVPTX;
  size_t firstPool = args.size() + 3;
  if (gpu) {
    // The kernels read the batch from device memory: the three arrays are
    // copied in (as an activation is), through host tensors of their
    // bits.
    for (size_t i = 0; i < 3; ++i) {
      std::vector<int64_t> &desc = descriptors[args.size() + i];
      size_t rank = (desc.size() - 3) / 2;
      int64_t count = 1;
      for (size_t r = 0; r < rank; ++r)
        count *= desc[3 + r];
      HostTensor bits;
      bits.shape = {count};
      bits.elementType = ElementType::F32; // four bytes each
      bits.data.resize(count);
      if (count > 0)
        std::memcpy(bits.data.data(), reinterpret_cast<void *>(desc[1]),
                    count * sizeof(int32_t));
      Expected<std::vector<int64_t>> device =
          deviceDescriptor(args.size() + i, bits, /*copyData=*/true);
      if (!device)
        return device.takeError();
      desc[0] = desc[1] = (*device)[0];
    }
  }
  for (auto [j, pool] : llvm::enumerate(pools)) {
    if (!gpu || poolsOnDevice) {
      descriptors.push_back(makeDescriptor(*pool));
      continue;
    }
    // The pools live in device memory, written in place by the page
    // writes; the host tensors mirror them (copied in before the call and
    // back after it), as runDecode's caches.
    Expected<std::vector<int64_t>> device =
        deviceDescriptor(firstPool + j, *pool, /*copyData=*/true);
    if (!device)
      return device.takeError();
    descriptors.push_back(std::move(*device));
  }
  if (Error e = invoke(descriptors, std::nullopt, 0, out, gpu))
    return e;
  if (gpu && !poolsOnDevice)
    for (auto [j, pool] : llvm::enumerate(pools))
      if (pool->numElements() > 0)
        std::memcpy(pool->bytes(), deviceArgs[firstPool + j].device,
                    pool->numElements() * pool->elementBytes());
  return Error::success();
}

Expected<HostTensor> BlockJit::allocateDeviceTensor(std::vector<int64_t> shape,
                                                    ElementType type) {
  if (target != JitTarget::NVPTX)
    return makeError("allocateDeviceTensor: a CPU entry has no device memory");
  Expected<GPURuntime *> runtime = loadGPURuntime(emulated);
  if (!runtime)
    return runtime.takeError();
  GPURuntime *gpu = *runtime;
  HostTensor t;
  t.shape = std::move(shape);
  t.elementType = type;
  size_t bytes = std::max<size_t>(t.numElements() * t.elementBytes(), 1);
  void *device = gpu->memAlloc(bytes, nullptr, true);
  if (!device)
    return makeError(
        Twine("GPU allocation of ") + Twine(bytes) +
        " bytes failed: " + (gpu->lastError() ? gpu->lastError() : "unknown"));
  std::memset(device, 0, bytes);
  t.borrowed = device;
  t.keepAlive = std::shared_ptr<const void>(device, [gpu](const void *p) {
    gpu->memFree(const_cast<void *>(p), nullptr);
  });
  return t;
}

Error BlockJit::invoke(std::vector<std::vector<int64_t>> &descriptors,
                       std::optional<int64_t> position, size_t numCaches,
                       HostTensor &out, bool gpu) {
  // The result is copied (and widened) into `out`.
  if (out.elementType != ElementType::F32 ||
      static_cast<int64_t>(out.data.size()) != out.numElements())
    return makeError("the output tensor must be an allocated f32 tensor "
                     "(activations are f32 on the host)");
  // The C interface returns the (dynamically shaped) result through a
  // descriptor passed first; the buffer is malloc'ed by the callee and owned
  // by the caller.
  size_t rank = out.shape.size();
  std::vector<int64_t> result(3 + 2 * rank, 0);
  // invokePacked takes one pointer per argument; each C-interface argument
  // is itself a pointer to a descriptor, the position an index by value.
  int64_t pos = position.value_or(0);
  size_t numArgs = descriptors.size() + 1 + (position ? 1 : 0);
  std::vector<void *> argPtrs;
  argPtrs.reserve(numArgs);
  argPtrs.push_back(result.data());
  size_t firstCache = descriptors.size() - numCaches;
  for (size_t i = 0; i < descriptors.size(); ++i) {
    if (position && i == firstCache)
      argPtrs.push_back(nullptr); // placeholder for the position
    argPtrs.push_back(descriptors[i].data());
  }
  if (position && firstCache == descriptors.size())
    argPtrs.push_back(nullptr);
  std::vector<void *> packed(argPtrs.size());
  for (size_t i = 0; i < argPtrs.size(); ++i)
    packed[i] = &argPtrs[i];
  if (position)
    packed[1 + firstCache] = &pos;
  if (gpu) {
    Expected<GPURuntime *> runtime = loadGPURuntime(emulated);
    if (!runtime)
      return runtime.takeError();
    if ((*runtime)->clearError)
      (*runtime)->clearError();
  }
  if (Error e = invokePacked(entry, packed))
    return e;
  GPURuntime *cuda = nullptr;
  if (gpu) {
    Expected<GPURuntime *> runtime = loadGPURuntime(emulated);
    if (!runtime)
      return runtime.takeError();
    cuda = *runtime;
    if (cuda->lastError())
      return makeError(Twine("GPU execution failed: ") + cuda->lastError());
  }

  auto *allocated = reinterpret_cast<char *>(result[0]);
  auto *aligned = reinterpret_cast<const char *>(result[1]);
  int64_t offset = result[2];
  // The result is in the model's type; the host's `out` is f32.
  size_t eltBytes = activationType == ElementType::F32 ? 4 : 2;
  auto load = [&](int64_t i) -> float {
    const char *p = aligned + i * eltBytes;
    uint16_t bits;
    switch (activationType) {
    case ElementType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ElementType::BF16:
      std::memcpy(&bits, p, 2);
      return bfloat16ToFloat(bits);
    case ElementType::F16:
      std::memcpy(&bits, p, 2);
      return halfToFloat(bits);
    }
    return 0.0f;
  };
  Error status = Error::success();
  for (size_t i = 0; i < rank && !status; ++i)
    if (result[3 + i] != out.shape[i])
      status = makeError("the compiled block returned a result of an "
                         "unexpected shape");
  // A dense row-major result (the usual case) is one memcpy; a strided one
  // is copied element by element (the index loop cost 2% of the small
  // block's time at T = 128 when it was the only path).
  bool dense = !status;
  for (int64_t i = int64_t(rank) - 1, stride = 1; dense && i >= 0; --i) {
    if (out.shape[i] != 1 && result[3 + rank + i] != stride)
      dense = false;
    stride *= out.shape[i];
  }
  if (dense && activationType == ElementType::F32) {
    if (out.numElements() > 0)
      std::memcpy(out.data.data(), aligned + offset * eltBytes,
                  sizeof(float) * out.numElements());
  } else if (dense) {
    for (int64_t i = 0, n = out.numElements(); i < n; ++i)
      out.data[i] = load(offset + i);
  } else if (!status) {
    // Copy a possibly strided result into the dense output.
    std::vector<int64_t> index(rank, 0);
    int64_t n = out.numElements();
    for (int64_t linear = 0; linear < n; ++linear) {
      int64_t src = offset;
      for (size_t i = 0; i < rank; ++i)
        src += index[i] * result[3 + rank + i];
      out.data[linear] = load(src);
      for (size_t i = rank; i-- > 0;) {
        if (++index[i] < out.shape[i])
          break;
        index[i] = 0;
      }
    }
  }
  if (cuda) {
    cuda->memFree(allocated, nullptr);
  } else {
    std::free(allocated);
  }
  return status;
}
