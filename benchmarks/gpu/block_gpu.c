/* Runs a bf16 Llama-style block compiled by blockc for a real GPU
   (-target=nvptx -gpu-binary=fatbin -emit=obj --header=H; the header is
   included with -DBLOCK_HEADER='"H"'), linked against libblockc_cuda_runtime.
   With -DBLOCK_F32 the block is f32 instead (e.g. compiled with
   -gpu-allow-tf32). See benchmarks/gpu/README.md.

     block_gpu check DIR B T D KV FF   reads DIR/x.bin (f32 [B, T, D]) and
         DIR/w0.bin .. w8.bin (f32, the entry's argument order), rounds them
         to bf16 (to nearest even, as blockc-run does; f32 as they are),
         runs the block once and writes DIR/y.bin (f32);
     block_gpu time B T D KV FF REPEAT [PROFILE.json]  random weights and
         input; two warm-up calls, then REPEAT timed calls (each call
         returns after its last kernel): prints the median, min and max
         milliseconds. With PROFILE.json (or the environment variable
         BLOCK_PROFILE=PROFILE.json) it then runs REPEAT more calls with
         the runtime's per-kernel timing on (blockcCudaProfileStart, which
         makes each launch wait for its kernel, so these calls are not the
         timed ones) and writes the per-kernel GPU times, summed over the
         REPEAT calls, to PROFILE.json (blockcCudaProfileWriteJSON,
         docs/RuntimeABI.md) and as a table to stderr.
     block_gpu decode B L D KV FF DH REPEAT  (an object compiled with
         --decode, whose header declares forward_decode with one block's
         K and V caches, head-major; with -DBLOCK_KV_BSHD an object
         compiled with --kv-layout=bshd; DH: the head dimension) random
         weights and input; prefills L tokens through the decode entry at
         position 0 (a warm-up call, then one timed), then two warm-up and
         REPEAT timed one-token steps, each at position L (it rewrites
         cache row L: every step attends L + 1 keys): prints the median,
         min and max microseconds per step and the bandwidth it achieves on
         the bytes a step must read (every weight once and the L + 1 cached
         K and V rows of each batch row); with the environment variable
         BLOCK_PROFILE=PROFILE.json it then profiles REPEAT more steps as
         time mode does;
     block_gpu decode-check DIR B T P D KV FF DH  reads the files of check,
         prefills the first P tokens through the decode entry, then decodes
         the other T - P one token per call, and writes the T outputs of
         every batch row to DIR/y.bin (f32): causal attention makes them
         one forward pass over the T tokens.
   Exits 1 after a CUDA error. With -DBLOCKC_EMULATOR it links against the
   GPU emulator's runtime instead (an object built with --emulate), which
   has no per-kernel timing: a profile is refused there (blockc-run
   --emulate --profile models the kernels instead). */
#define _POSIX_C_SOURCE 199309L
#include BLOCK_HEADER

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef BLOCKC_EMULATOR
/* Linked with libblockc_emulator_runtime (an --emulate object): the same
   driver runs the kernels on the host (test/blockc/emit-obj-tensor-cores). */
const char *blockcEmuLastError(void);
#define blockcCudaLastError blockcEmuLastError
#define HAVE_PROFILE 0
static void blockcCudaProfileStart(void) {}
static void blockcCudaProfileStop(void) {}
static void blockcCudaProfileReport(void) {}
static int blockcCudaProfileWriteJSON(const char *path) {
  (void)path;
  return 1;
}
#else
/* include/blockc/Runtime/CudaRuntime.h (the bundle has no blockc headers). */
#define HAVE_PROFILE 1
const char *blockcCudaLastError(void);
void blockcCudaProfileStart(void);
void blockcCudaProfileStop(void);
int blockcCudaProfileWriteJSON(const char *path);
void blockcCudaProfileReport(void);
#endif

