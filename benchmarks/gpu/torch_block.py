"""PyTorch bf16 eager peers for benchmarks/gpu (run on the GPU machine).

  python3 torch_block.py peak            bf16 GEMM 8192^3 (cuBLAS): the
                                         measured peak, TFLOP/s
  python3 torch_block.py gemm T...       the Llama-2-7B projection GEMMs at
                                         M = T rows (cuBLAS), TFLOP/s
  python3 torch_block.py block T...      the Llama-2-7B block in bf16 eager
                                         (HF LlamaDecoderLayer's math, SDPA
                                         attention), B = 1, ms
  python3 torch_block.py decode L...     one decoding step with a KV cache
                                         of L positions, ms
  python3 torch_block.py check Y.bin REF.npy [RMS_UNITS [MAX_UNITS]]
                                         compares a block's output (raw
                                         f32) with the reference (.npy of
                                         f32 or f64) within the bf16
                                         tolerance of utils/blockc_ref.py
                                         compare --dtype bf16; exits 1 when
                                         outside it

Times are CUDA-event medians of 20 runs after 3 warm-ups; one line per
size, in the formats that results.py reads. A trailing `tf32` runs the
same in f32 with TF32 matmuls (torch.backends.cuda.matmul.allow_tf32), the
peer of blockc's -gpu-allow-tf32 (peak: an f32 GEMM on TF32 tensor cores).
"""
import ast
import struct
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


def sizes(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    return [int(a) for a in argv[2:]]


def load_npy(path):
    """A little-endian f32 / f64 C-order .npy file as a flat f64 tensor on
    the CPU, and its shape (no numpy needed)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise SystemExit("%s: not a .npy file" % path)
    if data[6] == 1:
        (n,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (n,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + n].decode("latin1"))
    dtype = {"<f4": torch.float32, "<f8": torch.float64}.get(header["descr"])
    if dtype is None or header["fortran_order"]:
        raise SystemExit("%s: expected a C-order <f4 or <f8 array, got %s"
                         % (path, header))
    values = torch.frombuffer(bytearray(data[start + n:]), dtype=dtype)
    return values.double(), tuple(header["shape"])


def check(y_path, ref_path, rms_units=0.125, max_units=2.0):
    """The correctness check of the bundle: the GPU's output against the
    float64 reference with bf16 rounding points, with the bf16 tolerance of
    blockc_ref.py compare --dtype bf16 (docs/Precision.md): max |y - ref|
    <= 2u * scale and RMS <= u/8 * scale, u = 2^-8, scale = max(1,
    max |ref|); `rms_units` and `max_units` replace the 1/8 and the 2
    (run.sh gives the head-dim-128 block 1/4 and 4: with its d of 512 the
    bf16 roundings add up further, and blockc's CPU bf16 path and both
    emulated GPU paths measure an RMS of 0.0042 and a largest error of
    0.0625, two bf16 units of an output near 7, at scale 7.44 on it, above
    u/8 * scale = 0.0036 and 2u * scale = 0.058)."""
    try:
        ref, shape = load_npy(ref_path)
        with open(y_path, "rb") as f:
            y = torch.frombuffer(bytearray(f.read()),
                                 dtype=torch.float32).double()
    except (OSError, ValueError) as e:
        print("check FAIL: %s" % e)
        return 1
    if y.numel() != ref.numel():
        print("check FAIL: %s has %d values, %s has shape %s"
              % (y_path, y.numel(), ref_path, list(shape)))
        return 1
    u = 2.0 ** -8
    tol, rms_tol = max_units * u, u * rms_units
    bad = int((~torch.isfinite(y)).sum())
    diff = (y - ref).abs()
    err = float(diff.max())
    rms = float(diff.pow(2).mean().sqrt())
    scale = max(1.0, float(ref.abs().max()))
    ok = bad == 0 and err <= tol * scale and rms <= rms_tol * scale
    print("check max_abs_err=%.6g rms_err=%.6g scale=%.6g tol=%.6g "
          "rms_tol=%.6g non_finite=%d %s"
          % (err, rms, scale, tol * scale, rms_tol * scale, bad,
             "PASS" if ok else "FAIL"))
    return 0 if ok else 1


def main(argv):
    global BF
    if argv[-1] == "tf32":
        # f32 tensors, TF32 tensor cores for the matmuls (as blockc's
        # -gpu-allow-tf32: the attention's SDPA stays f32 math here too).
        BF = torch.float32
        torch.backends.cuda.matmul.allow_tf32 = True
        argv = argv[:-1]
    if len(argv) < 2:
        raise SystemExit(__doc__)
    what = argv[1]
    if what == "peak":
        n = 8192
        a = torch.randn(n, n, device=DEV, dtype=BF)
        bm = torch.randn(n, n, device=DEV, dtype=BF)
        ms = timed(lambda: a @ bm)
        print("torch peak %s GEMM %d^3: %.3f ms, %.1f TFLOP/s"
              % ("tf32" if BF == torch.float32 else "bf16", n, ms,
                 2 * n**3 / ms / 1e9), flush=True)
    elif what == "gemm":
        w = weights()
        for t in sizes(argv):
            x = torch.randn(t, D, device=DEV, dtype=BF)
            xf = torch.randn(t, FF, device=DEV, dtype=BF)
            for name, inp, wt in (("q/k/v/o 4096x4096", x, w["wq"]),
                                  ("gate/up 11008x4096", x, w["wg"]),
                                  ("down 4096x11008", xf, w["wd"])):
                ms = timed(lambda: F.linear(inp, wt))
                flops = 2 * t * wt.shape[0] * wt.shape[1]
                print("torch gemm T=%d %s: %.4f ms, %.1f TFLOP/s"
                      % (t, name, ms, flops / ms / 1e9), flush=True)
    elif what == "block":
        w = weights()
        for t in sizes(argv):
            x = torch.randn(1, t, D, device=DEV, dtype=BF)
            pos = torch.arange(t, device=DEV)
            with torch.no_grad():
                ms = timed(lambda: block(x, w, pos))
            flops = (2 * t * (4 * D * D + 3 * D * FF)
                     + 2 * 2 * H * HD * t * (t + 1) / 2)
            print("torch block T=%d: %.3f ms, %.1f TFLOP/s"
                  % (t, ms, flops / ms / 1e9), flush=True)
    elif what == "decode":
        w = weights()
        for n in sizes(argv):
            kc = torch.randn(1, H, n + 1, HD, device=DEV, dtype=BF)
            vc = torch.randn(1, H, n + 1, HD, device=DEV, dtype=BF)
            x = torch.randn(1, 1, D, device=DEV, dtype=BF)
            pos = torch.tensor([n], device=DEV)
            with torch.no_grad():
                ms = timed(lambda: block(x, w, pos, (kc, vc, n)))
            print("torch decode L=%d: %.3f ms" % (n, ms), flush=True)
    elif what == "check" and len(argv) in (4, 5, 6):
        return check(argv[2], argv[3], *[float(a) for a in argv[4:]])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
