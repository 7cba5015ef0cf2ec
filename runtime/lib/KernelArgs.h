//===- KernelArgs.h - One struct per kernel, from Kernels.def ---*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The arguments of each kernel of Kernels.def after decoding, as one struct
// per kernel in namespace memfmt::runtime::args, with Kernels.def's argument
// names as field names: tensors become TensorViews, MEMFMT_I64 an int64_t,
// MEMFMT_F64 a double. EntryPoints.cpp fills them, Validate.cpp checks them
// and the backends run them, so adding a kernel to Kernels.def adds its
// struct, its entry points and a pure virtual Backend::run overload that
// every backend must implement.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_KERNELARGS_H
#define MEMFMT_RUNTIME_LIB_KERNELARGS_H

#include "TensorView.h"

#include "memfmt/runtime/kernel_abi.h"

#include <cstdint>

/// Field declarations of an argument sequence (see kernel_abi.h).
#define MEMFMT_RT_FIELDS(ARGS)                                                 \
  MEMFMT_RT_FIELDS_CAT(MEMFMT_RT_FIELDS_A ARGS, _END)
#define MEMFMT_RT_FIELDS_CAT(A, B) MEMFMT_RT_FIELDS_CAT_I(A, B)
#define MEMFMT_RT_FIELDS_CAT_I(A, B) A##B
#define MEMFMT_RT_FIELDS_A(K, N) MEMFMT_RT_FIELD_##K(N) MEMFMT_RT_FIELDS_B
#define MEMFMT_RT_FIELDS_B(K, N) MEMFMT_RT_FIELD_##K(N) MEMFMT_RT_FIELDS_A
#define MEMFMT_RT_FIELDS_A_END
#define MEMFMT_RT_FIELDS_B_END
#define MEMFMT_RT_FIELD_IN(N) ::memfmt::runtime::TensorView N;
#define MEMFMT_RT_FIELD_OUT(N) ::memfmt::runtime::TensorView N;
#define MEMFMT_RT_FIELD_OUT_I64(N) ::memfmt::runtime::TensorView N;
#define MEMFMT_RT_FIELD_IN_I64(N) ::memfmt::runtime::TensorView N;
#define MEMFMT_RT_FIELD_IN_F32(N) ::memfmt::runtime::TensorView N;
#define MEMFMT_RT_FIELD_OUT_F32(N) ::memfmt::runtime::TensorView N;
#define MEMFMT_RT_FIELD_I64(N) int64_t N = 0;
#define MEMFMT_RT_FIELD_F64(N) double N = 0;

namespace memfmt::runtime::args {

#define MEMFMT_DTYPE(T) MEMFMT_ABI_DTYPE(T)
#define MEMFMT_IN(N) MEMFMT_ABI_IN(N)
#define MEMFMT_OUT(N) MEMFMT_ABI_OUT(N)
#define MEMFMT_OUT_I64(N) MEMFMT_ABI_OUT_I64(N)
#define MEMFMT_IN_I64(N) MEMFMT_ABI_IN_I64(N)
#define MEMFMT_IN_F32(N) MEMFMT_ABI_IN_F32(N)
#define MEMFMT_OUT_F32(N) MEMFMT_ABI_OUT_F32(N)
#define MEMFMT_I64(N) MEMFMT_ABI_I64(N)
#define MEMFMT_F64(N) MEMFMT_ABI_F64(N)
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  struct NAME {                                                                \
    MEMFMT_RT_FIELDS(ARGS)                                                     \
  };
#include "memfmt/runtime/Kernels.def"
#undef MEMFMT_DTYPE
#undef MEMFMT_IN
#undef MEMFMT_OUT
#undef MEMFMT_OUT_I64
#undef MEMFMT_IN_I64
#undef MEMFMT_IN_F32
#undef MEMFMT_OUT_F32
#undef MEMFMT_I64
#undef MEMFMT_F64

} // namespace memfmt::runtime::args

#endif // MEMFMT_RUNTIME_LIB_KERNELARGS_H
