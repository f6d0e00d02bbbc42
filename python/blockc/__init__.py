"""blockc: compile transformer models and serve them from Python.

A thin ctypes layer over libblockc_session.so, the C API of
include/blockc/Session.h (docs/Python.md):

    import blockc
    m = blockc.Model("model.mlir", weights="w.safetensors")
    y = m(x)                       # float32 [B, T, d], or int32 ids [B, T]
    s = m.session(page_size=16, num_pages=256)
    a = s.add()
    out = s.step({a: xa})          # {id: [T_i, d] outputs or [T_i, vocab] logits}
    c = s.fork(a)
    s.free(a)

Every error raises blockc.Error with the library's message; a failed call
changes nothing.

A model partitioned for tensor parallelism (blockc-import
--tensor-parallel=N) runs as N processes under mpirun -np N, each running
the same script: each rank binds its part of the weights and every call
returns the whole output on every rank (docs/Python.md).
"""

import ctypes
import os

import numpy as np

from . import _library

__all__ = ["Error", "Model", "Session"]


class Error(Exception):
    """A failed blockc call: `status` is the C API's status name
    (e.g. "BLOCKC_ERROR_OUT_OF_PAGES"), str() the message."""

    def __init__(self, message, status="BLOCKC_ERROR_INVALID_ARGUMENT"):
        super().__init__(message)
        self.status = status


_c_int64_p = ctypes.POINTER(ctypes.c_int64)
_c_int32_p = ctypes.POINTER(ctypes.c_int32)
_c_float_p = ctypes.POINTER(ctypes.c_float)


class _ModelOptions(ctypes.Structure):
    _fields_ = [("target", ctypes.c_char_p), ("isa", ctypes.c_char_p),
                ("threads", ctypes.c_int32), ("emulate", ctypes.c_int32),
                ("entry", ctypes.c_char_p)]


class _ModelInfo(ctypes.Structure):
    _fields_ = [("model_dim", ctypes.c_int64), ("vocab_size", ctypes.c_int64),
                ("output_width", ctypes.c_int64),
                ("takes_token_ids", ctypes.c_int32),
                ("num_layers", ctypes.c_int32),
                ("element_type", ctypes.c_char_p),
                ("max_positions", ctypes.c_int64)]


class _Sampling(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_double), ("top_k", ctypes.c_int64),
                ("top_p", ctypes.c_double), ("seed", ctypes.c_uint64)]


class _SessionInfo(ctypes.Structure):
    _fields_ = [("page_size", ctypes.c_int64), ("num_pages", ctypes.c_int64),
                ("free_pages", ctypes.c_int64),
                ("num_sequences", ctypes.c_int64),
                ("paged", ctypes.c_int32)]


