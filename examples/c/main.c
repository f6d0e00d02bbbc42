/* Runs examples/small's Llama-style block from C: the object and header
   that `blockc -emit=obj` wrote for examples/small/model.mlir, linked
   against blockc's installed runtime (pkg-config blockc, or CMake's
   find_package(blockc): see README.md).

   Usage: small_block WEIGHTS.safetensors INPUT.npy OUTPUT.npy
     WEIGHTS  the block's weights under their Hugging Face names (e.g. from
              blockc-import, or utils/blockc_ref.py gen-weights), float32
     INPUT    float32 [B, T, 256]
     OUTPUT   written: float32 [B, T, 256]

   The entry's prepare function packs the projections once into the
   layouts the header lists; @forward then reads the packed copies. */
#include "model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D 256

static void die(const char *what, const char *detail) {
  fprintf(stderr, "small_block: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  exit(1);
}

/* The whole of `path` in a malloc'ed buffer. */
static char *readAll(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die("cannot open", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc((size_t)n + 1);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n)
    die("cannot read", path);
  fclose(f);
  data[n] = 0;
  *size = (size_t)n;
  return data;
}

/* A minimal safetensors reader: an 8-byte little-endian header size, a
   JSON header mapping each tensor name to its dtype, shape and byte range,
   then the data. */
typedef struct {
  char *bytes, *header;
  size_t size, dataStart;
} SafeTensors;

static SafeTensors openSafeTensors(const char *path) {
  SafeTensors st;
  st.bytes = readAll(path, &st.size);
  uint64_t headerSize = 0;
  if (st.size < 8)
    die("not a safetensors file", path);
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | (unsigned char)st.bytes[i];
  if (headerSize > st.size - 8)
    die("truncated safetensors header", path);
  st.header = malloc(headerSize + 1);
  memcpy(st.header, st.bytes + 8, headerSize);
  st.header[headerSize] = 0;
  st.dataStart = 8 + headerSize;
  return st;
}

/* The float32 tensor `name` of `count` elements (a copy). */
static float *tensor(const SafeTensors *st, const char *name, size_t count) {
  char key[256];
  snprintf(key, sizeof key, "\"%s\"", name);
  const char *entry = strstr(st->header, key);
  if (!entry)
    die("weights: missing tensor", name);
  const char *end = strchr(entry, '}');
  const char *dtype = strstr(entry, "\"dtype\"");
  const char *offsets = strstr(entry, "\"data_offsets\"");
  if (!dtype || !offsets || dtype > end || offsets > end)
    die("weights: malformed entry", name);
  if (!strstr(dtype, "\"F32\"") || strstr(dtype, "\"F32\"") > end)
    die("weights: not float32", name);
  char *p = strchr(offsets, '[');
  uint64_t begin = strtoull(p + 1, &p, 10);
  uint64_t stop = strtoull(p + 1, NULL, 10);
  if (stop - begin != count * sizeof(float) || st->dataStart + stop > st->size)
    die("weights: unexpected size", name);
  float *data = malloc(count * sizeof(float));
  memcpy(data, st->bytes + st->dataStart + begin, count * sizeof(float));
  return data;
}

/* A float32 .npy file of shape [B, T, D]. */
static float *readInput(const char *path, int64_t *b, int64_t *t) {
  size_t size;
  char *bytes = readAll(path, &size);
  if (size < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
    die("not a .npy file", path);
  size_t headerStart = bytes[6] == 1 ? 10 : 12;
  size_t headerLen = bytes[6] == 1 ? (size_t)(unsigned char)bytes[8] |
                                         (size_t)(unsigned char)bytes[9] << 8
                                   : (size_t)(unsigned char)bytes[8] |
                                         (size_t)(unsigned char)bytes[9] << 8 |
                                         (size_t)(unsigned char)bytes[10] << 16;
  char *header = bytes + headerStart;
  if (!strstr(header, "'<f4'") || strstr(header, "'fortran_order': True"))
    die("expected a C-order float32 array", path);
  long long d = 0, bb = 0, tt = 0;
  char *shape = strstr(header, "'shape': (");
  if (!shape ||
      sscanf(shape, "'shape': (%lld, %lld, %lld)", &bb, &tt, &d) != 3 || d != D)
    die("expected shape (B, T, 256)", path);
  size_t count = (size_t)(bb * tt * d);
  if (headerStart + headerLen + count * sizeof(float) != size)
    die("data size mismatch", path);
  float *data = malloc(count * sizeof(float));
  memcpy(data, bytes + headerStart + headerLen, count * sizeof(float));
  free(bytes);
  *b = bb;
  *t = tt;
  return data;
}

/* Writes the [B, T, D] result (honouring its strides) as a .npy file. */
static void writeOutput(const char *path, const blockc_memref_f32_3d *r) {
  char header[128];
  int n = snprintf(header, sizeof header,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': "
                   "(%lld, %lld, %lld), }",
                   (long long)r->sizes[0], (long long)r->sizes[1],
                   (long long)r->sizes[2]);
  /* Pad with spaces and a newline to a multiple of 64 bytes. */
  int total = (10 + n + 1 + 63) / 64 * 64;
  FILE *f = fopen(path, "wb");
  if (!f)
    die("cannot write", path);
  unsigned char preamble[10] = {0x93,
                                'N',
                                'U',
                                'M',
                                'P',
                                'Y',
                                1,
                                0,
                                (unsigned char)((total - 10) & 0xff),
                                (unsigned char)((total - 10) >> 8)};
  fwrite(preamble, 1, 10, f);
  fwrite(header, 1, (size_t)n, f);
  for (int i = 10 + n; i < total - 1; ++i)
    fputc(' ', f);
  fputc('\n', f);
  for (int64_t i = 0; i < r->sizes[0]; ++i)
    for (int64_t j = 0; j < r->sizes[1]; ++j)
      for (int64_t k = 0; k < r->sizes[2]; ++k)
        fwrite(&r->aligned[r->offset + i * r->strides[0] + j * r->strides[1] +
                           k * r->strides[2]],
               sizeof(float), 1, f);
  if (fclose(f) != 0)
    die("cannot write", path);
}

static blockc_memref_f32_1d vec(float *p, int64_t n) {
  blockc_memref_f32_1d m = {p, p, 0, {n}, {1}};
  return m;
}

static blockc_memref_f32_2d mat(float *p, int64_t r, int64_t c) {
  blockc_memref_f32_2d m = {p, p, 0, {r, c}, {c, 1}};
  return m;
}

/* A zeroed dense buffer of the packed shape `s` (the header's
   BLOCKC_forward_prepare_ARG<i>_SHAPE): a prepared weight's destination. */
static blockc_memref_f32_4d packed(const int64_t s[4]) {
  float *p = calloc((size_t)(s[0] * s[1] * s[2] * s[3]), sizeof(float));
  blockc_memref_f32_4d m = {p,
                            p,
                            0,
                            {s[0], s[1], s[2], s[3]},
                            {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1}};
  return m;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr,
            "usage: small_block WEIGHTS.safetensors INPUT.npy OUTPUT.npy\n");
    return 2;
  }
  SafeTensors st = openSafeTensors(argv[1]);
  const char *layer = "model.layers.0.";
  char name[128];
#define WEIGHT(field, count)                                                   \
  (snprintf(name, sizeof name, "%s%s", layer, field),                          \
   tensor(&st, name, (size_t)(count)))
  const int64_t kv = 64, ff = 688;
  blockc_memref_f32_1d attnNorm = vec(WEIGHT("input_layernorm.weight", D), D);
  blockc_memref_f32_2d wq = mat(WEIGHT("self_attn.q_proj.weight", D * D), D, D);
  blockc_memref_f32_2d wk =
      mat(WEIGHT("self_attn.k_proj.weight", kv * D), kv, D);
  blockc_memref_f32_2d wv =
      mat(WEIGHT("self_attn.v_proj.weight", kv * D), kv, D);
  blockc_memref_f32_2d wo = mat(WEIGHT("self_attn.o_proj.weight", D * D), D, D);
  blockc_memref_f32_1d ffnNorm =
      vec(WEIGHT("post_attention_layernorm.weight", D), D);
  blockc_memref_f32_2d wg = mat(WEIGHT("mlp.gate_proj.weight", ff * D), ff, D);
  blockc_memref_f32_2d wu = mat(WEIGHT("mlp.up_proj.weight", ff * D), ff, D);
  blockc_memref_f32_2d wd = mat(WEIGHT("mlp.down_proj.weight", D * ff), D, ff);
#undef WEIGHT

  /* Pack the projections once. */
  const int64_t s2[] = BLOCKC_forward_prepare_ARG2_SHAPE,
                s3[] = BLOCKC_forward_prepare_ARG3_SHAPE,
                s4[] = BLOCKC_forward_prepare_ARG4_SHAPE,
                s5[] = BLOCKC_forward_prepare_ARG5_SHAPE,
                s7[] = BLOCKC_forward_prepare_ARG7_SHAPE,
                s8[] = BLOCKC_forward_prepare_ARG8_SHAPE,
                s9[] = BLOCKC_forward_prepare_ARG9_SHAPE;
  blockc_memref_f32_4d pq = packed(s2), pk = packed(s3), pv = packed(s4),
                       po = packed(s5), pg = packed(s7), pu = packed(s8),
                       pd = packed(s9);
  _mlir_ciface_forward_prepare(&attnNorm, &wq, &wk, &wv, &wo, &ffnNorm, &wg,
                               &wu, &wd, &pq, &pk, &pv, &po, &pg, &pu, &pd);

  int64_t b, t;
  float *x = readInput(argv[2], &b, &t);
  blockc_memref_f32_3d input = {x, x, 0, {b, t, D}, {t * D, D, 1}};
  blockc_memref_f32_3d result;
  _mlir_ciface_forward(&result, &input, &attnNorm, &pq, &pk, &pv, &po, &ffnNorm,
                       &pg, &pu, &pd);
  writeOutput(argv[3], &result);
  printf("small_block: ran @forward on [%lld, %lld, %d] -> %s\n", (long long)b,
         (long long)t, D, argv[3]);
  free(result.allocated); /* the result buffer belongs to the caller */
  return 0;
}
