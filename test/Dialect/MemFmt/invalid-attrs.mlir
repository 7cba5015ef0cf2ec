// RUN: memfmt-opt %s -split-input-file -verify-diagnostics

// Errors of the #memfmt.strides encoding (MemFmtAttrs.cpp) and of the
// #memfmt.memory_format enum attribute, each located at the attribute.

// One stride per dimension.
// expected-error @+1 {{#memfmt.strides has 3 strides but the tensor has rank 4}}
func.func @stride_count(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15]>>) {
  return
}

// -----

// A rank-0 tensor has an empty stride list.
// expected-error @+1 {{#memfmt.strides has 1 strides but the tensor has rank 0}}
func.func @stride_count_rank0(%x: tensor<f32, #memfmt.strides<[1]>>) {
  return
}

// -----

// Strides are non-negative.
// expected-error @+1 {{#memfmt.strides: stride -15 of dimension 2 is negative; strides count elements forward}}
func.func @negative_stride(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, -15, 3]>>) {
  return
}

// -----

// Strides are non-negative also where the attribute stands alone.
// expected-error @+1 {{stride -1 of dimension 0 is negative}}
func.func @negative_stride_attribute() attributes {s = #memfmt.strides<[-1]>} {
  return
}

// -----

// The strides of a dynamic shape are not known.
// expected-error @+1 {{#memfmt.strides requires a static shape; the strides of a dynamic shape are not known}}
func.func @dynamic_shape(%x: tensor<?x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) {
  return
}

// -----

// Malformed: the stride list is not closed.
// expected-error @+1 {{unbalanced '[' character in pretty dialect name}}
func.func @unclosed_list(%x: tensor<2x3xf32, #memfmt.strides<[1, 2>>) {
  return
}

// -----

// Malformed: the strides are a list, not a bare integer.
// expected-error @+1 {{expected '['}}
func.func @bare_integer(%x: tensor<2x3xf32, #memfmt.strides<1>>) {
  return
}

// -----

// Malformed: strides are integers.
// expected-error @+1 {{expected integer value}}
func.func @float_stride(%x: tensor<2x3xf32, #memfmt.strides<[3.0, 1]>>) {
  return
}

// -----

// memory_format is one of contiguous, channels_last and preserve.
// expected-error @+2 {{expected ::mlir::memfmt::MemoryFormat to be one of: contiguous, channels_last, preserve}}
// expected-error @+1 {{failed to parse MemFmt_MemoryFormatAttr parameter 'value'}}
func.func @unknown_memory_format() attributes {fmt = #memfmt.memory_format<nhwc>} {
  return
}

// -----

// An unknown memory_format is rejected in an op's attribute too.
func.func @unknown_memory_format_on_op(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{expected ::mlir::memfmt::MemoryFormat to be one of: contiguous, channels_last, preserve}}
  // expected-error @+1 {{failed to parse MemFmt_MemoryFormatAttr parameter 'value'}}
  %y = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_first>} : tensor<1x3x8x8xf32>
  return
}