def _load_library():
    path = os.environ.get("BLOCKC_SESSION_LIBRARY") or os.path.normpath(
        os.path.join(os.path.dirname(__file__), _library.RELATIVE_PATH))
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError("blockc: cannot load %s: %s" % (path, e)) from None
    p = ctypes.c_void_p
    status = ctypes.c_int
    signatures = {
        "blockc_last_error": ([], ctypes.c_char_p),
        "blockc_status_name": ([status], ctypes.c_char_p),
        "blockc_model_options_init": ([ctypes.POINTER(_ModelOptions)], None),
        "blockc_model_load": ([ctypes.c_char_p, ctypes.POINTER(_ModelOptions),
                               ctypes.POINTER(p)], status),
        "blockc_model_free": ([p], None),
        "blockc_model_bind_weights": ([p, ctypes.c_char_p], status),
        "blockc_model_bind_weights_memory": (
            [p, p, ctypes.c_size_t, ctypes.c_char_p], status),
        "blockc_model_bind_random_weights": ([p, ctypes.c_uint64], status),
        "blockc_model_get_info": ([p, ctypes.POINTER(_ModelInfo)], status),
        "blockc_model_forward": ([p, ctypes.c_int64, ctypes.c_int64, p,
                                  _c_float_p], status),
        "blockc_model_generate": ([p, ctypes.c_int64, ctypes.c_int64,
                                   _c_int32_p, ctypes.c_int64,
                                   ctypes.POINTER(_Sampling), _c_int32_p],
                                  status),
        "blockc_session_create": ([p, ctypes.c_int64, ctypes.c_int64,
                                   ctypes.POINTER(p)], status),
        "blockc_session_free": ([p], None),
        "blockc_session_add": ([p, _c_int64_p], status),
        "blockc_session_fork": ([p, ctypes.c_int64, _c_int64_p], status),
        "blockc_session_release": ([p, ctypes.c_int64], status),
        "blockc_session_step": ([p, ctypes.c_int64, _c_int64_p, _c_int64_p, p,
                                 _c_float_p], status),
        "blockc_session_length": ([p, ctypes.c_int64, _c_int64_p], status),
        "blockc_session_pages": ([p, ctypes.c_int64, _c_int32_p,
                                  ctypes.c_int64, _c_int64_p], status),
        "blockc_session_get_info": ([p, ctypes.POINTER(_SessionInfo)], status),
        "blockc_session_read_page": ([p, ctypes.c_int32, ctypes.c_int32,
                                      ctypes.c_int32, p, ctypes.c_size_t,
                                      ctypes.POINTER(ctypes.c_size_t)],
                                     status),
    }
    for name, (args, result) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = result
    return lib


_lib = _load_library()


def _check(status):
    if status != 0:
        message = _lib.blockc_last_error().decode("utf-8", "replace")
        name = _lib.blockc_status_name(status).decode()
        raise Error(message, name)


def _ptr(array, ctype):
    return array.ctypes.data_as(ctypes.POINTER(ctype))


def _describe(a):
    return "%s %s" % (a.dtype, list(a.shape))


