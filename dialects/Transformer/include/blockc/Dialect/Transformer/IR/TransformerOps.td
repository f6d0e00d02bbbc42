//===- TransformerOps.td - transformer dialect operations --*- tablegen -*-===//
//
// Primitive ops (norms, linear, RoPE, scaled dot-product attention,
// activations, residual add) and composite ops (attention and FFN sub-layers,
// whole blocks). Every description states the exact semantics; the verifiers
// in TransformerOps.cpp check every shape relation.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD
#define BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD

include "blockc/Dialect/Transformer/IR/TransformerBase.td"
include "blockc/Dialect/Transformer/IR/TransformerAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"

def Transformer_PositiveI64 : ConfinedAttr<I64Attr, [IntPositive]>;

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

def Transformer_RMSNormOp : Transformer_Op<"rms_norm",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "root-mean-square normalisation over the last dimension";
  let description = [{
    For every row `x` along the last dimension (size `d`) of `input`:

    ```
    result = x * rsqrt(mean(x^2) + epsilon) * weight
    ```

    The mean is over the `d` elements of the row; `epsilon` (> 0, default
    1e-6) is added inside the square root, as in Hugging Face's
    `LlamaRMSNorm`. `weight` is the learned gain of shape `[d]`. Reductions
    accumulate in f32 whatever the element type.

    ```mlir
    %y = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f64}
        : tensor<?x?x4096xf32>, tensor<4096xf32>
    ```
  }];
  let arguments = (ins Transformer_Tensor:$input, Transformer_Weight:$weight,
                   DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs Transformer_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `,` type($weight)
  }];
  let hasVerifier = 1;
}

