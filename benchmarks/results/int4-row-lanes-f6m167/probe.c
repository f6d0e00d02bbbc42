// int4 weight-only decode GEMV probe: y[N] = W'[N,K] x[K], W' = (u-8)*s, groups
// of 32.
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int N = 4096, K = 14336;
#define G 32

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// ---- current layout: interleave 8 rows; per tile per group: 8 x 16 bytes,
// then 8 f32 scales.
static uint8_t *curP; // [N/8][K/32][8*16 + 8*4]
static void cur_prepare(const int8_t *q, const float *s) {
  size_t blk = 8 * 16 + 8 * 4, tiles = N / 8, groups = K / 32;
  curP = aligned_alloc(64, tiles * groups * blk);
  for (size_t t = 0; t < tiles; t++)
    for (size_t g = 0; g < groups; g++) {
      uint8_t *b = curP + (t * groups + g) * blk;
      for (int r = 0; r < 8; r++) {
        size_t n = t * 8 + r;
        for (int i = 0; i < 16; i++)
          b[r * 16 + i] = (uint8_t)((q[n * K + g * 32 + i] + 8) |
                                    ((q[n * K + g * 32 + 16 + i] + 8) << 4));
        memcpy(b + 128 + 4 * r, &s[n * (K / G) + g], 4);
      }
    }
}
static void cur_gemv(const float *x, float *y) {
  const __m512 lut =
      _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  size_t blk = 8 * 16 + 8 * 4, groups = K / 32;
#pragma omp parallel for schedule(static)
  for (int t = 0; t < N / 8; t++) {
    __m512 acc[8];
    for (int r = 0; r < 8; r++)
      acc[r] = _mm512_setzero_ps();
    const uint8_t *b = curP + (size_t)t * groups * blk;
    for (size_t g = 0; g < groups; g++, b += blk) {
      __m512 x0 = _mm512_loadu_ps(x + 32 * g),
             x1 = _mm512_loadu_ps(x + 32 * g + 16);
      _mm_prefetch((const char *)(b + 2 * groups * blk), _MM_HINT_T1);
      _mm_prefetch((const char *)(b + 2 * groups * blk + 64), _MM_HINT_T1);
      _mm_prefetch((const char *)(b + 2 * groups * blk + 128), _MM_HINT_T1);
#pragma GCC unroll 8
      for (int r = 0; r < 8; r++) {
        __m512 tab = _mm512_mul_ps(
            lut, _mm512_set1_ps(*(const float *)(b + 128 + 4 * r)));
        __m512i u = _mm512_cvtepu8_epi32(
            _mm_loadu_si128((const __m128i *)(b + 16 * r)));
        __m512i h = _mm512_srli_epi32(u, 4);
        acc[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(u, tab), x0, acc[r]);
        acc[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(h, tab), x1, acc[r]);
      }
    }
    for (int r = 0; r < 8; r++)
      y[t * 8 + r] = _mm512_reduce_add_ps(acc[r]);
  }
}

// ---- design (a): interleave 8 rows, per row 64 bytes hold 128 k: dword lane i
// nibble j = k 16j+i.
//      per tile per 128 k: 8 rows x 64 bytes, then 8 rows x 4 groups scales
//      (128 bytes).
static uint8_t *aP;
static void a_prepare(const int8_t *q, const float *s) {
  size_t blk = 8 * 64 + 8 * 16, tiles = N / 8, chunks = K / 128;
  aP = aligned_alloc(64, tiles * chunks * blk);
  for (size_t t = 0; t < tiles; t++)
    for (size_t c = 0; c < chunks; c++) {
      uint8_t *b = aP + (t * chunks + c) * blk;
      for (int r = 0; r < 8; r++) {
        size_t n = t * 8 + r;
        uint32_t *wv = (uint32_t *)(b + 64 * r);
        for (int i = 0; i < 16; i++) {
          uint32_t w = 0;
          for (int j = 0; j < 8; j++)
            w |= (uint32_t)(q[n * K + 128 * c + 16 * j + i] + 8) << (4 * j);
          wv[i] = w;
        }
        memcpy(b + 512 + 16 * r, &s[n * (K / G) + 4 * c], 16);
      }
    }
}
static void a_gemv(const float *x, float *y) {
  const __m512 lut =
      _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  size_t blk = 8 * 64 + 8 * 16, chunks = K / 128;
#pragma omp parallel for schedule(static)
  for (int t = 0; t < N / 8; t++) {
    __m512 acc[8];
    for (int r = 0; r < 8; r++)
      acc[r] = _mm512_setzero_ps();
    const uint8_t *b = aP + (size_t)t * chunks * blk;
    for (size_t c = 0; c < chunks; c++, b += blk) {
      const float *xc = x + 128 * c;
#pragma GCC unroll 8
      for (int r = 0; r < 8; r++) {
        __m512i w = _mm512_load_si512((const void *)(b + 64 * r));
        const float *sc = (const float *)(b + 512 + 16 * r);
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
          __m512 tab = _mm512_mul_ps(lut, _mm512_set1_ps(sc[g]));
          __m512i i0 = g == 0 ? w : _mm512_srli_epi32(w, 8 * g);
          __m512i i1 = _mm512_srli_epi32(w, 8 * g + 4);
          acc[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(i0, tab),
                                   _mm512_loadu_ps(xc + 32 * g), acc[r]);
          acc[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(i1, tab),
                                   _mm512_loadu_ps(xc + 32 * g + 16), acc[r]);
        }
      }
    }
    for (int r = 0; r < 8; r++)
      y[t * 8 + r] = _mm512_reduce_add_ps(acc[r]);
  }
}

