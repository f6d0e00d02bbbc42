#!/usr/bin/python3
"""Cross-check blockc_ref.py against an independent PyTorch implementation.

The core configs (MHA, GQA, MQA) use the reference PyTorch ``Block`` from the
course notes (RMSNorm + GQA + RoPE + SwiGLU) nearly verbatim; the only change
is that torch 1.13 has no ``F.scaled_dot_product_attention``, so attention is
written out explicitly.  Further configs (interleaved RoPE, LayerNorm, GELU,
biases, post-norm, non-causal, KV cache, f16/bf16 weights) use a small generic
block built from torch built-ins (F.layer_norm, F.gelu, view_as_complex, ...).

Hugging Face config.json cases (qwen2, llama, mistral, gpt2, 1-3 layers,
KV-cache decode of a stack) use torch modules written after the transformers
modeling code (names, Conv1D, rotary, eager attention), loaded with a strict
load_state_dict from the generated safetensors.

Whole causal LMs (llama with its own head, qwen2 and gpt2 tied) come from
``blockc_ref.py gen-model`` as 2-shard Hugging Face folders; the logits of
``forward`` and the tokens of ``generate`` are checked against a torch
CausalLM (embedding, the layers above, final norm, tied nn.Linear head).

Weights and inputs are produced by ``blockc_ref.py gen-weights/gen-input``,
the reference output by ``blockc_ref.py run`` (all via the CLI), and the
safetensors file is parsed here independently.  Each torch forward is done in
float64 and float32; both must match the reference to 1e-5 of the output
scale (max_abs_err <= 1e-5 * max(1, max|ref|)).

Prints ``SKIP: torch not available`` and exits 0 when torch is missing.
"""

import json
import math
import os
import struct
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError:
    print("SKIP: torch not available")
    sys.exit(0)

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "blockc_ref.py")
TOL = 1e-5


# --- reference PyTorch block from the notes (attention made explicit) ------

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.g = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        rms = x.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt()
        return x * rms * self.g


