// benchmarks/probes/gemv_bf16.c - one-token bf16 / f32 GEMV layouts.
//
// y = W x for the up + down pair of a 7B-class MLP (14336 x 4096, then
// 4096 x 14336), timed per pair, in the layouts blockc's decode kernels
// read: weight rows R at a time (vdpbf16ps on 32 bf16 per load, or widened
// to f32 FMAs), k-pair panels of 32 columns as blockc's prepared bf16
// panels ([panel][K / 2][32][2]: per pair two loads, a broadcast pair of x,
// two vdpbf16ps), f32 rows, and a plain read of the same bytes; each with
// and without software prefetch (`pf` bytes ahead in the stream;
// "nextrows": the same place of the next R rows). Weights in memory
// advised as 2 MiB huge pages or not (third argument).
//
// Build: gcc -O2 -mavx512f -mavx512bf16 -mavx512bw -fopenmp gemv_bf16.c -o
// gemv_bf16 Usage: gemv_bf16 [threads] [rounds] [hugepages 0|1] Prints per
// variant the median / min / max time of a pair over the rounds after the first
// (variants interleaved within each round) and the weight bytes per second at
// the median.
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static int HUGE = 0;
static void *alloc(size_t bytes) {
  size_t al = 2 << 20;
  void *p = aligned_alloc(al, (bytes + al - 1) / al * al);
  if (HUGE)
    madvise(p, bytes, MADV_HUGEPAGE);
  else
    madvise(p, bytes, MADV_NOHUGEPAGE);
  memset(p, 1, bytes);
  return p;
}
typedef struct {
  int n, k;
  uint16_t *w16;
  float *w32;
  uint16_t *p16;
} Mat;
static float xs32[16384] __attribute__((aligned(64)));
static uint16_t xs16[16384] __attribute__((aligned(64)));
static float ys[16384] __attribute__((aligned(64)));

static inline float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }

// Read bandwidth: sum all bytes.
static float readbw(const void *p, size_t bytes) {
  const __m512i *q = p;
  long n = bytes / 64;
  float tot = 0;
#pragma omp parallel reduction(+ : tot)
  {
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
    long chunk = (n / nt + 3) & ~3L, lo = id * chunk,
         hi = lo + chunk < n ? lo + chunk : n;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (long i = lo; i + 3 < hi; i += 4) {
      a0 = _mm512_add_epi32(a0, _mm512_load_si512(q + i));
      a1 = _mm512_add_epi32(a1, _mm512_load_si512(q + i + 1));
      a2 = _mm512_add_epi32(a2, _mm512_load_si512(q + i + 2));
      a3 = _mm512_add_epi32(a3, _mm512_load_si512(q + i + 3));
    }
    a0 = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3));
    tot += (float)_mm512_reduce_add_epi32(a0);
  }
  return tot;
}

// f32 rows R at a time, 1 accumulator each.
#define DEF_F32(R)                                                             \
  static void f32_r##R(Mat *m, const float *x, float *y, int pf) {             \
    int K = m->k;                                                              \
    _Pragma("omp parallel for schedule(static)") for (int n = 0; n < m->n;     \
                                                      n += R) {                \
      const float *w = m->w32 + (size_t)n * K;                                 \
      __m512 acc[R];                                                           \
      for (int r = 0; r < R; ++r)                                              \
        acc[r] = _mm512_setzero_ps();                                          \
      for (int k = 0; k < K; k += 16) {                                        \
        __m512 xv = _mm512_load_ps(x + k);                                     \
        for (int r = 0; r < R; ++r) {                                          \
          if (pf)                                                              \
            _mm_prefetch((const char *)(w + (size_t)r * K + k) + pf,           \
                         _MM_HINT_T0);                                         \
          acc[r] = _mm512_fmadd_ps(xv, _mm512_load_ps(w + (size_t)r * K + k),  \
                                   acc[r]);                                    \
        }                                                                      \
      }                                                                        \
      for (int r = 0; r < R; ++r)                                              \
        y[n + r] = hsum(acc[r]);                                               \
    }                                                                          \
  }
DEF_F32(4)
DEF_F32(8)

