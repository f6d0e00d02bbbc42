#!/usr/bin/python3
"""Cross-check blockc_ref.py against an independent PyTorch implementation.

The core configs (MHA, GQA, MQA) use the reference PyTorch ``Block`` from the
course notes (RMSNorm + GQA + RoPE + SwiGLU) nearly verbatim; the only change
is that torch 1.13 has no ``F.scaled_dot_product_attention``, so attention is
written out explicitly.  Further configs (interleaved RoPE, LayerNorm, GELU,
biases, post-norm, non-causal, KV cache, f16/bf16 weights) use a small generic
block built from torch built-ins (F.layer_norm, F.gelu, view_as_complex, ...).

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

    if failed:
        print("FAIL: %d comparison(s) above tolerance %g" % (failed, TOL))
        return 1
    print("PASS: all comparisons within %g of the output scale" % TOL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