class SwiGLUFFN(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.w_gate = nn.Linear(d, d_ff, bias=False)
        self.w_up = nn.Linear(d, d_ff, bias=False)
        self.w_down = nn.Linear(d_ff, d, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


def scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=False):
    """Explicit stand-in for torch>=2.0 F.scaled_dot_product_attention."""
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if is_causal:
        L, S = q.size(-2), k.size(-2)
        keep = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        s = s.masked_fill(~keep, float("-inf"))
    elif attn_mask is not None:
        s = s + attn_mask
    return torch.softmax(s, dim=-1) @ v


class GQAAttention(nn.Module):
    def __init__(self, d, n_heads, n_kv_heads, d_head):
        super().__init__()
        self.h, self.h_kv, self.dh = n_heads, n_kv_heads, d_head
        self.w_q = nn.Linear(d, n_heads * d_head, bias=False)
        self.w_k = nn.Linear(d, n_kv_heads * d_head, bias=False)
        self.w_v = nn.Linear(d, n_kv_heads * d_head, bias=False)
        self.w_o = nn.Linear(n_heads * d_head, d, bias=False)

    def forward(self, x, rope, mask):
        B, L, _ = x.shape
        q = self.w_q(x).view(B, L, self.h, self.dh)
        k = self.w_k(x).view(B, L, self.h_kv, self.dh)
        v = self.w_v(x).view(B, L, self.h_kv, self.dh)
        q, k = rope(q), rope(k)
        k = k.repeat_interleave(self.h // self.h_kv, dim=2)
        v = v.repeat_interleave(self.h // self.h_kv, dim=2)
        q = q.transpose(1, 2)
        k = k.transpose(1, 2)
        v = v.transpose(1, 2)
        attn = scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                            is_causal=mask is None)
        return self.w_o(attn.transpose(1, 2).reshape(B, L, -1))


class Block(nn.Module):
    def __init__(self, d, n_h, n_kv, dh, d_ff):
        super().__init__()
        self.norm1 = RMSNorm(d)
        self.attn = GQAAttention(d, n_h, n_kv, dh)
        self.norm2 = RMSNorm(d)
        self.ffn = SwiGLUFFN(d, d_ff)

    def forward(self, x, rope, mask=None):
        x = x + self.attn(self.norm1(x), rope, mask)
        x = x + self.ffn(self.norm2(x))
        return x


def hf_rope(theta, offset=0):
    """HF Llama rotate_half RoPE for tensors [B, L, heads, Dh]."""
    def rope(x):
        L, dh = x.shape[1], x.shape[-1]
        inv_freq = 1.0 / (theta ** (torch.arange(0, dh, 2, dtype=torch.float64)
                                    / dh))
        pos = torch.arange(offset, offset + L, dtype=torch.float64)
        freqs = torch.outer(pos, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos().to(x.dtype)[None, :, None, :]
        sin = emb.sin().to(x.dtype)[None, :, None, :]
        x1, x2 = x[..., :dh // 2], x[..., dh // 2:]
        rot = torch.cat((-x2, x1), dim=-1)
        return x * cos + rot * sin
    return rope


def meta_rope(theta, offset=0):
    """Meta/GPT-J interleaved RoPE via complex multiplication."""
    def rope(x):
        L, dh = x.shape[1], x.shape[-1]
        inv_freq = 1.0 / (theta ** (torch.arange(0, dh, 2, dtype=torch.float64)
                                    / dh))
        pos = torch.arange(offset, offset + L, dtype=torch.float64)
        cis = torch.polar(torch.ones(L, dh // 2, dtype=torch.float64),
                          torch.outer(pos, inv_freq))
        xc = torch.view_as_complex(
            x.to(torch.float64).reshape(*x.shape[:-1], dh // 2, 2))
        out = torch.view_as_real(xc * cis[None, :, None, :]).flatten(-2)
        return out.to(x.dtype)
    return rope


# --- generic block from torch built-ins, for the other config options -----

def generic_block(cfg, w, x, dtype):
    """Functional block in the given dtype; weights w: {name: tensor}."""
    p = "model.layers.%d." % cfg.get("layer", 0)
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh = cfg.get("head_dim", d // H)
    eps = cfg.get("norm_eps", 1e-6)
    theta = cfg.get("rope_theta", 10000.0)

    def t(name):
        return w[p + name].to(dtype) if p + name in w else None

    def lin(name, v):
        return F.linear(v, t(name + ".weight"), t(name + ".bias"))

    def norm(name, v):
        if cfg.get("norm", "rms") == "layer":
            return F.layer_norm(v, (d,), t(name + ".weight"),
                                t(name + ".bias"), eps)
        return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) \
            * t(name + ".weight")

    def act(v):
        a = cfg.get("hidden_act", "silu")
        return {"silu": F.silu, "relu": F.relu,
                "gelu": lambda u: F.gelu(u),
                "gelu_tanh": lambda u: F.gelu(u, approximate="tanh")}[a](v)

    rope = {"rotate_half": hf_rope(theta), "interleaved": meta_rope(theta),
            "none": lambda v: v}[cfg.get("rope", "rotate_half")]

    def attn(v):
        B, L, _ = v.shape
        q = rope(lin("self_attn.q_proj", v).view(B, L, H, dh))
        k = rope(lin("self_attn.k_proj", v).view(B, L, Hkv, dh))
        vv = lin("self_attn.v_proj", v).view(B, L, Hkv, dh)
        k = k.repeat_interleave(H // Hkv, dim=2)
        vv = vv.repeat_interleave(H // Hkv, dim=2)
        o = scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), vv.transpose(1, 2),
            is_causal=cfg.get("causal", True))
        return lin("self_attn.o_proj", o.transpose(1, 2).reshape(B, L, -1))

    def ffn(v):
        if cfg.get("gated", True):
            hmid = act(lin("mlp.gate_proj", v)) * lin("mlp.up_proj", v)
        else:
            hmid = act(lin("mlp.up_proj", v))
        return lin("mlp.down_proj", hmid)

    x = x.to(dtype)
    if cfg.get("norm_placement", "pre") == "pre":
        h = x + attn(norm("input_layernorm", x))
        return h + ffn(norm("post_attention_layernorm", h))
    h = norm("input_layernorm", x + attn(x))
    return norm("post_attention_layernorm", h + ffn(h))


# --- Hugging Face-style modules (transformers modeling conventions) --------
#
# transformers is not installed, so these follow modeling_llama / _mistral /
# _qwen2 / _gpt2 by hand, with the same module and parameter names, so that
# each layer loads the file's tensors (prefix stripped) with a strict
# load_state_dict.  HF upcasts RMSNorm, softmax and the RoPE angles to
# float32; here the upcast target is float32 or the run dtype if wider, so
# the float32 run follows HF and the float64 run is a tight semantic check.

def _acc(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


class NewGELUActivation(nn.Module):
    """transformers.activations.NewGELUActivation (gelu_new)."""

    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(
            math.sqrt(2.0 / math.pi) * (input + 0.044715
                                        * torch.pow(input, 3.0))))


class PytorchGELUTanh(nn.Module):
    """transformers.activations.PytorchGELUTanh (gelu_pytorch_tanh)."""

    def forward(self, input):
        return F.gelu(input, approximate="tanh")


ACT2FN = {"silu": nn.SiLU, "swish": nn.SiLU, "gelu": nn.GELU,
          "gelu_new": NewGELUActivation,
          "gelu_pytorch_tanh": PytorchGELUTanh, "relu": nn.ReLU}


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(_acc(input_dtype))
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance
                                                    + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaRotaryEmbedding(nn.Module):
    """Default rope_type: inv_freq = 1 / base^(2i/dim)."""

    def __init__(self, dim, base, dtype):
        super().__init__()
        acc = _acc(dtype)
        self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2,
                                                     dtype=torch.int64)
                                        .to(acc) / dim))

    def forward(self, x, position_ids):
        acc = self.inv_freq.dtype
        inv_freq_expanded = self.inv_freq[None, :, None].expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].to(acc)
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), \
        (k * cos) + (rotate_half(k) * sin)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen,
                                 head_dim)


def eager_attention_forward(module, query, key, value, attention_mask,
                            scaling):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = F.softmax(attn_weights, dim=-1,
                             dtype=_acc(query.dtype)).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    return attn_output.transpose(1, 2).contiguous()


def hf_biases(config):
    """Which projections have biases, per model_type (as in transformers:
    Qwen2Attention hard-codes q/k/v bias=True, o_proj bias=False)."""
    mt = config["model_type"]
    if mt == "qwen2":
        return dict(q=True, k=True, v=True, o=False, mlp=False)
    ab = bool(config.get("attention_bias") or False)
    mlp = bool(config.get("mlp_bias") or False) if mt == "llama" else False
    return dict(q=ab, k=ab, v=ab, o=ab, mlp=mlp)


class LlamaAttention(nn.Module):
    """LlamaAttention / MistralAttention / Qwen2Attention (eager)."""

    def __init__(self, config):
        super().__init__()
        d, h = config["hidden_size"], config["num_attention_heads"]
        hkv = config.get("num_key_value_heads") or h
        self.head_dim = config.get("head_dim") or d // h
        self.num_key_value_groups = h // hkv
        self.scaling = self.head_dim ** -0.5
        b = hf_biases(config)
        self.q_proj = nn.Linear(d, h * self.head_dim, bias=b["q"])
        self.k_proj = nn.Linear(d, hkv * self.head_dim, bias=b["k"])
        self.v_proj = nn.Linear(d, hkv * self.head_dim, bias=b["v"])
        self.o_proj = nn.Linear(h * self.head_dim, d, bias=b["o"])

    def forward(self, hidden_states, position_embeddings, attention_mask,
                past_key_value=None):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape) \
            .transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape) \
            .transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape) \
            .transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(
            query_states, key_states, cos, sin)
        if past_key_value is not None:   # DynamicCache.update: cat on seq
            key_states = torch.cat([past_key_value[0], key_states], dim=-2)
            value_states = torch.cat([past_key_value[1], value_states],
                                     dim=-2)
        attn_output = eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output), (key_states, value_states)


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        d, ff = config["hidden_size"], config["intermediate_size"]
        bias = hf_biases(config)["mlp"]
        self.gate_proj = nn.Linear(d, ff, bias=bias)
        self.up_proj = nn.Linear(d, ff, bias=bias)
        self.down_proj = nn.Linear(ff, d, bias=bias)
        self.act_fn = ACT2FN[config.get("hidden_act") or "silu"]()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x))
                              * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config["hidden_size"]
        eps = config.get("rms_norm_eps", 1e-6)
        self.self_attn = LlamaAttention(config)
        self.mlp = LlamaMLP(config)
        self.input_layernorm = LlamaRMSNorm(d, eps)
        self.post_attention_layernorm = LlamaRMSNorm(d, eps)

    def forward(self, hidden_states, attention_mask, position_embeddings,
                past_key_value=None):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, present = self.self_attn(
            hidden_states, position_embeddings, attention_mask,
            past_key_value)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states, present


