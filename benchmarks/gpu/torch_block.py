"""PyTorch bf16 eager peers for benchmarks/gpu (run on the GPU machine).

  python3 torch_block.py peak            bf16 GEMM 8192^3 (cuBLAS): the
                                         measured peak, TFLOP/s
  python3 torch_block.py gemm T          the Llama-2-7B projection GEMMs at
                                         M = T rows (cuBLAS), TFLOP/s
  python3 torch_block.py block T         the Llama-2-7B block in bf16 eager
                                         (HF LlamaDecoderLayer's math, SDPA
                                         attention), B = 1, ms
  python3 torch_block.py decode L        one decoding step with a KV cache
                                         of L positions, ms

Times are CUDA-event medians of 20 runs after 3 warm-ups. A trailing
`tf32` runs the same in f32 with TF32 matmuls
(torch.backends.cuda.matmul.allow_tf32), the peer of blockc's
-gpu-allow-tf32 (peak: an f32 GEMM on TF32 tensor cores).
"""
import sys

import torch
import torch.nn.functional as F

D, H, FF = 4096, 32, 11008
HD = D // H
DEV = "cuda"
BF = torch.bfloat16


def timed(fn, repeat=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def weights():
    g = torch.Generator(device=DEV).manual_seed(0)

    def w(o, i):
        return (torch.rand(o, i, generator=g, device=DEV) * 2 - 1).to(BF) / i**0.5

    return dict(g1=torch.ones(D, device=DEV, dtype=BF), wq=w(D, D), wk=w(D, D),
                wv=w(D, D), wo=w(D, D), g2=torch.ones(D, device=DEV, dtype=BF),
                wg=w(FF, D), wu=w(FF, D), wd=w(D, FF))


def rms(x, g, eps=1e-5):
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return g * xf.to(x.dtype)


def rope(x, pos):
    inv = 1.0 / (10000 ** (torch.arange(0, HD, 2, device=DEV).float() / HD))
    f = torch.outer(pos.float(), inv)
    emb = torch.cat((f, f), -1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return x * cos + torch.cat((-x2, x1), -1) * sin


def block(x, w, pos, cache=None):
    b, t, _ = x.shape
    h = rms(x, w["g1"])
    q = F.linear(h, w["wq"]).view(b, t, H, HD).transpose(1, 2)
    k = F.linear(h, w["wk"]).view(b, t, H, HD).transpose(1, 2)
    v = F.linear(h, w["wv"]).view(b, t, H, HD).transpose(1, 2)
    q, k = rope(q, pos), rope(k, pos)
    if cache is not None:
        kc, vc, n = cache
        kc[:, :, n:n + t] = k
        vc[:, :, n:n + t] = v
        k, v = kc[:, :, :n + t], vc[:, :, :n + t]
        a = F.scaled_dot_product_attention(q, k, v)
    else:
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    x = x + F.linear(a.transpose(1, 2).reshape(b, t, D), w["wo"])
    h = rms(x, w["g2"])
    return x + F.linear(F.silu(F.linear(h, w["wg"])) * F.linear(h, w["wu"]),
                        w["wd"])


def main(argv):
    global BF
    if argv[-1] == "tf32":
        # f32 tensors, TF32 tensor cores for the matmuls (as blockc's
        # -gpu-allow-tf32: the attention's SDPA stays f32 math here too).
        BF = torch.float32
        torch.backends.cuda.matmul.allow_tf32 = True
        argv = argv[:-1]
    what = argv[1]
    if what == "peak":
        n = 8192
        a = torch.randn(n, n, device=DEV, dtype=BF)
        bm = torch.randn(n, n, device=DEV, dtype=BF)
        ms = timed(lambda: a @ bm)
        print("torch peak %s GEMM %d^3: %.3f ms, %.1f TFLOP/s"
              % ("tf32" if BF == torch.float32 else "bf16", n, ms,
                 2 * n**3 / ms / 1e9))
    elif what == "gemm":
        t = int(argv[2])
        w = weights()
        x = torch.randn(t, D, device=DEV, dtype=BF)
        xf = torch.randn(t, FF, device=DEV, dtype=BF)
        for name, inp, wt in (("q/k/v/o 4096x4096", x, w["wq"]),
                              ("gate/up 11008x4096", x, w["wg"]),
                              ("down 4096x11008", xf, w["wd"])):
            ms = timed(lambda: F.linear(inp, wt))
            flops = 2 * t * wt.shape[0] * wt.shape[1]
            print("torch gemm T=%d %s: %.4f ms, %.1f TFLOP/s"
                  % (t, name, ms, flops / ms / 1e9))
    elif what == "block":
        t = int(argv[2])
        w = weights()
        x = torch.randn(1, t, D, device=DEV, dtype=BF)
        pos = torch.arange(t, device=DEV)
        with torch.no_grad():
            ms = timed(lambda: block(x, w, pos))
        flops = 2 * t * (4 * D * D + 3 * D * FF) + 2 * 2 * H * HD * t * (t + 1) / 2
        print("torch block T=%d: %.3f ms, %.1f TFLOP/s" % (t, ms, flops / ms / 1e9))
    elif what == "decode":
        n = int(argv[2])
        w = weights()
        kc = torch.randn(1, H, n + 1, HD, device=DEV, dtype=BF)
        vc = torch.randn(1, H, n + 1, HD, device=DEV, dtype=BF)
        x = torch.randn(1, 1, D, device=DEV, dtype=BF)
        pos = torch.tensor([n], device=DEV)
        with torch.no_grad():
            ms = timed(lambda: block(x, w, pos, (kc, vc, n)))
        print("torch decode L=%d: %.3f ms" % (n, ms))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
