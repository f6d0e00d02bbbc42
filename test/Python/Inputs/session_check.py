"""Checks blockc's Python package (sessions, forward, generate) against the
NumPy reference (utils/blockc_ref.py), which runs each sequence alone
through its whole causal forward pass.

  session_check.py stack --model M.mlir --weights W --config C [--layers N]
      [--dtype bf16] [--isa avx2] [--tol T] [--target nvptx --emulate]
  session_check.py lm --model M.mlir --hf DIR [--isa avx2] [--tol T]
      [--target nvptx --emulate]
  session_check.py errors --model M.mlir --weights W

Tensor parallelism (a model from blockc-import --tensor-parallel=N, every
rank running this script under mpirun -np N; --log P writes rank r's lines
to P.rank<r>.txt, --save-outputs P its step outputs to P.rank<r>.npz):

  session_check.py stack --tp N ... [--weights-in-memory]
  session_check.py tp-world --model TP.mlir --tp N   (the wrong world size)
  session_check.py tp-errors --model TP.mlir --weights W --tp N
  session_check.py same-outputs P N   (the ranks' outputs bit for bit)

Prints one PASS line per check; any failure raises (non-zero exit).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import blockc

REF = os.path.join(os.path.dirname(__file__), "..", "..", "..", "utils",
                   "blockc_ref.py")


def ref(*args):
    subprocess.run([sys.executable, REF] + [str(a) for a in args], check=True,
                   stdout=subprocess.DEVNULL)


class Reference:
    """The reference's output of one whole sequence."""

    def __init__(self, opts, tmp):
        self.opts = opts
        self.tmp = tmp
        self.count = 0

    def _paths(self):
        self.count += 1
        return (os.path.join(self.tmp, "in%d.npy" % self.count),
                os.path.join(self.tmp, "out%d.npy" % self.count))

    def stack(self, x):
        """x: [L, d] -> [L, d]."""
        src, dst = self._paths()
        np.save(src, x[None].astype(np.float32))
        args = ["run", "--config", self.opts.config, "--layers",
                self.opts.layers, "--weights", self.opts.weights, "--input",
                src, "-o", dst]
        if self.opts.dtype != "f32":
            args += ["--dtype", self.opts.dtype]
        ref(*args)
        return np.load(dst)[0]

    def logits(self, ids):
        """ids: [L] -> [L, vocab]."""
        src, dst = self._paths()
        np.save(src, np.asarray(ids, np.int32)[None])
        ref("forward", "--model", self.opts.hf, "--ids", src, "-o", dst)
        return np.load(dst)[0]


def close(name, got, want, tol):
    scale = float(np.max(np.abs(want)))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    if not diff <= tol * scale:
        raise AssertionError("%s: max |blockc - reference| = %.3e, more than "
                             "%.0e of the output scale %.3e"
                             % (name, diff, tol, scale))
    return diff / scale


def expect_error(fn, *fragments, status=None):
    try:
        fn()
    except blockc.Error as e:
        for f in fragments:
            if f not in str(e):
                raise AssertionError("error %r lacks %r" % (str(e), f))
        if status and e.status != status:
            raise AssertionError("error %r has status %s, not %s"
                                 % (str(e), e.status, status))
        return str(e)
    raise AssertionError("no blockc.Error raised (expected %r)"
                         % (fragments,))


def rank():
    """This process's MPI rank (mpirun sets it), 0 without mpirun."""
    return int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))


def load(opts, weights):
    """The model under test: the CPU kernels of --isa, or with --target
    nvptx the NVPTX kernels (on the GPU emulator with --emulate)."""
    if opts.weights_in_memory and weights is not None:
        with open(weights, "rb") as f:
            weights = f.read()
    if opts.target == "nvptx":
        return blockc.Model(opts.model, weights=weights, target="nvptx",
                            emulate=opts.emulate)
    return blockc.Model(opts.model, weights=weights, isa=opts.isa, threads=1)


def pool_bytes(s, layers, pages):
    return [s.read_page(l, v, p) for l in range(layers) for v in (0, 1)
            for p in pages]