class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: weight [nx, nf], y = x W + b."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self, config, max_positions=1024):
        super().__init__()
        self.register_buffer(
            "bias", torch.tril(torch.ones((max_positions, max_positions),
                                          dtype=torch.bool))
            .view(1, 1, max_positions, max_positions), persistent=False)
        self.embed_dim = config["n_embd"]
        self.num_heads = config["n_head"]
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2]
                           + (num_heads * attn_head_size,))

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length,
                                :key_length]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min,
                                dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = F.softmax(attn_weights, dim=-1).type(value.dtype)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, layer_past=None):
        query, key, value = self.c_attn(hidden_states).split(
            self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if layer_past is not None:
            key = torch.cat((layer_past[0], key), dim=-2)
            value = torch.cat((layer_past[1], value), dim=-2)
        attn_output = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output, self.num_heads,
                                        self.head_dim)
        return self.c_proj(attn_output), (key, value)


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        embed_dim = config["n_embd"]
        self.c_fc = Conv1D(intermediate_size, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate_size)
        self.act = ACT2FN[config.get("activation_function") or "gelu_new"]()

    def forward(self, hidden_states):
        return self.c_proj(self.act(self.c_fc(hidden_states)))


class GPT2Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden_size = config["n_embd"]
        inner_dim = config.get("n_inner") or 4 * hidden_size
        eps = config.get("layer_norm_epsilon", 1e-5)
        self.ln_1 = nn.LayerNorm(hidden_size, eps=eps)
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=eps)
        self.mlp = GPT2MLP(inner_dim, config)

    def forward(self, hidden_states, layer_past=None):
        residual = hidden_states
        attn_output, present = self.attn(self.ln_1(hidden_states), layer_past)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = residual + self.mlp(self.ln_2(hidden_states))
        return hidden_states, present


