// Driver errors: each is one clear message, a nonzero exit and no output.

// RUN: rm -rf %t && mkdir -p %t
// RUN: not blockc %s -emit=obj -o %t/out.o 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: test ! -e %t/out.o && test ! -e %t/out.h
// RUN: not blockc %S/Inputs/tiny.mlir -target=cpu -emit=ptx 2>&1 | FileCheck %s --check-prefix=PTXCPU
// RUN: not blockc %S/Inputs/tiny.mlir -target=nvptx -gpu-binary=elf -emit=llvm-mlir 2>&1 | FileCheck %s --check-prefix=GPUBIN
// RUN: not blockc %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not blockc %S/Inputs/tiny.mlir -emit=obj -o %t/no/such/dir/b.o 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not blockc %S/Inputs/tiny.mlir -emit=obj -o - 2>&1 | FileCheck %s --check-prefix=OBJSTDOUT
// RUN: not blockc %S/Inputs/tiny.mlir --entry=nope -emit=linalg 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not blockc %S/Inputs/tiny.mlir -O9 -emit=linalg 2>&1 | FileCheck %s --check-prefix=OPT

// VERIFY: errors.mlir:[[@LINE+3]]:8: error: 'transformer.rms_norm' op expects weight to have shape [16], got [8]
func.func @forward(%x: tensor<?x?x16xf32>, %g: tensor<8xf32>)
    -> tensor<?x?x16xf32> {
  %y = transformer.rms_norm %x, %g : tensor<?x?x16xf32>, tensor<8xf32>
  return %y : tensor<?x?x16xf32>
}

// PTXCPU: error: -emit=ptx|cubin|fatbin need -target=nvptx
// GPUBIN: blockc: for the --gpu-binary option: Cannot find option named 'elf'!
// MISSING: error: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// UNWRITABLE: error: {{.*}}no/such/dir/b.{{o|h}}
// OBJSTDOUT: error: -emit=obj|cubin|fatbin need an output file (-o)
// ENTRY: error: no entry function @nope
// OPT: error: -O must be 0, 1, 2 or 3
