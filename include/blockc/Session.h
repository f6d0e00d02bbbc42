/*===- Session.h - blockc's serving C API -------------------------*- C -*-===*\
|*                                                                            *|
|* Compile or load a model, bind its weights, and serve sequences from a     *|
|* paged KV cache: a session owns a pool of fixed-size pages; sequences are  *|
|* added, forked (sharing their cached prefix) and freed, and a set of them  *|
|* is stepped in one batched call. Implemented by libblockc_session.so       *|
|* (lib/Session); docs/RuntimeABI.md describes it with an example.           *|
|*                                                                            *|
|* Errors: every function returns a blockc_status; on failure the calling    *|
|* thread's last error (blockc_last_error) says what failed, naming the file *|
|* or sequence. A failed call changes nothing. A model or session may be     *|
|* used from one thread at a time; different sessions (of one model or of   *|
|* several) may be used from different threads at once.                     *|
|*                                                                            *|
|* A model partitioned for tensor parallelism (blockc-import                 *|
|* --tensor-parallel=N) runs as one process per rank under mpirun -np N,     *|
|* every rank making the same calls with the same arguments in the same     *|
|* order, from one thread at a time: loading it joins the MPI world, each    *|
|* rank binds its part of the weights, and a step's outputs are the whole    *|
|* values on every rank; a refused call is refused on every rank            *|
|* (docs/RuntimeABI.md, "Sessions under tensor parallelism").               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BLOCKC_SESSION_H
#define BLOCKC_SESSION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BLOCKC_API __attribute__((visibility("default")))
#else
#define BLOCKC_API
#endif

/* The version of this interface (major * 100 + minor). */
#define BLOCKC_SESSION_API_VERSION 101

typedef enum blockc_status {
  BLOCKC_OK = 0,
  /* A null pointer, an option out of range, a shape or element type that
     does not match the model. */
  BLOCKC_ERROR_INVALID_ARGUMENT = 1,
  /* A file that cannot be read or is malformed (the message names it). */
  BLOCKC_ERROR_IO = 2,
  /* The model does not parse, verify or compile. */
  BLOCKC_ERROR_COMPILE = 3,
  /* Not available for this model or target (e.g. generation for a model
     that does not take token ids, nvptx without a GPU or the emulator). */
  BLOCKC_ERROR_UNSUPPORTED = 4,
  /* No sequence of that id in the session. */
  BLOCKC_ERROR_UNKNOWN_SEQUENCE = 5,
  /* The page pool has too few free pages for the step or fork. */
  BLOCKC_ERROR_OUT_OF_PAGES = 6,
  /* The compiled code failed while running. */
  BLOCKC_ERROR_EXECUTION = 7,
  /* The call needs something done first (e.g. weights bound). */
  BLOCKC_ERROR_STATE = 8
} blockc_status;

/* The calling thread's message of its last failed call ("" if none). The
   string stays valid until that thread's next blockc call. */
BLOCKC_API const char *blockc_last_error(void);
/* "BLOCKC_OK", "BLOCKC_ERROR_IO", ... */
BLOCKC_API const char *blockc_status_name(blockc_status status);

typedef struct blockc_model blockc_model;
typedef struct blockc_session blockc_session;

typedef struct blockc_model_options {
  /* "cpu" (NULL: cpu) or "nvptx" (forward, sessions and generation). */
  const char *target;
  /* The CPU kernels' ISA: "host" (NULL: host), "avx512", "avx2" or "sse". */
  const char *isa;
  /* Threads of the CPU code's parallel loops; 0: OMP_NUM_THREADS, else
     every core. The first model of a process sets it for the process. */
  int32_t threads;
  /* With target "nvptx": 1 runs the kernels on blockc's GPU emulator
     (no GPU needed; slow, for tests), 0 (the default) on a GPU. Since
     version 101 (it fills what was padding: the struct's size and the
     other fields' offsets are those of version 100). */
  int32_t emulate;
  /* The entry function; NULL: @forward or the only function. */
  const char *entry;
} blockc_model_options;

/* Sets `options` to the defaults (cpu, host ISA, threads 0, emulate 0). */
BLOCKC_API void blockc_model_options_init(blockc_model_options *options);

/* Reads `path` (a .mlir module: a stack of blocks, or a causal language
   model from blockc-import --model=causal-lm) and checks its entry. Entries
   are compiled when first used. `options` may be NULL. */
BLOCKC_API blockc_status blockc_model_load(const char *path,
                                           const blockc_model_options *options,
                                           blockc_model **model);
/* Frees a model (its sessions must be freed first). NULL is allowed. */
BLOCKC_API void blockc_model_free(blockc_model *model);

/* Binds the weights from a .safetensors file, a file of prepared weights
   or a Hugging Face model folder (model.safetensors or a sharded index), as
   blockc-run --weights does. Before any run; once per model. */
BLOCKC_API blockc_status blockc_model_bind_weights(blockc_model *model,
                                                   const char *path);
/* Binds the weights from a safetensors image in caller memory (`size`
   bytes; `name` names it in errors). The memory is read in place and must
   stay valid while the model lives. */
BLOCKC_API blockc_status blockc_model_bind_weights_memory(blockc_model *model,
                                                          const void *data,
                                                          size_t size,
                                                          const char *name);
/* Binds deterministic random weights (blockc-run without --weights). */
BLOCKC_API blockc_status blockc_model_bind_random_weights(blockc_model *model,
                                                          uint64_t seed);