def Transformer_LayerNormOp : Transformer_Op<"layer_norm",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    For every row `x` along the last dimension (size `d`) of `input`:

    ```
    mu     = mean(x)
    var    = mean((x - mu)^2)            // biased variance, as torch
    result = (x - mu) * rsqrt(var + epsilon) * weight + bias
    ```

    `weight` (gain) and `bias` have shape `[d]`; `epsilon` > 0 (default
    1e-5, PyTorch's `nn.LayerNorm`).

    ```mlir
    %y = transformer.layer_norm %x, %g, %b
        : tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>
    ```
  }];
  let arguments = (ins Transformer_Tensor:$input, Transformer_Weight:$weight,
                   Transformer_Weight:$bias,
                   DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Transformer_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,` type($weight)
    `,` type($bias)
  }];
  let hasVerifier = 1;
}

def Transformer_LinearOp : Transformer_Op<"linear", [Pure]> {
  let summary = "affine projection y = x W^T (+ b)";
  let description = [{
    `input` has shape `[..., in]`, `weight` is stored `[out, in]` (Hugging
    Face / `torch.nn.Linear` layout) and the optional `bias` has shape
    `[out]`. The result has the shape of `input` with the last dimension
    replaced by `out`:

    ```
    result[..., o] = sum_i input[..., i] * weight[o, i] (+ bias[o])
    ```

    All operands share one element type, except that an f32 projection may
    keep its weight in bf16 or f16 (weight-only narrow storage, what
    `transformer-compute-in-f32` leaves): the weight is widened exactly to
    f32 as it is read and the sum accumulates in f32.

    ```mlir
    %q = transformer.linear %x, %wq
        : tensor<?x?x4096xf32>, tensor<4096x4096xf32> -> tensor<?x?x4096xf32>
    %h = transformer.linear %x, %w1 bias %b1
        : tensor<?x?x512xf32>, tensor<2048x512xf32>, tensor<2048xf32>
        -> tensor<?x?x2048xf32>
    ```
  }];
  let arguments = (ins Transformer_Tensor:$input, Transformer_Weight:$weight,
                   Optional<Transformer_Weight>:$bias,
                   OptionalAttr<Transformer_WeightQuantAttr>:$weight_quant);
  let results = (outs Transformer_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let builders = [
    // Infers the result type from the input and weight types.
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   CArg<"::mlir::Value", "{}">:$bias)>
  ];
  let hasVerifier = 1;
}

def Transformer_RoPEOp : Transformer_Op<"rope",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding of per-head vectors";
  let description = [{
    `input` is `[B, T, H, D]` (D = head dim). Token `t` sits at absolute
    position `p = t + position_offset` (the optional `index` operand, 0 when
    absent; used for cached decoding), or, with the optional per-token
    `positions` operand (a 1-D i32 tensor `[T]`, which requires `B = 1` and
    excludes `offset`; used by the ragged paged entry, where the packed
    tokens of several sequences each have their own position), at
    `p = positions[t]`. With `R = rotary_dim` (default `D`,
    even, at most `D`), `inv_freq[i] = theta^(-2i/R)` for `i < R/2` and
    `angle = p * inv_freq[i]`:

    * `rotate_half` (default; Hugging Face Llama/NeoX): element `i` pairs with
      element `i + R/2`:
      `out[i] = x[i] cos - x[i+R/2] sin`, `out[i+R/2] = x[i+R/2] cos + x[i] sin`.
    * `interleaved` (GPT-J / original Meta): element `2i` pairs with `2i+1`:
      `out[2i] = x[2i] cos - x[2i+1] sin`, `out[2i+1] = x[2i+1] cos + x[2i] sin`.

    Elements at `R <= j < D` pass through unchanged. Angles are computed and
    reduced to [-pi, pi] in f64 (exact for long positions); cos and sin of
    the reduced angle are f32.

    ```mlir
    %qr = transformer.rope %q offset %pos {theta = 500000.0 : f64}
        : tensor<1x?x32x128xf32>
    %kr = transformer.rope %k positions(%p : tensor<?xi32>)
        : tensor<1x?x8x128xf32>
    ```
  }];
  let arguments = (ins Transformer_HeadTensor:$input,
                   Optional<Index>:$position_offset,
                   Optional<1DTensorOf<[I32]>>:$positions,
                   DefaultValuedAttr<F64Attr, "10000.0">:$theta,
                   DefaultValuedAttr<Transformer_RoPELayoutAttr,
                     "::blockc::transformer::RoPELayout::rotate_half">:$layout,
                   OptionalAttr<Transformer_PositiveI64>:$rotary_dim);
  let results = (outs Transformer_HeadTensor:$result);
  let assemblyFormat = [{
    $input (`offset` $position_offset^)?
    (`positions` `(` $positions^ `:` type($positions) `)`)? attr-dict `:`
    type($input)
  }];
  let extraClassDeclaration = [{
    /// The number of rotated elements per head (rotary_dim or the head dim).
    int64_t getRotaryDimOrHeadDim();
  }];
  let hasVerifier = 1;
}

def Transformer_SDPAOp : Transformer_Op<"sdpa", [Pure]> {
  let summary = "scaled dot-product attention with GQA/MQA and causal mask";
  let description = [{
    `query` is `[B, T, H, D]`, `key` and `value` are `[B, S, H_kv, D]`;
    `H_kv` divides `H` and query head `h` reads kv head `h / (H / H_kv)`
    (MHA: `H_kv = H`; MQA: `H_kv = 1`). For every batch `b`, query head `h`
    and query row `t`:

    ```
    s[j]   = scale * sum_d query[b, t, h, d] * key[b, j, h / (H/H_kv), d]
    p      = softmax(s)            // the row max is subtracted first
    out[d] = sum_j p[j] * value[b, j, h / (H/H_kv), d]
    ```

    `scale` defaults to `1/sqrt(D)`. With `causal`, query row `t` sees keys
    `j <= t + (S - T)` (bottom-right alignment, so that T new tokens after
    S - T cached ones see the whole cache); masked scores contribute exactly
    zero and a row with no visible key yields zeros, never NaN. The result is
    `[B, T, H, D]` (heads not yet merged).

    ```mlir
    %o = transformer.sdpa %q, %k, %v {causal}
        : tensor<?x?x32x128xf32>, tensor<?x?x8x128xf32>, tensor<?x?x8x128xf32>
        -> tensor<?x?x32x128xf32>
    ```
  }];
  let arguments = (ins Transformer_HeadTensor:$query,
                   Transformer_HeadTensor:$key,
                   Transformer_HeadTensor:$value,
                   UnitAttr:$causal,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Transformer_HeadTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` type($query) `,` type($key) `,`
    type($value) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The scale attribute, or 1/sqrt(head_dim).
    double getScaleOrDefault();
  }];
  let hasVerifier = 1;
}

