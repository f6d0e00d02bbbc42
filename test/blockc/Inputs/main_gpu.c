/* Links an NVPTX object that `blockc -target=nvptx [--emulate] -emit=obj`
   wrote for Inputs/tiny.mlir against the GPU emulator's runtime, calls its
   entry point with arguments in the runtime's memory and writes the result.
   Usage: main DIR B T   (reads DIR/x.bin and DIR/w0.bin..w8.bin when T > 0;
   writes DIR/y.bin). Prints the result's shape and the runtime's error;
   exits 1 after an error. */
#include "tiny.h"
#include "tiny_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *blockcEmuLastError(void);

/* DIR/NAME in a buffer of the runtime's memory (at least one float). */
static float *readDevice(const char *dir, const char *name, size_t n) {
  float *data = mgpuMemAlloc((n ? n : 1) * sizeof(float), 0, 1);
  if (!data) {
    fprintf(stderr, "mgpuMemAlloc failed\n");
    exit(1);
  }
  if (n > 0)
    readInto(dir, name, data, n);
  return data;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const char *dir = argv[1];
  int64_t b = atoi(argv[2]), t = atoi(argv[3]), d = 32;
  float *x = readDevice(dir, "x.bin", (size_t)(b * t * d));
  blockc_memref_f32_3d in = {x, x, 0, {b, t, d}, {t * d, d, 1}};
  blockc_memref_f32_1d g1 = vec(readDevice(dir, "w0.bin", 32), 32);
  blockc_memref_f32_2d wq = mat(readDevice(dir, "w1.bin", 32 * 32), 32, 32);
  blockc_memref_f32_2d wk = mat(readDevice(dir, "w2.bin", 16 * 32), 16, 32);
  blockc_memref_f32_2d wv = mat(readDevice(dir, "w3.bin", 16 * 32), 16, 32);
  blockc_memref_f32_2d wo = mat(readDevice(dir, "w4.bin", 32 * 32), 32, 32);
  blockc_memref_f32_1d g2 = vec(readDevice(dir, "w5.bin", 32), 32);
  blockc_memref_f32_2d wg = mat(readDevice(dir, "w6.bin", 64 * 32), 64, 32);
  blockc_memref_f32_2d wu = mat(readDevice(dir, "w7.bin", 64 * 32), 64, 32);
  blockc_memref_f32_2d wd = mat(readDevice(dir, "w8.bin", 32 * 64), 32, 64);

  blockc_memref_f32_3d result;
  memset(&result, 0, sizeof result);
  _mlir_ciface_forward(&result, &in, &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu,
                       &wd);
  printf("result [%lld, %lld, %lld]\n", (long long)result.sizes[0],
         (long long)result.sizes[1], (long long)result.sizes[2]);
  const char *error = blockcEmuLastError();
  printf("error: %s\n", error ? error : "none");
  if (error)
    return 1;
  writeResult(dir, &result);
  mgpuMemFree(result.allocated, 0); /* managed memory of the caller */
  return 0;
}
