/* Helpers of the C drivers of tiny.mlir's tensor-parallel objects
   (main_tp.c, main_tp_paged.c): a rank's part of a weight, by the header's
   BLOCKC_forward_ARG<i>_TP_* macros. Include after the generated header and
   tiny_io.h. */
#ifndef BLOCKC_TEST_TINY_TP_H
#define BLOCKC_TEST_TINY_TP_H

#include <stdlib.h>
#include <string.h>

/* Rank `rank`'s part of the [rows, cols] (or [cols] when rows = 0) tensor
   `full`: the concatenation of ranges [begin, end) along `axis`. */
static inline float *part(const float *full, int64_t rows, int64_t cols,
                          int axis, const int64_t *ranges, int pairs,
                          int64_t *local) {
  int64_t r = rows ? rows : 1;
  *local = 0;
  for (int p = 0; p < pairs; ++p)
    if (ranges[2 * p] >= 0)
      *local += ranges[2 * p + 1] - ranges[2 * p];
  int64_t lr = rows && axis == 0 ? *local : r;
  int64_t lc = rows && axis == 0 ? cols : *local;
  float *out = calloc((size_t)(lr * lc), sizeof(float));
  float *o = out;
  if (rows && axis == 0) {
    for (int p = 0; p < pairs; ++p)
      for (int64_t i = ranges[2 * p]; i >= 0 && i < ranges[2 * p + 1];
           ++i, o += cols)
        memcpy(o, full + i * cols, (size_t)cols * sizeof(float));
  } else {
    for (int64_t i = 0; i < r; ++i)
      for (int p = 0; p < pairs; ++p)
        if (ranges[2 * p] >= 0) {
          int64_t n = ranges[2 * p + 1] - ranges[2 * p];
          memcpy(o, full + i * cols + ranges[2 * p], (size_t)n * sizeof(float));
          o += n;
        }
  }
  return out;
}

/* NAME: rank `rank`'s part of matrix argument I, read from file W of
   directory `dir` (both variables in scope). */
#define MATRIX(I, W, NAME)                                                     \
  int64_t full##I[] = BLOCKC_forward_ARG##I##_TP_FULL;                         \
  int64_t ranges##I[][2 * BLOCKC_forward_ARG##I##_TP_PAIRS] =                  \
      BLOCKC_forward_ARG##I##_TP_RANGES;                                       \
  float *all##I = readFile(dir, W, (size_t)(full##I[0] * full##I[1]));         \
  int64_t local##I;                                                            \
  float *p##I =                                                                \
      part(all##I, full##I[0], full##I[1], BLOCKC_forward_ARG##I##_TP_AXIS,    \
           ranges##I[rank], BLOCKC_forward_ARG##I##_TP_PAIRS, &local##I);      \
  int64_t rows##I =                                                            \
      BLOCKC_forward_ARG##I##_TP_AXIS == 0 ? local##I : full##I[0];            \
  int64_t cols##I =                                                            \
      BLOCKC_forward_ARG##I##_TP_AXIS == 1 ? local##I : full##I[1];            \
  blockc_memref_f32_2d NAME = {p##I, p##I, 0, {rows##I, cols##I}, {cols##I, 1}};

#endif /* BLOCKC_TEST_TINY_TP_H */