def hf_layers(config, w, n_layers, dtype):
    """The HF decoder layers 0..n-1, loaded strictly from the file's
    tensors (``model.layers.{i}.`` / ``h.{i}.`` stripped)."""
    gpt2 = config["model_type"] == "gpt2"
    out = []
    for i in range(n_layers):
        prefix = ("h.%d." if gpt2 else "model.layers.%d.") % i
        layer = GPT2Block(config) if gpt2 else LlamaDecoderLayer(config)
        layer.load_state_dict({k[len(prefix):]: v for k, v in w.items()
                               if k.startswith(prefix)}, strict=True)
        out.append(layer.to(dtype))
    return out


def hf_forward(config, layers, x, offset=0, pasts=None):
    """Run HF layers on x [B, T, d]; positions offset..offset+T-1 (RoPE),
    pasts: per-layer (k, v) in HF layout [B, H_kv, S0, Dh] or None.
    Returns (y, presents)."""
    presents = []
    if config["model_type"] == "gpt2":
        for i, layer in enumerate(layers):
            x, p = layer(x, None if pasts is None else pasts[i])
            presents.append(p)
        return x, presents
    bsz, t = x.shape[:2]
    past_len = 0 if pasts is None else pasts[0][0].shape[-2]
    d, h = config["hidden_size"], config["num_attention_heads"]
    rotary = LlamaRotaryEmbedding(config.get("head_dim") or d // h,
                                  config.get("rope_theta", 10000.0), x.dtype)
    position_ids = torch.arange(offset, offset + t)[None].expand(bsz, -1)
    position_embeddings = rotary(x, position_ids)
    # _prepare_4d_causal_attention_mask_with_cache_position
    cache_position = torch.arange(past_len, past_len + t)
    mask = torch.full((t, past_len + t), torch.finfo(x.dtype).min,
                      dtype=x.dtype)
    mask = mask * (torch.arange(past_len + t) > cache_position[:, None])
    mask = mask[None, None].expand(bsz, 1, -1, -1)
    for i, layer in enumerate(layers):
        x, p = layer(x, mask, position_embeddings,
                     None if pasts is None else pasts[i])
        presents.append(p)
    return x, presents


# --- plumbing ---------------------------------------------------------------

