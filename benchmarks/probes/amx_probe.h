/* What the AMX probes (amx_bf16*.c) share: the process's request for the
 * AMX tile state, the tile configuration of blockc's AMX kernel (eight
 * tiles of 16 rows x 64 bytes) and a monotonic clock. */
#ifndef BLOCKC_BENCHMARKS_PROBES_AMX_PROBE_H
#define BLOCKC_BENCHMARKS_PROBES_AMX_PROBE_H

#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Asks Linux for the tile state and configures tiles 0-7 as 16 x 64 bytes;
 * 0 on success, else 1 after a message on stderr. */
static int amxStart(void) {
  if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)) {
    fprintf(stderr, "no AMX tile state granted (a CPU with AMX and Linux "
                    "5.16 or later are needed)\n");
    return 1;
  }
  struct {
    uint8_t palette, start;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
  } cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int i = 0; i < 8; ++i) {
    cfg.rows[i] = 16;
    cfg.colsb[i] = 64;
  }
  _tile_loadconfig(&cfg);
  return 0;
}

/* blockc's epilogue: the 2 x 2 accumulator tiles 0-3 (a 32 x 32 f32
 * block) stored into `scratch` (64-byte aligned, 32 x 32) and added into
 * the block at `out`, whose rows are `n` floats apart. */
static inline void addTilesInto(float *out, long n, float *scratch) {
  _tile_stored(0, scratch, 128);
  _tile_stored(1, scratch + 16, 128);
  _tile_stored(2, scratch + 512, 128);
  _tile_stored(3, scratch + 528, 128);
  for (int i = 0; i < 32; ++i)
    for (int h = 0; h < 2; ++h) {
      float *o = out + i * n + 16 * h;
      _mm512_storeu_ps(
          o, _mm512_add_ps(_mm512_loadu_ps(o),
                           _mm512_load_ps(scratch + i * 32 + 16 * h)));
    }
}

#endif
