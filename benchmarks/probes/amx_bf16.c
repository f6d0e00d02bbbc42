/* The AMX bf16 product as blockc's prefill kernel runs it, alone.
 *
 * C[M, N] += A[M, K] B[N, K]^T with A bf16 row-major and B prepared as
 * panels of 256 k x 512 columns of k pairs ([K / 2, 2 x 512] per panel, the
 * layout of #blockc_codegen.packed_weight<..., pairs = true>), or with each
 * 16 x 32 tile of B stored contiguously (layout 1); layout 3 stores the
 * tiles of A contiguously ([M / 16][K / 32] tiles of 16 x 32) and B as
 * layout 0, layout 2 both contiguously. Per 32 x 32 output
 * block and panel: 2 x 2 f32 accumulator tiles, two A and two B tiles per
 * 32 k, 4 tdpbf16ps; the accumulators then go through a 32 x 32 stack
 * scratch into C (epilogue 1, as blockc does) or are stored straight into
 * C (epilogue 0: no accumulation across panels, timing only). prefetch 1
 * issues prefetcht1 for the next panel's lines in the first row block.
 *
 * Build: cc -O2 -march=sapphirerapids amx_bf16.c -o amx_bf16
 * Run:   ./amx_bf16 LAYOUT EPILOGUE M N K [PREFETCH]   (N a multiple of 512,
 *        K of 256, M of 32); prints the best of 5 runs.
 */
#include "amx_probe.h"
#include <stdlib.h>

enum { PK = 256, PN = 512 };

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s LAYOUT EPILOGUE M N K [PREFETCH]\n", argv[0]);
    return 2;
  }
  int layout = atoi(argv[1]), epilogue = atoi(argv[2]);
  long M = atol(argv[3]), N = atol(argv[4]), K = atol(argv[5]);
  int prefetch = argc > 6 ? atoi(argv[6]) : 0;
  if (M % 32 || N % PN || K % PK) {
    fprintf(stderr, "M must be a multiple of 32, N of %d, K of %d\n", PN, PK);
    return 2;
  }
  if (amxStart())
    return 1;
  uint16_t *A = aligned_alloc(64, M * K * 2);
  uint16_t *B = aligned_alloc(64, N * K * 2);
  float *C = aligned_alloc(64, M * N * 4);
  for (long i = 0; i < M * K; ++i)
    A[i] = 0x3f80; /* 1.0 */
  for (long i = 0; i < N * K; ++i)
    B[i] = 0x3f80;
  memset(C, 0, M * N * 4);
  static float scratch[32 * 32] __attribute__((aligned(64)));
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = now();
    for (long n1 = 0; n1 < N; n1 += PN)
      for (long kc = 0; kc < K; kc += PK) {
        uint16_t *P = B + n1 * K + kc * PN; /* this panel, PK x PN */
        uint16_t *next = kc + PK < K ? P + PK * PN : B + (n1 + PN) * K;
        int hasNext = kc + PK < K || n1 + PN < N;
        for (long m = 0; m < M; m += 32)
          for (long j = 0; j < PN; j += 32) {
            if (prefetch && m == 0 && hasNext)
              for (long r = 0; r < PK / 2; ++r) {
                _mm_prefetch((const char *)(next + r * PN * 2 + 2 * j),
                             _MM_HINT_T1);
                _mm_prefetch((const char *)(next + r * PN * 2 + 2 * j + 32),
                             _MM_HINT_T1);
              }
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (long s = 0; s < PK / 32; ++s) {
              if (layout >= 2) {
                /* A as [M / 16][K / 32] tiles of 16 x 32, contiguous */
                long at = (m / 16) * (K / 32) + (kc + 32 * s) / 32;
                _tile_loadd(4, A + at * 512, 64);
                _tile_loadd(5, A + (at + K / 32) * 512, 64);
              } else {
                _tile_loadd(4, A + m * K + kc + 32 * s, K * 2);
                _tile_loadd(5, A + (m + 16) * K + kc + 32 * s, K * 2);
              }
              if (layout == 0 || layout == 3) {
                _tile_loadd(6, P + 16 * s * PN * 2 + 2 * j, PN * 4);
                _tile_loadd(7, P + 16 * s * PN * 2 + 2 * j + 32, PN * 4);
              } else {
                uint16_t *T = P + ((j / 32) * (PK / 32) + s) * 1024;
                _tile_loadd(6, T, 64);
                _tile_loadd(7, T + 512, 64);
              }
              _tile_dpbf16ps(0, 4, 6);
              _tile_dpbf16ps(1, 4, 7);
              _tile_dpbf16ps(2, 5, 6);
              _tile_dpbf16ps(3, 5, 7);
            }
            float *out = C + m * N + n1 + j;
            if (epilogue) {
              addTilesInto(out, N, scratch);
            } else {
              _tile_stored(0, out, N * 4);
              _tile_stored(1, out + 16, N * 4);
              _tile_stored(2, out + 16 * N, N * 4);
              _tile_stored(3, out + 16 * N + 16, N * 4);
            }
          }
      }
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  _tile_release();
  printf("layout %d epilogue %d prefetch %d M %ld N %ld K %ld: %.3f ms, "
         "%.0f GFLOP/s\n",
         layout, epilogue, prefetch, M, N, K, best * 1e3,
         2.0 * M * N * K / best / 1e9);
  return 0;
}
