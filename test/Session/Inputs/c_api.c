// A C program over the serving C API: its status codes and messages, and a
// sequence stepped in two calls against the forward entry.
//   c_api MODEL.mlir WEIGHTS.safetensors MISSING_PATH

#include "blockc/Session.h"

#include <math.h>
#include <pthread.h>
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

static void *otherThread(void *result) {
  // A fresh thread has no last error.
  snprintf((char *)result, 256, "%s", blockc_last_error());
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const char *modelPath = argv[1], *weightsPath = argv[2], *missing = argv[3];
  blockc_model *model = NULL;
  blockc_model_options options;
  blockc_model_options_init(&options);
  options.isa = "avx2";

  report("load missing", blockc_model_load(missing, &options, &model));
  options.isa = "avx9";
  report("bad isa", blockc_model_load(modelPath, &options, &model));
  options.isa = "avx2";
  require(blockc_model_load(modelPath, &options, &model), "load");

  blockc_session *session = NULL;
  report("session before weights",
         blockc_session_create(model, 4, 2, &session));
  char wrong[4096];
  snprintf(wrong, sizeof wrong, "%s.safetensors", missing);
  report("weights missing", blockc_model_bind_weights(model, wrong));
  require(blockc_model_bind_weights(model, weightsPath), "bind");
  report("weights twice", blockc_model_bind_weights(model, weightsPath));
  report("page size 0", blockc_session_create(model, 0, 2, &session));
  require(blockc_session_create(model, 4, 2, &session), "session");

  blockc_model_info info;
  require(blockc_model_get_info(model, &info), "info");
  int64_t d = info.model_dim;
  float *x = malloc(sizeof(float) * 16 * d);
  float *y = malloc(sizeof(float) * 16 * d);
  float *full = malloc(sizeof(float) * 16 * d);
  for (int64_t i = 0; i < 16 * d; ++i)
    x[i] = sinf(0.37f * (float)i);

  int64_t a = -1, bad = 99, one = 1, zero = 0, five = 5, nine = 9;
  require(blockc_session_add(session, &a), "add");
  report("step unknown", blockc_session_step(session, 1, &bad, &one, x, y));
  int64_t child;
  report("fork unknown", blockc_session_fork(session, bad, &child));
  report("release unknown", blockc_session_release(session, bad));
  report("step zero tokens", blockc_session_step(session, 1, &a, &zero, x, y));
  int64_t twice[2] = {a, a}, counts[2] = {1, 1};
  report("step twice", blockc_session_step(session, 2, twice, counts, x, y));
  report("out of pages", blockc_session_step(session, 1, &a, &nine, x, y));
  // Five tokens take both pages; the fork needs one for its copy.
  require(blockc_session_step(session, 1, &a, &five, x, y), "step 5");
  report("fork out of pages", blockc_session_fork(session, a, &child));
  blockc_session_info sinfo;
  int64_t length;
  require(blockc_session_get_info(session, &sinfo), "session info");
  require(blockc_session_length(session, a, &length), "length");
  printf("unchanged: length %lld, %lld free pages, paged %d\n",
         (long long)length, (long long)sinfo.free_pages, sinfo.paged);

  int32_t ids[2] = {1, 2}, out[2];
  report("generate on a stack",
         blockc_model_generate(model, 1, 2, ids, 1, NULL, out));

  // The last error is the calling thread's.
  report("step unknown", blockc_session_step(session, 1, &bad, &one, x, y));
  char seen[256];
  pthread_t thread;
  pthread_create(&thread, NULL, otherThread, seen);
  pthread_join(thread, NULL);
  printf("other thread's last error: '%s'\n", seen);
  printf("this thread's last error: '%s'\n", blockc_last_error());

  // Tokens 0-4 were stepped above, then 5-7 in a session with room: the
  // outputs equal the forward entry's on tokens 0-7.
  blockc_session_free(session);
  require(blockc_session_create(model, 4, 8, &session), "session 2");
  require(blockc_session_add(session, &a), "add 2");
  int64_t three = 3;
  require(blockc_session_step(session, 1, &a, &five, x, y), "step 0-4");
  require(blockc_session_step(session, 1, &a, &three, x + 5 * d, y + 5 * d),
          "step 5-7");
  require(blockc_model_forward(model, 1, 8, x, full), "forward");
  double maxDiff = 0, scale = 0;
  for (int64_t i = 0; i < 8 * d; ++i) {
    double diff = fabs((double)y[i] - full[i]);
    maxDiff = diff > maxDiff ? diff : maxDiff;
    scale = fabs(full[i]) > scale ? fabs(full[i]) : scale;
  }
  printf("step = forward: max diff %.3e of scale %.3e %s\n", maxDiff, scale,
         maxDiff <= 1e-5 * scale ? "PASS" : "FAIL");

  blockc_session_free(session);
  blockc_model_free(model);
  free(x);
  free(y);
  free(full);
  printf("done\n");
  return 0;
}