// ---- design (b16): lanes = 16 rows. Per tile (16 rows) per group of 32 k: 4 x
// 64 bytes
//      (dword lane i = row i, nibble j = k 8c + j), then 16 f32 scales.
//      Constant table q = u - 8.
static uint8_t *bP;
static void b_prepare(const int8_t *q, const float *s) {
  size_t blk = 4 * 64 + 64, tiles = N / 16, groups = K / 32;
  bP = aligned_alloc(64, tiles * groups * blk);
  for (size_t t = 0; t < tiles; t++)
    for (size_t g = 0; g < groups; g++) {
      uint8_t *b = bP + (t * groups + g) * blk;
      for (int c = 0; c < 4; c++)
        for (int i = 0; i < 16; i++) {
          size_t n = t * 16 + i;
          uint32_t w = 0;
          for (int j = 0; j < 8; j++)
            w |= (uint32_t)(q[n * K + 32 * g + 8 * c + j] + 8) << (4 * j);
          ((uint32_t *)(b + 64 * c))[i] = w;
        }
      for (int i = 0; i < 16; i++)
        memcpy(b + 256 + 4 * i, &s[(t * 16 + i) * (K / G) + g], 4);
    }
}
#ifndef BT
#define BT 2 // tiles of 16 rows at once
#endif
static void b_gemv(const float *x, float *y) {
  const __m512 lut =
      _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  size_t blk = 4 * 64 + 64, groups = K / 32;
#pragma omp parallel for schedule(static)
  for (int t0 = 0; t0 < N / 16; t0 += BT) {
    __m512 acc[BT];
    for (int u = 0; u < BT; u++)
      acc[u] = _mm512_setzero_ps();
    for (size_t g = 0; g < groups; g++) {
      const float *xg = x + 32 * g;
#pragma GCC unroll 4
      for (int u = 0; u < BT; u++) {
        const uint8_t *b = bP + ((size_t)(t0 + u) * groups + g) * blk;
        _mm_prefetch((const char *)(b + 4 * blk), _MM_HINT_T1);
        _mm_prefetch((const char *)(b + 4 * blk + 64), _MM_HINT_T1);
        _mm_prefetch((const char *)(b + 4 * blk + 128), _MM_HINT_T1);
        _mm_prefetch((const char *)(b + 4 * blk + 192), _MM_HINT_T1);
        _mm_prefetch((const char *)(b + 4 * blk + 256), _MM_HINT_T1);
        __m512 g0 = _mm512_setzero_ps(), g1 = _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
          __m512i w = _mm512_load_si512((const void *)(b + 64 * c));
#pragma GCC unroll 8
          for (int j = 0; j < 8; j += 2) {
            __m512i i0 = j == 0 ? w : _mm512_srli_epi32(w, 4 * j);
            __m512i i1 = _mm512_srli_epi32(w, 4 * j + 4);
            g0 = _mm512_fmadd_ps(_mm512_permutexvar_ps(i0, lut),
                                 _mm512_set1_ps(xg[8 * c + j]), g0);
            g1 = _mm512_fmadd_ps(_mm512_permutexvar_ps(i1, lut),
                                 _mm512_set1_ps(xg[8 * c + j + 1]), g1);
          }
        }
        acc[u] =
            _mm512_fmadd_ps(_mm512_add_ps(g0, g1),
                            _mm512_load_ps((const float *)(b + 256)), acc[u]);
      }
    }
    for (int u = 0; u < BT; u++)
      _mm512_storeu_ps(y + 16 * (t0 + u), acc[u]);
  }
}

