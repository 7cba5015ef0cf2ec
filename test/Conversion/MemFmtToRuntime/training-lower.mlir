// RUN: memfmt-opt %s -split-input-file --convert-memfmt-to-runtime | FileCheck %s

// Only the weight gradient is wanted: the kernel gets grad_weight's view in
// place of the absent grad_input and grad_bias, with has_grad_input = 0,
// has_grad_weight = 1, has_grad_bias = 0 (after stride 2, symmetric padding
// 0 as top, left, bottom, right, dilation 1, groups 1).
// CHECK-LABEL: func.func @memfmt_forward
// CHECK: memref.cast %{{.+}} : memref<1x2x7x7xf32
// CHECK-NEXT: memref.cast %{{.+}} : memref<4x2x3x3xf32
// CHECK-NEXT: memref.cast %[[GW:.+]] : memref<4x2x3x3xf32
// CHECK-NEXT: memref.cast %[[GW]] : memref<4x2x3x3xf32
// CHECK-NEXT: memref.cast %[[GW]] : memref<4x2x3x3xf32
// CHECK-NEXT: call @memfmt_convolution_backward_f32({{.+}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
func.func @conv_backward(%go: tensor<1x4x3x3xf32>, %x: tensor<1x2x7x7xf32>) -> tensor<4x2x3x3xf32> {
  %w = memfmt.weight "w" : tensor<4x2x3x3xf32>
  %gi, %gw, %gb = memfmt.convolution_backward %go, %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, output_mask = array<i1: false, true, false>} : (tensor<1x4x3x3xf32>, tensor<1x2x7x7xf32>, tensor<4x2x3x3xf32>) -> (tensor<1x2x7x7xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>)
  return %gw : tensor<4x2x3x3xf32>
}

// -----

// A bf16 step wanting only grad_input: no present output or operand is f32,
// so the absent f32 grad_weight and grad_bias get empty views of their ranks
// at the start of grad_output's buffer (an input), with has_grad_weight = 0
// and has_grad_bias = 0.
// CHECK-LABEL: func.func @memfmt_forward
// CHECK: memref.view %arg3[%{{.+}}][] : memref<?xi8> to memref<1xf32>
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [0, 0, 0, 0]
// CHECK: memref.view %arg3[%{{.+}}][] : memref<?xi8> to memref<1xf32>
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [0]
// CHECK: call @memfmt_convolution_backward_bf16({{.+}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
func.func @conv_backward_bf16_input_only(%go: tensor<1x4x5x5xbf16>, %x: tensor<1x2x7x7xbf16>, %w: tensor<4x2x3x3xbf16>) -> tensor<1x2x7x7xbf16> {
  %gi, %gw, %gb = memfmt.convolution_backward %go, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, output_mask = array<i1: true, false, false>} : (tensor<1x4x5x5xbf16>, tensor<1x2x7x7xbf16>, tensor<4x2x3x3xbf16>) -> (tensor<1x2x7x7xbf16>, tensor<4x2x3x3xf32>, tensor<4xf32>)
  return %gi : tensor<1x2x7x7xbf16>
}

// -----

// avg_pool2d_backward takes the forward kernel's window: kernel 3x3, stride
// 2, padding 1 on every side (ceil_mode is in the shapes), and
// count_include_pad = 0.
// CHECK-LABEL: func.func @memfmt_forward
// CHECK: call @memfmt_avg_pool2d_backward_f32({{.+}}, %c3_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
func.func @avg_pool_backward(%go: tensor<1x2x4x4xf32>, %x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %gi = memfmt.avg_pool2d_backward %go, %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false} : (tensor<1x2x4x4xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  return %gi : tensor<1x2x6x6xf32>
}

// -----

// sgd_update without `step`: a 0-d i64 view of the gradient's buffer (input
// 0 here) stands in, with has_step = 0. With momentum 0 the kernel leaves
// momentum_buffer_out unwritten; it is used and not in the buffer's own
// slot, so the buffer is copied into it.
// CHECK-LABEL: func.func @memfmt_forward
// CHECK: memref.view %arg3[%{{.+}}][] : memref<?xi8> to memref<1xi64>
// CHECK: call @memfmt_sgd_update_f32({{.+}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK: call @memfmt_copy_f32
// CHECK: call @memfmt_add_f32
func.func @sgd_no_momentum(%g: tensor<4xf32>) -> tensor<4xf32> {
  %w = memfmt.weight "w" : tensor<4xf32>
  %b = memfmt.weight "b" : tensor<4xf32>
  %w1, %b1 = memfmt.sgd_update %w, %g, %b {lr = 0.5 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %s = memfmt.add %w1, %b1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// With `step` and momentum, sgd_update reads the step (has_step = 1) and
// needs no copy (nesterov = 0); without `found_inf` it is never skipped
// (has_found_inf = 0).
// CHECK-LABEL: func.func @memfmt_forward
// CHECK: call @memfmt_sgd_update_f32({{.+}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: call @memfmt_copy_f32
// CHECK: call @memfmt_add_f32
func.func @sgd_step(%g: tensor<4xf32>, %step: tensor<i64>) -> tensor<4xf32> {
  %w = memfmt.weight "w" : tensor<4xf32>
  %b = memfmt.weight "b" : tensor<4xf32>
  %w1, %b1 = memfmt.sgd_update %w, %g, %b step %step {lr = 0.5 : f64, momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov = false} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  %s = memfmt.add %w1, %b1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// The step count is incremented in its model-state slot (the weights blob,
// %arg2): the increment kernel writes where it reads, and the assignment
// costs no copy.
// CHECK-LABEL: func.func private @memfmt_increment_i64
// CHECK-LABEL: func.func @memfmt_forward
// CHECK: %[[A:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %arg2[%[[A]]][] : memref<?xi8> to memref<1xi64>
// CHECK: memref.view %arg2[%{{.+}}][] : memref<?xi8> to memref<1xf32>
// CHECK: %[[B:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %arg2[%[[B]]][] : memref<?xi8> to memref<1xi64>
// CHECK: call @memfmt_increment_i64({{.+}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: call @memfmt_copy
func.func @step_count() {
  %s = memfmt.weight "optimizer.step" {zero_init} : tensor<i64>
  %n = memfmt.increment %s : tensor<i64>
  memfmt.assign_weight "optimizer.step", %n : tensor<i64>
  return
}