def load_st(path):
    """Independent minimal safetensors reader -> {name: float64 tensor}."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    buf = blob[8 + n:]
    tdt = {"F32": torch.float32, "F16": torch.float16,
           "BF16": torch.bfloat16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = bytearray(buf[b:e])
        out[name] = torch.frombuffer(raw, dtype=tdt[info["dtype"]]) \
            .reshape(info["shape"]).to(torch.float64)
    return out


def ref(*args):
    r = subprocess.run([sys.executable, REF] + [str(a) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode != 0:
        raise RuntimeError("blockc_ref.py %s failed: %s"
                           % (" ".join(map(str, args)), r.stderr.strip()))
    return r.stdout


def err_of(out, refy):
    refy = refy.astype(np.float64)
    e = float(np.abs(out.astype(np.float64) - refy).max())
    return e, e / max(1.0, float(np.abs(refy).max()))


def seed_block(cfg, w):
    """Instantiate the notes' Block and load blockc weights into it."""
    p = "model.layers.%d." % cfg.get("layer", 0)
    H = cfg["num_attention_heads"]
    d = cfg["hidden_size"]
    blk = Block(d, H, cfg.get("num_key_value_heads", H),
                cfg.get("head_dim", d // H), cfg["intermediate_size"])
    names = {
        "norm1.g": "input_layernorm.weight",
        "attn.w_q.weight": "self_attn.q_proj.weight",
        "attn.w_k.weight": "self_attn.k_proj.weight",
        "attn.w_v.weight": "self_attn.v_proj.weight",
        "attn.w_o.weight": "self_attn.o_proj.weight",
        "norm2.g": "post_attention_layernorm.weight",
        "ffn.w_gate.weight": "mlp.gate_proj.weight",
        "ffn.w_up.weight": "mlp.up_proj.weight",
        "ffn.w_down.weight": "mlp.down_proj.weight",
    }
    blk.load_state_dict({k: w[p + v] for k, v in names.items()})
    return blk


CASES = [
    # (label, config, batch, seq, kind, weight dtype)
    ("MHA d64 H4", {"hidden_size": 64, "num_attention_heads": 4,
                    "intermediate_size": 128}, 2, 7, "seed", "f32"),
    ("GQA d128 H8 kv2", {"hidden_size": 128, "num_attention_heads": 8,
                         "num_key_value_heads": 2, "intermediate_size": 256},
     2, 7, "seed", "f32"),
    ("MQA d64 H4 kv1", {"hidden_size": 64, "num_attention_heads": 4,
                        "num_key_value_heads": 1, "intermediate_size": 128},
     2, 7, "seed", "f32"),
    ("MQA d72 H3 Dh24 T257", {"hidden_size": 72, "num_attention_heads": 3,
                              "num_key_value_heads": 1, "head_dim": 24,
                              "intermediate_size": 160}, 1, 257, "seed",
     "f32"),
    ("GQA H8 kv2 Dh16 (H*Dh != d)", {"hidden_size": 64,
                                     "num_attention_heads": 8,
                                     "num_key_value_heads": 2, "head_dim": 16,
                                     "intermediate_size": 96, "layer": 5},
     2, 33, "seed", "f32"),
    ("GQA bf16 weights", {"hidden_size": 64, "num_attention_heads": 4,
                          "num_key_value_heads": 2,
                          "intermediate_size": 128}, 2, 7, "seed", "bf16"),
    ("GQA f16 weights", {"hidden_size": 64, "num_attention_heads": 4,
                         "num_key_value_heads": 2,
                         "intermediate_size": 128}, 2, 7, "seed", "f16"),
    ("interleaved rope, GQA", {"hidden_size": 64, "num_attention_heads": 4,
                               "num_key_value_heads": 2,
                               "intermediate_size": 128,
                               "rope": "interleaved", "rope_theta": 500000.0},
     2, 19, "generic", "f32"),
    ("layernorm+gelu+biases", {"hidden_size": 64, "num_attention_heads": 4,
                               "intermediate_size": 256, "norm": "layer",
                               "norm_eps": 1e-5, "hidden_act": "gelu",
                               "gated": False, "attention_bias": True,
                               "mlp_bias": True}, 2, 7, "generic", "f32"),
    ("post-norm layernorm gelu_tanh", {"hidden_size": 64,
                                       "num_attention_heads": 4,
                                       "intermediate_size": 128,
                                       "norm": "layer",
                                       "norm_placement": "post",
                                       "hidden_act": "gelu_tanh",
                                       "attention_bias": True},
     2, 7, "generic", "f32"),
    ("non-causal relu no-rope", {"hidden_size": 64, "num_attention_heads": 4,
                                 "intermediate_size": 128, "causal": False,
                                 "rope": "none", "hidden_act": "relu",
                                 "mlp_bias": True}, 2, 7, "generic", "f32"),
    ("post-norm rms swiglu", {"hidden_size": 72, "num_attention_heads": 3,
                              "head_dim": 24, "intermediate_size": 160,
                              "norm_placement": "post"}, 1, 257, "generic",
     "f32"),
]


QWEN2 = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
         "hidden_size": 64, "intermediate_size": 128,
         "num_attention_heads": 4, "num_key_value_heads": 2,
         "num_hidden_layers": 3, "rms_norm_eps": 1e-6,
         "rope_theta": 1000000.0, "rope_scaling": None, "hidden_act": "silu",
         "use_sliding_window": False, "sliding_window": 32768,
         "max_window_layers": 21, "tie_word_embeddings": True,
         "vocab_size": 151936, "torch_dtype": "bfloat16"}
LLAMA = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 96,
         "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 32,
         "num_hidden_layers": 2, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
         "hidden_act": "gelu_pytorch_tanh", "attention_bias": True,
         "mlp_bias": True, "rope_scaling": None, "pretraining_tp": 1}
MISTRAL = {"model_type": "mistral", "hidden_size": 64,
           "intermediate_size": 160, "num_attention_heads": 8,
           "num_key_value_heads": 2, "rms_norm_eps": 1e-5,
           "rope_theta": 1000000.0, "sliding_window": None}
GPT2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
        "n_embd": 64, "n_head": 4, "n_inner": 256, "n_layer": 3,
        "n_positions": 1024, "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu_new", "attn_pdrop": 0.1,
        "resid_pdrop": 0.1, "scale_attn_weights": True, "vocab_size": 50257}
GPT2_GELU = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_inner": None,
             "activation_function": "gelu"}