// bf16 rows R at a time with vdpbf16ps, A accumulators per row (k unroll).
#define DEF_BF(R, A)                                                           \
  static void bf_r##R##a##A(Mat *m, const uint16_t *x, float *y, int pf) {     \
    int K = m->k;                                                              \
    _Pragma("omp parallel for schedule(static)") for (int n = 0; n < m->n;     \
                                                      n += R) {                \
      const uint16_t *w = m->w16 + (size_t)n * K;                              \
      __m512 acc[R][A];                                                        \
      for (int r = 0; r < R; ++r)                                              \
        for (int a = 0; a < A; ++a)                                            \
          acc[r][a] = _mm512_setzero_ps();                                     \
      for (int k = 0; k < K; k += 32 * A) {                                    \
        for (int a = 0; a < A; ++a) {                                          \
          __m512bh xv = (__m512bh)_mm512_load_si512(x + k + 32 * a);           \
          for (int r = 0; r < R; ++r) {                                        \
            const uint16_t *p = w + (size_t)r * K + k + 32 * a;                \
            if (pf > 0)                                                        \
              _mm_prefetch((const char *)p + pf, _MM_HINT_T0);                 \
            else if (pf < 0)                                                   \
              _mm_prefetch((const char *)(p + (size_t)R * K), _MM_HINT_T0);    \
            acc[r][a] = _mm512_dpbf16_ps(acc[r][a], xv,                        \
                                         (__m512bh)_mm512_load_si512(p));      \
          }                                                                    \
        }                                                                      \
      }                                                                        \
      for (int r = 0; r < R; ++r) {                                            \
        __m512 s = acc[r][0];                                                  \
        for (int a = 1; a < A; ++a)                                            \
          s = _mm512_add_ps(s, acc[r][a]);                                     \
        y[n + r] = hsum(s);                                                    \
      }                                                                        \
    }                                                                          \
  }
DEF_BF(4, 1)
DEF_BF(4, 2)
DEF_BF(8, 1)
DEF_BF(8, 2)
DEF_BF(16, 1)
DEF_BF(12, 1)

// bf16 rows widened to f32 (shift), FMA, R rows.
static void bfw_r4(Mat *m, const float *x, float *y, int pf) {
  int K = m->k;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < m->n; n += 4) {
    const uint16_t *w = m->w16 + (size_t)n * K;
    __m512 acc[4];
    for (int r = 0; r < 4; ++r)
      acc[r] = _mm512_setzero_ps();
    for (int k = 0; k < K; k += 16) {
      __m512 xv = _mm512_load_ps(x + k);
      for (int r = 0; r < 4; ++r) {
        const uint16_t *p = w + (size_t)r * K + k;
        if (pf && (k & 31) == 0)
          _mm_prefetch((const char *)p + pf, _MM_HINT_T0);
        __m512 wv = _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)p)), 16));
        acc[r] = _mm512_fmadd_ps(xv, wv, acc[r]);
      }
    }
    for (int r = 0; r < 4; ++r)
      y[n + r] = hsum(acc[r]);
  }
}

// k-pair panels of 32 columns: p16[panel][K/2][32][2]; per pair: 2 loads,
// broadcast x pair, 2 vdpbf16ps; S sets of accumulators (pairs
// alternate between sets).
#define DEF_PANEL(S)                                                           \
  static void panel_s##S(Mat *m, const uint16_t *x, float *y, int pf) {        \
    int K = m->k, KP = K / 2;                                                  \
    const uint32_t *xp = (const uint32_t *)x;                                  \
    _Pragma("omp parallel for schedule(static)") for (int g = 0;               \
                                                      g < m->n / 32; ++g) {    \
      const uint16_t *pan = m->p16 + (size_t)g * K * 32;                       \
      __m512 acc[S][2];                                                        \
      for (int s = 0; s < S; ++s)                                              \
        acc[s][0] = acc[s][1] = _mm512_setzero_ps();                           \
      for (int p = 0; p < KP; p += S) {                                        \
        for (int s = 0; s < S; ++s) {                                          \
          const uint16_t *q = pan + (size_t)(p + s) * 64;                      \
          if (pf)                                                              \
            _mm_prefetch((const char *)q + pf, _MM_HINT_T0);                   \
          __m512bh xb = (__m512bh)_mm512_set1_epi32(xp[p + s]);                \
          acc[s][0] =                                                          \
              _mm512_dpbf16_ps(acc[s][0], xb, (__m512bh)_mm512_load_si512(q)); \
          acc[s][1] = _mm512_dpbf16_ps(acc[s][1], xb,                          \
                                       (__m512bh)_mm512_load_si512(q + 32));   \
        }                                                                      \
      }                                                                        \
      for (int s = 1; s < S; ++s) {                                            \
        acc[0][0] = _mm512_add_ps(acc[0][0], acc[s][0]);                       \
        acc[0][1] = _mm512_add_ps(acc[0][1], acc[s][1]);                       \
      }                                                                        \
      _mm512_store_ps(y + g * 32, acc[0][0]);                                  \
      _mm512_store_ps(y + g * 32 + 16, acc[0][1]);                             \
    }                                                                          \
  }
DEF_PANEL(1)
DEF_PANEL(2)
DEF_PANEL(4)

typedef void (*Fn16)(Mat *, const uint16_t *, float *, int);
typedef void (*Fn32)(Mat *, const float *, float *, int);
static Mat up, down;

static void mk(Mat *m, int n, int k, int want32, int want16, int wantp) {
  m->n = n;
  m->k = k;
  size_t e = (size_t)n * k;
  m->w16 = want16 ? alloc(e * 2) : 0;
  m->w32 = want32 ? alloc(e * 4) : 0;
  m->p16 = wantp ? alloc(e * 2) : 0;
  for (size_t i = 0; i < e; i += 97) {
    if (m->w16)
      m->w16[i] = 0x3f80;
    if (m->w32)
      m->w32[i] = 1.0f;
  }
}