class Model:
    """A model (a .mlir module from blockc-import or written by hand) with
    its weights bound.

    weights: a .safetensors file or a Hugging Face model folder (as
    blockc-run --weights), a bytes-like safetensors image, or None for
    deterministic random weights from `seed`. target: "cpu" or "nvptx"
    (forward, sessions and generation on either). emulate: with "nvptx",
    run the kernels on blockc's GPU emulator instead of a GPU (no GPU
    needed; slow). threads: the CPU code's threads (None: OMP_NUM_THREADS,
    else every core). isa: the CPU kernels' ISA ("host", "avx512", "avx2",
    "sse"; None: host)."""

    def __init__(self, path, weights=None, target="cpu", threads=None,
                 isa=None, entry=None, seed=0, emulate=False):
        self._handle = None
        options = _ModelOptions()
        _lib.blockc_model_options_init(ctypes.byref(options))
        options.target = target.encode() if target else None
        options.isa = isa.encode() if isa else None
        if threads is not None:
            if not isinstance(threads, int) or threads < 1:
                raise Error("threads must be a positive int or None, not %r"
                            % (threads,))
            options.threads = threads
        if not isinstance(emulate, bool):
            raise Error("emulate must be True or False, not %r" % (emulate,))
        options.emulate = int(emulate)
        options.entry = entry.encode() if entry else None
        handle = ctypes.c_void_p()
        _check(_lib.blockc_model_load(os.fsencode(path), ctypes.byref(options),
                                      ctypes.byref(handle)))
        self._handle = handle
        self._weights_memory = None
        try:
            if weights is None:
                _check(_lib.blockc_model_bind_random_weights(handle, seed))
            elif isinstance(weights, (str, os.PathLike)):
                _check(_lib.blockc_model_bind_weights(handle,
                                                      os.fsencode(weights)))
            elif isinstance(weights, (bytes, bytearray, memoryview)):
                # Read in place: keep the bytes alive with the model.
                buf = np.frombuffer(weights, dtype=np.uint8)
                self._weights_memory = buf
                _check(_lib.blockc_model_bind_weights_memory(
                    handle, buf.ctypes.data, buf.nbytes, b"<memory>"))
            else:
                raise Error("weights must be a path, a bytes-like "
                            "safetensors image or None, not %s"
                            % type(weights).__name__)
        except Exception:
            self.close()
            raise
        info = _ModelInfo()
        _check(_lib.blockc_model_get_info(handle, ctypes.byref(info)))
        self.model_dim = info.model_dim
        self.vocab_size = info.vocab_size
        self.output_width = info.output_width
        self.takes_token_ids = bool(info.takes_token_ids)
        self.element_type = info.element_type.decode()
        self.max_positions = info.max_positions
        self.path = os.fspath(path)

    def close(self):
        """Frees the model (its sessions must be closed first)."""
        if self._handle:
            _lib.blockc_model_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def _handle_or_raise(self):
        if not self._handle:
            raise Error("the model is closed", "BLOCKC_ERROR_STATE")
        return self._handle

    def _check_input(self, x, rank, what):
        """x as a C-contiguous array of the model's input dtype and `rank`."""
        if not isinstance(x, np.ndarray):
            raise Error("%s must be a numpy array, not %s"
                        % (what, type(x).__name__))
        if self.takes_token_ids:
            if x.dtype != np.int32:
                raise Error("%s must be int32 token ids, not %s"
                            % (what, _describe(x)))
            if x.ndim != rank:
                raise Error("%s must be int32 ids of rank %d (%s), not %s"
                            % (what, rank, "[B, T]" if rank == 2 else "[T]",
                               _describe(x)))
        else:
            if x.dtype != np.float32:
                raise Error("%s must be float32 activations, not %s"
                            % (what, _describe(x)))
            if x.ndim != rank + 1 or x.shape[-1] != self.model_dim:
                raise Error("%s must be float32 %s with d = %d, not %s"
                            % (what, "[B, T, d]" if rank == 2 else "[T, d]",
                               self.model_dim, _describe(x)))
        if 0 in x.shape:
            raise Error("%s is empty (%s)" % (what, _describe(x)))
        return np.ascontiguousarray(x)

    def __call__(self, x):
        """The forward pass: float32 [B, T, d] -> [B, T, d], or int32 ids
        [B, T] -> float32 logits [B, T, vocab]."""
        handle = self._handle_or_raise()
        x = self._check_input(x, 2, "the input")
        batch, seq_len = x.shape[0], x.shape[1]
        out = np.empty((batch, seq_len, self.output_width), np.float32)
        _check(_lib.blockc_model_forward(handle, batch, seq_len,
                                         x.ctypes.data, _ptr(out,
                                                             ctypes.c_float)))
        return out

    def session(self, page_size=16, num_pages=256):
        """A serving session over a pool of `num_pages` KV-cache pages of
        `page_size` tokens."""
        return Session(self, page_size, num_pages)

    def generate(self, ids, n, temperature=0.0, top_k=0, top_p=1.0, seed=0):
        """A causal language model's `n` tokens after the prompts `ids`
        (int32 [B, T]), greedy at temperature 0; returns int32 [B, n]."""
        handle = self._handle_or_raise()
        if not self.takes_token_ids:
            raise Error("%s: generate needs a causal language model "
                        "(blockc-import --model=causal-lm)" % self.path,
                        "BLOCKC_ERROR_UNSUPPORTED")
        ids = self._check_input(ids, 2, "the prompt")
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise Error("n must be a positive int, not %r" % (n,))
        sampling = _Sampling(float(temperature), int(top_k), float(top_p),
                             int(seed))
        out = np.empty((ids.shape[0], int(n)), np.int32)
        _check(_lib.blockc_model_generate(
            handle, ids.shape[0], ids.shape[1], _ptr(ids, ctypes.c_int32),
            int(n), ctypes.byref(sampling), _ptr(out, ctypes.c_int32)))
        return out


