#!/usr/bin/python3
"""NumPy reference implementation of transformer blocks, plus file tools.

This is the independent oracle for blockc: it computes decoder blocks
(Hugging Face / PyTorch semantics, weights stored [out, in], y = x @ W.T + b)
in float64 and writes float32 results.  It also generates random configs'
weights and inputs, compares outputs, and produces deliberately broken
safetensors / .npy files for negative tests.

The config is either blockc's own JSON format or a Hugging Face config.json
(model_type llama, mistral, qwen2 or gpt2; GPT-2 weights use their own
names and Conv1D [in, out] layout).  ``--layers N`` stacks N layers.
Whole causal LMs (embeddings, blocks, final norm, LM head) are read from
and written as Hugging Face model folders (single file or sharded).

Only the Python standard library and NumPy are used (Debian python3-numpy).

Subcommands (run ``blockc_ref.py <cmd> -h`` for details)::

    gen-weights    --config C --seed S -o W.safetensors [--dtype f32|f16|bf16]
                   [--scale 0.05] [--layers N]
    gen-input      --config C --seed S --batch B --seq-len T -o x.npy [--rank2]
    run            --config C --weights W --input x.npy -o ref.npy
                   [--position-offset N] [--kv-cache K.npy V.npy]
                   [--save-kv K.npy V.npy] [--dump DIR] [--strict]
                   [--layers N]
    gen-model      --config HF.json --seed S -o DIR [--layers N]
                   [--dtype f32|f16|bf16] [--shards K]
    gen-ids        --vocab V --batch B --seq-len T --seed S -o IDS.npy
    forward        --model DIR --ids IDS.npy -o LOGITS.npy [--dtype ...]
    generate       --model DIR --ids IDS.npy -n N [-o GEN.npy]
    compare        A.npy B.npy [--tol 1e-4]
    corrupt        --mode truncate|bad-header-len|bad-json|bad-offsets|
                   wrong-dtype IN.safetensors -o OUT
    npy-corrupt    --mode truncate|bad-magic|wrong-dtype IN.npy -o OUT
    drop-tensor    IN.safetensors NAME -o OUT
    add-tensor     IN.safetensors NAME --shape 3,4 -o OUT
    reshape-tensor IN.safetensors NAME --shape 3,4 -o OUT
    rename-tensors IN.safetensors (--add-prefix P | --strip-prefix P) -o OUT
    info           FILE.safetensors|FILE.npy
    selftest

Every error prints ``blockc_ref: error: <message>`` to stderr and exits 1.
"""

import argparse
import contextlib
import copy
import io
import json
import math
import os
import struct
import sys

import numpy as np


class RefError(Exception):
    """A user-facing error: printed to stderr, exit status 1."""


# ---------------------------------------------------------------------------
# Config
# ---------------------------------------------------------------------------

NORMS = ("rms", "layer")
PLACEMENTS = ("pre", "post")
ACTS = ("silu", "gelu", "gelu_tanh", "relu")
ROPES = ("rotate_half", "interleaved", "none")


def _get_int(raw, key, default=None, minimum=1):
    val = raw.get(key)
    if val is None:
        if default is None:
            raise RefError("config: missing required key '%s'" % key)
        return default
    if isinstance(val, bool) or not isinstance(val, int):
        raise RefError("config: '%s' must be an integer, got %r" % (key, val))
    if val < minimum:
        raise RefError("config: '%s' must be >= %d, got %d"
                       % (key, minimum, val))
    return val


def _get_bool(raw, key, default):
    val = raw.get(key)
    if val is None:
        return default
    if not isinstance(val, bool):
        raise RefError("config: '%s' must be true or false, got %r"
                       % (key, val))
    return val


def _get_num(raw, key, default, positive):
    val = raw.get(key)
    if val is None:
        return float(default)
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise RefError("config: '%s' must be a number, got %r" % (key, val))
    val = float(val)
    if not math.isfinite(val) or val < 0 or (positive and val == 0):
        raise RefError("config: '%s' must be a finite %s number, got %r"
                       % (key, "positive" if positive else "non-negative",
                          val))
    return val


def _get_enum(raw, key, choices, default):
    val = raw.get(key)
    if val is None:
        return default
    if val not in choices:
        raise RefError("config: '%s' must be one of %s, got %r"
                       % (key, ", ".join(choices), val))
    return val


# Hugging Face activation names (ACT2FN keys) -> internal activation.
HF_ACTS = {"silu": "silu", "swish": "silu", "gelu": "gelu",
           "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
           "relu": "relu"}
HF_LLAMA_TYPES = ("llama", "mistral", "qwen2")
HF_MODEL_TYPES = HF_LLAMA_TYPES + ("gpt2",)

# Norm tensors (initialised as gains / LayerNorm biases by gen-weights).
NORM_TENSORS = ("input_layernorm", "post_attention_layernorm", "ln_1", "ln_2")
# Non-parameter buffers that real GPT-2 checkpoints may carry per layer
# (the causal-mask buffer); never reported as unexpected.
GPT2_BUFFERS = ("attn.bias", "attn.masked_bias")


def _get_hf_act(raw, key, default):
    val = raw.get(key)
    if val is None:
        val = default
    if not isinstance(val, str) or val not in HF_ACTS:
        raise RefError("config: unsupported %s %r (supported: %s)"
                       % (key, val, ", ".join(sorted(HF_ACTS))))
    return HF_ACTS[val]


def _hf_rope_theta(raw):
    """rope_theta of a Hugging Face config; rejects scaled RoPE.

    Accepts the transformers v5 form ``rope_parameters`` with rope_type
    "default" too (its rope_theta wins over a top-level one).
    """
    if raw.get("rope_scaling") is not None:
        raise RefError("config: rope_scaling %s is not supported (only plain "
                       "RoPE: rope_scaling must be null)"
                       % json.dumps(raw["rope_scaling"]))
    theta = _get_num(raw, "rope_theta", 10000.0, positive=True)
    params = raw.get("rope_parameters")
    if params is not None:
        if not isinstance(params, dict):
            raise RefError("config: 'rope_parameters' must be an object")
        kind = params.get("rope_type", params.get("type"))
        if kind not in (None, "default"):
            raise RefError("config: rope_parameters.rope_type %r is not "
                           "supported (only 'default')" % kind)
        if params.get("partial_rotary_factor") not in (None, 1, 1.0):
            raise RefError("config: rope_parameters.partial_rotary_factor "
                           "%r is not supported (only 1)"
                           % params["partial_rotary_factor"])
        if params.get("rope_theta") is not None:
            key = "rope_parameters.rope_theta"
            theta = _get_num({key: params["rope_theta"]}, key, theta,
                             positive=True)
    return theta


