// benchmarks/probes/triad.c - STREAM-like triad (the machine's DRAM bandwidth).
//
// a[i] = b[i] + s * c[i] over three arrays of 256 MiB each (f64, 32 Mi
// elements), far larger than the caches. Bytes counted as in STREAM: 3 arrays
// x 256 MiB per pass (24 bytes per element: two reads, one write; the
// write-allocate read that a normal store causes is not counted). Each thread
// owns a contiguous slice and first-touches it, so pages are local to it.
//
// Build: clang-22 -O3 -march=native -pthread triad.c -o triad
// Usage: triad [threads] [trials] [MiB per array]
// Prints one line per thread count, e.g.
//   triad threads=1 array_mib=256 best_gbs=19.3 median_gbs=18.9 trials=5
// for 1 thread and for `threads` threads (if > 1). GB = 1e9 bytes.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double *a, *b, *c;
static long n;
static int nthreads;
static pthread_barrier_t start_barrier, end_barrier;
static volatile int stop;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void slice(long id, long *lo, long *hi) {
  long chunk = (n + nthreads - 1) / nthreads;
  *lo = id * chunk;
  *hi = *lo + chunk < n ? *lo + chunk : n;
}

static void triad(long lo, long hi, double s) {
  double *restrict pa = a, *restrict pb = b, *restrict pc = c;
  for (long i = lo; i < hi; ++i)
    pa[i] = pb[i] + s * pc[i];
}

static void *worker(void *arg) {
  long id = (long)arg, lo, hi;
  slice(id, &lo, &hi);
  for (long i = lo; i < hi; ++i) { // first touch
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  for (;;) {
    pthread_barrier_wait(&start_barrier);
    if (stop)
      break;
    triad(lo, hi, 3.0);
    pthread_barrier_wait(&end_barrier);
  }
  return NULL;
}

static int cmp(const void *x, const void *y) {
  double p = *(const double *)x, q = *(const double *)y;
  return (p > q) - (p < q);
}

static void report(int threads, int trials, long mib) {
  pthread_t tid[256];
  double g[64];
  nthreads = threads;
  stop = 0;
  pthread_barrier_init(&start_barrier, NULL, (unsigned)threads + 1);
  pthread_barrier_init(&end_barrier, NULL, (unsigned)threads + 1);
  for (long t = 0; t < threads; ++t)
    pthread_create(&tid[t], NULL, worker, (void *)t);
  double bytes = 3.0 * (double)n * sizeof(double);
  for (int i = -1; i < trials; ++i) { // i = -1: warm-up pass
    pthread_barrier_wait(&start_barrier);
    double t0 = now();
    pthread_barrier_wait(&end_barrier);
    double t1 = now();
    if (i >= 0)
      g[i] = bytes / (t1 - t0) * 1e-9;
  }
  stop = 1;
  pthread_barrier_wait(&start_barrier);
  for (int t = 0; t < threads; ++t)
    pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&start_barrier);
  pthread_barrier_destroy(&end_barrier);
  qsort(g, trials, sizeof(double), cmp);
  printf("triad threads=%d array_mib=%ld best_gbs=%.2f median_gbs=%.2f "
         "trials=%d check=%.1f\n",
         threads, mib, g[trials - 1], g[trials / 2], trials, a[n / 2]);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  int trials = argc > 2 ? atoi(argv[2]) : 5;
  long mib = argc > 3 ? atol(argv[3]) : 256;
  if (threads < 1 || threads > 256 || trials < 1 || trials > 64 || mib < 1) {
    fprintf(stderr, "usage: triad [threads 1..256] [trials 1..64] [MiB]\n");
    return 1;
  }
  n = mib * 1024L * 1024L / (long)sizeof(double);
  size_t bytes = (size_t)n * sizeof(double);
  a = aligned_alloc(4096, bytes);
  b = aligned_alloc(4096, bytes);
  c = aligned_alloc(4096, bytes);
  if (!a || !b || !c) {
    fprintf(stderr, "triad: cannot allocate 3 x %ld MiB\n", mib);
    return 1;
  }
  report(1, trials, mib);
  if (threads > 1)
    report(threads, trials, mib);
  free(a);
  free(b);
  free(c);
  return 0;
}
