// The FFN half of a Llama block (d = 512, d_ff = 1408): RMSNorm prologue,
// gate/up projections with the SwiGLU epilogue, the down projection with
// the residual epilogue: every projection micro-kernel and epilogue.
func.func @forward(%x: tensor<?x?x512xf32>,
    %g: tensor<512xf32> {transformer.weight_name = "g"},
    %wg: tensor<1408x512xf32> {transformer.weight_name = "wg"},
    %wu: tensor<1408x512xf32> {transformer.weight_name = "wu"},
    %wd: tensor<512x1408xf32> {transformer.weight_name = "wd"}) -> tensor<?x?x512xf32> {
  %n = transformer.rms_norm %x, %g : tensor<?x?x512xf32>, tensor<512xf32>
  %f = transformer.ffn %n gate(%wg : tensor<1408x512xf32>) up(%wu : tensor<1408x512xf32>) down(%wd : tensor<512x1408xf32>) {activation = #transformer.activation<silu>} : tensor<?x?x512xf32>
  %y = transformer.residual_add %x, %f : tensor<?x?x512xf32>
  return %y : tensor<?x?x512xf32>
}