def Transformer_KVCacheAppendOp : Transformer_Op<"kv_cache_append",
    [Pure, AllTypesMatch<["cache", "result"]>]> {
  let summary = "write new key or value rows into a KV cache at a position";
  let description = [{
    `cache` is one layer's key (or value) cache `[B, L_max, H_kv, D]`
    (`L_max` is its capacity), `new_entries` the `T` new rows
    `[B, T, H_kv, D]` and `position` the number of rows already cached. The
    result is the cache with rows `[position, position + T)` replaced:

    ```
    result[b, position + t, h, d] = new_entries[b, t, h, d]   // t < T
    result[b, j, h, d]            = cache[b, j, h, d]         // other j
    ```

    `position + T <= L_max` is required; the static part is verified, the
    dynamic part is checked at run time (the lowering emits a `cf.assert`
    that aborts with a message instead of writing out of bounds). The op is
    destination-style in spirit: it lowers to `tensor.insert_slice`, which
    one-shot bufferization performs in place on a writable cache argument,
    so a decode step writes T rows and never copies the cache.

    ```mlir
    %kc1 = transformer.kv_cache_append %k into %kc at %pos
        : tensor<?x1x8x128xf32> into tensor<?x?x8x128xf32>
    ```
  }];
  let arguments = (ins Transformer_HeadTensor:$new_entries,
                   Transformer_HeadTensor:$cache, Index:$position);
  let results = (outs Transformer_HeadTensor:$result);
  let assemblyFormat = [{
    $new_entries `into` $cache `at` $position attr-dict `:`
    type($new_entries) `into` type($cache)
  }];
  let hasVerifier = 1;
}

