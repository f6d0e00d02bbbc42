/* Links the object file that `blockc --paged --page-size=4 -emit=obj` wrote
   for Inputs/tiny.mlir and runs a ragged batch through the generated
   header's paged entry: sequence 0 gets 3 prompt tokens and sequence 1 gets
   5 in one call, then single tokens (a sequence with none in the last two
   calls) until both have T = 7, over pools of 4 pages of 4 tokens allocated
   here, the pages handed out out of order. Writes the outputs of all 7
   positions of both, which must equal one forward pass over each input.
   Usage: main_paged DIR   (reads DIR/x.bin [2, 7, 32], DIR/w0.bin..w8.bin;
   writes DIR/y.bin). */
#include "tiny.h"
#include "tiny_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  const char *dir = argv[1];
  enum { B = 2, T = 7, D = 32, HKV = 2, HD = 8, PAGES = 4, MAX_PAGES = 2 };
  const int64_t s = BLOCKC_forward_paged_PAGE_SIZE;
  float *x = readFile(dir, "x.bin", (size_t)(B * T * D));
  TINY_LOAD_WEIGHTS(dir);
#ifdef BLOCKC_forward_paged_prepare_NUM_ARGS
  /* The paged entry's projections packed once. */
  TINY_PREPARE(forward_paged_prepare);
#define PAGED_WEIGHTS &g1, &p2, &p3, &p4, &p5, &g2, &p7, &p8, &p9
#else
#define PAGED_WEIGHTS &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu, &wd
#endif

  /* The K and V pools [num_pages, S, H_kv, D], row-major. */
  size_t poolElems = (size_t)(PAGES * s * HKV * HD);
  float *kp = calloc(poolElems, sizeof(float));
  float *vp = calloc(poolElems, sizeof(float));
  blockc_memref_f32_4d k0 = {
      kp, kp, 0, {PAGES, s, HKV, HD}, {s * HKV * HD, HKV * HD, HD, 1}};
  blockc_memref_f32_4d v0 = {
      vp, vp, 0, {PAGES, s, HKV, HD}, {s * HKV * HD, HKV * HD, HD, 1}};
  /* Sequence 0 lives in pages 3 and 0, sequence 1 in pages 1 and 2. */
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
    _mlir_ciface_forward_paged(&result, &in, PAGED_WEIGHTS, &cuSeqlens, &seqPos,
                               &blockTable, &k0, &v0);
    if (result.sizes[0] != total || result.sizes[1] != D) {
      fprintf(stderr, "unexpected result shape in call %lld\n",
              (long long)calls);
      return 1;
    }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t r = cu[b]; r < cu[b + 1]; ++r, ++cached[b])
        for (int64_t di = 0; di < D; ++di)
          y[(b * T + cached[b]) * D + di] =
              result.aligned[result.offset + r * result.strides[0] +
                             di * result.strides[1]];
    free(result.allocated);
  }
  char path[512];
  snprintf(path, sizeof path, "%s/y.bin", dir);
  FILE *f = fopen(path, "wb");
  fwrite(y, sizeof(float), (size_t)(B * T * D), f);
  fclose(f);
  printf("paged [%d, %d, %d] in %lld calls, pages of %lld\n", B, T, D,
         (long long)calls, (long long)s);
  return 0;
}
