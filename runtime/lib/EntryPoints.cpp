//===- EntryPoints.cpp - The C entry points compiled models call ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Defines every `_mlir_ciface_memfmt_<NAME>_<T>` declared in kernel_abi.h by
// expanding Kernels.def once more: each entry point decodes its tensor
// arguments into the kernel's args struct (KernelArgs.h), copies its scalars
// and hands the struct to KernelCall::run, which validates it and runs it on
// the context's backend. Nothing here is written per kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelCall.h"

#include "memfmt/runtime/kernel_abi.h"

using namespace memfmt::runtime;

/// Statements that fill `memfmtArgs` from the entry point's parameters.
#define MEMFMT_RT_DECODE(ARGS)                                                 \
  MEMFMT_RT_DECODE_CAT(MEMFMT_RT_DECODE_A ARGS, _END)
#define MEMFMT_RT_DECODE_CAT(A, B) MEMFMT_RT_DECODE_CAT_I(A, B)
#define MEMFMT_RT_DECODE_CAT_I(A, B) A##B
#define MEMFMT_RT_DECODE_A(K, N) MEMFMT_RT_DECODE_##K(N) MEMFMT_RT_DECODE_B
#define MEMFMT_RT_DECODE_B(K, N) MEMFMT_RT_DECODE_##K(N) MEMFMT_RT_DECODE_A
#define MEMFMT_RT_DECODE_A_END
#define MEMFMT_RT_DECODE_B_END
#define MEMFMT_RT_DECODE_IN(N) memfmtCall.decode(memfmtArgs.N, N, #N, dtype);
#define MEMFMT_RT_DECODE_OUT(N) memfmtCall.decode(memfmtArgs.N, N, #N, dtype);
#define MEMFMT_RT_DECODE_OUT_I64(N)                                            \
  memfmtCall.decode(memfmtArgs.N, N, #N, DType::i64);
#define MEMFMT_RT_DECODE_IN_I64(N)                                             \
  memfmtCall.decode(memfmtArgs.N, N, #N, DType::i64);
#define MEMFMT_RT_DECODE_IN_F32(N)                                             \
  memfmtCall.decode(memfmtArgs.N, N, #N, DType::f32);
#define MEMFMT_RT_DECODE_OUT_F32(N)                                            \
  memfmtCall.decode(memfmtArgs.N, N, #N, DType::f32);
#define MEMFMT_RT_DECODE_I64(N) memfmtArgs.N = N;
#define MEMFMT_RT_DECODE_F64(N) memfmtArgs.N = N;

#define MEMFMT_RT_DEFINE_ENTRY(NAME, T, ARGS)                                  \
  extern "C" int32_t MEMFMT_ABI_SYMBOL(NAME, T)(                               \
      memfmt_context_t * ctx, int64_t node MEMFMT_ABI_PARAMS(ARGS)) {          \
    constexpr DType dtype = DType::T;                                          \
    KernelCall memfmtCall(ctx, node, "memfmt_" #NAME "_" #T, dtype);           \
    args::NAME memfmtArgs;                                                     \
    MEMFMT_RT_DECODE(ARGS)                                                     \
    return memfmtCall.run(memfmtArgs);                                         \
  }

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
  MEMFMT_ABI_FOR_EACH_DTYPE(MEMFMT_RT_DEFINE_ENTRY, NAME, ARGS, DTYPES)
#include "memfmt/runtime/Kernels.def"
