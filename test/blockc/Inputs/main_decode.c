/* Links the object file that `blockc --decode -emit=obj` wrote for
   Inputs/tiny.mlir and decodes token by token through the generated
   header's decode entry: a prefill of P tokens at position 0, then one token
   per call, with head-major KV caches allocated here. Writes the outputs of
   all T positions, which must equal one forward pass over the whole input.
   Usage: main_decode DIR B T P   (reads DIR/x.bin, DIR/w0.bin..w8.bin;
   writes DIR/y.bin). */
#include "tiny.h"
#include "tiny_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 5)
    return 2;
  const char *dir = argv[1];
  int64_t b = atoi(argv[2]), t = atoi(argv[3]), p = atoi(argv[4]), d = 32;
  int64_t hkv = 2, hd = 8, lmax = t;
  float *x = readFile(dir, "x.bin", (size_t)(b * t * d));
  TINY_LOAD_WEIGHTS(dir);
#ifdef BLOCKC_forward_decode_prepare_NUM_ARGS
  /* The decode entry's projections packed once. */
  TINY_PREPARE(forward_decode_prepare);
#define DECODE_WEIGHTS &g1, &p2, &p3, &p4, &p5, &g2, &p7, &p8, &p9
#else
#define DECODE_WEIGHTS &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu, &wd
#endif

  /* The caches, head-major as the header describes: [B][H_kv][L_max][D] in
     memory, seen through sizes {B, L_max, H_kv, D}. */
  size_t cacheElems = (size_t)(b * hkv * lmax * hd);
  float *kc = calloc(cacheElems, sizeof(float));
  float *vc = calloc(cacheElems, sizeof(float));
  blockc_memref_f32_4d k0 = {
      kc, kc, 0, {b, lmax, hkv, hd}, {hkv * lmax * hd, hd, lmax * hd, 1}};
  blockc_memref_f32_4d v0 = {
      vc, vc, 0, {b, lmax, hkv, hd}, {hkv * lmax * hd, hd, lmax * hd, 1}};

  float *y = malloc((size_t)(b * t * d) * sizeof(float));
  int64_t calls = 0;
  for (int64_t pos = 0; pos < t; ++calls) {
    int64_t n = pos == 0 ? p : 1;
    /* The n tokens at pos of every batch row, as a dense [B, n, d]. */
    float *chunk = malloc((size_t)(b * n * d) * sizeof(float));
    for (int64_t bi = 0; bi < b; ++bi)
      memcpy(chunk + bi * n * d, x + (bi * t + pos) * d,
             (size_t)(n * d) * sizeof(float));
    blockc_memref_f32_3d in = {chunk, chunk, 0, {b, n, d}, {n * d, d, 1}};
    blockc_memref_f32_3d result;
    _mlir_ciface_forward_decode(&result, &in, DECODE_WEIGHTS, pos, &k0, &v0);
    if (result.sizes[0] != b || result.sizes[1] != n || result.sizes[2] != d) {
      fprintf(stderr, "unexpected result shape at position %lld\n",
              (long long)pos);
      return 1;
    }
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t ti = 0; ti < n; ++ti)
        for (int64_t di = 0; di < d; ++di)
          y[(bi * t + pos + ti) * d + di] =
              result.aligned[result.offset + bi * result.strides[0] +
                             ti * result.strides[1] + di * result.strides[2]];
    free(result.allocated);
    free(chunk);
    pos += n;
  }
  char path[512];
  snprintf(path, sizeof path, "%s/y.bin", dir);
  FILE *f = fopen(path, "wb");
  fwrite(y, sizeof(float), (size_t)(b * t * d), f);
  fclose(f);
  printf("decoded [%lld, %lld, %lld] in %lld calls\n", (long long)b,
         (long long)t, (long long)d, (long long)calls);
  return 0;
}
