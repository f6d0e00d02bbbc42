/* Links the object file that `blockc -emit=obj` wrote for Inputs/tiny.mlir,
   calls its entry point through the generated header and writes the result.
   Usage: main DIR B T   (reads DIR/x.bin, DIR/w0.bin..w8.bin; writes
   DIR/y.bin). */
#include "tiny.h"
#include "tiny_io.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const char *dir = argv[1];
  int64_t b = atoi(argv[2]), t = atoi(argv[3]), d = 32;
  float *x = readFile(dir, "x.bin", (size_t)(b * t * d));
  blockc_memref_f32_3d in = {x, x, 0, {b, t, d}, {t * d, d, 1}};
  TINY_LOAD_WEIGHTS(dir);

  blockc_memref_f32_3d result;
#ifdef BLOCKC_forward_prepare_NUM_ARGS
  /* The projections packed once; forward reads the packed copies. */
  TINY_PREPARE(forward_prepare);
  _mlir_ciface_forward(&result, &in, &g1, &p2, &p3, &p4, &p5, &g2, &p7, &p8,
                       &p9);
  printf("prepared 7 weights\n");
#else
  _mlir_ciface_forward(&result, &in, &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu,
                       &wd);
#endif
  if (result.sizes[0] != b || result.sizes[1] != t || result.sizes[2] != d) {
    fprintf(stderr, "unexpected result shape\n");
    return 1;
  }
  writeResult(dir, &result);
  free(result.allocated); /* the result buffer belongs to the caller */
  printf("ran forward on [%lld, %lld, %lld]\n", (long long)b, (long long)t,
         (long long)d);
  return 0;
}
