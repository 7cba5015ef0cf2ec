// RUN: memfmt-opt %s -split-input-file -verify-diagnostics

// A plan names one of the three buffers of a compiled model.
// expected-error @+1 {{#memfmt.buffer: unknown buffer 'heap'; expected arena, weights or input}}
func.func @unknown() attributes {plan = #memfmt.buffer<heap, offset = 0, bytes = 4>} {
  return
}

// -----

// Offsets and sizes count bytes forward.
// expected-error @+1 {{#memfmt.buffer: index, offset and bytes must be >= 0, got 0, -64 and 4}}
func.func @negative() attributes {plan = #memfmt.buffer<arena, offset = -64, bytes = 4>} {
  return
}
