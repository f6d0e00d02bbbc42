/* Runs the tensor-parallel object that `blockc --tensor-parallel=2
   -emit=obj` wrote for Inputs/tiny.mlir on every rank of an MPI job: each
   rank reads the whole weights (DIR/w0.bin..w8.bin, arguments 1-9) and
   input, keeps the part of each weight that the header's
   BLOCKC_forward_ARG<i>_TP_* macros give its rank, calls the entry, and
   rank 0 writes DIR/y.bin. Usage: mpirun -np 2 main_tp DIR B T */
#include "tiny.h"
#include "tiny_io.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rank `rank`'s part of the [rows, cols] (or [cols] when rows = 0) tensor
   `full`: the concatenation of ranges [begin, end) along `axis`. */
static float *part(const float *full, int64_t rows, int64_t cols, int axis,
                   const int64_t *ranges, int pairs, int64_t *local) {
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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4 || size != BLOCKC_forward_TP_RANKS) {
    fprintf(stderr, "usage: mpirun -np %d main_tp DIR B T\n",
            BLOCKC_forward_TP_RANKS);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *dir = argv[1];
  int64_t b = atoi(argv[2]), t = atoi(argv[3]), d = 32;
  float *x = readFile(dir, "x.bin", (size_t)(b * t * d));
  blockc_memref_f32_3d in = {x, x, 0, {b, t, d}, {t * d, d, 1}};
  float *g1p = readFile(dir, "w0.bin", 32), *g2p = readFile(dir, "w5.bin", 32);
  blockc_memref_f32_1d g1 = {g1p, g1p, 0, {32}, {1}};
  blockc_memref_f32_1d g2 = {g2p, g2p, 0, {32}, {1}};
  MATRIX(2, "w1.bin", wq)
  MATRIX(3, "w2.bin", wk)
  MATRIX(4, "w3.bin", wv)
  MATRIX(5, "w4.bin", wo)
  MATRIX(7, "w6.bin", wg)
  MATRIX(8, "w7.bin", wu)
  MATRIX(9, "w8.bin", wd)

  blockc_memref_f32_3d result;
  _mlir_ciface_forward(&result, &in, &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu,
                       &wd);
  if (rank == 0) {
    writeResult(dir, &result);
    printf("rank 0 of %d ran forward on [%lld, %lld, %lld] with wq [%lld, "
           "%lld] and wo [%lld, %lld]\n",
           size, (long long)b, (long long)t, (long long)d,
           (long long)wq.sizes[0], (long long)wq.sizes[1],
           (long long)wo.sizes[0], (long long)wo.sizes[1]);
  }
  free(result.allocated);
  MPI_Finalize();
  return 0;
}
