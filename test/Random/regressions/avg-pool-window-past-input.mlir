// Found by randgraph.py (seed 2, graph 35), reduced: an avg_pool2d whose
// 3-high window is taller than its 2-high input, with ceil_mode and stride
// 2 (ATen gives one clipped window, as the verifier did). The runtime
// rejected it ("the kernel height 3 is larger than the padded input height
// 2") although the compiler had accepted it; the runtime now takes ATen's
// output size.
// RUN: %python %S/../randgraph.py check %s --bin %memfmt_bin --workdir %t --seed 2 | FileCheck %s
// CHECK: avg-pool-window-past-input.mlir: PASS
func.func @graphs(%x: tensor<2x1x2x7xf32, #memfmt.strides<[14, 1, 7, 1]>>) -> tensor<2x1x1x4xf32> {
  %y = memfmt.avg_pool2d %x {stride = array<i64: 2, 2>, count_include_pad = false, kernel_size = array<i64: 3, 1>, padding = array<i64: 0, 0, 0, 0>, ceil_mode = true} : tensor<2x1x2x7xf32, #memfmt.strides<[14, 1, 7, 1]>> -> tensor<2x1x1x4xf32>
  return %y : tensor<2x1x1x4xf32>
}
