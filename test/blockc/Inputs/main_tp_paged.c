/* Runs the paged entry of the tensor-parallel object that `blockc
   --tensor-parallel=2 --paged --page-size=4 --prepare-weights=false
   -emit=obj` wrote for Inputs/tiny.mlir on every rank of an MPI job: each
   rank keeps its part of each weight (BLOCKC_forward_ARG<i>_TP_*, as
   main_tp.c), allocates K/V pools of its own K/V heads (H_kv of the rank =
   its rows of w_k / the head dim) and runs the ragged batch of
   main_paged.c: prompts of 3 and 5 tokens in one call, then single tokens
   until both sequences have T = 7, the pages out of order. Rank 0 writes
   the outputs of all positions to DIR/y.bin [2, 7, 32].
   Usage: mpirun -np 2 main_tp_paged DIR */
#include "tiny.h"
#include "tiny_io.h"
#include "tiny_tp.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2 || size != BLOCKC_forward_TP_RANKS) {
    fprintf(stderr, "usage: mpirun -np %d main_tp_paged DIR\n",
            BLOCKC_forward_TP_RANKS);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *dir = argv[1];
  enum { B = 2, T = 7, D = 32, HD = 8, PAGES = 4, MAX_PAGES = 2 };
  const int64_t s = BLOCKC_forward_paged_PAGE_SIZE;
  float *x = readFile(dir, "x.bin", (size_t)(B * T * D));
  blockc_memref_f32_1d g1 = vec(readFile(dir, "w0.bin", D), D);
  blockc_memref_f32_1d g2 = vec(readFile(dir, "w5.bin", D), D);
  MATRIX(2, "w1.bin", wq)
  MATRIX(3, "w2.bin", wk)
  MATRIX(4, "w3.bin", wv)
  MATRIX(5, "w4.bin", wo)
  MATRIX(7, "w6.bin", wg)
  MATRIX(8, "w7.bin", wu)
  MATRIX(9, "w8.bin", wd)

  /* This rank's K and V pools [num_pages, S, H_kv of the rank, D]. */
  const int64_t hkv = wk.sizes[0] / HD;
  size_t poolElems = (size_t)(PAGES * s * hkv * HD);
  float *kp = calloc(poolElems, sizeof(float));
  float *vp = calloc(poolElems, sizeof(float));
  blockc_memref_f32_4d k0 = {
      kp, kp, 0, {PAGES, s, hkv, HD}, {s * hkv * HD, hkv * HD, HD, 1}};
  blockc_memref_f32_4d v0 = {
      vp, vp, 0, {PAGES, s, hkv, HD}, {s * hkv * HD, hkv * HD, HD, 1}};
  /* Sequence 0 lives in pages 3 and 0, sequence 1 in pages 1 and 2 (on
     every rank: the ranks share the block table). */
  int32_t table[B * MAX_PAGES] = {3, 0, 1, 2};
  blockc_memref_i32_2d blockTable = {
      table, table, 0, {B, MAX_PAGES}, {MAX_PAGES, 1}};

  const int64_t counts[][B] = {{3, 5}, {1, 1}, {1, 1}, {1, 0}, {1, 0}};
  int64_t cached[B] = {0, 0};
  float *y = malloc((size_t)(B * T * D) * sizeof(float));
  int64_t calls = 0;
  for (; calls < (int64_t)(sizeof counts / sizeof counts[0]); ++calls) {
    int32_t cu[B + 1] = {0}, pos[B];
    float packed[T * B * D];
    for (int64_t b = 0; b < B; ++b) {
      int64_t n = counts[calls][b];
      memcpy(packed + cu[b] * D, x + (b * T + cached[b]) * D,
             (size_t)(n * D) * sizeof(float));
      cu[b + 1] = cu[b] + (int32_t)n;
      pos[b] = (int32_t)cached[b];
    }
    int64_t total = cu[B];
    blockc_memref_f32_2d in = {packed, packed, 0, {total, D}, {D, 1}};
    blockc_memref_i32_1d cuSeqlens = {cu, cu, 0, {B + 1}, {1}};
    blockc_memref_i32_1d seqPos = {pos, pos, 0, {B}, {1}};
    blockc_memref_f32_2d result;
    _mlir_ciface_forward_paged(&result, &in, &g1, &wq, &wk, &wv, &wo, &g2, &wg,
                               &wu, &wd, &cuSeqlens, &seqPos, &blockTable, &k0,
                               &v0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t r = cu[b]; r < cu[b + 1]; ++r, ++cached[b])
        for (int64_t di = 0; di < D; ++di)
          y[(b * T + cached[b]) * D + di] =
              result.aligned[result.offset + r * result.strides[0] +
                             di * result.strides[1]];
    free(result.allocated);
  }
  if (rank == 0) {
    char path[512];
    snprintf(path, sizeof path, "%s/y.bin", dir);
    FILE *f = fopen(path, "wb");
    fwrite(y, sizeof(float), (size_t)(B * T * D), f);
    fclose(f);
    printf("rank 0 of %d: paged [%d, %d, %d] in %lld calls, pools [%d, %lld, "
           "%lld, %d]\n",
           size, B, T, D, (long long)calls, PAGES, (long long)s, (long long)hkv,
           HD);
  }
  MPI_Finalize();
  return 0;
}
