//===- TransformerAttrs.td - transformer enum attributes ---*- tablegen -*-===//
//
// Enumerations that configure transformer ops: the norm kind and placement,
// the activation function and the RoPE layout.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
#define BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD

include "blockc/Dialect/Transformer/IR/TransformerBase.td"
include "mlir/IR/EnumAttr.td"

def Transformer_NormKind : I32EnumAttr<"NormKind", "normalisation kind", [
    I32EnumAttrCase<"rms", 0>,
    I32EnumAttrCase<"layer", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_NormKindAttr
    : EnumAttr<Transformer_Dialect, Transformer_NormKind, "norm"> {
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_NormPlacement : I32EnumAttr<"NormPlacement",
    "where the norms sit relative to the residual adds", [
    I32EnumAttrCase<"pre", 0>,
    I32EnumAttrCase<"post", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_NormPlacementAttr
    : EnumAttr<Transformer_Dialect, Transformer_NormPlacement, "placement"> {
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_ActivationKind : I32EnumAttr<"ActivationKind",
    "pointwise activation function", [
    I32EnumAttrCase<"silu", 0>,
    I32EnumAttrCase<"gelu", 1>,
    I32EnumAttrCase<"gelu_tanh", 2>,
    I32EnumAttrCase<"relu", 3>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_ActivationKindAttr
    : EnumAttr<Transformer_Dialect, Transformer_ActivationKind, "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_RoPELayout : I32EnumAttr<"RoPELayout",
    "how rotary pairs are laid out in a head vector", [
    I32EnumAttrCase<"rotate_half", 0>,
    I32EnumAttrCase<"interleaved", 1>
  ]> {
  let cppNamespace = "::blockc::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_RoPELayoutAttr
    : EnumAttr<Transformer_Dialect, Transformer_RoPELayout, "rope"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