def check_stack(opts):
    rng = np.random.default_rng(opts.seed)
    m = load(opts, opts.weights)
    d = m.model_dim
    assert not m.takes_token_ids
    tmp = tempfile.mkdtemp()
    reference = Reference(opts, tmp)
    tol = opts.tol

    def rows(n):
        return rng.uniform(-1, 1, size=(n, d)).astype(np.float32)

    # The forward entry on a batch of two.
    x = rng.uniform(-1, 1, size=(2, 5, d)).astype(np.float32)
    y = m(x)
    for b in range(2):
        close("forward[%d]" % b, y[b], reference.stack(x[b]), tol)
    print("PASS forward [2, 5, %d]" % d)

    s = m.session(page_size=16, num_pages=64)
    assert s.paged == (opts.expect_paged == 1), s.paged
    # Fragment the pool first: three sequences take pages, two go back.
    junk = [s.add() for _ in range(3)]
    s.step({j: rows(n) for j, n in zip(junk, (20, 40, 17))})
    s.free(junk[0])
    s.free(junk[2])
    assert s.free_pages == 64 - 3, s.free_pages

    seqs = [s.add() for _ in range(4)]
    inputs = {a: [] for a in seqs}
    outputs = {a: [] for a in seqs}

    def step(tokens):
        out = s.step(tokens)
        assert list(out) == list(tokens)
        for a, t in tokens.items():
            assert out[a].shape == (t.shape[0], m.output_width)
            inputs[a].append(t)
            outputs[a].append(out[a])

    step({a: rows(n) for a, n in zip(seqs, (1, 7, 13, 30))})
    for _ in range(8):
        step({a: rows(1) for a in seqs})
    pages = {a: s.pages(a) for a in seqs}
    if opts.dtype != "f32":
        # The pools hold the model's KV type (2 bytes for bf16).
        assert m.element_type == opts.dtype, m.element_type
        with open(opts.config) as f:
            c = json.load(f)
        heads = c["num_attention_heads"]
        head_dim = c.get("head_dim", c["hidden_size"] // heads)
        page = s.read_page(0, 0, pages[seqs[0]][0])
        # Under tensor parallelism a rank's pages hold its K/V heads.
        kv_heads = c.get("num_key_value_heads", heads) // opts.tp
        want = 16 * kv_heads * head_dim * 2
        assert len(page) == want, (len(page), want)
    assert len(pages[seqs[3]]) == 3 and s.length(seqs[3]) == 38
    scattered = any(p != list(range(p[0], p[0] + len(p)))
                    for p in pages.values())
    assert scattered, "the pages were handed out in order: %s" % pages
    worst = 0
    for a in seqs:
        worst = max(worst, close(
            "sequence %d" % a, np.concatenate(outputs[a]),
            reference.stack(np.concatenate(inputs[a])), tol))
    print("PASS 4 sequences (1, 7, 13, 30 tokens, then 8 steps of 1) in "
          "fragmented pages match the reference (max diff %.1e of the "
          "scale)" % worst)

    # Fork sequence 2 (21 tokens: one full page shared, the partial one
    # copied) and continue the child with other tokens.
    parent = seqs[2]
    child = s.fork(parent)
    assert s.length(child) == s.length(parent) == 21
    pp, cp = s.pages(parent), s.pages(child)
    assert cp[0] == pp[0] and cp[1] != pp[1], (pp, cp)
    layers = opts.layers
    before = pool_bytes(s, layers, pp)
    inputs[child] = list(inputs[parent])
    outputs[child] = list(outputs[parent])
    step({child: rows(3)})
    step({child: rows(1)})
    assert pool_bytes(s, layers, pp) == before, "the fork wrote its parent's pages"
    close("fork", np.concatenate(outputs[child]),
          reference.stack(np.concatenate(inputs[child])), tol)
    step({parent: rows(2)})
    # Both in one step: they read their shared page together.
    step({child: rows(1), parent: rows(2)})
    close("parent after fork", np.concatenate(outputs[parent]),
          reference.stack(np.concatenate(inputs[parent])), tol)
    close("fork stepped with its parent", np.concatenate(outputs[child]),
          reference.stack(np.concatenate(inputs[child])), tol)
    # The child's own pages: freeing the parent keeps the shared one.
    s.free(parent)
    step({child: rows(1)})
    close("fork after its parent's free", np.concatenate(outputs[child]),
          reference.stack(np.concatenate(inputs[child])), tol)
    print("PASS a fork continued with other tokens matches its reference; "
          "its parent's pages are unchanged and the parent continues")
    if opts.save_outputs:
        np.savez("%s.rank%d.npz" % (opts.save_outputs, rank()),
                 forward=y, **{"seq%d_%d" % (a, i): o
                               for a in outputs
                               for i, o in enumerate(outputs[a])})



def check_stack_pool(opts):
    """A pool that runs out: the step fails and changes nothing, then
    succeeds once a sequence is freed."""
    rng = np.random.default_rng(opts.seed + 1)
    m = load(opts, opts.weights)
    d = m.model_dim
    reference = Reference(opts, tempfile.mkdtemp())

    def rows(n):
        return rng.uniform(-1, 1, size=(n, d)).astype(np.float32)

    s = m.session(page_size=4, num_pages=5)
    a, j, b = s.add(), s.add(), s.add()
    xa0, xj = rows(10), rows(8)
    out = s.step({a: xa0, j: xj})
    assert s.free_pages == 0
    xa, xb = rows(1), rows(6)
    message = expect_error(lambda: s.step({a: xa, b: xb}), "out of pages",
                           "needs 2 new pages", "0 free of 5",
                           status="BLOCKC_ERROR_OUT_OF_PAGES")
    assert s.length(a) == 10 and s.length(b) == 0 and s.free_pages == 0
    # An unknown id anywhere in a step fails it whole.
    expect_error(lambda: s.step({a: xa, b + 100: xb}),
                 "unknown sequence id %d" % (b + 100),
                 status="BLOCKC_ERROR_UNKNOWN_SEQUENCE")
    assert s.length(a) == 10 and s.length(b) == 0 and s.free_pages == 0
    s.free(j)
    out2 = s.step({a: xa, b: xb})
    close("after the failed step, a", np.concatenate([out[a], out2[a]]),
          reference.stack(np.concatenate([xa0, xa])), opts.tol)
    close("after the failed step, b", out2[b], reference.stack(xb), opts.tol)
    print("PASS out of pages fails the step without a change; after a free "
          "the same step matches the reference: %s" % message.splitlines()[0])


def check_threads(opts):
    """Two sessions of one model stepping on two threads at once give what
    each gives alone."""
    import threading
    rng = np.random.default_rng(opts.seed + 2)
    m = load(opts, opts.weights)
    d = m.model_dim
    feeds = [[rng.uniform(-1, 1, size=(n, d)).astype(np.float32)
              for n in (9, 1, 1, 1, 1, 1)] for _ in range(2)]

    def serve(feed, results):
        s = m.session(page_size=4, num_pages=8)
        a = s.add()
        for x in feed:
            results.append(s.step({a: x})[a])
        s.close()

    alone = []
    for feed in feeds:
        out = []
        serve(feed, out)
        alone.append(np.concatenate(out))
    together = [[], []]
    threads = [threading.Thread(target=serve, args=(feeds[i], together[i]))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        assert np.array_equal(np.concatenate(together[i]), alone[i]), i
    print("PASS two sessions stepping on two threads at once")


def check_lm(opts):
    rng = np.random.default_rng(opts.seed)
    m = load(opts, opts.hf)
    assert m.takes_token_ids and m.output_width == m.vocab_size
    vocab = m.vocab_size
    reference = Reference(opts, tempfile.mkdtemp())
    tol = opts.tol

    ids = rng.integers(0, vocab, size=(2, 6)).astype(np.int32)
    logits = m(ids)
    assert logits.shape == (2, 6, vocab) and logits.dtype == np.float32
    for b in range(2):
        close("forward[%d]" % b, logits[b], reference.logits(ids[b]), tol)
    print("PASS forward ids [2, 6] -> logits [2, 6, %d]" % vocab)

    s = m.session(page_size=8, num_pages=16)
    assert s.paged == (opts.expect_paged == 1), s.paged
    seqs = [s.add(), s.add()]
    history = {a: [] for a in seqs}
    got = {a: [] for a in seqs}
    tokens = {seqs[0]: rng.integers(0, vocab, size=5).astype(np.int32),
              seqs[1]: rng.integers(0, vocab, size=11).astype(np.int32)}
    for _ in range(5):
        out = s.step(tokens)
        for a, t in tokens.items():
            history[a].extend(int(v) for v in t)
            got[a].append(out[a])
        # Greedy continuation.
        tokens = {a: np.array([int(np.argmax(out[a][-1]))], np.int32)
                  for a in seqs}
    for a in seqs:
        close("sequence %d" % a, np.concatenate(got[a]),
              reference.logits(history[a]), tol)
    print("PASS step ids -> logits of two sequences (5 and 11 tokens, then "
          "4 greedy steps) match the reference")

    src = os.path.join(reference.tmp, "prompt.npy")
    dst = os.path.join(reference.tmp, "generated.npy")
    prompt = rng.integers(0, vocab, size=(2, 5)).astype(np.int32)
    np.save(src, prompt)
    n = 12
    generated = m.generate(prompt, n)
    assert generated.shape == (2, n) and generated.dtype == np.int32
    ref("generate", "--model", opts.hf, "--ids", src, "-n", n, "-o", dst)
    want = np.load(dst)
    if not np.array_equal(generated, want):
        raise AssertionError("generate: %s, the reference %s"
                             % (generated.tolist(), want.tolist()))
    again = m.generate(prompt, n, temperature=0.8, top_k=20, top_p=0.9,
                       seed=5)
    assert np.array_equal(again, m.generate(prompt, n, temperature=0.8,
                                            top_k=20, top_p=0.9, seed=5))
    expect_error(lambda: m.generate(prompt, n, temperature=-1),
                 "temperature")
    print("PASS generate greedy [2, %d] equals the reference's; a seed "
          "repeats its samples" % n)

    # Ids outside the vocabulary, and an activation given to a causal LM.
    bad = np.array([vocab], np.int32)
    expect_error(lambda: s.step({seqs[0]: bad}), "outside the vocabulary")
    expect_error(lambda: s.step({seqs[0]: np.zeros((1, 64), np.float32)}),
                 "int32 token ids")
    assert s.length(seqs[0]) == len(history[seqs[0]])
    print("PASS ids outside the vocabulary are refused")


def check_errors(opts):
    # A bad path names the file.
    missing = os.path.join(tempfile.mkdtemp(), "missing.mlir")
    expect_error(lambda: blockc.Model(missing), missing,
                 status="BLOCKC_ERROR_IO")
    expect_error(lambda: blockc.Model(opts.model, weights=missing + ".st"),
                 missing + ".st", status="BLOCKC_ERROR_IO")
    expect_error(lambda: blockc.Model(opts.model, weights=opts.weights,
                                      isa="avx9"), "unknown ISA 'avx9'")
    expect_error(lambda: blockc.Model(opts.model, weights=opts.weights,
                                      emulate=True),
                 "emulate = 1 runs NVPTX kernels: it needs target nvptx")
    expect_error(lambda: blockc.Model(opts.model, target="nvptx", emulate=1),
                 "emulate must be True or False, not 1")
    print("PASS bad paths and options raise blockc.Error naming them")

    m = load(opts, opts.weights)
    d = m.model_dim
    s = m.session(page_size=4, num_pages=8)
    a = s.add()
    x = np.zeros((3, d), np.float32)
    s.step({a: x})
    expect_error(lambda: s.step({a + 100: x}), "unknown sequence id %d"
                 % (a + 100), status="BLOCKC_ERROR_UNKNOWN_SEQUENCE")
    expect_error(lambda: s.fork(a + 100), "unknown sequence id",
                 status="BLOCKC_ERROR_UNKNOWN_SEQUENCE")
    expect_error(lambda: s.free(a + 100), "unknown sequence id",
                 status="BLOCKC_ERROR_UNKNOWN_SEQUENCE")
    expect_error(lambda: s.step({a: x.astype(np.float64)}),
                 "float32 activations", "float64")
    expect_error(lambda: s.step({a: np.zeros((3, d + 1), np.float32)}),
                 "[T, d] with d = %d" % d)
    expect_error(lambda: s.step({a: np.zeros((0, d), np.float32)}), "empty")
    expect_error(lambda: s.step({}), "non-empty dict")
    expect_error(lambda: m(np.zeros((3, d), np.float32)), "[B, T, d]")
    expect_error(lambda: m.generate(np.zeros((1, 3), np.int32), 4),
                 "causal language model", status="BLOCKC_ERROR_UNSUPPORTED")
    expect_error(lambda: m.session(page_size=0), "page size")
    assert s.length(a) == 3 and s.free_pages == 7
    s.free(a)
    assert s.free_pages == 8
    expect_error(lambda: s.length(a), "unknown sequence id")
    print("PASS unknown ids, wrong dtypes and shapes raise blockc.Error and "
          "change nothing")


def check_tp_world(opts):
    """A model partitioned for --tp ranks in an MPI job of another size (or
    without mpirun: one process) is refused, naming both counts."""
    message = expect_error(lambda: blockc.Model(opts.model), opts.model,
                           status="BLOCKC_ERROR_UNSUPPORTED")
    print("PASS rank %d: %s" % (rank(), message.replace(opts.model, "MODEL")))


def check_tp_errors(opts):
    """Calls that fail on one rank only fail on every rank and change
    nothing: weights that one rank cannot read, a step that one rank is
    given differently; the ranks then go on together."""
    missing = os.path.join(tempfile.mkdtemp(), "missing.safetensors")
    weights = missing if rank() == 1 else opts.weights
    message = expect_error(lambda: blockc.Model(opts.model, weights=weights,
                                                isa=opts.isa, threads=1))
    print("PASS rank %d: weights that rank 1 cannot read fail on every "
          "rank: %s" % (rank(), message.replace(missing, "MISSING")))
    m = load(opts, opts.weights)
    d = m.model_dim
    s = m.session(page_size=4, num_pages=8)
    a = s.add()
    rng = np.random.default_rng(opts.seed)
    x = rng.uniform(-1, 1, size=(3, d)).astype(np.float32)
    first = s.step({a: x})[a]
    # Rank 1 names a sequence that does not exist, rank 0 a good one.
    seq = a + 100 if rank() == 1 else a
    message = expect_error(lambda: s.step({seq: x[:1]}))
    assert s.length(a) == 3 and s.free_pages == 7, (s.length(a),
                                                    s.free_pages)
    print("PASS rank %d: a step refused by rank 1 alone fails on every rank "
          "and changes nothing: %s" % (rank(), message))
    # The same step on every rank then runs (no rank waits in a
    # collective), as in a session that never saw the refused step.
    again = s.step({a: x[:1]})[a]
    s2 = m.session(page_size=4, num_pages=8)
    b = s2.add()
    assert np.array_equal(s2.step({b: x})[b], first)
    assert np.array_equal(s2.step({b: x[:1]})[b], again)
    expect_error(lambda: s.step({a: np.zeros((1, d + 1), np.float32)}),
                 "with d = %d" % d)
    print("PASS rank %d: the ranks go on together after the refused step"
          % rank())


def check_same_outputs(prefix, ranks):
    files = [np.load("%s.rank%d.npz" % (prefix, r)) for r in range(ranks)]
    names = sorted(files[0].files)
    for f in files[1:]:
        assert sorted(f.files) == names
        for n in names:
            if not np.array_equal(files[0][n], f[n]):
                raise AssertionError("%s differs between the ranks" % n)
    print("PASS the %d ranks' %d outputs are equal bit for bit"
          % (ranks, len(names)))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "same-outputs":
        check_same_outputs(sys.argv[2], int(sys.argv[3]))
        return
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("stack", "lm", "errors", "tp-world",
                                    "tp-errors"))
    p.add_argument("--model", required=True)
    p.add_argument("--weights")
    p.add_argument("--config")
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--dtype", default="f32")
    p.add_argument("--hf")
    p.add_argument("--isa")
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--target", choices=("cpu", "nvptx"), default="cpu")
    p.add_argument("--emulate", action="store_true",
                   help="with --target nvptx: on the GPU emulator")
    p.add_argument("--tp", type=int, default=1,
                   help="the model's tensor-parallel ranks (under mpirun)")
    p.add_argument("--weights-in-memory", action="store_true",
                   help="bind the weights file's bytes (caller memory)")
    p.add_argument("--save-outputs",
                   help="stack: save the outputs to PREFIX.rank<r>.npz")
    p.add_argument("--log", help="write the PASS lines to LOG.rank<r>.txt")
    p.add_argument("--expect-paged", type=int, default=1,
                   help="1: steps run the paged entry; 0: per sequence")
    opts = p.parse_args()
    if opts.log:
        sys.stdout = open("%s.rank%d.txt" % (opts.log, rank()), "w",
                          buffering=1)
    if opts.mode == "stack":
        check_stack(opts)
        check_stack_pool(opts)
        # Collectives from two threads at once would interleave the ranks'
        # all-reduces: under tensor parallelism one thread at a time calls.
        if opts.tp == 1:
            check_threads(opts)
    elif opts.mode == "lm":
        check_lm(opts)
    elif opts.mode == "tp-world":
        check_tp_world(opts)
    elif opts.mode == "tp-errors":
        check_tp_errors(opts)
    else:
        check_errors(opts)


if __name__ == "__main__":
    if "OMPI_COMM_WORLD_RANK" not in os.environ:
        main()
    else:
        # Under mpirun a failing rank ends at once without finalising MPI,
        # so that mpirun ends the others instead of them waiting in a
        # collective.
        try:
            main()
        except BaseException:
            import traceback
            traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
