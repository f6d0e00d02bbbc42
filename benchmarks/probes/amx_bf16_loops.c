/* The loops of blockc's AMX bf16 prefill kernel on prepared weights, alone,
 * with the variants measured beside them (benchmarks/results/
 * amx-bf16-loops-f6m207/README.md).
 *
 * C[M, N] += A[M, K] B[N, K]^T, B prepared as blockc prepares a bf16 weight
 * on AMX: panels of 256 k x 32 columns of k pairs (16 KiB each), G panels
 * per parallel block. Per 32 x 32 output block: 2 x 2 f32 accumulator
 * tiles, per 32 k two A and two B tiles and 4 tdpbf16ps.
 *
 *   ORDER  0: panels stored [panel][k-panel] (blockc's layout);
 *          1: [block][k-panel][panel] (the panel loop reads sequentially)
 *   PF     prefetch (loop 1 only) of the next k-panel's panels during row
 *          blocks after the first: 0 none, 1 T0, 2 T1, 3 T2
 *   G      panels per block
 *   REPS   timed runs (the median and the best are printed)
 *   COPIES copies of B, run after run (16: B streams from memory; 1: B
 *          stays in cache when small)
 *   LOOP   0: k-panel, panel, 32-row block (blockc's order at T <= the row
 *          block); 1: k-panel, 32-row block, panel; 2: 32-row block,
 *          k-panel, panel (row blocks of 32)
 *   APACK  0: A read in place (the 16 rows of a tile K elements apart);
 *          1: A stored as contiguous 16 x 32 tiles
 *   EPI    1: the accumulators through a 32 x 32 scratch added into C
 *          (blockc's epilogue); 2: C loaded into the accumulators and
 *          stored back with tile loads and stores; 0: stored straight
 *          (no accumulation across k-panels: timing only)
 *
 * Build: cc -O2 -march=sapphirerapids amx_bf16_loops.c -o amx_bf16_loops
 * Run:   ./amx_bf16_loops ORDER PF M N K G REPS COPIES LOOP APACK EPI
 *        (M a multiple of 32, N of 32 G, K of 256)
 */
#include "amx_probe.h"
#include <stdlib.h>
#include <sys/mman.h>

enum { PK = 256, PN = 32, PANEL = PK * PN }; /* elements per panel */

