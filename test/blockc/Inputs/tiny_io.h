/* Helpers shared by the C drivers of tiny.mlir's compiled entries (main.c,
   main_decode.c, main_gpu.c): raw f32 files and memref descriptors. Include
   after the generated header. */
#ifndef BLOCKC_TEST_TINY_IO_H
#define BLOCKC_TEST_TINY_IO_H

#include <stdio.h>
#include <stdlib.h>

/* Reads n floats from DIR/NAME into data; exits on error. */
static inline void readInto(const char *dir, const char *name, float *data,
                            size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  if (fread(data, sizeof(float), n, f) != n) {
    fprintf(stderr, "%s: short read\n", path);
    exit(1);
  }
  fclose(f);
}

/* DIR/NAME in a malloc'ed buffer of n floats. */
static inline float *readFile(const char *dir, const char *name, size_t n) {
  float *data = malloc(n * sizeof(float));
  readInto(dir, name, data, n);
  return data;
}

static inline blockc_memref_f32_1d vec(float *p, int64_t n) {
  blockc_memref_f32_1d m = {p, p, 0, {n}, {1}};
  return m;
}

static inline blockc_memref_f32_2d mat(float *p, int64_t r, int64_t c) {
  blockc_memref_f32_2d m = {p, p, 0, {r, c}, {c, 1}};
  return m;
}

#endif /* BLOCKC_TEST_TINY_IO_H */
