// RUN: memfmt-opt %s --memfmt-propagate-channels-last="inputs=channels-last outputs=channels-last" --memfmt-verify-layouts | FileCheck %s

// A squeeze-excite block (EfficientNet, MobileNetV3, RegNetY) in
// channels-last: the [N, C, 1, 1] scale of the pooled branch is contiguous
// and channels-last at once (L3), so the mul of the activation by it stays
// channels-last (L5) and nothing is converted; SiLU, HardSwish, ReLU6 and
// the sigmoid gate propagate like relu.
// CHECK-LABEL: func.func @squeeze_excite(
// CHECK-NOT: memfmt.contiguous
// CHECK: %[[ACT:.+]] = memfmt.silu %{{.+}} : tensor<2x8x5x7xf32, #memfmt.strides<[280, 1, 56, 8]>> -> tensor<2x8x5x7xf32, #memfmt.strides<[280, 1, 56, 8]>>
// CHECK: %[[GATE:.+]] = memfmt.hardsigmoid %{{.+}} : tensor<2x8x1x1xf32{{.*}}> -> tensor<2x8x1x1xf32{{.*}}>
// CHECK: %[[SE:.+]] = memfmt.mul %[[ACT]], %[[GATE]] : tensor<2x8x5x7xf32, #memfmt.strides<[280, 1, 56, 8]>>, tensor<2x8x1x1xf32{{.*}}> -> tensor<2x8x5x7xf32, #memfmt.strides<[280, 1, 56, 8]>>
// CHECK: memfmt.clamp %[[SE]] {{.*}} -> tensor<2x8x5x7xf32, #memfmt.strides<[280, 1, 56, 8]>>
// CHECK-NOT: memfmt.contiguous
// CHECK: return
func.func @squeeze_excite(%x: tensor<2x8x5x7xf32>, %w1: tensor<8x1x3x3xf32>,
                          %w2: tensor<4x8x1x1xf32>, %w3: tensor<8x4x1x1xf32>)
    -> tensor<2x8x5x7xf32> {
  %dw = memfmt.conv2d %x, %w1 {groups = 8 : i64, padding = array<i64: 1, 1>} : (tensor<2x8x5x7xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x5x7xf32>
  %act = memfmt.silu %dw : tensor<2x8x5x7xf32> -> tensor<2x8x5x7xf32>
  %pool = memfmt.adaptive_avg_pool2d %act {output_size = array<i64: 1, 1>} : tensor<2x8x5x7xf32> -> tensor<2x8x1x1xf32>
  %sq = memfmt.conv2d %pool, %w2 : (tensor<2x8x1x1xf32>, tensor<4x8x1x1xf32>) -> tensor<2x4x1x1xf32>
  %r = memfmt.hardswish %sq : tensor<2x4x1x1xf32> -> tensor<2x4x1x1xf32>
  %ex = memfmt.conv2d %r, %w3 : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x1x1xf32>
  %gate = memfmt.hardsigmoid %ex : tensor<2x8x1x1xf32> -> tensor<2x8x1x1xf32>
  %se = memfmt.mul %act, %gate : tensor<2x8x5x7xf32>, tensor<2x8x1x1xf32> -> tensor<2x8x5x7xf32>
  %y = memfmt.clamp %se {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x8x5x7xf32> -> tensor<2x8x5x7xf32>
  return %y : tensor<2x8x5x7xf32>
}
