/* What the AMX tile unit issues on this core with operands in L1: the
 * 2 x 2 accumulator step of blockc's AMX kernel (4 tdpbf16ps per 32 k),
 * repeated, with
 *   MODE 0: no tile loads in the loop (the same operand tiles);
 *        1: all four operand tiles loaded from L1 every step (16 rotating
 *           1 KiB tiles per operand);
 *        2: only the two A tiles loaded every step.
 * Build: cc -O2 -march=sapphirerapids amx_bf16_peak.c -o amx_bf16_peak
 * Run:   ./amx_bf16_peak MODE
 */
#include "amx_probe.h"
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODE (0, 1 or 2)\n", argv[0]);
    return 2;
  }
  int mode = atoi(argv[1]);
  if (amxStart())
    return 1;
  static uint16_t A[64 * 1024] __attribute__((aligned(64))),
      B[64 * 1024] __attribute__((aligned(64)));
  for (int i = 0; i < 64 * 1024; ++i) {
    A[i] = 0x3f80;
    B[i] = 0x3f80;
  }
  long iters = 1000000;
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = now();
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, A, 64);
    _tile_loadd(5, A + 512, 64);
    _tile_loadd(6, B, 64);
    _tile_loadd(7, B + 512, 64);
    for (long i = 0; i < iters; ++i) {
      if (mode == 1) {
        long o = (i & 15) * 1024;
        _tile_loadd(4, A + o, 64);
        _tile_loadd(5, A + o + 512, 64);
        _tile_loadd(6, B + o, 64);
        _tile_loadd(7, B + o + 512, 64);
      }
      if (mode == 2) {
        long o = (i & 15) * 1024;
        _tile_loadd(4, A + o, 64);
        _tile_loadd(5, A + o + 512, 64);
      }
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  printf("mode %d: %.0f GFLOP/s\n", mode,
         4.0 * iters * 16 * 16 * 32 * 2 / best / 1e9);
}
