/* Runs the tensor-parallel object that `blockc --tensor-parallel=2
   -emit=obj` wrote for Inputs/tiny.mlir on every rank of an MPI job: each
   rank reads the whole weights (DIR/w0.bin..w8.bin, arguments 1-9) and
   input, keeps the part of each weight that the header's
   BLOCKC_forward_ARG<i>_TP_* macros give its rank, calls the entry, and
   rank 0 writes DIR/y.bin. Usage: mpirun -np 2 main_tp DIR B T */
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
