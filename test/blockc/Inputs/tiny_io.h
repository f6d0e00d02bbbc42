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

/* Writes the [B, T, d] result to DIR/y.bin, honouring its strides (dense
   in practice); exits on error. */
static inline void writeResult(const char *dir,
                               const blockc_memref_f32_3d *result) {
  char path[512];
  snprintf(path, sizeof path, "%s/y.bin", dir);
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(1);
  }
  const int64_t *n = result->sizes, *s = result->strides;
  for (int64_t i = 0; i < n[0]; ++i)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t k = 0; k < n[2]; ++k)
        fwrite(
            &result->aligned[result->offset + i * s[0] + j * s[1] + k * s[2]],
            sizeof(float), 1, f);
  fclose(f);
}

static inline blockc_memref_f32_1d vec(float *p, int64_t n) {
  blockc_memref_f32_1d m = {p, p, 0, {n}, {1}};
  return m;
}

static inline blockc_memref_f32_2d mat(float *p, int64_t r, int64_t c) {
  blockc_memref_f32_2d m = {p, p, 0, {r, c}, {c, 1}};
  return m;
}

#ifdef BLOCKC_MEMREF_F32_4D
/* A dense, zeroed [s0, s1, s2, s3] buffer: the destination of a prepared
   weight (the header's *_ARG<i>_SHAPE). */
static inline blockc_memref_f32_4d packedBuffer(const int64_t *s) {
  float *p = calloc((size_t)(s[0] * s[1] * s[2] * s[3]), sizeof(float));
  blockc_memref_f32_4d m = {p,
                            p,
                            0,
                            {s[0], s[1], s[2], s[3]},
                            {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1}};
  return m;
}
#endif

/* The weights of tiny.mlir (DIR/w0.bin..w8.bin), and with a prepare
   function PREP in the header (blockc-cpu-prepare-weights, on by default),
   the projections packed once by it, the originals freed. TINY_WEIGHTS(P)
   then names the entry's weight arguments (prepared where it takes them). */
#define TINY_LOAD_WEIGHTS(dir)                                                 \
  blockc_memref_f32_1d g1 = vec(readFile(dir, "w0.bin", 32), 32);              \
  blockc_memref_f32_2d wq = mat(readFile(dir, "w1.bin", 32 * 32), 32, 32);     \
  blockc_memref_f32_2d wk = mat(readFile(dir, "w2.bin", 16 * 32), 16, 32);     \
  blockc_memref_f32_2d wv = mat(readFile(dir, "w3.bin", 16 * 32), 16, 32);     \
  blockc_memref_f32_2d wo = mat(readFile(dir, "w4.bin", 32 * 32), 32, 32);     \
  blockc_memref_f32_1d g2 = vec(readFile(dir, "w5.bin", 32), 32);              \
  blockc_memref_f32_2d wg = mat(readFile(dir, "w6.bin", 64 * 32), 64, 32);     \
  blockc_memref_f32_2d wu = mat(readFile(dir, "w7.bin", 64 * 32), 64, 32);     \
  blockc_memref_f32_2d wd = mat(readFile(dir, "w8.bin", 32 * 64), 32, 64)

#define TINY_PREPARE(PREP)                                                     \
  const int64_t s2[4] = BLOCKC_##PREP##_ARG2_SHAPE,                            \
                s3[4] = BLOCKC_##PREP##_ARG3_SHAPE,                            \
                s4[4] = BLOCKC_##PREP##_ARG4_SHAPE,                            \
                s5[4] = BLOCKC_##PREP##_ARG5_SHAPE,                            \
                s7[4] = BLOCKC_##PREP##_ARG7_SHAPE,                            \
                s8[4] = BLOCKC_##PREP##_ARG8_SHAPE,                            \
                s9[4] = BLOCKC_##PREP##_ARG9_SHAPE;                            \
  blockc_memref_f32_4d p2 = packedBuffer(s2), p3 = packedBuffer(s3),           \
                       p4 = packedBuffer(s4), p5 = packedBuffer(s5),           \
                       p7 = packedBuffer(s7), p8 = packedBuffer(s8),           \
                       p9 = packedBuffer(s9);                                  \
  _mlir_ciface_##PREP(&g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu, &wd, &p2, &p3,   \
                      &p4, &p5, &p7, &p8, &p9);                                \
  free(wq.allocated);                                                          \
  free(wk.allocated);                                                          \
  free(wv.allocated);                                                          \
  free(wo.allocated);                                                          \
  free(wg.allocated);                                                          \
  free(wu.allocated);                                                          \
  free(wd.allocated)

#endif /* BLOCKC_TEST_TINY_IO_H */