static uint8_t *biP;
static void bi_prepare(const int8_t *q, const float *s) {
  size_t blk = 4 * 64 + 64, tiles = N / 16, groups = K / 32;
  biP = aligned_alloc(64, tiles * groups * blk);
  for (size_t t = 0; t < tiles; t++)
    for (size_t g = 0; g < groups; g++) {
      size_t sup = t / BT, u = t % BT;
      memcpy(biP + ((sup * groups + g) * BT + u) * blk,
             bP + (t * groups + g) * blk, blk);
    }
}
static void bi_gemv(const float *x, float *y) {
  const __m512 lut =
      _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  size_t blk = 4 * 64 + 64, groups = K / 32;
#pragma omp parallel for schedule(static)
  for (int t0 = 0; t0 < N / 16; t0 += BT) {
    __m512 acc[BT];
    for (int u = 0; u < BT; u++)
      acc[u] = _mm512_setzero_ps();
    const uint8_t *bb = biP + (size_t)t0 * groups * blk;
    for (size_t g = 0; g < groups; g++, bb += BT * blk) {
      const float *xg = x + 32 * g;
      for (int l = 0; l < 5 * BT; l++)
        _mm_prefetch((const char *)(bb + 4 * BT * blk + 64 * l), _MM_HINT_T1);
#pragma GCC unroll 4
      for (int u = 0; u < BT; u++) {
        const uint8_t *b = bb + u * blk;
        __m512 g0 = _mm512_setzero_ps(), g1 = _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
          __m512i w = _mm512_load_si512((const void *)(b + 64 * c));
#pragma GCC unroll 8
          for (int j = 0; j < 8; j += 2) {
            __m512i i0 = j == 0 ? w : _mm512_srli_epi32(w, 4 * j);
            __m512i i1 = _mm512_srli_epi32(w, 4 * j + 4);
            g0 = _mm512_fmadd_ps(_mm512_permutexvar_ps(i0, lut),
                                 _mm512_set1_ps(xg[8 * c + j]), g0);
            g1 = _mm512_fmadd_ps(_mm512_permutexvar_ps(i1, lut),
                                 _mm512_set1_ps(xg[8 * c + j + 1]), g1);
          }
        }
        acc[u] =
            _mm512_fmadd_ps(_mm512_add_ps(g0, g1),
                            _mm512_load_ps((const float *)(b + 256)), acc[u]);
      }
    }
    for (int u = 0; u < BT; u++)
      _mm512_storeu_ps(y + 16 * (t0 + u), acc[u]);
  }
}

static int cmpd(const void *a, const void *b) {
  double x = *(double *)a, y = *(double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 50;
  int8_t *q = malloc((size_t)N * K);
  float *s = malloc((size_t)N * (K / G) * 4), *x = aligned_alloc(64, K * 4);
  float *yr = malloc(N * 4), *y = aligned_alloc(64, N * 4);
  srand(1);
  for (size_t i = 0; i < (size_t)N * K; i++)
    q[i] = rand() % 15 - 7;
  for (size_t i = 0; i < (size_t)N * (K / G); i++)
    s[i] = (rand() % 1000 + 1) * 1e-4f;
  for (int i = 0; i < K; i++)
    x[i] = (rand() % 2001 - 1000) * 1e-3f;
  for (int n = 0; n < N; n++) {
    double a = 0;
    for (int k = 0; k < K; k++)
      a += (double)q[(size_t)n * K + k] * s[(size_t)n * (K / G) + k / G] * x[k];
    yr[n] = a;
  }
  cur_prepare(q, s);
  a_prepare(q, s);
  b_prepare(q, s);
  bi_prepare(q, s);
  const char *names[4] = {"cur", "a", "b16", "b16i"};
  void (*fns[4])(const float *, float *) = {cur_gemv, a_gemv, b_gemv, bi_gemv};
  for (int f = 0; f < 4; f++) {
    memset(y, 0, N * 4);
    fns[f](x, y);
    double err = 0, sc = 0;
    for (int n = 0; n < N; n++) {
      err = fmax(err, fabs(y[n] - yr[n]));
      sc = fmax(sc, fabs(yr[n]));
    }
    printf("%s max err %.3g of scale %.3g\n", names[f], err, sc);
  }
  double *t[4];
  for (int f = 0; f < 4; f++)
    t[f] = malloc(reps * sizeof(double));
  for (int r = 0; r < reps; r++)
    for (int f0 = 0; f0 < 4; f0++) {
      int f = (r & 1) ? 3 - f0 : f0;
      fns[f](x, y);
      fns[f](x, y);
      double t0 = now();
      for (int i = 0; i < 5; i++)
        fns[f](x, y);
      t[f][r] = (now() - t0) / 5;
    }
  for (int f = 0; f < 4; f++) {
    qsort(t[f], reps, sizeof(double), cmpd);
    printf("%-4s threads=%d median %.3f ms (p10 %.3f, p90 %.3f)\n", names[f],
           omp_get_max_threads(), 1e3 * t[f][reps / 2], 1e3 * t[f][reps / 10],
           1e3 * t[f][reps * 9 / 10]);
  }
  return 0;
}
