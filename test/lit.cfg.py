# -*- Python -*-
# lit configuration for the blockc regression tests (test/).

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "BLOCKC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.blockc_obj_root, "test")
# Unit/ has its own configuration (GoogleTest format); Inputs/ hold data.
config.excludes = ["Inputs", "Unit", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.blockc_tools_dir, append_path=True)
# blockc-run's compile cache (docs/CompileCache.md) lives under the build
# tree during tests, never in the user's ~/.cache; tests of the cache itself
# set XDG_CACHE_HOME to a directory of their own.
config.environment["XDG_CACHE_HOME"] = os.path.join(
    config.test_exec_root, "xdg-cache")

# blockc-run uses every core unless told otherwise; lit already runs tests
# in parallel, so each test's runs take one thread (tests of the default
# unset this).
config.environment["OMP_NUM_THREADS"] = "1"

ref = os.path.join(config.blockc_src_root, "utils", "blockc_ref.py")
config.substitutions.append(("%blockc_ref", f"{config.python3} {ref}"))
config.substitutions.append(("%python", config.python3))
# The blockc Python package from the build tree (python/, docs/Python.md).
config.substitutions.append((
    "%blockc_python",
    "env PYTHONPATH=%s %s" % (os.path.join(config.blockc_obj_root, "python"),
                              config.python3)))
bpe_ref = os.path.join(config.blockc_src_root, "utils", "bpe_ref.py")
config.substitutions.append(("%bpe_ref", f"{config.python3} {bpe_ref}"))
replay = os.path.join(config.blockc_src_root, "utils", "replay-pipeline.py")
config.substitutions.append(("%replay_pipeline", f"{config.python3} {replay}"))
config.substitutions.append(("%blockc_src_root", config.blockc_src_root))
config.substitutions.append(("%examples",
                             os.path.join(config.blockc_src_root, "examples")))
config.substitutions.append(("%host_cc", config.host_cc))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%blockc_obj_root", config.blockc_obj_root))
# CPU objects call the OpenMP runtime of LLVM 22 (libomp-22-dev).
config.substitutions.append(("%llvm_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%blockc_include",
                             os.path.join(config.blockc_src_root, "include")))

tools = ["blockc", "blockc-opt", "blockc-run", "blockc-import",
         "blockc-tokenize"]
llvm_config.add_tool_substitutions(tools, [config.blockc_tools_dir])

# The CUDA runtime library exists when the toolkit was found at configure
# time (it needs no GPU to build or to be inspected).
# An ASan/UBSan build (scripts/sanitize.sh): its shared libraries need the
# sanitizer runtime that an instrumented executable brings, so tests that
# load one into /usr/bin/python3 or link it from a plain C program do not
# run there.
if getattr(config, "blockc_sanitizers", False):
    config.available_features.add("sanitizers")

cuda_runtime = os.path.join(config.blockc_lib_dir, "libblockc_cuda_runtime.so")
config.substitutions.append(("%blockc_cuda_runtime", cuda_runtime))
if os.path.exists(cuda_runtime):
    config.available_features.add("cuda-runtime")

# The GPU emulator's runtime (always built) and what mlir-runner needs to run
# hand-written kernels on it (test/Emulator).
emulator_runtime = os.path.join(config.blockc_lib_dir,
                                "libblockc_emulator_runtime.so")
config.substitutions.append(("%blockc_emulator_runtime", emulator_runtime))
config.substitutions.append(("%blockc_lib_dir", config.blockc_lib_dir))
runner_libs = ",".join([emulator_runtime] + [
    os.path.join(config.mlir_lib_dir, lib)
    for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")])
config.substitutions.append((
    "%emulator_runner",
    f"mlir-runner -e main -entry-point-result=void -shared-libs={runner_libs}"))

# Optional features.
# avx512: the host runs AVX-512 code (-isa=avx512 kernels; AVX2 code runs on
# every x86-64 machine the project targets).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((l.split(":", 1)[1].split() for l in cpuinfo
                      if l.startswith("flags")), [])
    if all(f in flags for f in ("avx512f", "avx512vl", "avx512bw",
                                "avx512dq")):
        config.available_features.add("avx512")
        # avx512bf16: vdpbf16ps runs here (-cpu-features=avx512bf16).
        if "avx512_bf16" in flags:
            config.available_features.add("avx512bf16")
        # amx: AMX-BF16 tiles run here (-cpu-features=amx-bf16).
        if "amx_bf16" in flags and "amx_tile" in flags:
            config.available_features.add("amx")
except OSError:
    pass
try:
    subprocess.run([config.python3, "-c", "import numpy"], check=True,
                   capture_output=True)
    config.available_features.add("numpy")
except (OSError, subprocess.CalledProcessError):
    pass
# sentencepiece: spm_train and Debian's python3-sentencepiece, to train a
# SentencePiece model in a test and check blockc's tokenizer against the
# library's Python binding (docs/Tokenizers.md).
try:
    if shutil.which("spm_train"):
        subprocess.run([config.python3, "-c", "import sentencepiece"],
                       check=True, capture_output=True)
        config.available_features.add("sentencepiece")
except (OSError, subprocess.CalledProcessError):
    pass
# Tensor parallelism (docs/TensorParallel.md): Open MPI's mpirun, allowed
# to run as root (CI containers) and to start more ranks than cores, every
# job bounded in time so that a hang fails the test instead of the suite.
if config.blockc_enable_mpi and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append((
        "%mpirun",
        "timeout 300 mpirun --allow-run-as-root --oversubscribe "
        "--mca btl self,vader"))
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
# cuda: a GPU is visible. The GPU tests compile for the first GPU's own
# architecture: %gpu_arch is sm_XY for compute capability X.Y, with the
# arch-specific suffix where blockc uses those features (sm_90a, sm_100a),
# and %gpu_arch_base the same without it (sm_90: Hopper on the mma.sync
# kernels); sm_80 when the capability cannot be read. Features: cuda-sm80
# from 8.0 on (bf16 tensor cores), cuda-sm90 on 9.x (wgmma, TMA).
def gpu_compute_capability():
    try:
        query = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20)
        major, minor = query.stdout.splitlines()[0].strip().split(".")
        return int(major), int(minor)
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return None


if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                          timeout=20).returncode == 0:
            config.available_features.add("cuda")
    except (OSError, subprocess.TimeoutExpired):
        pass
if "cuda" in config.available_features:
    capability = gpu_compute_capability() or (8, 0)
    base = "sm_%d%d" % capability
    specific = base + "a" if capability in ((9, 0), (10, 0)) else base
    # %gpu_arch_base first: lit substitutes in order, and %gpu_arch is its
    # prefix.
    config.substitutions.append(("%gpu_arch_base", base))
    config.substitutions.append(("%gpu_arch", specific))
    # Only architectures blockc knows (docs/GPU.md#chips) run the tensor-core
    # tests; on others (sm_87, sm_120, ...) they are unsupported.
    known = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100"}
    if capability >= (8, 0) and base in known:
        config.available_features.add("cuda-sm80")
    if capability[0] == 9:
        config.available_features.add("cuda-sm90")
    lit_config.note("GPU tests compile for %s (compute capability %d.%d)"
                    % (specific, capability[0], capability[1]))