class Config:
    """Validated block configuration.

    Two JSON formats are accepted:

    * blockc's own format (no ``model_type``): required keys hidden_size,
      num_attention_heads, intermediate_size; see README.md for the rest.
    * a Hugging Face ``config.json`` (``model_type`` llama, mistral, qwen2
      or gpt2), read with the defaults and conventions of transformers.

    A JSON ``null`` is treated like an absent key (use the default).
    Unknown keys are ignored.

    Attributes: d, n_heads, n_kv_heads, head_dim, d_ff, norm ("rms" |
    "layer"), norm_placement, norm_eps, act, gated, rope, rope_theta,
    q_bias / k_bias / v_bias / o_bias (per attention projection), mlp_bias,
    causal, layer (index of the first layer), naming ("llama": tensors
    ``model.layers.{i}.`` in [out, in] layout; "gpt2": ``h.{i}.`` with
    Conv1D [in, out] layout and fused c_attn), model_type (None for the
    blockc format) and max_layers (num_hidden_layers / n_layer, or None).
    """

    def __init__(self, raw):
        if not isinstance(raw, dict):
            raise RefError("config: top level must be a JSON object")
        self.model_type = raw.get("model_type")
        self.naming = "llama"
        self.layer = 0
        self.max_layers = None
        if self.model_type is None:
            self._init_blockc(raw)
        elif self.model_type in HF_LLAMA_TYPES:
            self._init_hf_llama(raw)
        elif self.model_type == "gpt2":
            self._init_hf_gpt2(raw)
        else:
            raise RefError("config: unsupported model_type %r (supported: %s)"
                           % (self.model_type, ", ".join(HF_MODEL_TYPES)))
        if self.n_heads % self.n_kv_heads != 0:
            raise RefError("config: num_attention_heads %d is not a multiple "
                           "of num_key_value_heads %d"
                           % (self.n_heads, self.n_kv_heads))
        if self.rope != "none" and self.head_dim % 2 != 0:
            raise RefError("config: RoPE needs an even head_dim, got %d"
                           % self.head_dim)

    def _init_blockc(self, raw):
        self.d = _get_int(raw, "hidden_size")
        self.n_heads = _get_int(raw, "num_attention_heads")
        self.n_kv_heads = _get_int(raw, "num_key_value_heads", self.n_heads)
        if raw.get("head_dim") is None and self.d % self.n_heads != 0:
            raise RefError("config: hidden_size %d is not divisible by "
                           "num_attention_heads %d (set head_dim explicitly)"
                           % (self.d, self.n_heads))
        self.head_dim = _get_int(raw, "head_dim", self.d // self.n_heads)
        self.d_ff = _get_int(raw, "intermediate_size")
        self.norm = _get_enum(raw, "norm", NORMS, "rms")
        self.norm_placement = _get_enum(raw, "norm_placement", PLACEMENTS,
                                        "pre")
        self.norm_eps = _get_num(raw, "norm_eps", 1e-6, positive=False)
        self.act = _get_enum(raw, "hidden_act", ACTS, "silu")
        self.gated = _get_bool(raw, "gated", True)
        self.rope = _get_enum(raw, "rope", ROPES, "rotate_half")
        self.rope_theta = _get_num(raw, "rope_theta", 10000.0, positive=True)
        bias = _get_bool(raw, "attention_bias", False)
        self.q_bias = self.k_bias = self.v_bias = self.o_bias = bias
        self.mlp_bias = _get_bool(raw, "mlp_bias", False)
        self.causal = _get_bool(raw, "causal", True)
        self.layer = _get_int(raw, "layer", 0, minimum=0)

    def _init_hf_llama(self, raw):
        """LlamaConfig / MistralConfig / Qwen2Config: pre-norm RMSNorm,
        rotate-half RoPE, causal GQA, gated FFN."""
        mt = self.model_type
        self.d = _get_int(raw, "hidden_size")
        self.n_heads = _get_int(raw, "num_attention_heads")
        self.n_kv_heads = _get_int(raw, "num_key_value_heads", self.n_heads)
        if raw.get("head_dim") is None and self.d % self.n_heads != 0:
            raise RefError("config: hidden_size %d is not divisible by "
                           "num_attention_heads %d (set head_dim explicitly)"
                           % (self.d, self.n_heads))
        self.head_dim = _get_int(raw, "head_dim", self.d // self.n_heads)
        self.d_ff = _get_int(raw, "intermediate_size")
        self.norm, self.norm_placement = "rms", "pre"
        self.norm_eps = _get_num(raw, "rms_norm_eps", 1e-6, positive=False)
        self.act = _get_hf_act(raw, "hidden_act", "silu")
        self.gated, self.causal = True, True
        self.rope = "rotate_half"
        self.rope_theta = _hf_rope_theta(raw)
        if mt == "qwen2":
            # Qwen2Attention hard-codes bias=True on q/k/v, False on o;
            # Qwen2MLP has no biases.
            if _get_bool(raw, "use_sliding_window", False):
                raise RefError("config: use_sliding_window true is not "
                               "supported (sliding-window attention)")
            self.q_bias = self.k_bias = self.v_bias = True
            self.o_bias = self.mlp_bias = False
        else:
            bias = _get_bool(raw, "attention_bias", False)
            self.q_bias = self.k_bias = self.v_bias = self.o_bias = bias
            self.mlp_bias = (_get_bool(raw, "mlp_bias", False)
                             if mt == "llama" else False)
            if mt == "mistral" and raw.get("sliding_window") is not None:
                raise RefError("config: sliding_window %r is not supported "
                               "(sliding-window attention); it must be null"
                               % raw["sliding_window"])
        types = raw.get("layer_types")
        if types is not None and (
                not isinstance(types, list)
                or any(t != "full_attention" for t in types)):
            raise RefError("config: layer_types %s is not supported (only "
                           "full_attention layers)" % json.dumps(types))
        if raw.get("num_hidden_layers") is not None:
            self.max_layers = _get_int(raw, "num_hidden_layers")

    def _init_hf_gpt2(self, raw):
        """GPT2Config: pre-norm LayerNorm, no RoPE (positions are added
        before the block), causal MHA, plain FFN, biases everywhere."""
        self.d = _get_int(raw, "n_embd")
        self.n_heads = _get_int(raw, "n_head")
        if self.d % self.n_heads != 0:
            raise RefError("config: n_embd %d is not divisible by n_head %d"
                           % (self.d, self.n_heads))
        self.n_kv_heads = self.n_heads
        self.head_dim = self.d // self.n_heads
        self.d_ff = _get_int(raw, "n_inner", 4 * self.d)
        self.norm, self.norm_placement = "layer", "pre"
        self.norm_eps = _get_num(raw, "layer_norm_epsilon", 1e-5,
                                 positive=False)
        self.act = _get_hf_act(raw, "activation_function", "gelu_new")
        self.gated, self.causal = False, True
        self.rope, self.rope_theta = "none", 10000.0
        self.q_bias = self.k_bias = self.v_bias = self.o_bias = True
        self.mlp_bias = True
        self.naming = "gpt2"
        if not _get_bool(raw, "scale_attn_weights", True):
            raise RefError("config: scale_attn_weights false is not "
                           "supported (scores are scaled by 1/sqrt(head_dim))")
        for key in ("scale_attn_by_inverse_layer_idx", "add_cross_attention"):
            if _get_bool(raw, key, False):
                raise RefError("config: %s true is not supported" % key)
        if raw.get("n_layer") is not None:
            self.max_layers = _get_int(raw, "n_layer")

    @property
    def prefix(self):
        """Tensor-name prefix of layer ``self.layer``."""
        return ("h.%d." if self.naming == "gpt2" else "model.layers.%d.") \
            % self.layer

    def for_layer(self, index):
        """A copy of this config for layer ``index``."""
        c = copy.copy(self)
        c.layer = index
        return c

    def stack(self, n_layers):
        """Configs of the layers layer, layer + 1, ..., layer + n - 1."""
        if n_layers < 1:
            raise RefError("--layers must be >= 1, got %d" % n_layers)
        if self.max_layers is not None and n_layers > self.max_layers:
            raise RefError("--layers %d exceeds the %d layer(s) the config "
                           "declares (%s)"
                           % (n_layers, self.max_layers,
                              "n_layer" if self.naming == "gpt2"
                              else "num_hidden_layers"))
        return [self.for_layer(self.layer + i) for i in range(n_layers)]

    def expected_shapes(self):
        """Ordered {tensor name: shape} of the weights the block needs, as
        stored in the file (GPT-2: Conv1D [in, out] layout)."""
        p = self.prefix
        d, hd, kvd, ff = (self.d, self.n_heads * self.head_dim,
                          self.n_kv_heads * self.head_dim, self.d_ff)
        shapes = {}
        if self.naming == "gpt2":
            for name, shape in (("ln_1", (d,)), ("attn.c_attn", (d, 3 * d)),
                                ("attn.c_proj", (d, d)), ("ln_2", (d,)),
                                ("mlp.c_fc", (d, ff)),
                                ("mlp.c_proj", (ff, d))):
                shapes[p + name + ".weight"] = shape
                shapes[p + name + ".bias"] = (shape[-1],)
            return shapes

        def norm(name):
            shapes[p + name + ".weight"] = (d,)
            if self.norm == "layer":
                shapes[p + name + ".bias"] = (d,)

        def linear(name, out_f, in_f, bias):
            shapes[p + name + ".weight"] = (out_f, in_f)
            if bias:
                shapes[p + name + ".bias"] = (out_f,)

        norm("input_layernorm")
        linear("self_attn.q_proj", hd, d, self.q_bias)
        linear("self_attn.k_proj", kvd, d, self.k_bias)
        linear("self_attn.v_proj", kvd, d, self.v_bias)
        linear("self_attn.o_proj", d, hd, self.o_bias)
        norm("post_attention_layernorm")
        if self.gated:
            linear("mlp.gate_proj", ff, d, self.mlp_bias)
        linear("mlp.up_proj", ff, d, self.mlp_bias)
        linear("mlp.down_proj", d, ff, self.mlp_bias)
        return shapes


def load_config(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            raw = json.load(f)
    except OSError as e:
        raise RefError("cannot read config %s: %s" % (path, e.strerror))
    except (ValueError, UnicodeDecodeError) as e:
        raise RefError("config %s is not valid JSON: %s" % (path, e))
    return Config(raw)


# ---------------------------------------------------------------------------
# safetensors
# ---------------------------------------------------------------------------

# dtype name -> (bytes per element, little-endian numpy storage dtype)
ST_DTYPES = {"F32": (4, "<f4"), "F16": (2, "<f2"), "BF16": (2, "<u2")}
CLI_DTYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16"}


def f32_to_bf16_bits(x):
    """float32 array -> uint16 bf16 bit patterns, round to nearest even."""
    u = np.ascontiguousarray(x, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    rounded = np.where(nan, (u >> 16) | 0x40, rounded)  # keep NaNs quiet NaN
    return rounded.astype("<u2")


def bf16_bits_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).astype("<u4").view("<f4")


def encode_tensor(values, st_dtype):
    """float array -> raw little-endian bytes in safetensors dtype."""
    v = np.asarray(values, dtype=np.float32)
    if st_dtype == "F32":
        return v.astype("<f4").tobytes()
    if st_dtype == "F16":
        return v.astype("<f2").tobytes()
    if st_dtype == "BF16":
        return f32_to_bf16_bits(v).tobytes()
    raise RefError("unsupported dtype %s" % st_dtype)


def decode_tensor(raw, st_dtype, shape):
    """raw bytes -> float64 array."""
    _, np_dtype = ST_DTYPES[st_dtype]
    arr = np.frombuffer(raw, dtype=np_dtype)
    if st_dtype == "BF16":
        arr = bf16_bits_to_f32(arr)
    return arr.astype(np.float64).reshape(shape)


def write_safetensors(path, entries, metadata=None):
    """Write ``entries``: list of (name, dtype, shape, raw bytes), in order.

    The JSON header is padded with spaces to a multiple of 8 bytes, like the
    reference implementation does.
    """
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": [int(s) for s in shape],
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * (-len(hbytes) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hbytes)))
        f.write(hbytes)
        for _, _, _, raw in entries:
            f.write(raw)


def _split_safetensors(path):
    """Return (header dict, data buffer bytes) with only framing checks."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise RefError("cannot read %s: %s" % (path, e.strerror))
    if len(blob) < 8:
        raise RefError("%s: file too short for a safetensors header (%d bytes)"
                       % (path, len(blob)))
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise RefError("%s: header length %d exceeds the %d bytes that "
                       "follow the 8-byte length prefix"
                       % (path, n, len(blob) - 8))
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise RefError("%s: header is not valid JSON: %s" % (path, e))
    if not isinstance(header, dict):
        raise RefError("%s: header must be a JSON object" % path)
    return header, blob[8 + n:]


def read_safetensors_raw(path, prepared_words=False):
    """Strictly parse a safetensors file.

    ``prepared_words`` also accepts I32 tensors (the int32 words of
    quantised weights in a file written by ``blockc-run --save-prepared``).

    Returns (entries, metadata) where entries is a list of
    (name, dtype, shape tuple, raw bytes) in data-offset order.
    Checks: header framing, JSON, dtypes (F32/F16/BF16 only), shapes,
    byte sizes vs. shapes, and that offsets tile the data buffer exactly
    (contiguous, non-overlapping, fully covering it), as the official
    safetensors library does.
    """
    header, buf = _split_safetensors(path)
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (
            isinstance(metadata, dict)
            and all(isinstance(v, str) for v in metadata.values())):
        raise RefError("%s: __metadata__ must map strings to strings" % path)
    entries = []
    for name, info in header.items():
        where = "%s: tensor '%s'" % (path, name)
        if not isinstance(info, dict):
            raise RefError("%s: entry is not an object" % where)
        dtype = info.get("dtype")
        if prepared_words and dtype == "I32":
            pass
        elif dtype not in ST_DTYPES:
            raise RefError("%s: unsupported dtype %r (expected F32, F16 or "
                           "BF16)" % (where, dtype))
        shape = info.get("shape")
        if (not isinstance(shape, list)
                or not all(isinstance(s, int) and not isinstance(s, bool)
                           and s >= 0 for s in shape)):
            raise RefError("%s: bad shape %r" % (where, shape))
        offs = info.get("data_offsets")
        if (not isinstance(offs, list) or len(offs) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool)
                           for o in offs)):
            raise RefError("%s: bad data_offsets %r" % (where, offs))
        begin, end = offs
        if not 0 <= begin <= end <= len(buf):
            raise RefError("%s: data_offsets [%d, %d] outside data buffer of "
                           "%d bytes" % (where, begin, end, len(buf)))
        width = 4 if dtype == "I32" else ST_DTYPES[dtype][0]
        nbytes = width * int(np.prod(shape, dtype=np.int64))
        if end - begin != nbytes:
            raise RefError("%s: data_offsets span %d bytes but %s%s needs %d"
                           % (where, end - begin, dtype, shape, nbytes))
        entries.append((name, dtype, tuple(shape), (begin, end)))
    entries.sort(key=lambda e: e[3])
    pos = 0
    for name, _, _, (begin, end) in entries:
        if begin != pos:
            raise RefError("%s: tensor '%s' data_offsets [%d, %d] %s"
                           % (path, name, begin, end,
                              "overlap another tensor" if begin < pos
                              else "leave a gap in the data buffer"))
        pos = end
    if pos != len(buf):
        raise RefError("%s: data buffer has %d bytes but tensors cover %d"
                       % (path, len(buf), pos))
    out = [(n, dt, sh, buf[b:e]) for n, dt, sh, (b, e) in entries]
    return out, metadata


def load_safetensors(path):
    """Return {name: float64 array} from a safetensors file."""
    entries, _ = read_safetensors_raw(path)
    return {n: decode_tensor(raw, dt, sh) for n, dt, sh, raw in entries}


# ---------------------------------------------------------------------------
# .npy helpers
# ---------------------------------------------------------------------------

def load_npy(path, what="input"):
    """Load a float .npy file (no pickles) as float64."""
    try:
        arr = np.load(path, allow_pickle=False)
    except OSError as e:
        raise RefError("cannot read %s %s: %s" % (what, path,
                                                   e.strerror or e))
    except ValueError as e:
        raise RefError("%s %s is not a valid .npy file: %s" % (what, path, e))
    if not isinstance(arr, np.ndarray):
        raise RefError("%s %s is not a single .npy array" % (what, path))
    if arr.dtype.kind != "f":
        raise RefError("%s %s has dtype %s, expected a float type"
                       % (what, path, arr.dtype))
    return arr.astype(np.float64)


def save_npy(path, arr):
    try:
        with open(path, "wb") as f:
            np.save(f, np.ascontiguousarray(arr, dtype="<f4"))
    except OSError as e:
        raise RefError("cannot write %s: %s" % (path, e.strerror))


# ---------------------------------------------------------------------------
# Block math (float64)
# ---------------------------------------------------------------------------

def round_to_tf32(x):
    """The tf32 operand blockc's TF32 tensor-core kernels give the MMA for
    an f32 value (docs/GPU.md#tf32): the value as f32, rounded to 10
    mantissa bits to nearest with ties away from zero (cvt.rna.tf32.f32: half
    a tf32 ulp added to the bits, the low 13 bits cleared); infinities
    unchanged, NaNs stay NaNs. Returns float64."""
    f = np.asarray(x, dtype=np.float64).astype(np.float32)
    bits = f.view(np.uint32)
    finite = (bits & np.uint32(0x7FFFFFFF)) < np.uint32(0x7F800000)
    rounded = (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    return np.where(finite, rounded, bits).astype(np.uint32).view(
        np.float32).astype(np.float64)


def linear(x, w, b=None, tf32=False):
    """y = x W^T (+ b); with ``tf32``, x and W rounded to tf32 first (the
    products of TF32 tensor cores, summed exactly here)."""
    if tf32:
        x, w = round_to_tf32(x), round_to_tf32(w)
    y = x @ w.T
    return y if b is None else y + b


def rms_norm(x, g, eps):
    inv_rms = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return x * inv_rms * g


def layer_norm(x, g, b, eps):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)  # biased
    return (x - mu) / np.sqrt(var + eps) * g + b


_erf = np.vectorize(math.erf, otypes=[np.float64])


def activation(x, kind):
    if kind == "silu":
        return x / (1.0 + np.exp(-x))
    if kind == "gelu":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    if kind == "gelu_tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi)
                                        * (x + 0.044715 * x ** 3)))
    if kind == "relu":
        return np.maximum(x, 0.0)
    raise RefError("unknown activation %r" % kind)


def rope_cos_sin(positions, head_dim, theta):
    """cos/sin of pos * theta^(-2i/Dh), i < Dh/2; each [T, Dh/2] float64."""
    i = np.arange(head_dim // 2, dtype=np.float64)
    inv_freq = theta ** (-2.0 * i / head_dim)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    return np.cos(ang), np.sin(ang)


def apply_rope(x, positions, theta, mode):
    """Rotate x [B, T, heads, Dh] at the given T positions."""
    if mode == "none":
        return x
    half = x.shape[-1] // 2
    cos, sin = rope_cos_sin(positions, x.shape[-1], theta)
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    if mode == "rotate_half":
        x1, x2 = x[..., :half], x[..., half:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin],
                              axis=-1)
    if mode == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
        return out
    raise RefError("unknown rope mode %r" % mode)


def softmax(s):
    s = s - np.max(s, axis=-1, keepdims=True)
    e = np.exp(s)
    return e / np.sum(e, axis=-1, keepdims=True)


def round_to_bf16(x):
    """float64 -> the nearest bfloat16 value (8 significant bits, round half
    to even, directly from float64), as float64."""
    x = np.asarray(x, dtype=np.float64)
    m, e = np.frexp(x)                       # x = m 2^e, 0.5 <= |m| < 1
    return np.ldexp(np.rint(m * 256.0) / 256.0, e)


def round_to_f16(x):
    """float64 -> the nearest IEEE half value (overflow to inf), as
    float64."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float64).astype(np.float16) \
            .astype(np.float64)


# Unit roundoff of the 16-bit storage types (half an ulp at 1).
STORAGE_UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}


def storage_rounding(dtype):
    """The rounding of a model computed in ``dtype`` (docs/Precision.md):
    identity for f32, else round to the nearest bf16 / f16 value."""
    if dtype == "bf16":
        return round_to_bf16
    if dtype == "f16":
        return round_to_f16
    return lambda x: x


def _rnd(cfg, x):
    return getattr(cfg, "rnd", None)(x) if getattr(cfg, "rnd", None) else x


def fake_quant(w, mode, group_size=32):
    """The dequantised weight W' = q * s of ``#transformer.weight_quant``.

    w: [N, K] ([out, in]). int8: one scale per row, s = max|W[n]| / 127;
    int4: one scale per group of ``group_size`` consecutive k, s = max|W| /
    7; q = clip(rint(W / s), -L, L) (round half to even), q = 0 where s = 0.
    Every step is a float32 operation, as in the compiler's lowering
    (convert-weight-quant-to-linalg), so both see bitwise the same W'.
    """
    w = np.asarray(w, dtype=np.float32)
    n, k = w.shape
    level = np.float32(127 if mode == "int8" else 7)
    g = k if mode == "int8" else group_size
    if k % g:
        raise RefError("--quantize=int4: group size %d does not divide the "
                       "input dimension %d" % (g, k))
    wg = w.reshape(n, k // g, g)
    amax = np.abs(wg).max(axis=2, keepdims=True)
    s = (amax / level).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(np.rint(wg / s), -level, level).astype(np.float32)
    deq = np.where(s == 0, np.float32(0), q * s).astype(np.float32)
    return deq.reshape(n, k)


ACTIVATION_RUN = 32


def quantize_activations(x):
    """The input of a projection under ``activations = int8``:
    x' = q_x * s_x, per row and run of 32 consecutive input columns,
    s_x = max|x| / 127, q_x = clip(rint(x / s_x), -127, 127) (round half to
    even), q_x = 0 where s_x = 0. x is rounded to float32 first and the
    scale and levels are float32 operations, as in the compiler; x' is
    float64 (q_x * s_x exactly), so x' W'^T is sum over runs of
    s_x s_w sum(q_x q_w) with the integer sums exact."""
    x32 = np.asarray(x, dtype=np.float32)
    k = x32.shape[-1]
    if k % ACTIVATION_RUN:
        raise RefError("--quantize-activations=int8: the input dimension %d "
                       "is not a multiple of %d" % (k, ACTIVATION_RUN))
    xr = x32.reshape(x32.shape[:-1] + (k // ACTIVATION_RUN, ACTIVATION_RUN))
    amax = np.abs(xr).max(axis=-1, keepdims=True)
    s = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(np.rint(xr / s), -127, 127).astype(np.float32)
    q = np.where(s == 0, np.float32(0), q)
    deq = q.astype(np.float64) * s.astype(np.float64)
    return deq.reshape(x32.shape)


def proj_input(cfg, x):
    """The input a projection computes with: x, or its int8 form under
    ``cfg.quantize_activations``."""
    if getattr(cfg, "quantize_activations", False):
        return quantize_activations(x)
    return x


ROW_PARALLEL = ("self_attn.o_proj.weight", "mlp.down_proj.weight")


def proj_weight(cfg, w, name):
    """The weight a projection computes with: the stored one, or its
    dequantised form under ``cfg.quantize`` ((mode, group_size) or None).

    With ``cfg.tp_ranks`` = N > 1 the row-parallel projections (o_proj,
    down_proj: split by input columns over N ranks) are quantised per
    rank's block of K / N columns, as each rank of a tensor-parallel run
    quantises its own part (int8's row scale is then the block's)."""
    wt = w[name]
    quant = getattr(cfg, "quantize", None)
    if not quant:
        return wt
    ranks = getattr(cfg, "tp_ranks", 1)
    if ranks > 1 and name.endswith(ROW_PARALLEL):
        k = wt.shape[1]
        if k % ranks:
            raise RefError("--tensor-parallel=%d does not divide the %d input "
                           "columns of %s" % (ranks, k, name))
        return np.concatenate([fake_quant(part, *quant) for part in
                               np.split(np.asarray(wt), ranks, axis=1)],
                              axis=1)
    return fake_quant(wt, *quant)


def attention(cfg, w, x, position_offset=0, kv_cache=None, dump=None):
    """Self-attention of x [B, T, d].

    kv_cache: optional (k, v), each [B, S0, H_kv, Dh], keys already rotated.
    Returns (output [B, T, d], (k_all, v_all) each [B, S0 + T, H_kv, Dh]).
    """
    p = cfg.prefix + "self_attn."
    bsz, t, _ = x.shape
    h, hkv, dh = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim

    def proj(name):
        return _rnd(cfg, linear(proj_input(cfg, x),
                                proj_weight(cfg, w, p + name + ".weight"),
                                w.get(p + name + ".bias"),
                                getattr(cfg, "tf32", False)))

    q = proj("q_proj").reshape(bsz, t, h, dh)
    k = proj("k_proj").reshape(bsz, t, hkv, dh)
    v = proj("v_proj").reshape(bsz, t, hkv, dh)
    pos = position_offset + np.arange(t)
    if cfg.rope != "none":
        q = _rnd(cfg, apply_rope(q, pos, cfg.rope_theta, cfg.rope))
        k = _rnd(cfg, apply_rope(k, pos, cfg.rope_theta, cfg.rope))
    if kv_cache is not None:
        k = np.concatenate([kv_cache[0], k], axis=1)
        v = np.concatenate([kv_cache[1], v], axis=1)
    s = k.shape[1]

    kv_of_head = np.arange(h) // (h // hkv)          # repeat_interleave
    qh = q.transpose(0, 2, 1, 3)                     # [B, H, T, Dh]
    kh = k[:, :, kv_of_head, :].transpose(0, 2, 1, 3)  # [B, H, S, Dh]
    vh = v[:, :, kv_of_head, :].transpose(0, 2, 1, 3)
    scores = (qh @ kh.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(dh))
    if cfg.causal:
        # bottom-right aligned: query i sees keys j <= i + (S - T)
        hidden = np.arange(s)[None, :] > np.arange(t)[:, None] + (s - t)
        scores = np.where(hidden, -np.inf, scores)
    probs = softmax(scores)
    if cfg.causal and getattr(cfg, "skip_masked", False):
        # Sum over the visible keys only: a masked key has no effect, even
        # when its value row holds NaN or Inf (0 x NaN is NaN in the plain
        # product below, as in eager PyTorch).
        prod = probs[..., None] * vh[:, :, None, :, :]  # [B, H, T, S, Dh]
        prod = np.where(hidden[None, None, :, :, None], 0.0, prod)
        ctx = prod.sum(axis=3)
    else:
        ctx = probs @ vh
    ctx = _rnd(cfg, ctx.transpose(0, 2, 1, 3).reshape(bsz, t, h * dh))
    out = _rnd(cfg, linear(proj_input(cfg, ctx),
                           proj_weight(cfg, w, p + "o_proj.weight"),
                           w.get(p + "o_proj.bias"),
                           getattr(cfg, "tf32", False)))
    if dump is not None:
        dump.update(q_rope=q, k_rope=k, v=v, attn_probs=probs, attn_ctx=ctx,
                    attn_out=out)
    return out, (k, v)


def ffn(cfg, w, x, dump=None):
    p = cfg.prefix + "mlp."

    def proj(name, inp):
        return _rnd(cfg, linear(proj_input(cfg, inp),
                                proj_weight(cfg, w, p + name + ".weight"),
                                w.get(p + name + ".bias"),
                                getattr(cfg, "tf32", False)))

    up = proj("up_proj", x)
    if cfg.gated:
        hmid = _rnd(cfg, _rnd(cfg, activation(proj("gate_proj", x), cfg.act))
                    * up)
    else:
        hmid = _rnd(cfg, activation(up, cfg.act))
    out = proj("down_proj", hmid)
    if dump is not None:
        dump.update(ffn_hidden=hmid, ffn_out=out)
    return out


def norm(cfg, w, x, which):
    p = cfg.prefix + which
    if cfg.norm == "rms":
        # LlamaRMSNorm: the normalised row is rounded before the gain.
        g = w[p + ".weight"]
        return _rnd(cfg, _rnd(cfg, rms_norm(x, np.ones_like(g),
                                            cfg.norm_eps)) * g)
    return _rnd(cfg, layer_norm(x, w[p + ".weight"], w[p + ".bias"],
                                cfg.norm_eps))


def block_forward(cfg, w, x, position_offset=0, kv_cache=None, dump=None):
    """One transformer block on x [B, T, d] (float64).

    Returns (y [B, T, d], (k_all, v_all)).  If ``dump`` is a dict, named
    intermediates are stored in it.
    """
    x = _rnd(cfg, np.asarray(x, dtype=np.float64))
    if cfg.norm_placement == "pre":
        n1 = norm(cfg, w, x, "input_layernorm")
        a, kv = attention(cfg, w, n1, position_offset, kv_cache, dump)
        h = _rnd(cfg, x + a)
        n2 = norm(cfg, w, h, "post_attention_layernorm")
        y = _rnd(cfg, h + ffn(cfg, w, n2, dump))
    else:
        n1 = x
        a, kv = attention(cfg, w, x, position_offset, kv_cache, dump)
        h = norm(cfg, w, _rnd(cfg, x + a), "input_layernorm")
        n2 = h
        y = norm(cfg, w, _rnd(cfg, h + ffn(cfg, w, h, dump)),
                 "post_attention_layernorm")
    if dump is not None:
        dump.update(attn_in=n1, h=h, ffn_in=n2, y=y)
    return y, kv


def block_weights(cfg, weights):
    """The weights of layer ``cfg.layer`` as the block math reads them.

    The math uses ``cfg.prefix`` + the Llama suffixes (input_layernorm,
    self_attn.{q,k,v,o}_proj, post_attention_layernorm,
    mlp.{gate,up,down}_proj) in [out, in] layout.  Llama-style files already
    are that; GPT-2 tensors are mapped: ln_1/ln_2 -> the two norms, the
    Conv1D ([in, out], y = x W + b) weights are transposed, and the fused
    c_attn [d, 3d] is split column-wise into q, k, v (in that order).
    The returned dict also holds the original tensors.
    """
    if cfg.naming != "gpt2":
        return weights
    p, d = cfg.prefix, cfg.d
    w = dict(weights)
    for src, dst in (("ln_1", "input_layernorm"),
                     ("ln_2", "post_attention_layernorm")):
        w[p + dst + ".weight"] = weights[p + src + ".weight"]
        w[p + dst + ".bias"] = weights[p + src + ".bias"]
    wc = weights[p + "attn.c_attn.weight"]
    bc = weights[p + "attn.c_attn.bias"]
    for j, name in enumerate(("q_proj", "k_proj", "v_proj")):
        w[p + "self_attn." + name + ".weight"] = wc[:, j * d:(j + 1) * d].T
        w[p + "self_attn." + name + ".bias"] = bc[j * d:(j + 1) * d]
    for src, dst in (("attn.c_proj", "self_attn.o_proj"),
                     ("mlp.c_fc", "mlp.up_proj"),
                     ("mlp.c_proj", "mlp.down_proj")):
        w[p + dst + ".weight"] = weights[p + src + ".weight"].T
        w[p + dst + ".bias"] = weights[p + src + ".bias"]
    return w


def stack_forward(cfg, weights, x, n_layers=1, position_offset=0,
                  kv_caches=None, dumps=None):
    """Layers cfg.layer .. cfg.layer + n_layers - 1 applied in sequence
    (layer i's output is layer i+1's input); every layer sees the same
    token positions.

    kv_caches: None or one (k, v) cache per layer (see ``attention``).
    dumps: None or a list that receives one intermediates dict per layer.
    Returns (y, [(k_all, v_all) per layer]).
    """
    kvs = []
    for i, lc in enumerate(cfg.stack(n_layers)):
        dump = {} if dumps is not None else None
        x, kv = block_forward(lc, block_weights(lc, weights), x,
                              position_offset,
                              None if kv_caches is None else kv_caches[i],
                              dump)
        kvs.append(kv)
        if dumps is not None:
            dumps.append(dump)
    return x, kvs


def final_norm_names(cfg):
    """Tensor names of the model's final norm: GPT-2 ``ln_f``, otherwise
    Hugging Face Llama's ``model.norm`` (weight, plus bias for LayerNorm)."""
    base = "ln_f" if cfg.naming == "gpt2" else "model.norm"
    names = [base + ".weight"]
    if cfg.norm == "layer":
        names.append(base + ".bias")
    return names


def final_norm(cfg, weights, x):
    """The model's final norm after the stack (float64)."""
    names = final_norm_names(cfg)
    missing = [n for n in names if n not in weights]
    if missing:
        raise RefError("missing weight tensor(s): %s" % ", ".join(missing))
    g = np.asarray(weights[names[0]], dtype=np.float64)
    if g.shape != (cfg.d,):
        raise RefError("weight '%s' has shape %s, expected [%d]"
                       % (names[0], list(g.shape), cfg.d))
    if cfg.norm == "rms":
        # Rounded like the blocks' norms in a bf16/f16 model (LlamaRMSNorm).
        return _rnd(cfg, _rnd(cfg, rms_norm(x, np.ones_like(g),
                                            cfg.norm_eps)) * g)
    return _rnd(cfg, layer_norm(x, g, np.asarray(weights[names[1]],
                                                 dtype=np.float64),
                                cfg.norm_eps))


def check_weights(cfg, weights, strict=False):
    """Verify names and shapes; return list of warnings about extras."""
    expected = cfg.expected_shapes()
    missing = [n for n in expected if n not in weights]
    if missing:
        raise RefError("missing weight tensor(s): %s" % ", ".join(missing))
    for name, shape in expected.items():
        got = tuple(weights[name].shape)
        if got != shape:
            raise RefError("weight '%s' has shape %s, expected %s"
                           % (name, list(got), list(shape)))
    known = set(expected)
    if cfg.naming == "gpt2":
        known.update(cfg.prefix + b for b in GPT2_BUFFERS)
    extra = sorted(n for n in weights
                   if n.startswith(cfg.prefix) and n not in known)
    if extra and strict:
        raise RefError("unexpected weight tensor(s) for layer %d: %s"
                       % (cfg.layer, ", ".join(extra)))
    return ["ignoring unexpected tensor '%s'" % n for n in extra]


# ---------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------

def gen_weights(cfg, seed, scale=0.05, n_layers=1, with_final_norm=False):
    """Random float32 weights {name: array}, deterministic in (cfg, seed),
    for layers cfg.layer .. cfg.layer + n_layers - 1, in file layout.

    Linear weights and biases ~ scale * N(0, 1); norm gains ~ 1 + 0.1 N(0, 1);
    LayerNorm biases ~ 0.1 N(0, 1).  One random stream runs through the
    layers in order, so the first layer does not depend on n_layers.
    """
    rng = np.random.default_rng(seed)
    out = {}
    for lc in cfg.stack(n_layers):
        for name, shape in lc.expected_shapes().items():
            z = rng.standard_normal(shape)
            if name[len(lc.prefix):].split(".")[0] in NORM_TENSORS:
                v = 1.0 + 0.1 * z if name.endswith(".weight") else 0.1 * z
            else:
                v = scale * z
            out[name] = v.astype(np.float32)
    if with_final_norm:
        for name in final_norm_names(cfg):
            z = rng.standard_normal((cfg.d,))
            v = 1.0 + 0.1 * z if name.endswith(".weight") else 0.1 * z
            out[name] = v.astype(np.float32)
    return out


# ---------------------------------------------------------------------------
# Compare
# ---------------------------------------------------------------------------

def compare_arrays(a, b, tol, rms_tol=None):
    """Return (max_abs_err, scale); raise RefError when not within tol (and,
    with ``rms_tol``, when the root-mean-square error exceeds rms_tol *
    scale)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise RefError("shape mismatch: %s vs %s" % (list(a.shape),
                                                     list(b.shape)))
    na, nb = np.isnan(a), np.isnan(b)
    if na.any() or nb.any():
        if not np.array_equal(na, nb):
            idx = np.argwhere(na != nb)[0]
            raise RefError("NaN mismatch: %d NaN(s) in A, %d in B, first "
                           "difference at index %s"
                           % (na.sum(), nb.sum(), tuple(int(i) for i in idx)))
    ia, ib = np.isinf(a), np.isinf(b)
    if ia.any() or ib.any():
        if not (np.array_equal(ia, ib) and np.array_equal(a[ia], b[ib])):
            raise RefError("infinities differ between A and B")
    fin = np.isfinite(a) & np.isfinite(b)
    diff = np.abs(a - b)[fin] if fin.any() else np.zeros(1)
    err = float(diff.max()) if diff.size else 0.0
    mb = np.abs(b[np.isfinite(b)])
    scale = max(1.0, float(mb.max()) if mb.size else 0.0)
    if err > tol * scale:
        full = np.where(fin, np.abs(a - b), -1.0)
        idx = np.unravel_index(int(np.argmax(full)), a.shape)
        raise RefError("max_abs_err=%.6g scale=%.6g exceeds tol*scale=%.6g "
                       "at index %s (A=%.9g, B=%.9g)"
                       % (err, scale, tol * scale, tuple(int(i) for i in idx),
                          a[idx], b[idx]))
    if rms_tol is not None:
        rms = float(np.sqrt(np.mean(diff ** 2))) if diff.size else 0.0
        if rms > rms_tol * scale:
            raise RefError("rms_err=%.6g scale=%.6g exceeds rms_tol*scale=%.6g"
                           % (rms, scale, rms_tol * scale))
    return err, scale


# ---------------------------------------------------------------------------
# File manipulation for negative tests
# ---------------------------------------------------------------------------

def _read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise RefError("cannot read %s: %s" % (path, e.strerror))


def _write_bytes(path, data):
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise RefError("cannot write %s: %s" % (path, e.strerror))


def _pack_header(header):
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * (-len(hb) % 8)
    return struct.pack("<Q", len(hb)) + hb


def _pick_tensor(header, name):
    names = [n for n in header if n != "__metadata__"]
    if not names:
        raise RefError("file has no tensors")
    if name is None:
        return min(names, key=lambda n: header[n]["data_offsets"][0])
    if name not in header:
        raise RefError("no tensor named '%s'" % name)
    return name


def corrupt_safetensors(src, dst, mode, tensor=None, header_len=None):
    """Write a broken copy of a valid safetensors file ``src``.

    truncate:        cut the file in the middle of the data buffer.
    bad-header-len:  u64 header length larger than the file (or header_len).
    bad-json:        header JSON made unterminated (same length).
    bad-offsets:     a tensor's data_offsets moved past the buffer end
                     (size still consistent with its shape).
    wrong-dtype:     a tensor's dtype changed to a same-width integer dtype
                     (F32 -> I32, F16/BF16 -> I16); offsets stay valid.
    """
    read_safetensors_raw(src)  # input must be valid
    blob = _read_bytes(src)
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    buf = blob[8 + n:]
    if mode == "truncate":
        keep = 8 + n + len(buf) // 2
        out = blob[:min(keep, len(blob) - 1)]
    elif mode == "bad-header-len":
        val = len(blob) if header_len is None else header_len
        if not 0 <= val < 2 ** 64:
            raise RefError("--header-len must fit in a u64")
        out = struct.pack("<Q", val) + blob[8:]
    elif mode == "bad-json":
        hb = bytearray(blob[8:8 + n])
        last = len(hb.rstrip()) - 1  # the closing '}'
        hb[last:last + 1] = b" "
        out = blob[:8] + bytes(hb) + buf
    elif mode == "bad-offsets":
        name = _pick_tensor(header, tensor)
        b, e = header[name]["data_offsets"]
        header[name]["data_offsets"] = [len(buf), len(buf) + (e - b)]
        out = _pack_header(header) + buf
    elif mode == "wrong-dtype":
        name = _pick_tensor(header, tensor)
        header[name]["dtype"] = ("I32" if header[name]["dtype"] == "F32"
                                 else "I16")
        out = _pack_header(header) + buf
    else:
        raise RefError("unknown corrupt mode %r" % mode)
    _write_bytes(dst, out)


def corrupt_npy(src, dst, mode):
    """Write a broken copy of a valid .npy file.

    truncate:    drop the second half of the data (at least one byte).
    bad-magic:   '\\x93NUMPY' -> '\\x93NUMPX'.
    wrong-dtype: header descr changed to a same-width integer type
                 (e.g. '<f4' -> '<i4'); data untouched.
    """
    arr = load_npy(src)  # validates
    blob = _read_bytes(src)
    data_len = arr.size * np.load(src, mmap_mode="r").dtype.itemsize
    hdr_len = len(blob) - data_len
    if mode == "truncate":
        out = blob[:hdr_len + data_len // 2] if data_len > 1 \
            else blob[:len(blob) - 1]
    elif mode == "bad-magic":
        out = blob[:5] + b"X" + blob[6:]
    elif mode == "wrong-dtype":
        orig = np.load(src, mmap_mode="r")
        f = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<i%d" % orig.dtype.itemsize,
                "fortran_order": bool(np.isfortran(orig)),
                "shape": orig.shape})
        out = f.getvalue() + blob[hdr_len:]
    else:
        raise RefError("unknown npy-corrupt mode %r" % mode)
    _write_bytes(dst, out)


def parse_shape(text):
    text = text.strip()
    if text in ("", "[]", "()"):
        return ()
    try:
        dims = tuple(int(s) for s in text.strip("[]()").split(","))
    except ValueError:
        raise RefError("bad --shape %r (expected e.g. 3,4)" % text)
    if any(s < 0 for s in dims):
        raise RefError("bad --shape %r: negative dimension" % text)
    return dims


def edit_safetensors(src, dst, op, name, shape=None, dtype="F32", seed=0):
    """drop / add / reshape one tensor, writing a valid file."""
    entries, meta = read_safetensors_raw(src)
    names = [e[0] for e in entries]
    if op == "drop":
        if name not in names:
            raise RefError("%s has no tensor named '%s'" % (src, name))
        entries = [e for e in entries if e[0] != name]
    elif op == "add":
        if name in names:
            raise RefError("%s already has a tensor named '%s'" % (src, name))
        vals = 0.05 * np.random.default_rng(seed).standard_normal(shape)
        entries.append((name, dtype, shape, encode_tensor(vals, dtype)))
    elif op == "reshape":
        if name not in names:
            raise RefError("%s has no tensor named '%s'" % (src, name))
        i = names.index(name)
        n, dt, _, raw = entries[i]
        width = ST_DTYPES[dt][0]
        elems = np.frombuffer(raw, dtype="<u%d" % width)
        count = int(np.prod(shape, dtype=np.int64))
        # keep the original elements, cycled (np.resize) or cut as needed
        new = np.resize(elems, count) if elems.size else \
            np.zeros(count, elems.dtype)
        entries[i] = (n, dt, shape, new.astype("<u%d" % width).tobytes())
    elif op in ("prefix", "strip"):
        # `name` is a prefix given to every tensor, or taken from those
        # that have it (as transformers' wrapper modules name them).
        entries = [((name + n) if op == "prefix" else
                    (n[len(name):] if n.startswith(name) else n),
                    dt, shp, raw) for n, dt, shp, raw in entries]
    else:
        raise RefError("unknown edit %r" % op)
    write_safetensors(dst, entries, meta)


# ---------------------------------------------------------------------------
# Whole causal language models in the Hugging Face folder layout
# ---------------------------------------------------------------------------

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"


def shard_name(i, k):
    """Hugging Face's shard file name: model-00001-of-00002.safetensors."""
    return "model-%05d-of-%05d.safetensors" % (i + 1, k)


class ModelSpec:
    """The parts of a Hugging Face causal LM outside its blocks.

    vocab (``vocab_size``), tied (``tie_word_embeddings``: transformers'
    default is false for llama/mistral/qwen2 and true for gpt2), positions
    (GPT-2's ``n_positions``, the rows of ``wpe``; None otherwise) and
    n_layers (``num_hidden_layers`` / ``n_layer``, required).
    """

    def __init__(self, raw, cfg):
        if cfg.model_type is None:
            raise RefError("config: a whole model needs a Hugging Face "
                           "config.json (model_type %s)"
                           % ", ".join(HF_MODEL_TYPES))
        self.cfg = cfg
        gpt2 = cfg.naming == "gpt2"
        self.vocab = _get_int(raw, "vocab_size", 50257 if gpt2 else 32000)
        self.tied = _get_bool(raw, "tie_word_embeddings", gpt2)
        self.positions = _get_int(raw, "n_positions", 1024) if gpt2 else None
        if cfg.max_layers is None:
            raise RefError("config: missing required key '%s'"
                           % ("n_layer" if gpt2 else "num_hidden_layers"))
        self.n_layers = cfg.max_layers

    @property
    def embed_name(self):
        return "wte.weight" if self.cfg.naming == "gpt2" else \
            "model.embed_tokens.weight"

    @property
    def head_name(self):
        """The tensor the LM head reads: the embedding when tied."""
        return self.embed_name if self.tied else "lm_head.weight"

    def expected_shapes(self, n_layers):
        """Ordered {name: shape} of a checkpoint with ``n_layers`` layers,
        in the order Hugging Face's state_dict lists them."""
        cfg, d = self.cfg, self.cfg.d
        shapes = {self.embed_name: (self.vocab, d)}
        if self.positions is not None:
            shapes["wpe.weight"] = (self.positions, d)
        for lc in cfg.stack(n_layers):
            shapes.update(lc.expected_shapes())
        for name in final_norm_names(cfg):
            shapes[name] = (d,)
        if not self.tied:
            shapes["lm_head.weight"] = (self.vocab, d)
        return shapes


def load_model_config(path):
    """(raw dict, Config, ModelSpec) of a Hugging Face config.json."""
    cfg = load_config(path)
    with open(path, "r", encoding="utf-8") as f:
        raw = json.load(f)
    return raw, cfg, ModelSpec(raw, cfg)


def gen_model_weights(cfg, spec, seed, n_layers, scale=0.15,
                      embed_scale=0.2):
    """Random float32 weights of a whole model, {name: array} in
    checkpoint order.

    The layers and the final norm are exactly ``gen-weights --layers N
    --final-norm`` with the same seed (one stream); the embeddings and the
    LM head come from a second stream seeded by (seed, 1):
    ``embed_scale * N(0, 1)`` (GPT-2's wpe: a tenth of that).
    """
    blocks = gen_weights(cfg, seed, scale, n_layers, with_final_norm=True)
    rng = np.random.default_rng([seed, 1])
    extra = {}
    for name, shape in spec.expected_shapes(n_layers).items():
        if name in blocks:
            continue
        z = rng.standard_normal(shape)
        factor = 0.1 if name == "wpe.weight" else 1.0
        extra[name] = (embed_scale * factor * z).astype(np.float32)
    order = spec.expected_shapes(n_layers)
    merged = dict(blocks, **extra)
    return {n: merged[n] for n in order}


def split_shards(sizes, k):
    """Shard index of each tensor (in order): consecutive runs of about
    total/k bytes, none empty, as save_pretrained's max_shard_size split."""
    n = len(sizes)
    if k < 1:
        raise RefError("--shards must be >= 1, got %d" % k)
    if k > n:
        raise RefError("--shards %d exceeds the %d tensors of the model"
                       % (k, n))
    total = float(sum(sizes))
    out, shard, acc = [], 0, 0
    for i, size in enumerate(sizes):
        left = n - i                      # tensors not yet placed
        shards_left = k - shard - 1       # shards after the current one
        if acc > 0 and shard < k - 1 and (
                acc + size / 2.0 > total * (shard + 1) / k
                or left == shards_left):
            shard += 1
        out.append(shard)
        acc += size
    return out


def write_model_dir(out, raw, n_layers, weights, st_dtype, shards):
    """Write a Hugging Face model folder: config.json with the layer count
    set, and model.safetensors (shards == 1) or the shards and
    model.safetensors.index.json. Stale model files are removed first."""
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name in (SINGLE_FILE, INDEX_FILE) or (
                name.startswith("model-") and name.endswith(".safetensors")):
            os.remove(os.path.join(out, name))
    conf = dict(raw)
    conf["n_layer" if raw.get("model_type") == "gpt2"
         else "num_hidden_layers"] = n_layers
    conf["torch_dtype"] = {"F32": "float32", "BF16": "bfloat16",
                           "F16": "float16"}[st_dtype]
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(conf, f, indent=2)
        f.write("\n")
    entries = [(n, st_dtype, v.shape, encode_tensor(v, st_dtype))
               for n, v in weights.items()]
    if shards == 1:
        write_safetensors(os.path.join(out, SINGLE_FILE), entries,
                          {"format": "pt"})
        return
    where = split_shards([len(e[3]) for e in entries], shards)
    weight_map = {}
    for s in range(shards):
        part = [e for e, w in zip(entries, where) if w == s]
        write_safetensors(os.path.join(out, shard_name(s, shards)), part,
                          {"format": "pt"})
        weight_map.update((e[0], shard_name(s, shards)) for e in part)
    index = {"metadata": {"total_size": sum(len(e[3]) for e in entries)},
             "weight_map": weight_map}
    with open(os.path.join(out, INDEX_FILE), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


def read_model_index(folder):
    """{tensor name: shard file name} of a sharded folder's index."""
    path = os.path.join(folder, INDEX_FILE)
    try:
        with open(path, "r", encoding="utf-8") as f:
            index = json.load(f)
    except OSError as e:
        raise RefError("cannot read %s: %s" % (path, e.strerror))
    except (ValueError, UnicodeDecodeError) as e:
        raise RefError("%s is not valid JSON: %s" % (path, e))
    wm = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(wm, dict) or not all(
            isinstance(v, str) and v and os.path.basename(v) == v
            for v in wm.values()):
        raise RefError("%s: 'weight_map' must map tensor names to shard "
                       "file names in the folder" % path)
    return wm


def load_weights(path):
    """{name: float64 array} from a safetensors file or a Hugging Face
    model folder (model.safetensors, or the shards its index lists; every
    tensor the index lists must be in its shard; tensors a shard holds but
    the index does not list are ignored, as transformers does)."""
    if not os.path.isdir(path):
        return load_safetensors(path)
    if os.path.exists(os.path.join(path, INDEX_FILE)):
        wm = read_model_index(path)
        out = {}
        for shard in sorted(set(wm.values())):
            file = os.path.join(path, shard)
            if not os.path.exists(file):
                raise RefError("%s: shard %s named by %s does not exist"
                               % (path, shard, INDEX_FILE))
            got = load_safetensors(file)
            for name in sorted(n for n, s in wm.items() if s == shard):
                if name not in got:
                    raise RefError("%s: tensor '%s' is not in shard %s, "
                                   "where %s puts it"
                                   % (path, name, shard, INDEX_FILE))
                out[name] = got[name]
        return out
    single = os.path.join(path, SINGLE_FILE)
    if not os.path.exists(single):
        raise RefError("%s: neither %s nor %s in the folder"
                       % (path, SINGLE_FILE, INDEX_FILE))
    return load_safetensors(single)


def load_ids(path, vocab=None):
    """Token ids [B, T] (int32 or int64 .npy) as int64."""
    try:
        arr = np.load(path, allow_pickle=False)
    except OSError as e:
        raise RefError("cannot read ids %s: %s" % (path, e.strerror or e))
    except ValueError as e:
        raise RefError("ids %s is not a valid .npy file: %s" % (path, e))
    if arr.dtype not in (np.dtype("<i4"), np.dtype("<i8")):
        raise RefError("ids %s has dtype %s, expected int32 or int64"
                       % (path, arr.dtype))
    if arr.ndim != 2 or 0 in arr.shape:
        raise RefError("ids %s has shape %s, expected [B, T] with B, T >= 1"
                       % (path, list(arr.shape)))
    arr = arr.astype(np.int64)
    if vocab is not None:
        bad = np.argwhere((arr < 0) | (arr >= vocab))
        if bad.size:
            b, t = (int(v) for v in bad[0])
            raise RefError("ids %s: id %d at [%d, %d] is outside the "
                           "vocabulary [0, %d)"
                           % (path, arr[b, t], b, t, vocab))
    return arr


class Model:
    """A whole causal LM: config, spec, weights (rounded to the model's
    type at load), the number of layers run and the numeric options
    ``run`` has (quantised projections, optionally the LM head too)."""

    def __init__(self, folder, dtype="f32", n_layers=None, quantize=None,
                 quantize_activations=False, quantize_lm_head=False,
                 round_logits=False):
        self.raw, self.cfg, self.spec = load_model_config(
            os.path.join(folder, "config.json"))
        self.n_layers = self.spec.n_layers if n_layers is None else n_layers
        self.cfg.stack(self.n_layers)      # checks the bound
        self.cfg.rnd = storage_rounding(dtype) if dtype != "f32" else None
        self.cfg.quantize = quantize
        self.cfg.quantize_activations = quantize_activations
        self.quantize_lm_head = quantize_lm_head
        self.round_logits = round_logits
        weights = load_weights(folder)
        need = self.spec.expected_shapes(self.n_layers)
        missing = [n for n in need if n not in weights]
        if missing:
            raise RefError("missing weight tensor(s): %s"
                           % ", ".join(missing))
        for name, shape in need.items():
            if tuple(weights[name].shape) != shape:
                raise RefError("weight '%s' has shape %s, expected %s"
                               % (name, list(weights[name].shape),
                                  list(shape)))
        if self.cfg.rnd is not None:
            weights = {n: self.cfg.rnd(v) for n, v in weights.items()}
        self.weights = weights

    def forward(self, ids):
        """Logits [B, T, vocab] (float64) of ids [B, T] at positions
        0 .. T-1."""
        cfg, spec, w = self.cfg, self.spec, self.weights
        t = ids.shape[1]
        if spec.positions is not None and t > spec.positions:
            raise RefError("%d positions exceed n_positions %d"
                           % (t, spec.positions))
        x = w[spec.embed_name][ids]
        if spec.positions is not None:
            # GPT-2: the learned position embedding, added (one rounding).
            x = _rnd(cfg, x + w["wpe.weight"][np.arange(t)][None])
        y, _ = stack_forward(cfg, w, x, self.n_layers)
        y = final_norm(cfg, w, y)
        head = w[spec.head_name]
        if self.quantize_lm_head and cfg.quantize:
            head = fake_quant(head, *cfg.quantize)
        logits = linear(proj_input(cfg, y), head)
        return _rnd(cfg, logits) if self.round_logits else logits

    def generate(self, ids, n, stop_tokens=()):
        """Greedy generation of up to n tokens (the whole sequence
        recomputed at every step). A row that generates one of
        ``stop_tokens`` repeats it to the end of its row; generation ends
        when every row has stopped (as blockc-run --stop-token). Returns
        (int32 [B, generated], smallest top-two margin of the last
        position's logits over all steps and the rows still running)."""
        if n < 1:
            raise RefError("-n must be >= 1, got %d" % n)
        seq = np.asarray(ids, dtype=np.int64)
        out, margin = [], math.inf
        stopped = np.zeros(seq.shape[0], dtype=bool)
        for _ in range(n):
            last = self.forward(seq)[:, -1, :]
            nxt = np.argmax(last, axis=-1)          # first of equal maxima
            if last.shape[-1] > 1:
                top2 = np.sort(last[~stopped], axis=-1)[:, -2:]
                margin = min(margin, float((top2[:, 1] - top2[:, 0]).min()))
            if out:
                nxt = np.where(stopped, out[-1], nxt)
            out.append(nxt)
            stopped |= np.isin(nxt, list(stop_tokens))
            seq = np.concatenate([seq, nxt[:, None]], axis=1)
            if stopped.all():
                break
        return np.stack(out, axis=1).astype(np.int32), margin


# ---------------------------------------------------------------------------
# CLI commands
# ---------------------------------------------------------------------------

def cmd_gen_weights(args):
    cfg = load_config(args.config)
    dtype = CLI_DTYPES[args.dtype]
    w = gen_weights(cfg, args.seed, args.scale, args.layers,
                    args.final_norm)
    for spec in args.scale_tensor or []:
        suffix, _, factor = spec.rpartition("=")
        hits = [n for n in w if n.endswith(suffix)]
        if not suffix or not hits:
            raise RefError("--scale-tensor %r matches no tensor" % spec)
        for n in hits:
            w[n] = w[n] * float(factor)
    entries = [(n, dtype, v.shape, encode_tensor(v, dtype))
               for n, v in w.items()]
    write_safetensors(args.output, entries, {"format": "pt"})


def cmd_gen_input(args):
    cfg = load_config(args.config)
    if args.batch < 1 or args.seq_len < 1:
        raise RefError("--batch and --seq-len must be >= 1")
    if args.rank2 and args.batch != 1:
        raise RefError("--rank2 requires --batch 1")
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal((args.batch, args.seq_len, cfg.d)) * args.scale
    for spec in args.set or []:
        where, _, value = spec.partition("=")
        try:
            b, t, i = (int(v) for v in where.split(","))
            x[b, t, i] = float(value)
        except (ValueError, IndexError):
            raise RefError("--set %r: expected B,T,I=VALUE inside [%d, %d, "
                           "%d]" % (spec, args.batch, args.seq_len, cfg.d))
    save_npy(args.output, x[0] if args.rank2 else x)


def _load_kv_caches(args, cfg, n_layers, batch, rank2):
    """--kv-cache K V -> one (k, v) pair per layer.

    One layer: each file is [B, S0, H_kv, Dh] ([S0, H_kv, Dh] for rank-2
    input).  A stack of N > 1 layers adds a leading layer axis:
    [N, B, S0, H_kv, Dh] ([N, S0, H_kv, Dh]).
    """
    cache = []
    for path in args.kv_cache:
        c = load_npy(path, "kv cache")
        if n_layers == 1:
            c = c[None] if rank2 and c.ndim == 3 else c
            if (c.ndim != 4 or c.shape[0] != batch
                    or c.shape[2:] != (cfg.n_kv_heads, cfg.head_dim)):
                raise RefError("kv cache %s has shape %s, expected "
                               "[%sS, %d, %d]"
                               % (path, list(c.shape),
                                  "" if rank2 else "%d, " % batch,
                                  cfg.n_kv_heads, cfg.head_dim))
            c = c[None]
        else:
            shape = list(c.shape)
            c = c[:, None] if rank2 and c.ndim == 4 else c
            if (c.ndim != 5 or c.shape[:2] != (n_layers, batch)
                    or c.shape[3:] != (cfg.n_kv_heads, cfg.head_dim)):
                raise RefError("kv cache %s has shape %s, expected "
                               "[%d, %sS, %d, %d] (layers first)"
                               % (path, shape, n_layers,
                                  "" if rank2 else "%d, " % batch,
                                  cfg.n_kv_heads, cfg.head_dim))
        cache.append(c)
    if cache[0].shape != cache[1].shape:
        raise RefError("kv cache K and V shapes differ")
    return [(cache[0][i], cache[1][i]) for i in range(n_layers)]


def _quant_options(args):
    """(quantize, quantize_activations) of --quantize, --group-size and
    --quantize-activations: ((mode, group size) or None, bool)."""
    if args.group_size is not None and args.quantize != "int4":
        raise RefError("--group-size is for --quantize=int4")
    quantize = None
    if args.quantize != "none":
        quantize = (args.quantize, args.group_size or 32)
    qact = args.quantize_activations == "int8"
    if qact and args.quantize == "none":
        raise RefError("--quantize-activations=int8 needs --quantize=int8 or "
                       "int4")
    return quantize, qact


def cmd_gen_model(args):
    raw, cfg, spec = load_model_config(args.config)
    n_layers = spec.n_layers if args.layers is None else args.layers
    if n_layers < 1:
        raise RefError("--layers must be >= 1, got %d" % n_layers)
    # The folder's config declares n_layers, whatever the input said.
    cfg.max_layers = spec.n_layers = n_layers
    w = gen_model_weights(cfg, spec, args.seed, n_layers, args.scale,
                          args.embed_scale)
    write_model_dir(args.output, raw, n_layers, w, CLI_DTYPES[args.dtype],
                    args.shards)


def _load_model(args):
    quantize, qact = _quant_options(args)
    if args.quantize_lm_head and quantize is None:
        raise RefError("--quantize-lm-head needs --quantize=int8 or int4")
    return Model(args.model, args.dtype, args.layers, quantize, qact,
                 args.quantize_lm_head, args.round_logits)


def cmd_forward(args):
    model = _load_model(args)
    ids = load_ids(args.ids, model.spec.vocab)
    save_npy(args.output, model.forward(ids))


def cmd_generate(args):
    model = _load_model(args)
    ids = load_ids(args.ids, model.spec.vocab)
    if model.spec.positions is not None and \
            ids.shape[1] + args.n - 1 > model.spec.positions:
        raise RefError("%d prompt tokens + %d generated exceed n_positions "
                       "%d" % (ids.shape[1], args.n, model.spec.positions))
    gen, margin = model.generate(ids, args.n, args.stop_token or ())
    if args.output:
        try:
            np.save(args.output, gen)
        except OSError as e:
            raise RefError("cannot write %s: %s" % (args.output, e.strerror))
    if args.min_margin_out:
        _write_bytes(args.min_margin_out, b"%.9g\n" % margin)
    print("min_margin=%.6g" % margin)
    for row in gen:
        print(" ".join(str(int(v)) for v in row))


def cmd_gen_ids(args):
    if args.vocab < 1 or args.batch < 1 or args.seq_len < 1:
        raise RefError("--vocab, --batch and --seq-len must be >= 1")
    rng = np.random.default_rng(args.seed)
    ids = rng.integers(0, args.vocab, size=(args.batch, args.seq_len))
    try:
        np.save(args.output, ids.astype("<i4" if args.dtype == "int32"
                                        else "<i8"))
    except OSError as e:
        raise RefError("cannot write %s: %s" % (args.output, e.strerror))


def cmd_run(args):
    cfg = load_config(args.config)
    cfg.skip_masked = args.skip_masked
    cfg.quantize = None
    cfg.rnd = None
    if args.dtype != "f32":
        cfg.rnd = storage_rounding(args.dtype)
    if args.tf32 and args.dtype != "f32":
        raise RefError("--tf32 is for f32 models (--dtype f32)")
    cfg.tf32 = args.tf32
    cfg.quantize, cfg.quantize_activations = _quant_options(args)
    cfg.tp_ranks = args.tensor_parallel
    if cfg.tp_ranks > 1 and cfg.quantize is None:
        raise RefError("--tensor-parallel is for --quantize=int8 or int4 "
                       "(the split changes nothing else)")
    layers = cfg.stack(args.layers)
    weights = load_weights(args.weights)
    if cfg.rnd is not None:
        # The model holds its weights in its type (rounded at load).
        weights = {n: cfg.rnd(v) for n, v in weights.items()}
    for lc in layers:
        for msg in check_weights(lc, weights, args.strict):
            print("blockc_ref: warning: %s" % msg, file=sys.stderr)
    x = load_npy(args.input)
    if x.ndim not in (2, 3) or x.shape[-1] != cfg.d or 0 in x.shape:
        raise RefError("input %s has shape %s, expected [B, T, %d] or "
                       "[T, %d]" % (args.input, list(x.shape), cfg.d, cfg.d))
    rank2 = x.ndim == 2
    x3 = x[None] if rank2 else x
    caches = None
    if args.kv_cache:
        caches = _load_kv_caches(args, cfg, len(layers), x3.shape[0], rank2)
    offset = args.position_offset
    if offset is None:
        offset = caches[0][0].shape[1] if caches else 0
    if offset < 0:
        raise RefError("--position-offset must be >= 0")
    dumps = [] if args.dump else None
    y, kvs = stack_forward(cfg, weights, x3, len(layers), offset, caches,
                           dumps)
    if args.final_norm:
        y = final_norm(cfg, weights, y)
    save_npy(args.output, y[0] if rank2 else y)
    if args.save_kv:
        for j, path in enumerate(args.save_kv):
            c = np.stack([kv[j] for kv in kvs])   # [N, B, S, H_kv, Dh]
            c = c[:, 0] if rank2 else c
            save_npy(path, c[0] if len(layers) == 1 else c)
    if dumps is not None:
        for lc, dump in zip(layers, dumps):
            where = args.dump if len(layers) == 1 else \
                os.path.join(args.dump, "layer%d" % lc.layer)
            os.makedirs(where, exist_ok=True)
            for name, val in dump.items():
                save_npy(os.path.join(where, name + ".npy"), val)


def cmd_compare(args):
    a = load_npy(args.a, "array")
    b = load_npy(args.b, "array")
    tol, rms_tol = args.tol, args.rms_tol
    if args.dtype:
        # docs/Precision.md: one ulp at the output scale (2u) at most, and
        # an RMS error below u / 8 (u = 2^-8 for bf16, 2^-11 for f16): the
        # same rounding points disagree only where f32 accumulation moves a
        # value across a rounding boundary, while a missing or extra
        # rounding point costs about u / sqrt(3) RMS in every element.
        u = STORAGE_UNIT_ROUNDOFF[args.dtype]
        tol = 2 * u if tol is None else tol
        rms_tol = u / 8 if rms_tol is None else rms_tol
    err, scale = compare_arrays(a, b, 1e-4 if tol is None else tol, rms_tol)
    print("max_abs_err=%.6g scale=%.6g ok" % (err, scale))


def cmd_corrupt(args):
    corrupt_safetensors(args.input, args.output, args.mode, args.tensor,
                        args.header_len)


def cmd_npy_corrupt(args):
    corrupt_npy(args.input, args.output, args.mode)


def cmd_drop(args):
    edit_safetensors(args.input, args.output, "drop", args.name)


def cmd_add(args):
    edit_safetensors(args.input, args.output, "add", args.name,
                     parse_shape(args.shape), CLI_DTYPES[args.dtype],
                     args.seed)


def cmd_reshape(args):
    edit_safetensors(args.input, args.output, "reshape", args.name,
                     parse_shape(args.shape))


def cmd_rename(args):
    if bool(args.add_prefix) == bool(args.strip_prefix):
        raise RefError("rename-tensors: give one of --add-prefix and "
                       "--strip-prefix")
    if args.add_prefix:
        edit_safetensors(args.input, args.output, "prefix", args.add_prefix)
    else:
        edit_safetensors(args.input, args.output, "strip", args.strip_prefix)


def cmd_info(args):
    if args.file.endswith(".npy"):
        arr = np.load(args.file, mmap_mode="r", allow_pickle=False)
        print("%s %s" % (arr.dtype.str, list(arr.shape)))
        return
    entries, meta = read_safetensors_raw(args.file, prepared_words=True)
    if meta:
        print("__metadata__ %s" % json.dumps(meta))
    for name, dt, shape, raw in entries:
        print("%s %s %s" % (name, dt, list(shape)))


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 1 on usage errors."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print("%s: error: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(1)


def build_parser():
    ap = _Parser(prog="blockc_ref.py",
                 description="NumPy reference transformer block and file "
                             "tools for blockc tests.")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("gen-weights", help="random weights -> safetensors")
    p.add_argument("--config", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--dtype", choices=sorted(CLI_DTYPES), default="f32")
    p.add_argument("--scale", type=float, default=0.05,
                   help="std of linear weights/biases (default 0.05)")
    p.add_argument("--layers", type=int, default=1, metavar="N",
                   help="write layers layer .. layer+N-1 (default 1)")
    p.add_argument("--final-norm", action="store_true",
                   help="also write the model's final norm (model.norm / "
                        "GPT-2 ln_f)")
    p.add_argument("--scale-tensor", action="append", metavar="SUFFIX=F",
                   help="multiply the tensors whose names end in SUFFIX by "
                        "F (repeatable; e.g. q_proj.weight=100 for large "
                        "attention logits)")
    p.set_defaults(func=cmd_gen_weights)

    p = sub.add_parser("gen-input", help="random float32 input -> .npy")
    p.add_argument("--config", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq-len", type=int, required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--rank2", action="store_true",
                   help="write [T, d] (requires --batch 1)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiply the standard normal input by this")
    p.add_argument("--set", action="append", metavar="B,T,I=VALUE",
                   help="then set x[B, T, I] to VALUE (nan, inf, -inf or a "
                        "number; repeatable)")
    p.set_defaults(func=cmd_gen_input)

    p = sub.add_parser("run", help="compute the block (float64) -> float32")
    p.add_argument("--config", required=True)
    p.add_argument("--weights", required=True,
                   help="a safetensors file or a Hugging Face model folder")
    p.add_argument("--input", required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--position-offset", type=int, default=None,
                   help="RoPE position of the first token (default: kv "
                        "cache length, or 0)")
    p.add_argument("--kv-cache", nargs=2, metavar=("K.npy", "V.npy"),
                   help="past keys (post-RoPE) and values, [B, S0, H_kv, Dh]"
                        " ([S0, H_kv, Dh] for rank-2 input); with --layers"
                        " N > 1 a leading layer axis [N, ...]")
    p.add_argument("--save-kv", nargs=2, metavar=("K.npy", "V.npy"),
                   help="write the full key/value cache after this step "
                        "(same layout as --kv-cache)")
    p.add_argument("--dump", metavar="DIR",
                   help="write named float32 intermediates into DIR")
    p.add_argument("--strict", action="store_true",
                   help="fail on unexpected tensors under the layer prefix")
    p.add_argument("--layers", type=int, default=1, metavar="N",
                   help="apply layers layer .. layer+N-1 in sequence "
                        "(default 1); with N > 1 kv-cache files have a "
                        "leading layer axis and --dump writes DIR/layer<i>/")
    p.add_argument("--final-norm", action="store_true",
                   help="apply the model's final norm (model.norm / GPT-2 "
                        "ln_f) after the last layer")
    p.add_argument("--quantize", choices=("none", "int8", "int4"),
                   default="none",
                   help="compute the projections with dequantised weights "
                        "(the rules of #transformer.weight_quant)")
    p.add_argument("--quantize-activations", choices=("none", "int8"),
                   default="none",
                   help="with --quantize: quantise each projection's input "
                   "per row and run of 32 columns (activations = int8)")
    p.add_argument("--group-size", type=int, default=None,
                   help="int4: input columns per scale (default 32)")
    p.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                   help="with --quantize: quantise o_proj and down_proj per "
                        "block of K / N input columns, as each of N ranks "
                        "does (blockc-run --tensor-parallel=N)")
    p.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="f32",
                   help="the model's element type: weights, input and "
                        "every rounding point of docs/Precision.md in that "
                        "type (float64 in between)")
    p.add_argument("--tf32", action="store_true",
                   help="the projections multiply their input and weight "
                        "rounded to tf32 (blockc -gpu-allow-tf32)")
    p.add_argument("--skip-masked", action="store_true",
                   help="causal attention sums over visible keys only, so a "
                        "NaN/Inf in a later token's value row cannot reach "
                        "earlier rows (blockc's kernels; eager PyTorch "
                        "computes 0 x NaN = NaN there)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("gen-model",
                       help="random Hugging Face model folder (config.json "
                            "+ safetensors, optionally sharded)")
    p.add_argument("--config", required=True,
                   help="a Hugging Face config.json (llama, mistral, qwen2, "
                        "gpt2)")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    p.add_argument("--layers", type=int, default=None, metavar="N",
                   help="layers to write (default: the config's); the "
                        "folder's config.json declares N")
    p.add_argument("--dtype", choices=sorted(CLI_DTYPES), default="f32")
    p.add_argument("--shards", type=int, default=1, metavar="K",
                   help="1: model.safetensors; K > 1: K shards and "
                        "model.safetensors.index.json")
    p.add_argument("--scale", type=float, default=0.15,
                   help="std of linear weights and biases (the layers and "
                        "final norm are gen-weights --final-norm's with "
                        "the same seed and scale)")
    p.add_argument("--embed-scale", type=float, default=0.2,
                   help="std of the embedding and LM head (GPT-2's wpe: a "
                        "tenth of it)")
    p.set_defaults(func=cmd_gen_model)

    def model_options(p):
        p.add_argument("--model", required=True, metavar="DIR",
                       help="a Hugging Face model folder")
        p.add_argument("--ids", required=True, metavar="IDS.npy",
                       help="int32 or int64 token ids [B, T]")
        p.add_argument("--layers", type=int, default=None, metavar="N",
                       help="run the first N layers (default: all)")
        p.add_argument("--dtype", choices=("f32", "bf16", "f16"),
                       default="f32", help="the model's element type")
        p.add_argument("--quantize", choices=("none", "int8", "int4"),
                       default="none", help="weight-only quantisation of "
                                            "the blocks' projections")
        p.add_argument("--quantize-activations", choices=("none", "int8"),
                       default="none")
        p.add_argument("--group-size", type=int, default=None,
                       metavar="G", help="int4 group size (default 32)")
        p.add_argument("--quantize-lm-head", action="store_true",
                       help="quantise the LM head as the projections")
        p.add_argument("--round-logits", action="store_true",
                       help="round the logits to the model's type (as a "
                            "bf16/f16 Hugging Face lm_head does)")

    p = sub.add_parser("forward", help="whole-model logits -> float32 .npy")
    model_options(p)
    p.add_argument("-o", "--output", required=True, metavar="LOGITS.npy")
    p.set_defaults(func=cmd_forward)

    p = sub.add_parser("generate", help="greedy generation -> int32 .npy")
    model_options(p)
    p.add_argument("-n", type=int, required=True, help="tokens to generate")
    p.add_argument("-o", "--output", metavar="GEN.npy")
    p.add_argument("--min-margin-out", metavar="FILE",
                   help="write the smallest top-two logit margin there")
    p.add_argument("--stop-token", type=int, action="append", metavar="ID",
                   help="a row ends at this token (repeatable): it repeats "
                        "it to the end of its row, and generation ends when "
                        "every row has")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("gen-ids", help="random token ids -> .npy")
    p.add_argument("--vocab", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq-len", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--dtype", choices=("int32", "int64"), default="int32")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_gen_ids)

    p = sub.add_parser("compare", help="compare two .npy outputs")
    p.add_argument("a", metavar="A.npy")
    p.add_argument("b", metavar="B.npy", help="reference (sets the scale)")
    p.add_argument("--tol", type=float, default=None,
                   help="max |A - B| / scale (default 1e-4, or the "
                        "--dtype tolerance)")
    p.add_argument("--rms-tol", type=float, default=None,
                   help="root-mean-square |A - B| / scale")
    p.add_argument("--dtype", choices=("bf16", "f16"), default=None,
                   help="the tolerances derived for a model of that type "
                        "(docs/Precision.md)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("corrupt", help="broken safetensors for negative tests")
    p.add_argument("--mode", required=True,
                   choices=["truncate", "bad-header-len", "bad-json",
                            "bad-offsets", "wrong-dtype"])
    p.add_argument("input", metavar="IN.safetensors")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--tensor", help="tensor for bad-offsets/wrong-dtype "
                                    "(default: first in the buffer)")
    p.add_argument("--header-len", type=int,
                   help="value for bad-header-len (default: file size)")
    p.set_defaults(func=cmd_corrupt)

    p = sub.add_parser("npy-corrupt", help="broken .npy for negative tests")
    p.add_argument("--mode", required=True,
                   choices=["truncate", "bad-magic", "wrong-dtype"])
    p.add_argument("input", metavar="IN.npy")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_npy_corrupt)

    p = sub.add_parser("drop-tensor", help="remove one tensor")
    p.add_argument("input", metavar="IN.safetensors")
    p.add_argument("name")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_drop)

    p = sub.add_parser("add-tensor", help="add one random tensor")
    p.add_argument("input", metavar="IN.safetensors")
    p.add_argument("name")
    p.add_argument("--shape", required=True, help="e.g. 3,4")
    p.add_argument("--dtype", choices=sorted(CLI_DTYPES), default="f32")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("reshape-tensor",
                       help="give one tensor a new shape (data cycled/cut)")
    p.add_argument("input", metavar="IN.safetensors")
    p.add_argument("name")
    p.add_argument("--shape", required=True, help="e.g. 3,4")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_reshape)

    p = sub.add_parser("rename-tensors",
                       help="prefix every tensor name, or strip a prefix")
    p.add_argument("input", metavar="IN.safetensors")
    p.add_argument("--add-prefix", default="")
    p.add_argument("--strip-prefix", default="")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_rename)

    p = sub.add_parser("info", help="list tensors / npy shape")
    p.add_argument("file")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("selftest", help="run internal consistency checks")
    p.set_defaults(func=cmd_selftest)
    return ap


