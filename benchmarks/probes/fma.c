// benchmarks/probes/fma.c - f32 FMA throughput probe (the machine's compute
// peak).
//
// Each thread runs NCHAINS independent dependency chains of packed f32 FMAs
// (acc = acc * m + a) held in registers: enough chains to cover the FMA latency
// times the number of FMA pipes (Zen 4: 4 cycles x 2 pipes = 8 in flight, so
// 12+ chains saturate it). AVX-512 (zmm, 16 lanes) when the compiler targets
// it, else AVX2 (ymm, 8 lanes). m and a keep every accumulator near a fixed
// point, so nothing overflows or goes denormal.
//
// Build: clang-22 -O3 -march=native -pthread fma.c -o fma
// Usage: fma [threads] [trials] [iterations]
// Prints one line per thread count, e.g.
//   fma isa=avx512 chains=16 threads=1 best_gflops=115.2 median_gflops=114.8
//   trials=5
// for 1 thread and for `threads` threads (if > 1). FLOPs = 2 per lane per FMA.
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#define ISA "avx512"
#define NCHAINS 16
#define LANES 16
typedef __m512 vec;
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VSUM(v) _mm512_reduce_add_ps(v)
#elif defined(__AVX2__) && defined(__FMA__)
#define ISA "avx2"
#define NCHAINS 12
#define LANES 8
typedef __m256 vec;
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
static float VSUM(__m256 v) {
  float t[8];
  _mm256_storeu_ps(t, v);
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#else
#error "fma.c needs AVX-512F or AVX2+FMA (compile with -march=native)"
#endif

static long iterations = 40000000L;
static pthread_barrier_t barrier;
static volatile float sink;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float kernel(long iters, float seed) {
  vec m = VSET1(0.999999f), a = VSET1(1e-6f);
  vec acc[NCHAINS];
  for (int j = 0; j < NCHAINS; ++j)
    acc[j] = VSET1(seed + 0.001f * j);
  for (long i = 0; i < iters; ++i) {
    // NCHAINS independent FMAs per iteration (fully unrolled: the
    // accumulators live in registers).
#pragma clang loop unroll(full)
    for (int j = 0; j < NCHAINS; ++j)
      acc[j] = VFMA(acc[j], m, a);
  }
  vec s = acc[0];
  for (int j = 1; j < NCHAINS; ++j)
    s = VADD(s, acc[j]);
  return VSUM(s);
}

static void *worker(void *arg) {
  long id = (long)arg;
  pthread_barrier_wait(&barrier);
  float r = kernel(iterations, 1.0f + id);
  pthread_barrier_wait(&barrier);
  sink = r;
  return NULL;
}

// Wall time of `n` threads each running `iterations` iterations.
static double run(int n) {
  pthread_t tid[256];
  pthread_barrier_init(&barrier, NULL, (unsigned)n + 1);
  for (long t = 0; t < n; ++t)
    pthread_create(&tid[t], NULL, worker, (void *)t);
  pthread_barrier_wait(&barrier);
  double t0 = now();
  pthread_barrier_wait(&barrier);
  double t1 = now();
  for (int t = 0; t < n; ++t)
    pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&barrier);
  return t1 - t0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(int n, int trials) {
  double g[64];
  double flops = 2.0 * LANES * NCHAINS * (double)iterations * n;
  run(n); // warm-up (clocks up, threads placed)
  for (int i = 0; i < trials; ++i)
    g[i] = flops / run(n) * 1e-9;
  qsort(g, trials, sizeof(double), cmp);
  printf("fma isa=%s chains=%d threads=%d best_gflops=%.2f median_gflops=%.2f "
         "trials=%d\n",
         ISA, NCHAINS, n, g[trials - 1], g[trials / 2], trials);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  int trials = argc > 2 ? atoi(argv[2]) : 5;
  if (argc > 3)
    iterations = atol(argv[3]);
  if (threads < 1 || threads > 256 || trials < 1 || trials > 64 ||
      iterations < 1) {
    fprintf(stderr,
            "usage: fma [threads 1..256] [trials 1..64] [iterations]\n");
    return 1;
  }
  report(1, trials);
  if (threads > 1)
    report(threads, trials);
  return 0;
}