HF_CASES = [
    # (label, HF config, batch, seq, --layers, weight dtype, --position-offset)
    ("qwen2 d64 H4 kv2", QWEN2, 2, 9, 1, "f32", None),
    ("qwen2 x3 layers, offset 5", QWEN2, 2, 9, 3, "f32", 5),
    ("qwen2 x2 bf16 weights T=65", QWEN2, 1, 65, 2, "bf16", None),
    ("llama bias+mlp_bias gelu_tanh MQA", LLAMA, 2, 7, 2, "f32", None),
    ("mistral H8 kv2", MISTRAL, 2, 7, 1, "f32", 3),
    ("gpt2 d64 H4 n_inner256 gelu_new", GPT2, 2, 9, 1, "f32", None),
    ("gpt2 x3 layers", GPT2, 2, 9, 3, "f32", None),
    ("gpt2 n_inner=null gelu f16 x2", GPT2_GELU, 1, 33, 2, "f16", None),
]


def run_hf_cases(tmp):
    """HF config.json cases: ref CLI vs the HF-style torch modules."""
    failed = 0
    for i, (label, cfg, B, T, n, wdt, off) in enumerate(HF_CASES):
        cpath = os.path.join(tmp, "hf%d.json" % i)
        wpath = os.path.join(tmp, "hfw%d.safetensors" % i)
        xpath = os.path.join(tmp, "hfx%d.npy" % i)
        ypath = os.path.join(tmp, "hfy%d.npy" % i)
        with open(cpath, "w") as f:
            json.dump(cfg, f)
        ref("gen-weights", "--config", cpath, "--seed", 300 + i, "--dtype",
            wdt, "--scale", 0.08, "--layers", n, "-o", wpath)
        ref("gen-input", "--config", cpath, "--seed", 400 + i, "--batch", B,
            "--seq-len", T, "-o", xpath)
        ref("run", "--config", cpath, "--weights", wpath, "--input", xpath,
            "-o", ypath, "--layers", n,
            *(() if off is None else ("--position-offset", off)))
        w = load_st(wpath)
        x = torch.from_numpy(np.load(xpath).astype(np.float64))
        refy = np.load(ypath)
        msgs = []
        for dt in (torch.float64, torch.float32):
            with torch.no_grad():
                out, _ = hf_forward(cfg, hf_layers(cfg, w, n, dt), x.to(dt),
                                    off or 0)
            e, rel = err_of(out.double().numpy(), refy)
            ok = rel <= TOL
            failed += not ok
            msgs.append("%s max_abs_err=%.3g rel=%.3g %s"
                        % (str(dt).replace("torch.", ""), e, rel,
                           "ok" if ok else "FAIL"))
        print("%-32s [%d,%d] x%d %s: %s" % (label, B, T, n, wdt,
                                            "; ".join(msgs)))
    return failed


def run_hf_kv(tmp):
    """Stacked KV cache through the CLI (prefix with --save-kv, then the
    suffix with --kv-cache) vs one full-sequence HF forward; also the saved
    cache [N, B, S, H_kv, Dh] vs HF's per-layer presents [B, H_kv, S, Dh]."""
    failed = 0
    for label, cfg in (("qwen2 x2 kv-cache decode", QWEN2),
                       ("gpt2 x2 kv-cache decode", GPT2)):
        j = lambda name: os.path.join(tmp, name)  # noqa: E731
        with open(j("kv.json"), "w") as f:
            json.dump(cfg, f)
        ref("gen-weights", "--config", j("kv.json"), "--seed", 17,
            "--scale", 0.08, "--layers", 2, "-o", j("kv.safetensors"))
        ref("gen-input", "--config", j("kv.json"), "--seed", 18, "--batch",
            2, "--seq-len", 12, "-o", j("kvx.npy"))
        x = np.load(j("kvx.npy"))
        np.save(j("kvxa.npy"), x[:, :9])
        np.save(j("kvxb.npy"), x[:, 9:])
        common = ("--config", j("kv.json"), "--weights", j("kv.safetensors"),
                  "--layers", 2)
        ref("run", *common, "--input", j("kvxa.npy"), "-o", j("oa.npy"),
            "--save-kv", j("k.npy"), j("v.npy"))
        ref("run", *common, "--input", j("kvxb.npy"), "-o", j("ob.npy"),
            "--kv-cache", j("k.npy"), j("v.npy"))
        with torch.no_grad():
            layers = hf_layers(cfg, load_st(j("kv.safetensors")), 2,
                               torch.float64)
            full, _ = hf_forward(cfg, layers,
                                 torch.from_numpy(x.astype(np.float64)))
            _, presents = hf_forward(
                cfg, layers, torch.from_numpy(x[:, :9].astype(np.float64)))
        e, rel = err_of(full[:, 9:].numpy(), np.load(j("ob.npy")))
        hk = np.stack([p[0].numpy().transpose(0, 2, 1, 3) for p in presents])
        ek, relk = err_of(hk, np.load(j("k.npy")))
        ok = rel <= TOL and relk <= TOL
        failed += not ok
        print("%-32s [2,9+3] x2: float64 max_abs_err=%.3g rel=%.3g, "
              "K cache err=%.3g %s" % (label, e, rel, ek,
                                       "ok" if ok else "FAIL"))
    return failed


