#!/usr/bin/python3
"""Peer measurements for benchmarks/run.py, one case per process.

    peers.py torch --d D --heads H --kv-heads HKV --d-ff F --seq-len T
                   --threads N --repeat R [--eps E] [--theta TH]
    peers.py blas  --d D --heads H --kv-heads HKV --d-ff F --seq-len T
                   --threads N --repeat R

`torch`: PyTorch eager forward of the same pre-norm Llama block blockc
compiles (RMSNorm, q/k/v/o without bias, rotate-half RoPE, causal attention
with GQA by repeat_interleave, SwiGLU FFN, two residual adds), float32,
batch 1, under torch.inference_mode().  Written out explicitly because torch
1.13 has no F.scaled_dot_product_attention.  The RoPE cos/sin tables and the
causal mask are built once, outside the timed forward (a model keeps them as
buffers).  Weights are nn.Linear layout [out, in] (F.linear -> sgemm with
W transposed).

`torch-decode`: one decode step (T = 1) of the same block for --batch
sequences against a preallocated KV cache of --kv-len tokens each, written
in place (see run_torch_decode).

`blas`: the sum of the block's projections as numpy float32 matmuls
[T, d] @ [d, out] (q, k, v, o, gate, up, down), i.e. the GEMM work of the
block with nothing else.  numpy sends 2-D x 2-D float32 products to
cblas_sgemm; when T = 1 it takes its vector-matrix path and calls
cblas_sgemv instead (numpy/core/src/umath/matmul.c.src), so for T = 1 this
process additionally times the same products through cblas_sgemm called
directly with ctypes (M = 1), which is what PyTorch eager runs in decode.

`torch-lm`: a whole Llama causal LM (token embedding, --layers blocks with
preallocated KV caches, final RMSNorm, LM head [vocab, d]) in eager PyTorch
with random weights: one prefill of --seq-len random ids, then
--new-tokens - 1 greedy single-token steps, as Hugging Face's generate with
a static cache runs them; reports the prefill's and the steps' times,
tokens/s and the process's peak RSS.

The caller sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS in the environment;
`torch` also calls torch.set_num_threads(N).  Each process prints one JSON
object on its last stdout line: median/min ms over `repeat` timed runs after
one warm-up run, and the BLAS library actually mapped into the process.
"""

import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time

import numpy as np


def mapped_blas():
    """The BLAS/LAPACK shared objects mapped into this process."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                name = os.path.basename(path).lower()
                if path.startswith("/") and ("blas" in name or "blis" in name
                                             or "mkl" in name):
                    libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def openblas_config():
    """openblas_get_config() of the mapped OpenBLAS, if any."""
    for path in mapped_blas():
        try:
            lib = ctypes.CDLL(path)
            fn = lib.openblas_get_config
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        info = {"config": fn().decode()}
        try:
            lib.openblas_get_num_threads.restype = ctypes.c_int
            info["num_threads"] = lib.openblas_get_num_threads()
        except AttributeError:
            pass
        return info
    return None


def timed(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"median_ms": statistics.median(times) * 1e3,
            "min_ms": min(times) * 1e3,
            "times_ms": [t * 1e3 for t in times]}


def projections(a):
    """(name, in, out) of every projection of the block."""
    q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    return [("q", a.d, q), ("k", a.d, kv), ("v", a.d, kv), ("o", q, a.d),
            ("gate", a.d, a.d_ff), ("up", a.d, a.d_ff), ("down", a.d_ff, a.d)]


# --- PyTorch eager block -------------------------------------------------

def torch_block(a, w, g1, g2, T):
    """The eager block as a function of x [B, T, d]; w: {q,k,v,o,gate,up,down}
    as [out, in] tensors, g1/g2 the two RMSNorm gains."""
    import torch
    import torch.nn.functional as F

    d, H, Hkv, dh = a.d, a.heads, a.kv_heads, a.head_dim
    inv_freq = 1.0 / (a.theta ** (torch.arange(0, dh, 2, dtype=torch.float64)
                                  / dh))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    # HF casts cos/sin to the model's type.
    cos = emb.cos().to(g1.dtype)[None, :, None, :]
    sin = emb.sin().to(g1.dtype)[None, :, None, :]
    mask = torch.full((T, T), float("-inf")).triu(1).to(g1.dtype)
    scale = 1.0 / math.sqrt(dh)
    eps = a.eps

    def rms(v, g):
        # LlamaRMSNorm: statistics in f32, cast back before the gain.
        v32 = v.float()
        n = v32 * torch.rsqrt(v32.pow(2).mean(-1, keepdim=True) + eps)
        return g * n.to(v.dtype)

    def rope(v):
        v1, v2 = v[..., :dh // 2], v[..., dh // 2:]
        return v * cos + torch.cat((-v2, v1), dim=-1) * sin

    def block(x):
        B = x.shape[0]
        h = rms(x, g1)
        q = rope(F.linear(h, w["q"]).view(B, T, H, dh))
        k = rope(F.linear(h, w["k"]).view(B, T, Hkv, dh))
        v = F.linear(h, w["v"]).view(B, T, Hkv, dh)
        if H != Hkv:
            k = k.repeat_interleave(H // Hkv, dim=2)
            v = v.repeat_interleave(H // Hkv, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) * scale + mask
        o = torch.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype) @ v
        x = x + F.linear(o.transpose(1, 2).reshape(B, T, H * dh), w["o"])
        h = rms(x, g2)
        return x + F.linear(F.silu(F.linear(h, w["gate"]))
                            * F.linear(h, w["up"]), w["down"])

    return block


def torch_dtype(a):
    """The block's torch dtype (--dtype: f32, or bf16 as HF runs it)."""
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16}[a.dtype]