typedef struct blockc_model_info {
  /* The model dimension d. */
  int64_t model_dim;
  /* A causal language model's vocabulary; 0 for a stack of blocks. */
  int64_t vocab_size;
  /* The width of an output row: vocab_size or model_dim. */
  int64_t output_width;
  /* 1 when the input is int32 token ids [B, T], else float32 [B, T, d]. */
  int32_t takes_token_ids;
  /* Attention layers (K/V caches). */
  int32_t num_layers;
  /* The model's element type: "f32", "bf16" or "f16". */
  const char *element_type;
  /* Learned positions (GPT-2's wpe rows); 0: no limit from the model. */
  int64_t max_positions;
} blockc_model_info;

BLOCKC_API blockc_status blockc_model_get_info(const blockc_model *model,
                                               blockc_model_info *info);

/* The entry on a whole batch: `input` is int32 ids [batch, seq_len] or
   float32 [batch, seq_len, d]; `output` receives float32
   [batch, seq_len, output_width]. */
BLOCKC_API blockc_status blockc_model_forward(blockc_model *model,
                                              int64_t batch, int64_t seq_len,
                                              const void *input, float *output);

typedef struct blockc_sampling {
  /* 0: greedy (the lowest id of equal maxima). */
  double temperature;
  /* Keep the k most likely tokens; 0: all. */
  int64_t top_k;
  /* Keep the smallest set whose probability reaches p; 1: all. */
  double top_p;
  uint64_t seed;
} blockc_sampling;

/* A causal language model's tokens after `prompt` (int32 [batch,
   prompt_len]): the prompt as one prefill, then one step per token through
   a session of the model (blockc-run --generate's loop); `tokens` receives
   int32 [batch, num_tokens]. `sampling` may be NULL (greedy). */
BLOCKC_API blockc_status
blockc_model_generate(blockc_model *model, int64_t batch, int64_t prompt_len,
                      const int32_t *prompt, int64_t num_tokens,
                      const blockc_sampling *sampling, int32_t *tokens);

/* A session of `model` over a pool of `num_pages` KV-cache pages of
   `page_size` tokens each (per attention layer, K and V). */
BLOCKC_API blockc_status blockc_session_create(blockc_model *model,
                                               int64_t page_size,
                                               int64_t num_pages,
                                               blockc_session **session);
/* Frees a session and its pool. NULL is allowed. */
BLOCKC_API void blockc_session_free(blockc_session *session);

/* A new empty sequence; `*id` receives its id (never reused in the
   session). */
BLOCKC_API blockc_status blockc_session_add(blockc_session *session,
                                            int64_t *id);
/* A new sequence that continues `parent`'s cached tokens: it shares the
   parent's full pages and gets a copy of its partially filled last page
   (one free page), so continuing either never changes the other's. */
BLOCKC_API blockc_status blockc_session_fork(blockc_session *session,
                                             int64_t parent, int64_t *child);
/* Frees sequence `id`: pages no other sequence shares go back to the
   pool. */
BLOCKC_API blockc_status blockc_session_release(blockc_session *session,
                                                int64_t id);

/* Appends new tokens to `count` sequences in one batched call: sequence
   ids[i] gets num_tokens[i] >= 1 tokens, packed in `input` in that order
   (int32 ids [total], or float32 rows [total, d]; total = the sum of
   num_tokens). `output` receives each new token's float32 row
   ([total, output_width]: outputs or logits) in the same order. Every
   argument is checked and the pages reserved before anything runs; a
   failed step changes no sequence and no page. */
BLOCKC_API blockc_status blockc_session_step(blockc_session *session,
                                             int64_t count, const int64_t *ids,
                                             const int64_t *num_tokens,
                                             const void *input, float *output);

/* The tokens cached for sequence `id`. */
BLOCKC_API blockc_status blockc_session_length(const blockc_session *session,
                                               int64_t id, int64_t *length);
/* The pool pages sequence `id` holds, in logical order: `*count` receives
   their number and, when `pages` is not NULL, up to `capacity` of them are
   written. */
BLOCKC_API blockc_status blockc_session_pages(const blockc_session *session,
                                              int64_t id, int32_t *pages,
                                              int64_t capacity, int64_t *count);

typedef struct blockc_session_info {
  int64_t page_size;
  int64_t num_pages;
  int64_t free_pages;
  int64_t num_sequences;
  /* 1: a step is one call of the model's paged entry; 0: the paged entry
     could not be derived for this model (or BLOCKC_SESSION_PER_SEQUENCE=1
     is set), and a step runs the dense decode entry once per sequence. */
  int32_t paged;
} blockc_session_info;

BLOCKC_API blockc_status blockc_session_get_info(const blockc_session *session,
                                                 blockc_session_info *info);

/* Page `page` of layer `layer`'s K (`value` 0) or V (1) pool: `*size`
   receives its bytes ([page_size, H_kv, D] elements of the cache's element
   type: 4 bytes for f32, 2 for bf16 and f16) and, when `data` is not NULL,
   that many bytes are copied to it (`capacity` must be at least `*size`).
   For tests and debugging. */
BLOCKC_API blockc_status blockc_session_read_page(const blockc_session *session,
                                                  int32_t layer, int32_t value,
                                                  int32_t page, void *data,
                                                  size_t capacity,
                                                  size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKC_SESSION_H */