class CausalLM(nn.Module):
    """LlamaForCausalLM / Qwen2ForCausalLM / GPT2LMHeadModel written after
    transformers: nn.Embedding (plus GPT-2's wpe), the decoder layers, the
    final norm and an nn.Linear head without bias whose weight *is* the
    embedding's when tied; loaded with a strict load_state_dict from the
    folder's tensors (the head's entry added under its module name when
    tied, as tie_weights makes it)."""

    def __init__(self, config, w, dtype):
        super().__init__()
        self.config = config
        gpt2 = config["model_type"] == "gpt2"
        n = config["n_layer" if gpt2 else "num_hidden_layers"]
        vocab = config["vocab_size"]
        d = config["n_embd" if gpt2 else "hidden_size"]
        tied = config.get("tie_word_embeddings", gpt2)
        self.embed = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(config["n_positions"], d) if gpt2 else None
        self.layers = nn.ModuleList(hf_layers(config, w, n, dtype))
        self.norm = (nn.LayerNorm(d, eps=config.get("layer_norm_epsilon",
                                                     1e-5)) if gpt2
                     else LlamaRMSNorm(d, config.get("rms_norm_eps", 1e-6)))
        self.lm_head = nn.Linear(d, vocab, bias=False)
        embed = "wte.weight" if gpt2 else "model.embed_tokens.weight"
        state = {"embed.weight": w[embed],
                 "lm_head.weight": w[embed if tied else "lm_head.weight"]}
        if gpt2:
            state["wpe.weight"] = w["wpe.weight"]
            state["norm.weight"], state["norm.bias"] = \
                w["ln_f.weight"], w["ln_f.bias"]
        else:
            state["norm.weight"] = w["model.norm.weight"]
        state.update(("layers." + k, v) for k, v in
                     self.layers.state_dict().items())
        self.load_state_dict(state, strict=True)
        if tied:
            self.lm_head.weight = self.embed.weight
        self.to(dtype)

    def forward(self, ids):
        x = self.embed(ids)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(ids.shape[1]))[None]
        x, _ = hf_forward(self.config, list(self.layers), x)
        return self.lm_head(self.norm(x))


MODEL_CASES = [
    # (label, config file under test/Integration/Inputs/models, weight dtype)
    ("llama-tiny (untied head)", "llama-tiny.json", "f32"),
    ("qwen2-tiny (tied)", "qwen2-tiny.json", "f32"),
    ("gpt2-tiny (wpe, tied)", "gpt2-tiny.json", "f32"),
    ("qwen2-tiny bf16 weights", "qwen2-tiny.json", "bf16"),
]
MODELS = os.path.join(HERE, os.pardir, "test", "Integration", "Inputs",
                      "models")


def run_model_cases(tmp):
    """Whole models: a 2-shard folder written by ``gen-model``, the
    reference's ``forward`` and ``generate`` against the torch CausalLM
    (logits in float64 and float32; 12 greedy tokens in float64, full
    recompute, compared where the reference's top-two margin is above
    1e-6)."""
    failed = 0
    for i, (label, name, wdt) in enumerate(MODEL_CASES):
        folder = os.path.join(tmp, "model%d" % i)
        ids = os.path.join(tmp, "ids%d.npy" % i)
        ref("gen-model", "--config", os.path.join(MODELS, name), "--seed",
            500 + i, "--dtype", wdt, "--shards", 2, "-o", folder)
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        with open(os.path.join(folder, "model.safetensors.index.json")) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        w = {}
        for shard in shards:
            w.update(load_st(os.path.join(folder, shard)))
        ref("gen-ids", "--vocab", config["vocab_size"], "--batch", 2,
            "--seq-len", 11, "--seed", 600 + i, "--dtype", "int64", "-o",
            ids)
        ref("forward", "--model", folder, "--ids", ids, "-o",
            os.path.join(tmp, "lg%d.npy" % i))
        refy = np.load(os.path.join(tmp, "lg%d.npy" % i))
        tids = torch.from_numpy(np.load(ids))
        msgs = []
        for dt in (torch.float64, torch.float32):
            with torch.no_grad():
                out = CausalLM(config, w, dt)(tids)
            e, rel = err_of(out.double().numpy(), refy)
            ok = rel <= TOL
            failed += not ok
            msgs.append("%s max_abs_err=%.3g rel=%.3g %s"
                        % (str(dt).replace("torch.", ""), e, rel,
                           "ok" if ok else "FAIL"))
        margin = float(ref("generate", "--model", folder, "--ids", ids,
                           "-n", 12, "-o", os.path.join(tmp, "g%d.npy" % i))
                       .split()[0].split("=")[1])
        gen = np.load(os.path.join(tmp, "g%d.npy" % i))
        model = CausalLM(config, w, torch.float64)
        seq = tids
        with torch.no_grad():
            for _ in range(12):
                nxt = model(seq)[:, -1].argmax(-1)
                seq = torch.cat([seq, nxt[:, None]], dim=1)
        same = np.array_equal(seq[:, -12:].numpy(), gen)
        ok = same or margin <= 1e-6
        failed += not ok
        msgs.append("greedy x12 %s (min margin %.3g)"
                    % ("identical" if same else "differs", margin))
        print("%-32s [2,11] %s: %s" % (label, wdt, "; ".join(msgs)))
    return failed


