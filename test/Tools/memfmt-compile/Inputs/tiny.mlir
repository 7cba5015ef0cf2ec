// A small conv-bn-relu-pool-fc network in NCHW, as saved, with torchvision
// style parameter names: the .mlir input of memfmt-compile's tests.
func.func @tiny(%x: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> {
  %w = memfmt.weight "conv.weight" : tensor<8x3x3x3xf32>
  %c = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>}
      : (tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x8x8xf32>
  %g = memfmt.weight "bn.weight" : tensor<8xf32>
  %b = memfmt.weight "bn.bias" : tensor<8xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<8xf32>
  %v = memfmt.weight "bn.running_var" : tensor<8xf32>
  %n = memfmt.batch_norm %c, %g, %b, %m, %v
      : tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32> -> tensor<2x8x8x8xf32>
  %r = memfmt.relu %n : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  %p = memfmt.adaptive_avg_pool2d %r {output_size = array<i64: 1, 1>}
      : tensor<2x8x8x8xf32> -> tensor<2x8x1x1xf32>
  %f = memfmt.flatten %p {start_dim = 1 : i64}
      : tensor<2x8x1x1xf32> -> tensor<2x8xf32>
  %fw = memfmt.weight "fc.weight" : tensor<10x8xf32>
  %fb = memfmt.weight "fc.bias" : tensor<10xf32>
  %y = memfmt.linear %f, %fw, %fb
      : (tensor<2x8xf32>, tensor<10x8xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}