static void *hugeAlloc(size_t bytes) {
  void *p =
      aligned_alloc(2 << 20, (bytes + (2 << 20) - 1) & ~((2ul << 20) - 1));
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s ORDER PF M N K [G REPS COPIES LOOP APACK EPI]\n",
            argv[0]);
    return 2;
  }
  int order = atoi(argv[1]), pf = atoi(argv[2]);
  long M = atol(argv[3]), N = atol(argv[4]), K = atol(argv[5]);
  long G = argc > 6 ? atol(argv[6]) : 32;
  int reps = argc > 7 ? atoi(argv[7]) : 5;
  if (M % 32 || N % (32 * G) || K % PK) {
    fprintf(stderr, "M must be a multiple of 32, N of %ld, K of %d\n", 32 * G,
            PK);
    return 2;
  }
  if (amxStart())
    return 1;
  long kBlocks = K / PK, numPanels = N / PN, blocks = numPanels / G;
  uint16_t *A = hugeAlloc(M * K * 2);
  /* several copies of B so that every rep streams from memory */
  long copies = argc > 8 ? atol(argv[8]) : 16;
  int loop = argc > 9 ? atoi(argv[9]) : 0,
      apack = argc > 10 ? atoi(argv[10]) : 0,
      epi = argc > 11 ? atoi(argv[11]) : 1;
  uint16_t *B = hugeAlloc(copies * N * K * 2);
  float *C = hugeAlloc(M * N * 4);
  for (long i = 0; i < M * K; ++i)
    A[i] = 0x3f80;
  for (long i = 0; i < copies * N * K; ++i)
    B[i] = 0x3f80;
  memset(C, 0, M * N * 4);
  static float scratch[32 * 32] __attribute__((aligned(64)));
  double times[64];
  for (int rep = 0; rep < reps; ++rep) {
    uint16_t *Bc = B + (rep % copies) * N * K;
    double t0 = now();

    for (long nb = 0; nb < blocks; ++nb)
      for (long kk = 0; kk < kBlocks * (loop == 2 ? M / 32 : 1); ++kk) {
        long kb = loop == 2 ? kk % kBlocks : kk;
        long GM = loop == 2 ? G : G * (M / 32);
        for (long it = 0; it < GM; ++it) {
          long g, m;
          if (loop == 0) {
            g = it / (M / 32);
            m = (it % (M / 32)) * 32;
          } else if (loop == 1) {
            m = (it / G) * 32;
            g = it % G;
          } else {
            m = (kk / kBlocks) * 32;
            g = it;
          }
          long gAbs = nb * G + g;
          uint16_t *P;
          if (order == 0)
            P = Bc + (gAbs * kBlocks + kb) * PANEL;
          else
            P = Bc + ((nb * kBlocks + kb) * G + g) * PANEL;
          float *out = C + m * N + gAbs * PN;
          if (epi == 2) {
            _tile_loadd(0, out, N * 4);
            _tile_loadd(1, out + 16, N * 4);
            _tile_loadd(2, out + 16 * N, N * 4);
            _tile_loadd(3, out + 16 * N + 16, N * 4);
          } else {
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
          }
          if (pf && loop == 1 && m > 0 && kb + 1 < kBlocks) {
            long parts = M / 32 - 1, part = m / 32 - 1;
            const char *nx =
                (const char *)(order == 0 ? P + PANEL : P + G * PANEL);
            long lines = PANEL * 2 / 64, per = lines / parts;
            for (long l = part * per; l < (part + 1) * per; ++l)
              if (pf == 1)
                _mm_prefetch(nx + l * 64, _MM_HINT_T0);
              else if (pf == 2)
                _mm_prefetch(nx + l * 64, _MM_HINT_T1);
              else
                _mm_prefetch(nx + l * 64, _MM_HINT_T2);
          }
          for (long s = 0; s < PK / 32; ++s) {
            if (apack) {
              /* A as [M / 16][K / 32] tiles of 16 x 32 */
              long at = (m / 16) * (K / 32) + (kb * PK + 32 * s) / 32;
              _tile_loadd(4, A + at * 512, 64);
              _tile_loadd(5, A + (at + K / 32) * 512, 64);
            } else {
              _tile_loadd(4, A + m * K + kb * PK + 32 * s, K * 2);
              _tile_loadd(5, A + (m + 16) * K + kb * PK + 32 * s, K * 2);
            }
            _tile_loadd(6, P + 16 * s * PN * 2, PN * 4);
            _tile_loadd(7, P + 16 * s * PN * 2 + 32, PN * 4);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
          }
          if (epi != 1) {
            _tile_stored(0, out, N * 4);
            _tile_stored(1, out + 16, N * 4);
            _tile_stored(2, out + 16 * N, N * 4);
            _tile_stored(3, out + 16 * N + 16, N * 4);
            continue;
          }
          addTilesInto(out, N, scratch);
        }
      }
    times[rep] = now() - t0;
  }
  _tile_release();
  /* median */
  for (int i = 0; i < reps; ++i)
    for (int j = i + 1; j < reps; ++j)
      if (times[j] < times[i]) {
        double x = times[i];
        times[i] = times[j];
        times[j] = x;
      }
  double med = times[reps / 2];
  printf("epi %d loop %d apack %d order %d pf %d M %ld N %ld K %ld G %ld: "
         "median %.3f ms, %.0f GFLOP/s "
         "(best %.0f)\n",
         epi, loop, apack, order, pf, M, N, K, G, med * 1e3,
         2.0 * M * N * K / med / 1e9, 2.0 * M * N * K / times[0] / 1e9);
  return 0;
}