def run_torch(a):
    import torch

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    T, d = a.seq_len, a.d

    def lin(n_in, n_out):
        return torch.randn(n_out, n_in) * (1.0 / math.sqrt(n_in))

    dt = torch_dtype(a)
    w = {name: lin(i, o).to(dt) for name, i, o in projections(a)}
    g1 = (1.0 + 0.1 * torch.randn(d)).to(dt)
    g2 = (1.0 + 0.1 * torch.randn(d)).to(dt)
    x = torch.randn(1, T, d).to(dt)
    block = torch_block(a, w, g1, g2, T)

    with torch.inference_mode():
        y = None

        def step():
            nonlocal y
            y = block(x)

        result = timed(step, a.repeat)
        result["checksum"] = float(y.sum())
    result.update(torch_version=torch.__version__,
                  torch_threads=torch.get_num_threads(),
                  torch_blas=next((p.split("=", 1)[1] for p in
                                   torch.__config__.show().replace(",", "\n")
                                   .split() if p.startswith("BLAS_INFO=")),
                                  None))
    return result


def run_torch_decode(a):
    """One decode step of the eager block for `batch` sequences at once
    (x [batch, 1, d], PyTorch's batched decoding) against a preallocated KV
    cache [batch, kv_len + 1, H_kv, dh] holding kv_len tokens per sequence:
    RoPE at position kv_len, the new K/V rows written in place (slice
    assignment), attention over kv_len + 1 keys (GQA by expanding the cached
    heads, as HF Llama does). Every timed step writes the same row, so the
    cache length stays kv_len."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    d, H, Hkv, dh, L = a.d, a.heads, a.kv_heads, a.head_dim, a.kv_len
    B = a.batch

    def lin(n_in, n_out):
        return torch.randn(n_out, n_in) * (1.0 / math.sqrt(n_in))

    dt = torch_dtype(a)
    w = {name: lin(i, o).to(dt) for name, i, o in projections(a)}
    g1 = (1.0 + 0.1 * torch.randn(d)).to(dt)
    g2 = (1.0 + 0.1 * torch.randn(d)).to(dt)
    k_cache = torch.zeros(B, L + 1, Hkv, dh, dtype=dt)
    v_cache = torch.zeros(B, L + 1, Hkv, dh, dtype=dt)
    k_cache[:, :L].normal_()
    v_cache[:, :L].normal_()
    inv_freq = 1.0 / (a.theta ** (torch.arange(0, dh, 2, dtype=torch.float64)
                                  / dh))
    emb = torch.cat((L * inv_freq, L * inv_freq))
    cos, sin = emb.cos().to(dt), emb.sin().to(dt)
    scale = 1.0 / math.sqrt(dh)
    x = torch.randn(B, 1, d).to(dt)

    def rms(v, g):
        v32 = v.float()
        n = v32 * torch.rsqrt(v32.pow(2).mean(-1, keepdim=True) + a.eps)
        return g * n.to(v.dtype)

    def rope(v):
        v1, v2 = v[..., :dh // 2], v[..., dh // 2:]
        return v * cos + torch.cat((-v2, v1), dim=-1) * sin

    def step_fn(x):
        h = rms(x, g1)
        q = rope(F.linear(h, w["q"]).view(B, 1, H, dh))
        k_cache[:, L:L + 1] = rope(F.linear(h, w["k"]).view(B, 1, Hkv, dh))
        v_cache[:, L:L + 1] = F.linear(h, w["v"]).view(B, 1, Hkv, dh)
        k, v = k_cache[:, :L + 1], v_cache[:, :L + 1]
        if H != Hkv:
            k = k.repeat_interleave(H // Hkv, dim=2)
            v = v.repeat_interleave(H // Hkv, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        o = torch.softmax((q @ k.transpose(-2, -1)) * scale, dim=-1,
                          dtype=torch.float32).to(q.dtype) @ v
        x = x + F.linear(o.transpose(1, 2).reshape(B, 1, H * dh), w["o"])
        h = rms(x, g2)
        return x + F.linear(F.silu(F.linear(h, w["gate"]))
                            * F.linear(h, w["up"]), w["down"])

    with torch.inference_mode():
        y = None

        def step():
            nonlocal y
            y = step_fn(x)

        result = timed(step, a.repeat)
        result["checksum"] = float(y.sum())
    result.update(torch_version=torch.__version__,
                  torch_threads=torch.get_num_threads(), kv_len=L, batch=B)
    return result


def run_torch_lm(a):
    """Greedy generation of a whole Llama causal LM (see the module doc)."""
    import resource

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    d, H, Hkv, dh = a.d, a.heads, a.kv_heads, a.head_dim
    T, N, V = a.seq_len, a.new_tokens, a.vocab
    L = T + N
    dt = torch_dtype(a)

    def uniform(*shape, scale):
        # Drawn in the model's type: no f32 copy of a 7B model.
        return torch.empty(*shape, dtype=dt).uniform_(-scale, scale)

    def lin(n_in, n_out):
        return uniform(n_out, n_in, scale=math.sqrt(3.0 / n_in))

    t0 = time.perf_counter()
    layers = []
    for _ in range(a.layers):
        w = {name: lin(i, o) for name, i, o in projections(a)}
        w["g1"] = 1.0 + uniform(d, scale=0.1)
        w["g2"] = 1.0 + uniform(d, scale=0.1)
        w["k_cache"] = torch.zeros(1, Hkv, L, dh, dtype=dt)
        w["v_cache"] = torch.zeros(1, Hkv, L, dh, dtype=dt)
        layers.append(w)
    embed = uniform(V, d, scale=1.0)
    g_final = 1.0 + uniform(d, scale=0.1)
    head = lin(d, V)
    init_s = time.perf_counter() - t0

    inv_freq = 1.0 / (a.theta ** (torch.arange(0, dh, 2, dtype=torch.float64)
                                  / dh))
    emb = torch.cat([torch.outer(torch.arange(L, dtype=torch.float64),
                                 inv_freq)] * 2, dim=-1)
    cos_all, sin_all = emb.cos().to(dt), emb.sin().to(dt)
    scale = 1.0 / math.sqrt(dh)

    def rms(v, g):
        v32 = v.float()
        n = v32 * torch.rsqrt(v32.pow(2).mean(-1, keepdim=True) + a.eps)
        return g * n.to(v.dtype)

    def forward(ids, pos):
        """Logits of the last position for ids [1, n] at position pos."""
        n = ids.shape[1]
        cos = cos_all[pos:pos + n][None, None]
        sin = sin_all[pos:pos + n][None, None]

        def rope(v):
            v1, v2 = v[..., :dh // 2], v[..., dh // 2:]
            return v * cos + torch.cat((-v2, v1), dim=-1) * sin

        mask = None
        if n > 1:
            mask = torch.full((n, pos + n), float("-inf")).triu(pos + 1)
            mask = mask.to(dt)
        x = F.embedding(ids, embed)
        for w in layers:
            h = rms(x, w["g1"])
            q = rope(F.linear(h, w["q"]).view(1, n, H, dh).transpose(1, 2))
            k = rope(F.linear(h, w["k"]).view(1, n, Hkv, dh).transpose(1, 2))
            v = F.linear(h, w["v"]).view(1, n, Hkv, dh).transpose(1, 2)
            w["k_cache"][:, :, pos:pos + n] = k
            w["v_cache"][:, :, pos:pos + n] = v
            k = w["k_cache"][:, :, :pos + n]
            v = w["v_cache"][:, :, :pos + n]
            if H != Hkv:
                k = k.repeat_interleave(H // Hkv, dim=1)
                v = v.repeat_interleave(H // Hkv, dim=1)
            s = (q @ k.transpose(-2, -1)) * scale
            if mask is not None:
                s = s + mask
            o = torch.softmax(s, dim=-1, dtype=torch.float32).to(dt) @ v
            x = x + F.linear(o.transpose(1, 2).reshape(1, n, H * dh), w["o"])
            h = rms(x, w["g2"])
            x = x + F.linear(F.silu(F.linear(h, w["gate"]))
                             * F.linear(h, w["up"]), w["down"])
        return F.linear(rms(x[:, -1:], g_final), head).float()

    ids = torch.randint(0, V, (1, T))
    with torch.inference_mode():
        forward(ids[:, :8], 0)  # warm-up: a short prompt
        t0 = time.perf_counter()
        logits = forward(ids, 0)
        prefill_s = time.perf_counter() - t0
        token = logits.argmax(-1)
        steps = []
        tokens = [int(token)]
        for i in range(N - 1):
            t0 = time.perf_counter()
            logits = forward(token.view(1, 1), T + i)
            steps.append(time.perf_counter() - t0)
            token = logits.argmax(-1)
            tokens.append(int(token))
    step_s = statistics.median(steps) if steps else float("nan")
    return {"init_s": init_s, "prefill_s": prefill_s,
            "prefill_tokens_per_s": T / prefill_s,
            "step_median_s": step_s, "step_times_s": steps,
            "decode_tokens_per_s": 1.0 / step_s if steps else None,
            "tokens": tokens,
            "max_rss_gib": resource.getrusage(resource.RUSAGE_SELF)
            .ru_maxrss / 2**20,
            "torch_version": torch.__version__,
            "torch_threads": torch.get_num_threads()}


# --- BLAS projection sum -------------------------------------------------

def cblas_sgemm_fn():
    """cblas_sgemm from the mapped BLAS library (after numpy loaded it)."""
    for path in mapped_blas():
        try:
            fn = ctypes.CDLL(path).cblas_sgemm
        except (OSError, AttributeError):
            continue
        fn.restype = None
        fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_float, ctypes.c_void_p, ctypes.c_int,
                       ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                       ctypes.c_void_p, ctypes.c_int]
        return fn, path
    return None, None


def run_blas(a):
    rng = np.random.default_rng(0)
    T = a.seq_len
    mats = []
    for name, n_in, n_out in projections(a):
        x = rng.standard_normal((T, n_in), dtype=np.float32)
        w = (rng.standard_normal((n_in, n_out), dtype=np.float32)
             / np.float32(math.sqrt(n_in)))
        y = np.empty((T, n_out), dtype=np.float32)
        mats.append((name, x, w, y))

    def numpy_sum():
        for _, x, w, y in mats:
            np.matmul(x, w, out=y)

    result = timed(numpy_sum, a.repeat)
    result["numpy_path"] = "cblas_sgemv (vector @ matrix)" if T == 1 \
        else "cblas_sgemm"
    if T == 1:
        sgemm, path = cblas_sgemm_fn()
        if sgemm is not None:
            RowMajor, NoTrans = 101, 111

            def sgemm_sum():
                for _, x, w, y in mats:
                    M, K = x.shape
                    N = w.shape[1]
                    sgemm(RowMajor, NoTrans, NoTrans, M, N, K, 1.0,
                          x.ctypes.data, K, w.ctypes.data, N, 0.0,
                          y.ctypes.data, N)

            forced = timed(sgemm_sum, a.repeat)
            result["forced_sgemm"] = {"median_ms": forced["median_ms"],
                                      "min_ms": forced["min_ms"],
                                      "library": path}
    result["numpy_version"] = np.__version__
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["torch", "torch-decode", "torch-lm",
                                    "blas"])
    p.add_argument("--d", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, required=True)
    p.add_argument("--head-dim", type=int, default=0)
    p.add_argument("--d-ff", type=int, required=True)
    p.add_argument("--seq-len", type=int, required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", choices=("f32", "bf16"), default="f32",
                   help="the eager block's weights and activations (torch "
                        "modes)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--eps", type=float, default=1e-6)
    p.add_argument("--theta", type=float, default=1e4)
    p.add_argument("--kv-len", type=int, default=0,
                   help="torch-decode: tokens already in the KV cache")
    p.add_argument("--batch", type=int, default=1,
                   help="torch-decode: sequences decoded in one step")
    p.add_argument("--layers", type=int, default=1, help="torch-lm: blocks")
    p.add_argument("--vocab", type=int, default=32000, help="torch-lm")
    p.add_argument("--new-tokens", type=int, default=16,
                   help="torch-lm: tokens generated after the prompt")
    a = p.parse_args()
    if not a.head_dim:
        a.head_dim = a.d // a.heads
    if a.mode == "torch":
        result = run_torch(a)
    elif a.mode == "torch-decode":
        result = run_torch_decode(a)
    elif a.mode == "torch-lm":
        result = run_torch_lm(a)
    else:
        result = run_blas(a)
    result.update(mode=a.mode, threads=a.threads, repeat=a.repeat,
                  blas_libraries=mapped_blas(), openblas=openblas_config(),
                  env={k: os.environ.get(k) for k in
                       ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                        "OMP_PROC_BIND", "LD_LIBRARY_PATH")})
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