def main():
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    print("torch %s" % torch.__version__)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, cfg, B, T, kind, wdt) in enumerate(CASES):
            cpath = os.path.join(tmp, "c%d.json" % i)
            wpath = os.path.join(tmp, "w%d.safetensors" % i)
            xpath = os.path.join(tmp, "x%d.npy" % i)
            ypath = os.path.join(tmp, "y%d.npy" % i)
            with open(cpath, "w") as f:
                json.dump(cfg, f)
            ref("gen-weights", "--config", cpath, "--seed", 100 + i,
                "--dtype", wdt, "--scale", 0.08, "-o", wpath)
            ref("gen-input", "--config", cpath, "--seed", 200 + i,
                "--batch", B, "--seq-len", T, "-o", xpath)
            ref("run", "--config", cpath, "--weights", wpath, "--input",
                xpath, "-o", ypath)
            w = load_st(wpath)
            x = torch.from_numpy(np.load(xpath).astype(np.float64))
            refy = np.load(ypath)
            theta = cfg.get("rope_theta", 10000.0)
            msgs = []
            for dt in (torch.float64, torch.float32):
                with torch.no_grad():
                    if kind == "seed":
                        blk = seed_block(cfg, w).to(dt)
                        out = blk(x.to(dt), hf_rope(theta))
                    else:
                        out = generic_block(cfg, w, x, dt)
                e, rel = err_of(out.double().numpy(), refy)
                ok = rel <= TOL
                failed += not ok
                msgs.append("%s max_abs_err=%.3g rel=%.3g %s"
                            % (str(dt).replace("torch.", ""), e, rel,
                               "ok" if ok else "FAIL"))
            print("%-32s [%d,%d] %s: %s" % (label, B, T, kind,
                                            "; ".join(msgs)))

        # KV-cache decode with position offset: prefix then suffix via CLI,
        # compared with the full-sequence torch (seed) block.
        cfg = CASES[1][1]
        cpath = os.path.join(tmp, "kv.json")
        with open(cpath, "w") as f:
            json.dump(cfg, f)
        wpath = os.path.join(tmp, "kv.safetensors")
        ref("gen-weights", "--config", cpath, "--seed", 7, "--scale", 0.08,
            "-o", wpath)
        ref("gen-input", "--config", cpath, "--seed", 8, "--batch", 2,
            "--seq-len", 12, "-o", os.path.join(tmp, "kvx.npy"))
        x = np.load(os.path.join(tmp, "kvx.npy"))
        for name, part in (("a", x[:, :9]), ("b", x[:, 9:])):
            np.save(os.path.join(tmp, "kvx%s.npy" % name), part)
        kk, vv = os.path.join(tmp, "k.npy"), os.path.join(tmp, "v.npy")
        ref("run", "--config", cpath, "--weights", wpath, "--input",
            os.path.join(tmp, "kvxa.npy"), "-o", os.path.join(tmp, "o.npy"),
            "--save-kv", kk, vv)
        ref("run", "--config", cpath, "--weights", wpath, "--input",
            os.path.join(tmp, "kvxb.npy"), "-o", os.path.join(tmp, "ob.npy"),
            "--kv-cache", kk, vv)
        with torch.no_grad():
            full = seed_block(cfg, load_st(wpath)).double()(
                torch.from_numpy(x.astype(np.float64)), hf_rope(10000.0))
        e, rel = err_of(full[:, 9:].numpy(), np.load(os.path.join(tmp,
                                                                  "ob.npy")))
        ok = rel <= TOL
        failed += not ok
        print("%-32s [2,9+3] seed: float64 max_abs_err=%.3g rel=%.3g %s"
              % ("GQA kv-cache decode", e, rel, "ok" if ok else "FAIL"))

        failed += run_hf_cases(tmp)
        failed += run_hf_kv(tmp)
        failed += run_model_cases(tmp)

    if failed:
        print("FAIL: %d comparison(s) above tolerance %g" % (failed, TOL))
        return 1
    print("PASS: all comparisons within %g of the output scale" % TOL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