# ---------------------------------------------------------------------------
# Self test
# ---------------------------------------------------------------------------

def _loop_block(cfg, w, x, offset=0):
    """Slow per-token/per-head loop version of the pre-norm block, used only
    to cross-check the vectorised code (rope, GQA mapping, mask)."""
    p = cfg.prefix
    bsz, t, _ = x.shape
    dh, grp = cfg.head_dim, cfg.n_heads // cfg.n_kv_heads
    y = np.zeros_like(x)

    def nrm(v, which):
        g = w[p + which + ".weight"]
        if cfg.norm == "rms":
            return v / math.sqrt(sum(e * e for e in v) / len(v)
                                 + cfg.norm_eps) * g
        mu = sum(v) / len(v)
        var = sum((e - mu) ** 2 for e in v) / len(v)
        return (v - mu) / math.sqrt(var + cfg.norm_eps) * g \
            + w[p + which + ".bias"]

    def rot(vec, pos):
        out = vec.copy()
        for i in range(dh // 2):
            ang = pos * cfg.rope_theta ** (-2.0 * i / dh)
            c, s = math.cos(ang), math.sin(ang)
            if cfg.rope == "rotate_half":
                a, b, ia, ib = vec[i], vec[i + dh // 2], i, i + dh // 2
            elif cfg.rope == "interleaved":
                a, b, ia, ib = vec[2 * i], vec[2 * i + 1], 2 * i, 2 * i + 1
            else:
                return out
            out[ia], out[ib] = a * c - b * s, a * s + b * c
        return out

    def lin(name, v):
        wt, b = w[p + name + ".weight"], w.get(p + name + ".bias")
        r = np.array([sum(wt[o, i] * v[i] for i in range(len(v)))
                      for o in range(wt.shape[0])])
        return r if b is None else r + b

    for bi in range(bsz):
        n1 = [nrm(x[bi, ti], "input_layernorm") for ti in range(t)]
        qs = [lin("self_attn.q_proj", n) for n in n1]
        ks = [lin("self_attn.k_proj", n) for n in n1]
        vs = [lin("self_attn.v_proj", n) for n in n1]
        for ti in range(t):
            ctx = []
            for hh in range(cfg.n_heads):
                kvh = hh // grp
                q = rot(qs[ti][hh * dh:(hh + 1) * dh], offset + ti)
                js = range(ti + 1) if cfg.causal else range(t)
                sc = []
                for j in js:
                    k = rot(ks[j][kvh * dh:(kvh + 1) * dh], offset + j)
                    sc.append(sum(q[i] * k[i] for i in range(dh))
                              / math.sqrt(dh))
                m = max(sc)
                e = [math.exp(s - m) for s in sc]
                z = sum(e)
                o = np.zeros(dh)
                for pj, j in zip(e, js):
                    o += pj / z * vs[j][kvh * dh:(kvh + 1) * dh]
                ctx.extend(o)
            h = x[bi, ti] + lin("self_attn.o_proj", np.array(ctx))
            n2 = nrm(h, "post_attention_layernorm")
            up = lin("mlp.up_proj", n2)
            if cfg.gated:
                mid = activation(lin("mlp.gate_proj", n2), cfg.act) * up
            else:
                mid = activation(up, cfg.act)
            y[bi, ti] = h + lin("mlp.down_proj", mid)
    return y


def _selftest_hf_and_stacks(check, expect_error, tmp):
    """Hugging Face config parsing, GPT-2 layout, layer stacks."""
    rng = np.random.default_rng(5)
    llama = {"model_type": "llama", "hidden_size": 32,
             "intermediate_size": 48, "num_attention_heads": 4}
    qwen2 = dict(llama, model_type="qwen2", num_key_value_heads=2,
                 attention_bias=False, mlp_bias=True, use_sliding_window=False,
                 sliding_window=4096, rope_scaling=None, vocab_size=10)
    gpt2 = {"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_inner": 80,
            "n_layer": 4, "activation_function": "gelu_new"}

    # defaults and per-projection biases
    c = Config(llama)
    check((c.norm, c.norm_eps, c.act, c.rope, c.rope_theta, c.gated,
           c.q_bias, c.o_bias, c.mlp_bias, c.prefix, c.max_layers)
          == ("rms", 1e-6, "silu", "rotate_half", 10000.0, True, False,
              False, False, "model.layers.0.", None), "hf llama defaults")
    c = Config(dict(llama, attention_bias=True, mlp_bias=True,
                    hidden_act="gelu_pytorch_tanh", rms_norm_eps=1e-5,
                    num_hidden_layers=2, norm_eps=0.5, layer=7))
    check((c.q_bias, c.o_bias, c.mlp_bias, c.act, c.norm_eps, c.layer,
           c.max_layers) == (True, True, True, "gelu_tanh", 1e-5, 0, 2),
          "hf llama biases, act, rms_norm_eps; blockc keys ignored")
    c = Config(dict(llama, model_type="mistral", attention_bias=True,
                    mlp_bias=True, sliding_window=None))
    check((c.q_bias, c.o_bias, c.mlp_bias) == (True, True, False),
          "hf mistral: attention_bias honoured, mlp_bias ignored")
    c = Config(qwen2)
    names = [n[len(c.prefix):] for n in c.expected_shapes()]
    check((c.q_bias, c.k_bias, c.v_bias, c.o_bias, c.mlp_bias)
          == (True, True, True, False, False)
          and "self_attn.v_proj.bias" in names
          and "self_attn.o_proj.bias" not in names,
          "hf qwen2: q/k/v biases, no o bias, no mlp biases")
    c = Config(dict(qwen2, rope_theta=5.0,
                    rope_parameters={"rope_type": "default",
                                     "rope_theta": 1e6}))
    check(c.rope_theta == 1e6, "hf rope_parameters (transformers v5)")
    c = Config(gpt2)
    check((c.d, c.head_dim, c.d_ff, c.norm, c.norm_eps, c.act, c.rope,
           c.gated, c.o_bias, c.mlp_bias, c.prefix, c.max_layers)
          == (32, 8, 80, "layer", 1e-5, "gelu_tanh", "none", False, True,
              True, "h.0.", 4), "hf gpt2 fields")
    c = Config(dict(gpt2, n_inner=None, activation_function="gelu"))
    check((c.d_ff, c.act) == (128, "gelu"), "hf gpt2 n_inner null -> 4*d")
    check(Config(dict(llama, model_type=None)).model_type is None,
          "model_type null -> blockc format")
    for bad, field in (
            (dict(llama, rope_scaling={"rope_type": "llama3"}),
             "rope_scaling"),
            (dict(qwen2, use_sliding_window=True), "use_sliding_window"),
            (dict(llama, model_type="mistral", sliding_window=4096),
             "sliding_window"),
            (dict(llama, model_type="gemma"), "model_type"),
            (dict(llama, hidden_act="quick_gelu"), "hidden_act"),
            (dict(gpt2, activation_function="gelu_10"),
             "activation_function"),
            (dict(llama, rope_parameters={"rope_type": "yarn"}),
             "rope_parameters.rope_type"),
            (dict(qwen2, layer_types=["sliding_attention"]), "layer_types"),
            (dict(gpt2, n_head=5), "n_head"),
            (dict(gpt2, scale_attn_by_inverse_layer_idx=True),
             "scale_attn_by_inverse_layer_idx"),
            ({"model_type": "gpt2", "n_head": 4}, "n_embd")):
        try:
            Config(bad)
            check(False, "config error naming %s (no error raised)" % field)
        except RefError as e:
            check(field in str(e), "config error naming %s -> %s"
                  % (field, e))
    expect_error(lambda: Config(gpt2).stack(5), "--layers > n_layer")

    # GPT-2 and Qwen2 blocks vs the per-token loop; GPT-2 vs the same block
    # spelled as a blockc config with transposed / split weights.
    for raw in (gpt2, qwen2):
        cfg = Config(raw)
        w = {k: v.astype(np.float64)
             for k, v in gen_weights(cfg, 11, 0.2).items()}
        cw = block_weights(cfg, w)
        x = rng.standard_normal((2, 5, cfg.d))
        y, _ = block_forward(cfg, cw, x, 2)
        err = float(np.abs(y - _loop_block(cfg, cw, x, 2)).max())
        check(err < 1e-12, "%s: vectorised vs loop err %.2e"
              % (raw["model_type"], err))
    cfg = Config(gpt2)
    w = {k: v.astype(np.float64) for k, v in gen_weights(cfg, 3).items()}
    eq = Config({"hidden_size": 32, "num_attention_heads": 4,
                 "intermediate_size": 80, "norm": "layer", "norm_eps": 1e-5,
                 "gated": False, "rope": "none", "hidden_act": "gelu_tanh",
                 "attention_bias": True, "mlp_bias": True})
    p, d = "h.0.", 32
    wc, bc = w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]
    ew = {}
    for src, dst in (("ln_1", "input_layernorm"),
                     ("ln_2", "post_attention_layernorm")):
        for s in (".weight", ".bias"):
            ew[eq.prefix + dst + s] = w[p + src + s]
    for j, n in enumerate("qkv"):
        ew[eq.prefix + "self_attn.%s_proj.weight" % n] = \
            np.ascontiguousarray(wc[:, j * d:(j + 1) * d].T)
        ew[eq.prefix + "self_attn.%s_proj.bias" % n] = bc[j * d:(j + 1) * d]
    for src, dst in (("attn.c_proj", "self_attn.o_proj"),
                     ("mlp.c_fc", "mlp.up_proj"),
                     ("mlp.c_proj", "mlp.down_proj")):
        ew[eq.prefix + dst + ".weight"] = w[p + src + ".weight"].T.copy()
        ew[eq.prefix + dst + ".bias"] = w[p + src + ".bias"]
    check(not check_weights(eq, ew), "gpt2 -> blockc weight mapping complete")
    x = rng.standard_normal((2, 6, 32))
    a, _ = stack_forward(cfg, w, x)
    b, _ = block_forward(eq, ew, x)
    check(np.abs(a - b).max() < 1e-12, "gpt2 == equivalent blockc config "
          "(err %.2e)" % np.abs(a - b).max())
    w[p + "attn.bias"] = np.ones((1, 1, 8, 8))
    check(not check_weights(cfg, w, True), "gpt2 attn.bias buffer ignored")

    # stacks: sequence of layers, weight stream, stacked kv cache
    for raw in (gpt2, qwen2, {"hidden_size": 24, "num_attention_heads": 4,
                              "intermediate_size": 40, "layer": 2}):
        cfg = Config(raw)
        w3 = gen_weights(cfg, 9, 0.2, n_layers=3)
        w1 = gen_weights(cfg, 9, 0.2)
        check(all(np.array_equal(w3[n], w1[n]) for n in w1)
              and len(w3) == 3 * len(w1),
              "%s: gen_weights layer 0 independent of --layers"
              % cfg.prefix)
        x = rng.standard_normal((2, 7, cfg.d))
        y, _ = stack_forward(cfg, w3, x, 3, 4)
        seq = x
        for i in range(3):
            lc = cfg.for_layer(cfg.layer + i)
            seq, _ = block_forward(lc, block_weights(lc, w3), seq, 4)
        check(np.abs(y - seq).max() == 0.0, "%s: 3-layer stack == layers "
              "in sequence" % cfg.prefix)
        _, kvs = stack_forward(cfg, w3, x[:, :4], 3)
        part, _ = stack_forward(cfg, w3, x[:, 4:], 3, 4, kvs)
        full, _ = stack_forward(cfg, w3, x, 3)
        err = float(np.abs(full[:, 4:] - part).max())
        check(err < 1e-12, "%s: stacked kv-cache step err %.2e"
              % (cfg.prefix, err))

    # the CLI: --layers for gen-weights / run, stacked cache files, dumps
    cpath = os.path.join(tmp, "gpt2.json")
    with open(cpath, "w") as f:
        json.dump(gpt2, f)
    j = lambda name: os.path.join(tmp, name)  # noqa: E731
    x = rng.standard_normal((6, 32))
    save_npy(j("x.npy"), x)
    save_npy(j("xa.npy"), x[:4])
    save_npy(j("xb.npy"), x[4:])
    steps = [
        ["gen-weights", "--config", cpath, "--seed", "1", "--layers", "2",
         "-o", j("w2.st")],
        ["run", "--config", cpath, "--weights", j("w2.st"), "--input",
         j("x.npy"), "-o", j("y.npy"), "--layers", "2", "--dump", j("dd")],
        ["run", "--config", cpath, "--weights", j("w2.st"), "--input",
         j("xa.npy"), "-o", j("ya.npy"), "--layers", "2", "--save-kv",
         j("k.npy"), j("v.npy")],
        ["run", "--config", cpath, "--weights", j("w2.st"), "--input",
         j("xb.npy"), "-o", j("yb.npy"), "--layers", "2", "--kv-cache",
         j("k.npy"), j("v.npy")]]
    check(all(main(s) == 0 for s in steps), "CLI --layers 2 round trip")
    y = load_npy(j("y.npy"))
    check(load_npy(j("k.npy")).shape == (2, 4, 4, 8)
          and np.abs(load_npy(j("yb.npy")) - y[4:]).max() < 1e-6
          and np.abs(load_npy(j("dd/layer1/y.npy")) - y).max() == 0.0,
          "CLI stacked cache [N, S, H_kv, Dh] and DIR/layer<i>/ dumps")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(steps[3][:-2] + [j("xb.npy"), j("xb.npy")])
    check(rc == 1, "CLI rejects a cache without the layer axis -> %s"
          % err.getvalue().strip())


def _selftest_models(check, expect_error, tmp):
    """Whole models: folders (single file and sharded, f32 and bf16), the
    forward against an incremental KV-cache formulation, greedy
    generation, tied heads, folder errors and the CLI."""
    j = lambda *p: os.path.join(tmp, *p)  # noqa: E731
    tiny = {"llama": {"model_type": "llama", "vocab_size": 97,
                      "hidden_size": 32, "intermediate_size": 48,
                      "num_attention_heads": 4, "num_key_value_heads": 2,
                      "num_hidden_layers": 3, "rms_norm_eps": 1e-5},
            "qwen2": {"model_type": "qwen2", "vocab_size": 89,
                      "hidden_size": 32, "intermediate_size": 40,
                      "num_attention_heads": 4, "num_key_value_heads": 1,
                      "num_hidden_layers": 2, "tie_word_embeddings": True},
            "gpt2": {"model_type": "gpt2", "vocab_size": 83, "n_embd": 32,
                     "n_head": 4, "n_layer": 2, "n_positions": 24}}
    rng = np.random.default_rng(11)
    for name, raw in tiny.items():
        cfg = Config(raw)
        spec = ModelSpec(raw, cfg)
        w = gen_model_weights(cfg, spec, 3, spec.n_layers)
        blocks = gen_weights(cfg, 3, 0.15, spec.n_layers, True)
        check(all(np.array_equal(w[n], v) for n, v in blocks.items()),
              "%s: gen-model layers are gen-weights --final-norm's" % name)
        check(("lm_head.weight" in w) == (name == "llama"),
              "%s: lm_head.weight only when not tied" % name)
        folders = []
        for k in (1, 2, 3):
            folders.append(j("%s-%d" % (name, k)))
            write_model_dir(folders[-1], raw, spec.n_layers, w, "F32", k)
        ids = rng.integers(0, spec.vocab, size=(2, 7))
        logits = [Model(f).forward(ids) for f in folders]
        check(all(np.array_equal(logits[0], lg) for lg in logits[1:]),
              "%s: 1, 2 and 3 shards give identical logits" % name)
        with open(j("%s-2" % name, INDEX_FILE)) as f:
            index = json.load(f)
        check(len(set(index["weight_map"].values())) == 2
              and index["metadata"]["total_size"]
              == 4 * sum(v.size for v in w.values()),
              "%s: index of 2 shards, total_size in bytes" % name)

        # Independent formulation: the tokens one at a time through the
        # blocks' KV caches (positions as offsets), the embedding looked up
        # row by row, the head a plain dot product per vocabulary entry.
        m = Model(folders[1])
        wf = m.weights
        head = wf["lm_head.weight" if name == "llama"
                  else spec.embed_name]
        caches = None
        step = []
        for t in range(ids.shape[1]):
            x = np.stack([wf[spec.embed_name][int(ids[b, t])]
                          for b in range(ids.shape[0])])[:, None]
            if spec.positions is not None:
                x = x + wf["wpe.weight"][t]
            y, caches = stack_forward(cfg, wf, x, spec.n_layers, t, caches)
            y = final_norm(cfg, wf, y)[:, 0]
            step.append(np.stack([[np.dot(y[b], head[v])
                                   for v in range(spec.vocab)]
                                  for b in range(ids.shape[0])]))
        err = float(np.abs(np.stack(step, axis=1) - logits[0]).max())
        check(err < 1e-9, "%s: forward vs token-by-token KV cache err %.2e"
              % (name, err))
        gen, margin = m.generate(ids, 5)
        seq = ids.copy()
        for t in range(5):
            lg = m.forward(seq)[:, -1]
            seq = np.concatenate([seq, lg.argmax(-1)[:, None]], axis=1)
        check(gen.dtype == np.int32 and np.array_equal(gen, seq[:, -5:])
              and margin > 0, "%s: greedy generation, margin %.3g"
              % (name, margin))
        # Stop tokens: row 0 stops at its second token, which it repeats;
        # row 1 runs on. Then both stop: generation ends early.
        stop = int(gen[0, 1])
        gs, _ = m.generate(ids, 5, [stop])
        first1 = [t for t in range(5) if gen[1, t] == stop]
        end1 = first1[0] + 1 if first1 else 5
        check(np.array_equal(gs[0], [gen[0, 0]] + [stop] * (gs.shape[1] - 1))
              and gs.shape[1] == max(2, end1)
              and np.array_equal(gs[1, :end1], gen[1, :end1]),
              "%s: --stop-token %d ends row 0 (repeated), %d steps"
              % (name, stop, gs.shape[1]))
        gall, _ = m.generate(ids, 5, [int(gen[0, 0]), int(gen[1, 0])])
        check(gall.shape == (2, 1) and np.array_equal(gall[:, 0], gen[:, 0]),
              "%s: every row stopped after one token" % name)
        ids2 = ids.copy()
        ids2[:, -1] = (ids2[:, -1] + 1) % spec.vocab
        check(np.array_equal(m.forward(ids2)[:, :-1], logits[0][:, :-1]),
              "%s: causal (the last id changes only the last logits)" % name)

        # bf16: the folder as stored, computed with the model's rounding
        # points, agrees with the same weights computed in f32.
        write_model_dir(j(name + "-bf16"), raw, spec.n_layers, w, "BF16", 2)
        a = Model(j(name + "-bf16")).forward(ids)
        b = Model(j(name + "-bf16"), "bf16").forward(ids)
        rel = float(np.abs(a - b).max() / np.abs(a).max())
        check(0 < rel < 0.05 and np.array_equal(
            a, Model(j(name + "-bf16"), "f32").forward(ids)),
            "%s: bf16 model vs f32 on bf16 weights rel err %.3g"
            % (name, rel))

    # Fewer layers than the checkpoint, and the folder's errors.
    m = Model(j("llama-2"), n_layers=2)
    check(m.forward(np.zeros((1, 3), dtype=np.int64)).shape == (1, 3, 97),
          "a 3-layer folder runs its first 2 layers")
    expect_error(lambda: Model(j("llama-2"), n_layers=4), "--layers 4 > 3")
    bad = j("bad")
    import shutil
    for case in ("missing-shard", "absent-tensor", "malformed", "no-index",
                 "missing-tensor"):
        shutil.rmtree(bad, ignore_errors=True)
        shutil.copytree(j("llama-2"), bad)
        index = json.load(open(os.path.join(bad, INDEX_FILE)))
        if case == "missing-shard":
            os.remove(os.path.join(bad, shard_name(1, 2)))
        elif case == "absent-tensor":
            index["weight_map"]["model.norm.weight"] = shard_name(0, 2)
        elif case == "malformed":
            index = {"weight_map": ["model.norm.weight"]}
        elif case == "no-index":
            os.remove(os.path.join(bad, INDEX_FILE))
        else:
            del index["weight_map"]["model.norm.weight"]
        if case != "no-index":
            with open(os.path.join(bad, INDEX_FILE), "w") as f:
                json.dump(index, f)
        expect_error(lambda: Model(bad), "folder with " + case)
    check(load_ids_ok(j, "i4") and load_ids_ok(j, "i8"),
          "int32 and int64 ids")
    np.save(j("f.npy"), np.zeros((1, 2), dtype=np.float32))
    expect_error(lambda: load_ids(j("f.npy")), "float ids")
    np.save(j("big.npy"), np.full((1, 2), 97, dtype=np.int32))
    expect_error(lambda: load_ids(j("big.npy"), 97), "id >= vocab")
    expect_error(lambda: Model(j("gpt2-1")).forward(
        np.zeros((1, 25), dtype=np.int64)), "gpt2 beyond n_positions")

    # CLI: gen-model, gen-ids, forward, generate.
    with open(j("q.json"), "w") as f:
        json.dump(tiny["qwen2"], f)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(err):
        rcs = [main(["gen-model", "--config", j("q.json"), "--seed", "3",
                     "--layers", "1", "--dtype", "bf16", "--shards", "2",
                     "-o", j("cli")]),
               main(["gen-ids", "--vocab", "89", "--batch", "2",
                     "--seq-len", "4", "--seed", "1", "--dtype", "int64",
                     "-o", j("ids.npy")]),
               main(["forward", "--model", j("cli"), "--ids", j("ids.npy"),
                     "--dtype", "bf16", "--quantize", "int8",
                     "--quantize-lm-head", "-o", j("lg.npy")]),
               main(["generate", "--model", j("cli"), "--ids",
                     j("ids.npy"), "-n", "3", "-o", j("gen.npy"),
                     "--min-margin-out", j("margin.txt")])]
    conf = json.load(open(j("cli", "config.json")))
    gen = np.load(j("gen.npy"))
    check(rcs == [0, 0, 0, 0] and conf["num_hidden_layers"] == 1
          and np.load(j("ids.npy")).dtype == np.int64
          and np.load(j("lg.npy")).shape == (2, 4, 89)
          and gen.dtype == np.int32 and gen.shape == (2, 3)
          and "min_margin=" in out.getvalue()
          and float(open(j("margin.txt")).read()) > 0,
          "CLI gen-model/gen-ids/forward/generate %s %s"
          % (rcs, err.getvalue().strip()))


def load_ids_ok(j, kind):
    path = j("ids-%s.npy" % kind)
    np.save(path, np.arange(6).reshape(2, 3).astype("<" + kind))
    return np.array_equal(load_ids(path, 6), np.arange(6).reshape(2, 3))


def cmd_selftest(args):
    import tempfile
    failures = []

    def check(cond, what):
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        if not cond:
            failures.append(what)

    def expect_error(fn, what):
        try:
            fn()
        except RefError as e:
            check(True, "%s -> %s" % (what, e))
            return
        check(False, what + " (no error raised)")

    # bf16 rounding: ties to even, NaN/inf preserved, overflow -> inf
    one = np.float32(1.0)
    vals = np.array([1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, -2.5, np.inf,
                     np.nan, 3.4e38], dtype=np.float32)
    back = bf16_bits_to_f32(f32_to_bf16_bits(vals))
    check(back[0] == one and back[1] == np.float32(1 + 2.0 ** -6)
          and back[2] == -2.5 and np.isposinf(back[3]) and np.isnan(back[4])
          and np.isposinf(back[5]), "bf16 round-to-nearest-even")

    base = {"hidden_size": 24, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 40}
    variants = [
        {},
        {"rope": "interleaved", "num_key_value_heads": 1},
        {"rope": "none", "causal": False, "gated": False,
         "hidden_act": "gelu"},
        {"norm": "layer", "attention_bias": True, "mlp_bias": True,
         "hidden_act": "gelu_tanh", "layer": 3},
        {"hidden_act": "relu", "num_key_value_heads": 4, "head_dim": 8,
         "rope_theta": 500000.0},
    ]
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        for vi, extra in enumerate(variants):
            cfg = Config(dict(base, **extra))
            w = {k: v.astype(np.float64) for k, v in
                 gen_weights(cfg, vi, 0.2).items()}
            x = rng.standard_normal((2, 5, cfg.d))
            y, _ = block_forward(cfg, w, x, 3)
            ref = _loop_block(cfg, w, x, 3)
            err = float(np.abs(y - ref).max())
            check(err < 1e-12, "variant %d %s: vectorised vs loop err %.2e"
                  % (vi, extra, err))
            # kv cache: prefix + cached step == full sequence
            full, _ = block_forward(cfg, w, x)
            _, kv = block_forward(cfg, w, x[:, :3])
            part, _ = block_forward(cfg, w, x[:, 3:], 3, kv)
            err = float(np.abs(full[:, 3:] - part).max())
            check(err < 1e-12, "variant %d: kv-cache step err %.2e"
                  % (vi, err))
            # causality: changing the last token leaves earlier ones alone
            x2 = x.copy()
            x2[:, -1] += 1.0
            y2, _ = block_forward(cfg, w, x2)
            same = np.abs(y2[:, :-1] - full[:, :-1]).max() < 1e-14
            check(same == cfg.causal, "variant %d: causal=%s respected"
                  % (vi, cfg.causal))
            # post-norm runs and differs from pre-norm
            cpost = Config(dict(base, norm_placement="post", **extra))
            yp, _ = block_forward(cpost, w, x)
            check(np.isfinite(yp).all() and np.abs(yp - full).max() > 1e-3,
                  "variant %d: post-norm differs from pre-norm" % vi)

        # RoPE is relative: without a cache, the offset cancels out
        cfg = Config(base)
        w = gen_weights(cfg, 7, 0.2)
        x = rng.standard_normal((1, 6, cfg.d))
        a, _ = block_forward(cfg, w, x, 0)
        b, _ = block_forward(cfg, w, x, 1000)
        check(np.abs(a - b).max() < 1e-9,
              "RoPE offset invariance %.2e" % np.abs(a - b).max())
        # post-norm semantics spelled out
        cp = Config(dict(base, norm_placement="post", norm="layer"))
        wp = {k: v.astype(np.float64) for k, v in gen_weights(cp, 3).items()}
        yp, _ = block_forward(cp, wp, x)
        at, _ = attention(cp, wp, x)
        hh = layer_norm(x + at, wp[cp.prefix + "input_layernorm.weight"],
                        wp[cp.prefix + "input_layernorm.bias"], cp.norm_eps)
        ex = layer_norm(hh + ffn(cp, wp, hh),
                        wp[cp.prefix + "post_attention_layernorm.weight"],
                        wp[cp.prefix + "post_attention_layernorm.bias"],
                        cp.norm_eps)
        check(np.abs(yp - ex).max() == 0.0, "post-norm formula")

        # safetensors round trips and negative files
        path = os.path.join(tmp, "w.safetensors")
        for dt in ("F32", "F16", "BF16"):
            write_safetensors(path, [(n, dt, v.shape, encode_tensor(v, dt))
                                     for n, v in w.items()])
            got = load_safetensors(path)
            tol = {"F32": 0, "F16": 1e-3, "BF16": 8e-3}[dt]
            err = max(float(np.abs(got[n] - w[n]).max()) for n in w)
            check(set(got) == set(w) and err <= tol,
                  "safetensors %s round trip err %.2e" % (dt, err))
        write_safetensors(path, [(n, "F32", v.shape, encode_tensor(v, "F32"))
                                 for n, v in w.items()], {"format": "pt"})
        bad = os.path.join(tmp, "bad.safetensors")
        for mode in ("truncate", "bad-header-len", "bad-json", "bad-offsets",
                     "wrong-dtype"):
            corrupt_safetensors(path, bad, mode)
            expect_error(lambda: load_safetensors(bad), "corrupt " + mode)
        corrupt_safetensors(path, bad, "bad-header-len",
                            header_len=2 ** 64 - 1)
        expect_error(lambda: load_safetensors(bad), "header len 2^64-1")
        qn = cfg.prefix + "self_attn.q_proj.weight"
        edit_safetensors(path, bad, "drop", qn)
        expect_error(lambda: check_weights(cfg, load_safetensors(bad)),
                     "drop-tensor")
        edit_safetensors(path, bad, "reshape", qn, (cfg.d + 1, cfg.d))
        expect_error(lambda: check_weights(cfg, load_safetensors(bad)),
                     "reshape-tensor")
        edit_safetensors(path, bad, "add", cfg.prefix + "extra.weight", (3,))
        check(len(check_weights(cfg, load_safetensors(bad))) == 1,
              "add-tensor warns")
        expect_error(lambda: check_weights(cfg, load_safetensors(bad), True),
                     "add-tensor --strict")

        npy = os.path.join(tmp, "x.npy")
        save_npy(npy, x)
        for mode in ("truncate", "bad-magic", "wrong-dtype"):
            corrupt_npy(npy, bad, mode)
            expect_error(lambda: load_npy(bad), "npy-corrupt " + mode)

        _selftest_hf_and_stacks(check, expect_error, tmp)
        _selftest_models(check, expect_error, tmp)

    # compare
    a = np.array([1.0, 2.0, np.nan])
    expect_error(lambda: compare_arrays(a, np.array([1.0, 2.0, 3.0]), 1e-4),
                 "compare NaN mismatch")
    check(compare_arrays(a, a + 1e-5, 1e-4)[0] <= 1.1e-5,
          "compare NaN at same places")
    expect_error(lambda: compare_arrays(np.zeros(3), np.zeros(4), 1e-4),
                 "compare shape mismatch")
    check(compare_arrays(np.array([500.04]), np.array([500.0]), 1e-4)[1]
          == 500.0, "compare relative scale")
    expect_error(lambda: compare_arrays(np.array([0.0002]), np.array([0.0]),
                                        1e-4), "compare absolute floor")

    if failures:
        raise RefError("%d selftest check(s) failed" % len(failures))
    print("selftest: all checks passed")


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except RefError as e:
        print("blockc_ref: error: %s" % e, file=sys.stderr)
        return 1
    except (OSError, ValueError, MemoryError) as e:
        print("blockc_ref: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