def Transformer_TokenPositionsOp : Transformer_Op<"token_positions",
    [Pure]> {
  let summary = "absolute position of every packed token of a ragged batch";
  let description = [{
    `cu_seqlens` (`[B + 1]`, i32) delimits the packed new tokens of `B`
    sequences: sequence `b` owns rows `cu_seqlens[b] .. cu_seqlens[b+1] - 1`
    (`cu_seqlens[0] = 0`, `cu_seqlens[B] = total`, FlashAttention varlen's
    layout). `seq_positions` (`[B]`, i32) holds the number of tokens already
    cached for each sequence. The result `[total]` (i32) is the absolute
    position of every token:

    ```
    result[t] = seq_positions[b] + (t - cu_seqlens[b])   // cu[b] <= t < cu[b+1]
    ```

    `total` is `cu_seqlens[B]`. The rope and embedding ops of a paged entry
    read these positions.

    ```mlir
    %p = transformer.token_positions %cu, %pos
        : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
    ```
  }];
  let arguments = (ins 1DTensorOf<[I32]>:$cu_seqlens,
                   1DTensorOf<[I32]>:$seq_positions);
  let results = (outs 1DTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $cu_seqlens `,` $seq_positions attr-dict `:` type($cu_seqlens) `,`
    type($seq_positions) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Transformer_PagedKVWriteOp : Transformer_Op<"paged_kv_write",
    [Pure, AllTypesMatch<["pool", "result"]>]> {
  let summary = "write the new key or value rows of a ragged batch into pages";
  let description = [{
    `pool` is one layer's key (or value) page pool `[P, S, H_kv, D]`: `P`
    pages of `S` token slots (`S`, the page size, is static). `new_entries`
    holds the packed new rows `[1, total, H_kv, D]` of `B` sequences
    delimited by `cu_seqlens` (`[B + 1]`, as in `transformer.token_positions`);
    `seq_positions` (`[B]`) is the number of tokens each sequence has cached
    and `block_table` (`[B, max_pages]`) maps logical page `p` of sequence `b`
    to pool page `block_table[b, p]`. Row `t` of sequence `b`, at position
    `j = seq_positions[b] + t - cu_seqlens[b]`, is written to page
    `block_table[b, j / S]`, slot `j % S`; every other slot keeps its value:

    ```
    result[block_table[b, j / S], j % S, h, d] = new_entries[0, t, h, d]
    ```

    The caller guarantees that every page id is in `[0, P)` and that
    `j / S < max_pages`; the CPU lowering checks both at run time
    (`cf.assert`) as a last resort. Bufferized on a writable pool argument,
    the op writes only the new rows, in place.

    ```mlir
    %k1 = transformer.paged_kv_write %k into %kp, %bt, %cu, %pos
        : tensor<1x?x2x64xf32> into tensor<?x16x2x64xf32>, tensor<?x?xi32>,
          tensor<?xi32>, tensor<?xi32>
    ```
  }];
  let arguments = (ins Transformer_HeadTensor:$new_entries,
                   Transformer_HeadTensor:$pool,
                   2DTensorOf<[I32]>:$block_table,
                   1DTensorOf<[I32]>:$cu_seqlens,
                   1DTensorOf<[I32]>:$seq_positions);
  let results = (outs Transformer_HeadTensor:$result);
  let assemblyFormat = [{
    $new_entries `into` $pool `,` $block_table `,` $cu_seqlens `,`
    $seq_positions attr-dict `:` type($new_entries) `into` type($pool) `,`
    type($block_table) `,` type($cu_seqlens) `,` type($seq_positions)
  }];
  let hasVerifier = 1;
}

def Transformer_PagedSDPAOp : Transformer_Op<"paged_sdpa",
    [Pure, AllTypesMatch<["query", "result"]>]> {
  let summary = "causal attention of a ragged batch over paged K/V pools";
  let description = [{
    `query` holds the packed new tokens `[1, total, H, D]` of `B` sequences
    delimited by `cu_seqlens` (`[B + 1]`); `key_pool` and `value_pool` are
    one layer's page pools `[P, S, H_kv, D]` (`H_kv` divides `H`; query head
    `h` reads kv head `h / (H / H_kv)`, as `transformer.sdpa`), already
    holding the new rows (`transformer.paged_kv_write`). Query row `t` of
    sequence `b` at position `p_t = seq_positions[b] + t - cu_seqlens[b]`
    attends to the keys at positions `j = 0 .. p_t` of its own sequence,
    read through `block_table` (`[B, max_pages]`) from page
    `block_table[b, j / S]`, slot `j % S`:

    ```
    s[j]   = scale * sum_d query[0, t, h, d] * key_pool[page(j), j % S, h / (H/H_kv), d]
    p      = softmax(s)            // the row max is subtracted first
    out[d] = sum_j p[j] * value_pool[page(j), j % S, h / (H/H_kv), d]
    ```

    `scale` defaults to `1/sqrt(D)`. The pools may have a narrower element
    type than the query (bf16 or f16 caches of an f32 computation): they are
    widened exactly as they are read, and the sums accumulate in f32. No
    page is gathered into a copy.

    ```mlir
    %o = transformer.paged_sdpa %q, %kp, %vp, %bt, %cu, %pos
        : tensor<1x?x4x64xf32>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>,
          tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<1x?x4x64xf32>
    ```
  }];
  let arguments = (ins Transformer_HeadTensor:$query,
                   Transformer_HeadTensor:$key_pool,
                   Transformer_HeadTensor:$value_pool,
                   2DTensorOf<[I32]>:$block_table,
                   1DTensorOf<[I32]>:$cu_seqlens,
                   1DTensorOf<[I32]>:$seq_positions,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Transformer_HeadTensor:$result);
  let assemblyFormat = [{
    $query `,` $key_pool `,` $value_pool `,` $block_table `,` $cu_seqlens `,`
    $seq_positions attr-dict `:` type($query) `,` type($key_pool) `,`
    type($value_pool) `,` type($block_table) `,` type($cu_seqlens) `,`
    type($seq_positions) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The scale attribute, or 1/sqrt(head_dim).
    double getScaleOrDefault();
  }];
  let hasVerifier = 1;
}

def Transformer_EmbeddingOp : Transformer_Op<"embedding",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "token embedding lookup, with an optional learned position table";
  let description = [{
    `ids` holds token ids `[B, T]` (i32) and `table` the embedding matrix
    `[vocab, d]`. Without a position table:

    ```
    result[b, t, :] = table[ids[b, t], :]
    ```

    With a learned position table `positions` (`[max_positions, d]`,
    GPT-2's `wpe`) and the absolute position `p = t + position_offset` of
    token `t` (the optional `offset` operand, 0 when absent; a decode step
    passes the number of tokens already cached):

    ```
    result[b, t, :] = table[ids[b, t], :] + positions[p, :]
    ```

    With the optional per-token positions `token_positions` (a 1-D i32
    tensor `[T]`, which requires `B = 1`, a position table, and excludes
    `offset`; the ragged paged entry's packed tokens), token `t` reads
    position row `p = token_positions[t]` instead.

    The result is `[B, T, d]` in the table's element type (the rows are
    copied exactly; the sum with a position row is computed in f32 and
    rounded once to that type, as PyTorch adds two bf16 tensors). Ids
    outside `[0, vocab)` and positions outside `[0, max_positions)` are
    not defined: the lowering clamps them into range (never reading out of
    bounds) and blockc-run rejects them before running.

    ```mlir
    %x = transformer.embedding %ids, %wte positions(%wpe : tensor<1024x768xf32>)
        offset %pos : tensor<?x?xi32>, tensor<50257x768xf32> -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[I32]>:$ids,
                   Transformer_Weight:$table,
                   Optional<Transformer_Weight>:$positions,
                   Optional<Index>:$position_offset,
                   Optional<1DTensorOf<[I32]>>:$token_positions);
  let results = (outs Transformer_Activation:$result);
  let assemblyFormat = [{
    $ids `,` $table (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`offset` $position_offset^)?
    (`token_positions` `(` $token_positions^ `:` type($token_positions) `)`)?
    attr-dict `:` type($ids) `,` type($table) `->` type($result)
  }];
  let builders = [
    // Infers the result type [B, T, d] from the ids and the table.
    OpBuilder<(ins "::mlir::Value":$ids, "::mlir::Value":$table,
                   CArg<"::mlir::Value", "{}">:$positions,
                   CArg<"::mlir::Value", "{}">:$positionOffset,
                   CArg<"::mlir::Value", "{}">:$tokenPositions)>
  ];
  let hasVerifier = 1;
}

def Transformer_ActivationOp : Transformer_Op<"activation",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "pointwise activation function";
  let description = [{
    Applies `kind` elementwise:

    * `silu`: `x * sigmoid(x)` (a.k.a. swish);
    * `gelu`: exact GeLU `0.5 x (1 + erf(x / sqrt(2)))`;
    * `gelu_tanh`: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`;
    * `relu`: `max(x, 0)`.

    ```mlir
    %a = transformer.activation <silu> %g : tensor<?x?x11008xf32>
    ```
  }];
  let arguments = (ins Transformer_ActivationKindAttr:$kind,
                   Transformer_Tensor:$input);
  let results = (outs Transformer_Tensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def Transformer_ResidualAddOp : Transformer_Op<"residual_add",
    [Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "residual connection: elementwise sum of two activations";
  let description = [{
    `result = residual + update`, elementwise, for two tensors of the same
    type.

    ```mlir
    %h = transformer.residual_add %x, %attn : tensor<?x?x4096xf32>
    ```
  }];
  let arguments = (ins Transformer_Tensor:$residual,
                   Transformer_Tensor:$update);
  let results = (outs Transformer_Tensor:$result);
  let assemblyFormat = "$residual `,` $update attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

def Transformer_FFNOp : Transformer_Op<"ffn",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "feed-forward sub-layer, gated (SwiGLU/GeGLU) or plain";
  let description = [{
    `input` is `[B, T, d]`. With a `gate` weight (gated FFN, e.g. SwiGLU):

    ```
    result = (act(x W_gate^T + b_gate) * (x W_up^T + b_up)) W_down^T + b_down
    ```

    without it (plain FFN, e.g. the 2017 ReLU FFN):

    ```
    result = act(x W_up^T + b_up) W_down^T + b_down
    ```

    `W_gate`, `W_up` are `[d_ff, d]`, `W_down` is `[d, d_ff]`; each bias is
    optional (`[d_ff]` or `[d]`). Norm and residual belong to the enclosing
    block.

    ```mlir
    %y = transformer.ffn %x gate(%wg : tensor<11008x4096xf32>)
        up(%wu : tensor<11008x4096xf32>) down(%wd : tensor<4096x11008xf32>)
        {activation = #transformer.activation<silu>} : tensor<?x?x4096xf32>
    ```
  }];
  let arguments = (ins Transformer_Activation:$input,
                   Optional<Transformer_Weight>:$w_gate,
                   Optional<Transformer_Weight>:$b_gate,
                   Transformer_Weight:$w_up,
                   Optional<Transformer_Weight>:$b_up,
                   Transformer_Weight:$w_down,
                   Optional<Transformer_Weight>:$b_down,
                   DefaultValuedAttr<Transformer_ActivationKindAttr,
                     "::blockc::transformer::ActivationKind::silu">:$activation,
                   OptionalAttr<Transformer_WeightQuantAttr>:$weight_quant);
  let results = (outs Transformer_Activation:$result);
  let assemblyFormat = [{
    $input
    (`gate` `(` $w_gate^ `:` type($w_gate) `)`)?
    (`gate_bias` `(` $b_gate^ `:` type($b_gate) `)`)?
    `up` `(` $w_up `:` type($w_up) `)`
    (`up_bias` `(` $b_up^ `:` type($b_up) `)`)?
    `down` `(` $w_down `:` type($w_down) `)`
    (`down_bias` `(` $b_down^ `:` type($b_down) `)`)?
    attr-dict `:` type($input)
  }];
  let extraClassDeclaration = [{
    bool isGated() { return static_cast<bool>(getWGate()); }
    /// The weight operands with their names (as in diagnostics and weight
    /// binding), in operand order; absent optional operands are null.
    ::llvm::SmallVector<std::pair<::llvm::StringRef, ::mlir::Value>>
    getNamedWeights();
  }];
  let hasVerifier = 1;
}

def Transformer_AttentionOp : Transformer_Op<"attention",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "attention sub-layer: Q/K/V projections, RoPE, SDPA, output projection";
  let description = [{
    `input` is `[B, T, d]`. With `H = num_heads`, `H_kv = num_kv_heads`
    (dividing `H`) and `D = head_dim`:

    ```
    q = (x W_q^T + b_q).view(B, T, H, D)        // W_q: [H*D, d]
    k = (x W_k^T + b_k).view(B, T, H_kv, D)     // W_k: [H_kv*D, d]
    v = (x W_v^T + b_v).view(B, T, H_kv, D)     // W_v: [H_kv*D, d]
    q, k = rope(q), rope(k)                     // only when `rope` is set
    o = sdpa(q, k, v)                           // causal if `causal`
    result = o.view(B, T, H*D) W_o^T + b_o      // W_o: [d, H*D]
    ```

    Each bias is optional. `rope` selects the RoPE layout (absent: no
    rotary embedding, e.g. the 2017 block whose positions are added to the
    embeddings), `rope_theta` its base; `scale` defaults to `1/sqrt(D)`.

    ```mlir
    %a = transformer.attention %x q(%wq : tensor<4096x4096xf32>)
        k(%wk : tensor<1024x4096xf32>) v(%wv : tensor<1024x4096xf32>)
        o(%wo : tensor<4096x4096xf32>)
        {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64,
         causal, rope = #transformer.rope<rotate_half>}
        : tensor<?x?x4096xf32>
    ```
  }];
  let arguments = (ins Transformer_Activation:$input,
                   Transformer_Weight:$w_q, Optional<Transformer_Weight>:$b_q,
                   Transformer_Weight:$w_k, Optional<Transformer_Weight>:$b_k,
                   Transformer_Weight:$w_v, Optional<Transformer_Weight>:$b_v,
                   Transformer_Weight:$w_o, Optional<Transformer_Weight>:$b_o,
                   Transformer_PositiveI64:$num_heads,
                   Transformer_PositiveI64:$num_kv_heads,
                   Transformer_PositiveI64:$head_dim,
                   UnitAttr:$causal,
                   OptionalAttr<Transformer_RoPELayoutAttr>:$rope,
                   DefaultValuedAttr<F64Attr, "10000.0">:$rope_theta,
                   OptionalAttr<F64Attr>:$scale,
                   OptionalAttr<Transformer_WeightQuantAttr>:$weight_quant);
  let results = (outs Transformer_Activation:$result);
  let assemblyFormat = [{
    $input
    `q` `(` $w_q `:` type($w_q) `)`
    (`q_bias` `(` $b_q^ `:` type($b_q) `)`)?
    `k` `(` $w_k `:` type($w_k) `)`
    (`k_bias` `(` $b_k^ `:` type($b_k) `)`)?
    `v` `(` $w_v `:` type($w_v) `)`
    (`v_bias` `(` $b_v^ `:` type($b_v) `)`)?
    `o` `(` $w_o `:` type($w_o) `)`
    (`o_bias` `(` $b_o^ `:` type($b_o) `)`)?
    attr-dict `:` type($input)
  }];
  let extraClassDeclaration = [{
    /// The weight operands with their names (as in diagnostics and weight
    /// binding), in operand order; absent optional operands are null.
    ::llvm::SmallVector<std::pair<::llvm::StringRef, ::mlir::Value>>
    getNamedWeights();
  }];
  let hasVerifier = 1;
}

def Transformer_BlockOp : Transformer_Op<"block",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "a whole transformer block (pre-norm or post-norm)";
  let description = [{
    `input` is `[B, T, d]`; the result has the same type. The block carries
    its whole configuration as attributes and its weights as operands.

    Pre-norm (`norm_placement = pre`, default; Llama, Mistral, Qwen, GPT-2):

    ```
    h      = x + Attention(Norm_attn(x))
    result = h + FFN(Norm_ffn(h))
    ```

    Post-norm (`norm_placement = post`; the 2017 Transformer):

    ```
    h      = Norm_attn(x + Attention(x))
    result = Norm_ffn(h + FFN(h))
    ```

    * `norm`: `rms` (weight only) or `layer` (weight and bias, which are then
      required); `epsilon` > 0 is used by both norms.
    * Attention: `num_heads`, `num_kv_heads` (divides `num_heads`),
      `head_dim`, `causal`, optional `rope` layout and `rope_theta`, with the
      projections and optional biases of `transformer.attention`.
    * FFN: `activation`, `d_ff`, gated when the `gate` weight is present,
      with the weights and optional biases of `transformer.ffn`.

    ```mlir
    %y = transformer.block %x attn_norm(%g1 : tensor<4096xf32>)
        q(%wq : tensor<4096x4096xf32>) k(%wk : tensor<4096x4096xf32>)
        v(%wv : tensor<4096x4096xf32>) o(%wo : tensor<4096x4096xf32>)
        ffn_norm(%g2 : tensor<4096xf32>) gate(%wg : tensor<11008x4096xf32>)
        up(%wu : tensor<11008x4096xf32>) down(%wd : tensor<4096x11008xf32>)
        {num_heads = 32 : i64, num_kv_heads = 32 : i64, head_dim = 128 : i64,
         d_ff = 11008 : i64, causal, rope = #transformer.rope<rotate_half>}
        : tensor<?x?x4096xf32>
    ```
  }];
  let arguments = (ins Transformer_Activation:$input,
                   Transformer_Weight:$attn_norm_weight,
                   Optional<Transformer_Weight>:$attn_norm_bias,
                   Transformer_Weight:$w_q, Optional<Transformer_Weight>:$b_q,
                   Transformer_Weight:$w_k, Optional<Transformer_Weight>:$b_k,
                   Transformer_Weight:$w_v, Optional<Transformer_Weight>:$b_v,
                   Transformer_Weight:$w_o, Optional<Transformer_Weight>:$b_o,
                   Transformer_Weight:$ffn_norm_weight,
                   Optional<Transformer_Weight>:$ffn_norm_bias,
                   Optional<Transformer_Weight>:$w_gate,
                   Optional<Transformer_Weight>:$b_gate,
                   Transformer_Weight:$w_up, Optional<Transformer_Weight>:$b_up,
                   Transformer_Weight:$w_down,
                   Optional<Transformer_Weight>:$b_down,
                   DefaultValuedAttr<Transformer_NormKindAttr,
                     "::blockc::transformer::NormKind::rms">:$norm,
                   DefaultValuedAttr<Transformer_NormPlacementAttr,
                     "::blockc::transformer::NormPlacement::pre">:$norm_placement,
                   DefaultValuedAttr<Transformer_ActivationKindAttr,
                     "::blockc::transformer::ActivationKind::silu">:$activation,
                   Transformer_PositiveI64:$num_heads,
                   Transformer_PositiveI64:$num_kv_heads,
                   Transformer_PositiveI64:$head_dim,
                   Transformer_PositiveI64:$d_ff,
                   DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon,
                   UnitAttr:$causal,
                   OptionalAttr<Transformer_RoPELayoutAttr>:$rope,
                   DefaultValuedAttr<F64Attr, "10000.0">:$rope_theta,
                   OptionalAttr<Transformer_WeightQuantAttr>:$weight_quant);
  let results = (outs Transformer_Activation:$result);
  let assemblyFormat = [{
    $input
    `attn_norm` `(` $attn_norm_weight `:` type($attn_norm_weight) `)`
    (`attn_norm_bias` `(` $attn_norm_bias^ `:` type($attn_norm_bias) `)`)?
    `q` `(` $w_q `:` type($w_q) `)`
    (`q_bias` `(` $b_q^ `:` type($b_q) `)`)?
    `k` `(` $w_k `:` type($w_k) `)`
    (`k_bias` `(` $b_k^ `:` type($b_k) `)`)?
    `v` `(` $w_v `:` type($w_v) `)`
    (`v_bias` `(` $b_v^ `:` type($b_v) `)`)?
    `o` `(` $w_o `:` type($w_o) `)`
    (`o_bias` `(` $b_o^ `:` type($b_o) `)`)?
    `ffn_norm` `(` $ffn_norm_weight `:` type($ffn_norm_weight) `)`
    (`ffn_norm_bias` `(` $ffn_norm_bias^ `:` type($ffn_norm_bias) `)`)?
    (`gate` `(` $w_gate^ `:` type($w_gate) `)`)?
    (`gate_bias` `(` $b_gate^ `:` type($b_gate) `)`)?
    `up` `(` $w_up `:` type($w_up) `)`
    (`up_bias` `(` $b_up^ `:` type($b_up) `)`)?
    `down` `(` $w_down `:` type($w_down) `)`
    (`down_bias` `(` $b_down^ `:` type($b_down) `)`)?
    attr-dict `:` type($input)
  }];
  let extraClassDeclaration = [{
    bool isGated() { return static_cast<bool>(getWGate()); }
    bool isPreNorm() {
      return getNormPlacement() == ::blockc::transformer::NormPlacement::pre;
    }
    /// The weight operands with their names (as in diagnostics and weight
    /// binding), in operand order; absent optional operands are null.
    ::llvm::SmallVector<std::pair<::llvm::StringRef, ::mlir::Value>>
    getNamedWeights();

  }];
  let hasVerifier = 1;
}

#endif // BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD
