// A C program over the serving C API on target nvptx, the kernels run by
// blockc's GPU emulator (blockc_model_options.emulate = 1): the options'
// errors, then a session of pages of 4 tokens (a pool of 20):
//   - sequences 0-3 get prompts of 1, 7, 13 and 30 tokens in one step, then
//     3 single-token steps of all four;
//   - sequence 1 (10 tokens) is forked; the child takes 3 other tokens (its
//     parent's pages unchanged), then 1 more beside 2 of its parent's;
//   - sequence 3 asks for 8 tokens with one page free: out of pages, nothing
//     changes; after sequence 0 is freed the same step runs.
// Every output row is written to DIR/y<i>.bin (DIR/yf.bin: the child's 4)
// for nvptx_io.py to compare with the NumPy reference. The inputs are
// DIR/x<i>.bin (float32 rows: 4, 12, 16 and 41) and DIR/xf.bin (4 rows).
//   c_api_nvptx MODEL.mlir WEIGHTS.safetensors DIR
//   c_api_nvptx MODEL.mlir     (only the load without emulate: its error on
//                              a machine without a GPU)

#include "blockc/Session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report(const char *what, blockc_status status) {
  printf("%s: %s, %s\n", what, blockc_status_name(status), blockc_last_error());
}

static void require(blockc_status status, const char *what) {
  if (status != BLOCKC_OK) {
    report(what, status);
    exit(1);
  }
}

static int64_t d;

static float *readRows(const char *dir, const char *name, int64_t rows) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "rb");
  float *x = malloc(sizeof(float) * rows * d);
  if (!f || fread(x, sizeof(float), rows * d, f) != (size_t)(rows * d)) {
    fprintf(stderr, "cannot read %lld rows from %s\n", (long long)rows, path);
    exit(1);
  }
  fclose(f);
  return x;
}

static void writeRows(const char *dir, const char *name, const float *y,
                      int64_t rows) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(y, sizeof(float), rows * d, f) != (size_t)(rows * d)) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

// Every byte of sequence `id`'s pages, K and V of every layer.
static char *pageBytes(blockc_session *s, int64_t id, int32_t layers,
                       size_t *total) {
  int32_t pages[64];
  int64_t count;
  require(blockc_session_pages(s, id, pages, 64, &count), "pages");
  size_t size;
  require(blockc_session_read_page(s, 0, 0, 0, NULL, 0, &size), "page size");
  *total = size * (size_t)count * 2 * (size_t)layers;
  char *bytes = malloc(*total), *at = bytes;
  for (int32_t l = 0; l < layers; ++l)
    for (int32_t v = 0; v < 2; ++v)
      for (int64_t p = 0; p < count; ++p, at += size)
        require(blockc_session_read_page(s, l, v, pages[p], at, size, &size),
                "read page");
  return bytes;
}

int main(int argc, char **argv) {
  if (argc == 2) {
    blockc_model *model = NULL;
    blockc_model_options options;
    blockc_model_options_init(&options);
    options.target = "nvptx";
    report("nvptx without emulate",
           blockc_model_load(argv[1], &options, &model));
    blockc_model_free(model);
    return 0;
  }
  if (argc != 4)
    return 2;
  const char *modelPath = argv[1], *weightsPath = argv[2], *dir = argv[3];
  blockc_model *model = NULL;
  blockc_model_options options;
  blockc_model_options_init(&options);
  printf("defaults: emulate %d\n", options.emulate);
  options.emulate = 1;
  report("emulate on cpu", blockc_model_load(modelPath, &options, &model));
  options.target = "nvptx";
  options.emulate = 2;
  report("emulate 2", blockc_model_load(modelPath, &options, &model));
  options.emulate = 1;
  require(blockc_model_load(modelPath, &options, &model), "load");
  require(blockc_model_bind_weights(model, weightsPath), "bind");
  blockc_model_info info;
  require(blockc_model_get_info(model, &info), "info");
  d = info.model_dim;

  blockc_session *s = NULL;
  require(blockc_session_create(model, 4, 20, &s), "session");
  const int64_t prompts[4] = {1, 7, 13, 30}, rows[4] = {4, 12, 16, 41};
  float *x[4], *y[4];
  int64_t ids[4], at[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    char name[8];
    snprintf(name, sizeof name, "x%d", i);
    x[i] = readRows(dir, name, rows[i]);
    y[i] = calloc((size_t)(rows[i] * d), sizeof(float));
    require(blockc_session_add(s, &ids[i]), "add");
  }
  // Steps 0-3: the prompts together, then single tokens.
  float *in = malloc(sizeof(float) * 64 * d),
        *out = malloc(sizeof(float) * 64 * d);
  for (int step = 0; step < 4; ++step) {
    int64_t counts[4], total = 0;
    for (int i = 0; i < 4; ++i) {
      counts[i] = step == 0 ? prompts[i] : 1;
      memcpy(in + total * d, x[i] + at[i] * d, sizeof(float) * counts[i] * d);
      total += counts[i];
    }
    require(blockc_session_step(s, 4, ids, counts, in, out), "step");
    total = 0;
    for (int i = 0; i < 4; ++i) {
      memcpy(y[i] + at[i] * d, out + total * d, sizeof(float) * counts[i] * d);
      at[i] += counts[i];
      total += counts[i];
    }
  }
  blockc_session_info si;
  require(blockc_session_get_info(s, &si), "info");
  printf("stepped: lengths %lld %lld %lld %lld, %lld free of %lld, paged %d\n",
         (long long)at[0], (long long)at[1], (long long)at[2], (long long)at[3],
         (long long)si.free_pages, (long long)si.num_pages, si.paged);

  // The fork of sequence 1 (10 tokens: two full pages shared, the third
  // copied).
  int64_t child, three = 3;
  require(blockc_session_fork(s, ids[1], &child), "fork");
  float *xf = readRows(dir, "xf", 4), *yf = malloc(sizeof(float) * 4 * d);
  size_t beforeSize, afterSize;
  char *before = pageBytes(s, ids[1], info.num_layers, &beforeSize);
  require(blockc_session_step(s, 1, &child, &three, xf, yf), "child step");
  char *after = pageBytes(s, ids[1], info.num_layers, &afterSize);
  printf("the parent's pages after the child's step: %s\n",
         beforeSize == afterSize && !memcmp(before, after, beforeSize)
             ? "unchanged"
             : "CHANGED");
  int64_t pair[2] = {child, ids[1]}, pairCounts[2] = {1, 2};
  memcpy(in, xf + 3 * d, sizeof(float) * d);
  memcpy(in + d, x[1] + at[1] * d, sizeof(float) * 2 * d);
  require(blockc_session_step(s, 2, pair, pairCounts, in, out), "pair step");
  memcpy(yf + 3 * d, out, sizeof(float) * d);
  memcpy(y[1] + at[1] * d, out + d, sizeof(float) * 2 * d);
  at[1] += 2;

  // Out of pages: 8 more tokens of sequence 3 need 2 pages, 1 is free.
  int64_t eight = 8, length;
  require(blockc_session_get_info(s, &si), "info");
  report("out of pages",
         blockc_session_step(s, 1, &ids[3], &eight, x[3] + at[3] * d, out));
  require(blockc_session_length(s, ids[3], &length), "length");
  int64_t freeBefore = si.free_pages;
  require(blockc_session_get_info(s, &si), "info");
  printf("unchanged: length %lld, %lld free pages (%lld before)\n",
         (long long)length, (long long)si.free_pages, (long long)freeBefore);
  require(blockc_session_release(s, ids[0]), "release");
  require(blockc_session_step(s, 1, &ids[3], &eight, x[3] + at[3] * d,
                              y[3] + at[3] * d),
          "step after the release");
  at[3] += 8;
  require(blockc_session_get_info(s, &si), "info");
  printf("after the release: %lld free pages\n", (long long)si.free_pages);

  for (int i = 0; i < 4; ++i) {
    char name[8];
    snprintf(name, sizeof name, "y%d", i);
    writeRows(dir, name, y[i], at[i]);
  }
  writeRows(dir, "yf", yf, 4);
  blockc_session_free(s);
  blockc_model_free(model);
  printf("done\n");
  return 0;
}