class Session:
    """Sequences served from a paged KV cache (Model.session)."""

    def __init__(self, model, page_size=16, num_pages=256):
        self._handle = None
        self.model = model
        handle = ctypes.c_void_p()
        _check(_lib.blockc_session_create(model._handle_or_raise(),
                                          int(page_size), int(num_pages),
                                          ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        if self._handle:
            _lib.blockc_session_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def _h(self):
        if not self._handle:
            raise Error("the session is closed", "BLOCKC_ERROR_STATE")
        return self._handle

    def add(self):
        """A new empty sequence; returns its id."""
        out = ctypes.c_int64()
        _check(_lib.blockc_session_add(self._h(), ctypes.byref(out)))
        return out.value

    def fork(self, parent):
        """A new sequence continuing `parent`'s cached tokens (sharing its
        full pages); returns its id."""
        out = ctypes.c_int64()
        _check(_lib.blockc_session_fork(self._h(), int(parent),
                                        ctypes.byref(out)))
        return out.value

    def free(self, seq):
        """Frees sequence `seq`; pages no other sequence shares go back."""
        _check(_lib.blockc_session_release(self._h(), int(seq)))

    def step(self, tokens):
        """One batched call: {id: new tokens} ([T_i, d] float32, or [T_i]
        int32 ids) -> {id: [T_i, d] outputs, or [T_i, vocab] logits}."""
        handle = self._h()
        if not isinstance(tokens, dict) or not tokens:
            raise Error("step takes a non-empty dict {sequence id: tokens}")
        ids, counts, arrays = [], [], []
        for seq, x in tokens.items():
            if not isinstance(seq, (int, np.integer)):
                raise Error("sequence ids are ints, not %r" % (seq,))
            x = self.model._check_input(x, 1, "the tokens of sequence %d"
                                        % seq)
            ids.append(int(seq))
            counts.append(x.shape[0])
            arrays.append(x)
        packed = np.ascontiguousarray(np.concatenate(arrays))
        total = int(sum(counts))
        out = np.empty((total, self.model.output_width), np.float32)
        ids_c = np.array(ids, np.int64)
        counts_c = np.array(counts, np.int64)
        _check(_lib.blockc_session_step(
            handle, len(ids), _ptr(ids_c, ctypes.c_int64),
            _ptr(counts_c, ctypes.c_int64), packed.ctypes.data,
            _ptr(out, ctypes.c_float)))
        result, at = {}, 0
        for seq, n in zip(ids, counts):
            result[seq] = out[at:at + n]
            at += n
        return result

    def length(self, seq):
        """The tokens cached for `seq`."""
        out = ctypes.c_int64()
        _check(_lib.blockc_session_length(self._h(), int(seq),
                                          ctypes.byref(out)))
        return out.value

    def pages(self, seq):
        """The pool pages of `seq`, in logical order."""
        count = ctypes.c_int64()
        _check(_lib.blockc_session_pages(self._h(), int(seq), None, 0,
                                         ctypes.byref(count)))
        pages = np.empty(count.value, np.int32)
        _check(_lib.blockc_session_pages(self._h(), int(seq),
                                         _ptr(pages, ctypes.c_int32),
                                         count.value, ctypes.byref(count)))
        return [int(p) for p in pages]

    def _info(self):
        info = _SessionInfo()
        _check(_lib.blockc_session_get_info(self._h(), ctypes.byref(info)))
        return info

    @property
    def page_size(self):
        return self._info().page_size

    @property
    def num_pages(self):
        return self._info().num_pages

    @property
    def free_pages(self):
        return self._info().free_pages

    @property
    def num_sequences(self):
        return self._info().num_sequences

    @property
    def paged(self):
        """Whether a step is one call of the model's paged entry (else the
        decode entry runs once per sequence)."""
        return bool(self._info().paged)

    def read_page(self, layer, value, page):
        """The raw bytes of pool page `page` of layer `layer`'s K (value 0)
        or V (1) cache (tests and debugging)."""
        size = ctypes.c_size_t()
        _check(_lib.blockc_session_read_page(self._h(), layer, value, page,
                                             None, 0, ctypes.byref(size)))
        buf = np.empty(size.value, np.uint8)
        _check(_lib.blockc_session_read_page(self._h(), layer, value, page,
                                             buf.ctypes.data, buf.nbytes,
                                             ctypes.byref(size)))
        return buf.tobytes()