struct V {
  const char *name;
  Fn16 f16;
  Fn32 f32;
  int pf;
  double bytes;
  int widen;
  double t[64];
  int nt;
};

static int cmp(const void *a, const void *b) {
  double x = *(double *)a, y = *(double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  int reps = argc > 2 ? atoi(argv[2]) : 7;
  HUGE = argc > 3 ? atoi(argv[3]) : 0;
  omp_set_num_threads(threads);
  mk(&up, 14336, 4096, 1, 1, 1);
  mk(&down, 4096, 14336, 1, 1, 1);
  for (int i = 0; i < 16384; ++i) {
    xs32[i] = 1.0f;
    xs16[i] = 0x3f80;
  }
  double b16 = 2.0 * 2 * 14336 * 4096, b32 = 2 * b16;
  struct V vs[] = {
      {"read bf16 bytes", 0, 0, 0, b16, -1},
      {"read f32 bytes", 0, 0, 0, b32, -2},
      {"f32 rows4", 0, f32_r4, 0, b32},
      {"f32 rows4 pf512", 0, f32_r4, 512, b32},
      {"f32 rows8 pf512", 0, f32_r8, 512, b32},
      {"bf16 rows4 a1", bf_r4a1, 0, 0, b16},
      {"bf16 rows8 a1", bf_r8a1, 0, 0, b16},
      {"bf16 rows8 a2", bf_r8a2, 0, 0, b16},
      {"bf16 rows4 a2 pf512", bf_r4a2, 0, 512, b16},
      {"bf16 rows8 a1 pf256", bf_r8a1, 0, 256, b16},
      {"bf16 rows8 a1 pf512", bf_r8a1, 0, 512, b16},
      {"bf16 rows8 a1 pf1024", bf_r8a1, 0, 1024, b16},
      {"bf16 rows8 a1 pf2048", bf_r8a1, 0, 2048, b16},
      {"bf16 rows8 a1 pfnextrows", bf_r8a1, 0, -1, b16},
      {"bf16 rows4 a1 pfnextrows", bf_r4a1, 0, -1, b16},
      {"bf16 rows8 a2 pf512", bf_r8a2, 0, 512, b16},
      {"bf16 rows12 a1 pf512", bf_r12a1, 0, 512, b16},
      {"bf16 rows16 a1", bf_r16a1, 0, 0, b16},
      {"bf16 rows16 a1 pf512", bf_r16a1, 0, 512, b16},
      {"bf16 widen rows4 pf512", 0, bfw_r4, 512, b16},
      {"panel32 sets1", panel_s1, 0, 0, b16},
      {"panel32 sets1 pf1024", panel_s1, 0, 1024, b16},
      {"panel32 sets2", panel_s2, 0, 0, b16},
      {"panel32 sets2 pf1024", panel_s2, 0, 1024, b16},
      {"panel32 sets4 pf1024", panel_s4, 0, 1024, b16},
      {"panel32 sets2 pf2048", panel_s2, 0, 2048, b16},
      {"panel32 sets2 pf4096", panel_s2, 0, 4096, b16},
  };
  int nv = sizeof(vs) / sizeof(vs[0]);
  volatile float sink = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (int v = 0; v < nv; ++v) {
      struct V *p = &vs[v];
      double t0 = now();
      if (p->widen == -1) {
        sink += readbw(up.w16, b16 / 2);
        sink += readbw(down.w16, b16 / 2);
      } else if (p->widen == -2) {
        sink += readbw(up.w32, b32 / 2);
        sink += readbw(down.w32, b32 / 2);
      } else if (p->f16 && strncmp(p->name, "panel", 5) == 0) {
        Mat u = up, d = down;
        u.p16 = up.p16;
        d.p16 = down.p16;
        p->f16(&u, xs16, ys, p->pf);
        p->f16(&d, xs16, ys, p->pf);
      } else if (p->f16) {
        p->f16(&up, xs16, ys, p->pf);
        p->f16(&down, xs16, ys, p->pf);
      } else {
        p->f32(&up, xs32, ys, p->pf);
        p->f32(&down, xs32, ys, p->pf);
      }
      double t = now() - t0;
      if (rep > 0)
        p->t[p->nt++] = t;
    }
  printf(
      "threads=%d reps=%d hugepages=%d (per pair: 14336x4096 + 4096x14336)\n",
      threads, reps - 1, HUGE);
  for (int v = 0; v < nv; ++v) {
    struct V *p = &vs[v];
    qsort(p->t, p->nt, sizeof(double), cmp);
    double med = p->t[p->nt / 2];
    printf("%-26s median %7.2f ms  min %7.2f  max %7.2f  %6.1f GB/s (median)\n",
           p->name, med * 1e3, p->t[0] * 1e3, p->t[p->nt - 1] * 1e3,
           p->bytes / med / 1e9);
  }
  return (int)sink & 0;
}