#ifdef BLOCK_F32
typedef float elem_t;
typedef blockc_memref_f32_1d memref1_t;
typedef blockc_memref_f32_2d memref2_t;
typedef blockc_memref_f32_3d memref3_t;
#ifdef BLOCKC_forward_decode_NUM_CACHES
typedef blockc_memref_f32_4d memref4_t;
#endif
static elem_t toElem(float f) { return f; }
static float fromElem(elem_t e) { return e; }
#define ELEM_NAME "f32"
#else
typedef uint16_t elem_t;
typedef blockc_memref_bf16_1d memref1_t;
typedef blockc_memref_bf16_2d memref2_t;
typedef blockc_memref_bf16_3d memref3_t;
#ifdef BLOCKC_forward_decode_NUM_CACHES
typedef blockc_memref_bf16_4d memref4_t;
#endif
#define ELEM_NAME "bf16"

static uint16_t toBF16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu))
    return (uint16_t)((bits >> 16) | 0x40); /* quiet NaN */
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

static float fromBF16(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static elem_t toElem(float f) { return toBF16(f); }
static float fromElem(elem_t e) { return fromBF16(e); }
#endif

static elem_t *gpuBuffer(size_t n) {
  elem_t *p = mgpuMemAlloc((n ? n : 1) * sizeof(elem_t), 0, 1);
  if (!p) {
    fprintf(stderr, "mgpuMemAlloc of %zu " ELEM_NAME " failed\n", n);
    exit(1);
  }
  return p;
}

/* n elements from DIR/NAME (f32), or uniform in [-scale, scale) when dir is
   NULL. */
static elem_t *load(const char *dir, const char *name, size_t n, float scale,
                    unsigned *seed) {
  elem_t *p = gpuBuffer(n);
  if (!dir) {
    for (size_t i = 0; i < n; ++i) {
      *seed = *seed * 1664525u + 1013904223u;
      p[i] = toElem(scale * ((float)(*seed >> 8) / 8388608.0f - 1.0f));
    }
    return p;
  }
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  for (size_t i = 0; i < n; ++i) {
    float v;
    if (fread(&v, sizeof v, 1, f) != 1) {
      fprintf(stderr, "%s: short read\n", path);
      exit(1);
    }
    p[i] = toElem(v);
  }
  fclose(f);
  return p;
}

static memref1_t vec(elem_t *p, int64_t n) {
  memref1_t m = {p, p, 0, {n}, {1}};
  return m;
}

static memref2_t mat(elem_t *p, int64_t r, int64_t c) {
  memref2_t m = {p, p, 0, {r, c}, {c, 1}};
  return m;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int failed(void) {
  const char *error = blockcCudaLastError();
  if (!error)
    return 0;
  fprintf(stderr, "CUDA error: %s\n", error);
  return 1;
}

/* The block's weights in the entry's argument order, from DIR/w*.bin or
   random (dir NULL). */
typedef struct {
  memref1_t g1, g2;
  memref2_t wq, wk, wv, wo, wg, wu, wd;
} weights_t;

static weights_t loadWeights(const char *dir, int64_t d, int64_t kv, int64_t ff,
                             unsigned *seed) {
  float ws = 1.0f / sqrtf((float)d);
  weights_t w;
  w.g1 = vec(load(dir, "w0.bin", d, 1.0f, seed), d);
  w.wq = mat(load(dir, "w1.bin", d * d, ws, seed), d, d);
  w.wk = mat(load(dir, "w2.bin", kv * d, ws, seed), kv, d);
  w.wv = mat(load(dir, "w3.bin", kv * d, ws, seed), kv, d);
  w.wo = mat(load(dir, "w4.bin", d * d, ws, seed), d, d);
  w.g2 = vec(load(dir, "w5.bin", d, 1.0f, seed), d);
  w.wg = mat(load(dir, "w6.bin", ff * d, ws, seed), ff, d);
  w.wu = mat(load(dir, "w7.bin", ff * d, ws, seed), ff, d);
  w.wd = mat(load(dir, "w8.bin", d * ff, 1.0f / sqrtf((float)ff), seed), d, ff);
  return w;
}

#ifdef BLOCKC_forward_decode_NUM_CACHES
#if BLOCKC_forward_decode_NUM_CACHES != 2
#error "block_gpu drives one block: a decode entry with one K and one V cache"
#endif
/* The decode entry appends the new K and V rows to the caches with a
   strided memref.copy on the host, which MLIR lowers to a call of
   memrefCopy from libmlir_c_runner_utils. That library needs libMLIR
   (100+ MB), which the GPU bundle cannot carry: the driver defines the
   function itself (MLIR's C ABI: an element size and two unranked
   descriptors {rank, pointer to {allocated, aligned, offset, sizes[rank],
   strides[rank]}}). */
typedef struct {
  int64_t rank;
  void *descriptor;
} unranked_memref_t;

void memrefCopy(int64_t elemSize, unranked_memref_t *src,
                unranked_memref_t *dst);
void memrefCopy(int64_t elemSize, unranked_memref_t *src,
                unranked_memref_t *dst) {
  int64_t rank = src->rank, index[16] = {0};
  const int64_t *s = (const int64_t *)((char **)src->descriptor + 2);
  const int64_t *t = (const int64_t *)((char **)dst->descriptor + 2);
  const int64_t *sizes = s + 1, *from = s + 1 + rank, *to = t + 1 + rank;
  char *sp = ((char **)src->descriptor)[1] + s[0] * elemSize;
  char *dp = ((char **)dst->descriptor)[1] + t[0] * elemSize;
  if (rank > 16) {
    fprintf(stderr, "block_gpu: memrefCopy of rank %lld\n", (long long)rank);
    abort();
  }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  if (rank == 0) {
    memcpy(dp, sp, (size_t)elemSize);
    return;
  }
  int64_t inner = sizes[rank - 1];
  for (;;) {
    if (from[rank - 1] == 1 && to[rank - 1] == 1)
      memcpy(dp, sp, (size_t)(inner * elemSize));
    else
      for (int64_t j = 0; j < inner; ++j)
        memcpy(dp + j * to[rank - 1] * elemSize,
               sp + j * from[rank - 1] * elemSize, (size_t)elemSize);
    int64_t k = rank - 2;
    for (; k >= 0; --k) {
      sp += from[k] * elemSize;
      dp += to[k] * elemSize;
      if (++index[k] < sizes[k])
        break;
      sp -= from[k] * sizes[k] * elemSize;
      dp -= to[k] * sizes[k] * elemSize;
      index[k] = 0;
    }
    if (k < 0)
      return;
  }
}

/* A cache as the header describes it, zeroed: head-major (the default
   --kv-layout=bhsd), [B][H_kv][L_max][DH] in memory seen through sizes
   {B, L_max, H_kv, DH}; with -DBLOCK_KV_BSHD (an object compiled with
   --kv-layout=bshd) dense [B][L_max][H_kv][DH]. */
static memref4_t cache(int64_t b, int64_t lmax, int64_t hkv, int64_t dh) {
  size_t n = (size_t)(b * hkv * lmax * dh);
  elem_t *p = gpuBuffer(n);
  memset(p, 0, n * sizeof(elem_t));
#ifdef BLOCK_KV_BSHD
  memref4_t m = {
      p, p, 0, {b, lmax, hkv, dh}, {lmax * hkv * dh, hkv * dh, dh, 1}};
#else
  memref4_t m = {
      p, p, 0, {b, lmax, hkv, dh}, {hkv * lmax * dh, dh, lmax * dh, 1}};
#endif
  return m;
}

/* One call of the decode entry on the n tokens at pos (a dense [B, n, D]
   device buffer); returns the result, which the caller frees. */
static memref3_t decodeCall(const weights_t *w, elem_t *x, int64_t b, int64_t n,
                            int64_t d, int64_t pos, memref4_t *k,
                            memref4_t *v) {
  memref3_t in = {x, x, 0, {b, n, d}, {n * d, d, 1}};
  memref3_t result;
  memset(&result, 0, sizeof result);
  weights_t c = *w;
  _mlir_ciface_forward_decode(&result, &in, &c.g1, &c.wq, &c.wk, &c.wv, &c.wo,
                              &c.g2, &c.wg, &c.wu, &c.wd, pos, k, v);
  return result;
}
#endif

/* decode and decode-check: argv after the mode. */
/* Ends a profile (blockcCudaProfileStart and the profiled calls came
   before): writes the per-kernel times to `path`, prints "LINE -> PATH" and
   the table. */
static int finishProfile(const char *path, const char *line) {
  blockcCudaProfileStop();
  if (blockcCudaProfileWriteJSON(path) != 0)
    return 1;
  printf("%s -> %s\n", line, path);
  blockcCudaProfileReport();
  return 0;
}

static int runDecode(int check, int argc, char **argv) {
#ifndef BLOCKC_forward_decode_NUM_CACHES
  (void)check;
  (void)argc;
  (void)argv;
  fprintf(stderr, "block_gpu: this object has no decode entry (compile it "
                  "with blockc --decode)\n");
  return 2;
#else
  if (argc != 7 + check) {
    fprintf(stderr, "usage: block_gpu decode B L D KV FF DH REPEAT | "
                    "block_gpu decode-check DIR B T P D KV FF DH\n");
    return 2;
  }
  const char *dir = check ? argv[0] : NULL;
  char **a = argv + check;
  int64_t b = atoll(a[0]), t = atoll(a[1]);
  int64_t p = check ? atoll(a[2]) : t;
  a += check;
  int64_t d = atoll(a[2]), kv = atoll(a[3]), ff = atoll(a[4]), dh = atoll(a[5]);
  int repeat = check ? 1 : atoi(a[6]);
  if (b < 1 || t < 1 || p < 1 || p > t || d < 1 || kv < 1 || ff < 1 || dh < 1 ||
      kv % dh || repeat < 1) {
    fprintf(stderr, "block_gpu: B, L (T), D, KV, FF, DH and REPEAT must be "
                    "positive integers, DH must divide KV and 1 <= P <= T\n");
    return 2;
  }
  unsigned seed = 12345;
  /* check: the T tokens of the file; time: L prefill tokens and one step
     token per batch row. */
  int64_t tokens = check ? t : t + 1;
  elem_t *x = load(dir, "x.bin", (size_t)(b * tokens * d), 1.0f, &seed);
  weights_t w = loadWeights(dir, d, kv, ff, &seed);
  int64_t lmax = t + (check ? 0 : 1);
  memref4_t k = cache(b, lmax, kv / dh, dh), v = cache(b, lmax, kv / dh, dh);

  /* The n tokens at pos of every batch row, as a dense [B, n, D]. */
  elem_t *chunk = gpuBuffer((size_t)(b * (p > 1 ? p : 1) * d));
  elem_t *one = gpuBuffer((size_t)(b * d));
  for (int64_t bi = 0; bi < b; ++bi)
    memcpy(chunk + bi * p * d, x + bi * tokens * d,
           (size_t)(p * d) * sizeof(elem_t));
  /* time: a warm-up prefill first (it moves the weights, written here, to
     the GPU), then the timed one, which writes the same cache rows. */
  memref3_t result;
  if (!check) {
    result = decodeCall(&w, chunk, b, p, d, 0, &k, &v);
    mgpuMemFree(result.allocated, 0);
    if (failed())
      return 1;
  }
  double start = now();
  result = decodeCall(&w, chunk, b, p, d, 0, &k, &v);
  double prefillMs = now() - start;
  if (failed())
    return 1;
  if (result.sizes[0] != b || result.sizes[1] != p || result.sizes[2] != d) {
    fprintf(stderr, "block_gpu: the prefill's result is not [B, P, D]\n");
    return 1;
  }

  if (check) {
    float *y = malloc(sizeof(float) * (size_t)(b * t * d));
    for (int64_t pos = 0; pos < t;) {
      int64_t n = pos == 0 ? p : 1;
      if (pos > 0) {
        for (int64_t bi = 0; bi < b; ++bi)
          memcpy(one + bi * d, x + (bi * t + pos) * d,
                 (size_t)d * sizeof(elem_t));
        result = decodeCall(&w, one, b, 1, d, pos, &k, &v);
        if (failed())
          return 1;
      }
      for (int64_t bi = 0; bi < b; ++bi)
        for (int64_t ti = 0; ti < n; ++ti)
          for (int64_t di = 0; di < d; ++di)
            y[(bi * t + pos + ti) * d + di] = fromElem(
                result
                    .aligned[result.offset + bi * result.strides[0] +
                             ti * result.strides[1] + di * result.strides[2]]);
      mgpuMemFree(result.allocated, 0);
      pos += n;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/y.bin", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(y, sizeof(float), (size_t)(b * t * d), f) !=
                  (size_t)(b * t * d)) {
      perror(path);
      return 1;
    }
    fclose(f);
    free(y);
    printf("decoded [%lld, %lld, %lld]: a prefill of %lld, %lld steps -> "
           "%s\n",
           (long long)b, (long long)t, (long long)d, (long long)p,
           (long long)(t - p), path);
    return 0;
  }

  mgpuMemFree(result.allocated, 0);
  for (int64_t bi = 0; bi < b; ++bi)
    memcpy(one + bi * d, x + (bi * tokens + t) * d, (size_t)d * sizeof(elem_t));
  double *us = malloc(sizeof(double) * (size_t)repeat);
  for (int i = -2; i < repeat; ++i) {
    double begin = now();
    result = decodeCall(&w, one, b, 1, d, t, &k, &v);
    double end = now();
    mgpuMemFree(result.allocated, 0);
    if (failed())
      return 1;
    if (i >= 0)
      us[i] = (end - begin) * 1e3;
  }
  qsort(us, (size_t)repeat, sizeof(double), compare);
  /* What a step must read: every weight once, and the L + 1 cached K and V
     rows of every batch row. */
  double weightBytes = (double)sizeof(elem_t) *
                       (double)(2 * d + 2 * d * d + 2 * kv * d + 3 * ff * d);
  double kvBytes = (double)sizeof(elem_t) * 2.0 * (double)(b * (t + 1) * kv);
  double median = us[repeat / 2];
  printf("blockc decode B=%lld L=%lld: median %.1f us (min %.1f, max %.1f) "
         "over %d steps, %.1f GB/s (%.1f MB per step: weights %.1f, KV "
         "%.1f); prefill %.3f ms\n",
         (long long)b, (long long)t, median, us[0], us[repeat - 1], repeat,
         (weightBytes + kvBytes) / (median * 1e3),
         (weightBytes + kvBytes) / 1e6, weightBytes / 1e6, kvBytes / 1e6,
         prefillMs);
  free(us);
  /* With the environment variable BLOCK_PROFILE=PROFILE.json: per-kernel
     GPU times of REPEAT more steps (each profiled launch waits for its
     kernel, so these are not the timed steps), as in time mode. */
  const char *profilePath = getenv("BLOCK_PROFILE");
  if (!profilePath || !*profilePath)
    return 0;
  if (!HAVE_PROFILE) {
    fprintf(stderr, "block_gpu: no per-kernel profile under the emulator\n");
    return 2;
  }
  blockcCudaProfileStart();
  for (int i = 0; i < repeat; ++i) {
    result = decodeCall(&w, one, b, 1, d, t, &k, &v);
    mgpuMemFree(result.allocated, 0);
    if (failed())
      return 1;
  }
  char line[128];
  snprintf(line, sizeof line,
           "blockc decode B=%lld L=%lld: per-kernel GPU times of %d steps",
           (long long)b, (long long)t, repeat);
  return finishProfile(profilePath, line);
#endif
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "decode"))
    return runDecode(0, argc - 2, argv + 2);
  if (argc >= 2 && !strcmp(argv[1], "decode-check"))
    return runDecode(1, argc - 2, argv + 2);
  int check = argc == 8 && !strcmp(argv[1], "check");
  int timing = (argc == 8 || argc == 9) && !strcmp(argv[1], "time");
  if (!check && !timing) {
    fprintf(stderr, "usage: block_gpu check DIR B T D KV FF | "
                    "block_gpu time B T D KV FF REPEAT [PROFILE.json] | "
                    "block_gpu decode B L D KV FF DH REPEAT | "
                    "block_gpu decode-check DIR B T P D KV FF DH\n");
    return 2;
  }
  const char *profilePath = NULL;
  if (timing) {
    profilePath = argc == 9 ? argv[8] : getenv("BLOCK_PROFILE");
    if (profilePath && !*profilePath)
      profilePath = NULL;
  }
  if (profilePath && !HAVE_PROFILE) {
    fprintf(stderr, "block_gpu: no per-kernel profile under the GPU "
                    "emulator's runtime (blockc-run --emulate --profile "
                    "models the kernels instead)\n");
    return 2;
  }
  const char *dir = check ? argv[2] : NULL;
  int a = check ? 3 : 2;
  int64_t b = atoll(argv[a]), t = atoll(argv[a + 1]), d = atoll(argv[a + 2]),
          kv = atoll(argv[a + 3]), ff = atoll(argv[a + 4]);
  int repeat = timing ? atoi(argv[7]) : 1;
  if (b < 1 || t < 1 || d < 1 || kv < 1 || ff < 1 || repeat < 1) {
    fprintf(stderr, "block_gpu: B, T, D, KV, FF and REPEAT must be positive "
                    "integers\n");
    return 2;
  }
  unsigned seed = 12345;
  elem_t *x = load(dir, "x.bin", (size_t)(b * t * d), 1.0f, &seed);
  memref3_t in = {x, x, 0, {b, t, d}, {t * d, d, 1}};
  weights_t w = loadWeights(dir, d, kv, ff, &seed);
  memref1_t g1 = w.g1, g2 = w.g2;
  memref2_t wq = w.wq, wk = w.wk, wv = w.wv, wo = w.wo, wg = w.wg, wu = w.wu,
            wd = w.wd;

  memref3_t result;
  if (check) {
    memset(&result, 0, sizeof result);
    _mlir_ciface_forward(&result, &in, &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu,
                         &wd);
    if (failed())
      return 1;
    char path[512];
    snprintf(path, sizeof path, "%s/y.bin", dir);
    FILE *f = fopen(path, "wb");
    for (int64_t i = 0; i < b * t * d; ++i) {
      int64_t bi = i / (t * d), ti = (i / d) % t, di = i % d;
      float v = fromElem(
          result.aligned[result.offset + bi * result.strides[0] +
                         ti * result.strides[1] + di * result.strides[2]]);
      fwrite(&v, sizeof v, 1, f);
    }
    fclose(f);
    mgpuMemFree(result.allocated, 0);
    printf("result [%lld, %lld, %lld] -> %s\n", (long long)result.sizes[0],
           (long long)result.sizes[1], (long long)result.sizes[2], path);
    return 0;
  }

  double *ms = malloc(sizeof(double) * (size_t)repeat);
  for (int i = -2; i < repeat; ++i) {
    memset(&result, 0, sizeof result);
    double start = now();
    _mlir_ciface_forward(&result, &in, &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu,
                         &wd);
    double stop = now();
    mgpuMemFree(result.allocated, 0);
    if (failed())
      return 1;
    if (i >= 0)
      ms[i] = stop - start;
  }
  qsort(ms, (size_t)repeat, sizeof(double), compare);
  printf("blockc B=%lld T=%lld: median %.3f ms (min %.3f, max %.3f) over %d "
         "calls\n",
         (long long)b, (long long)t, ms[repeat / 2], ms[0], ms[repeat - 1],
         repeat);
  free(ms);
  if (!profilePath)
    return 0;
  /* Per-kernel GPU times of REPEAT more calls (each profiled launch waits
     for its kernel, so they are not the timed calls above). */
  blockcCudaProfileStart();
  for (int i = 0; i < repeat; ++i) {
    memset(&result, 0, sizeof result);
    _mlir_ciface_forward(&result, &in, &g1, &wq, &wk, &wv, &wo, &g2, &wg, &wu,
                         &wd);
    mgpuMemFree(result.allocated, 0);
    if (failed())
      return 1;
  }
  char line[128];
  snprintf(line, sizeof line,
           "blockc B=%lld T=%lld: per-kernel GPU times of %d calls",
           (long long)b, (long long)t, repeat);
  return finishProfile(profilePath, line);
}
