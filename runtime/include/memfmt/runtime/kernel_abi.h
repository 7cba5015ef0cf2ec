/*===- kernel_abi.h - Kernel entry points from Kernels.def --------*- C -*-===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The C entry points compiled models call, one per kernel of Kernels.def and
 * element type, declared by expanding Kernels.def (the ABI is written once).
 * For kernel NAME and type T the declaration is
 *
 *   int32_t _mlir_ciface_memfmt_<NAME>_<T>(memfmt_context_t *ctx,
 *                                          int64_t node, <ARGS>);
 *
 * where MEMFMT_IN/MEMFMT_OUT/MEMFMT_OUT_I64/MEMFMT_IN_I64/MEMFMT_IN_F32/
 * MEMFMT_OUT_F32 become `const memfmt_memref_t *`,
 * MEMFMT_I64 `int64_t` and MEMFMT_F64 `double`, in Kernels.def's order. The
 * result is a memfmt_status_t.
 *
 * A memfmt_memref_t is MLIR's unranked memref: the rank and a pointer to the
 * ranked descriptor
 *
 *   struct { T *allocated; T *aligned; int64_t offset;
 *            int64_t sizes[rank]; int64_t strides[rank]; }
 *
 * with strides in elements and the first element at `aligned + offset`.
 * Any strides are accepted (NCHW, channels-last, strided views, zero strides
 * on inputs); outputs must not have two elements at one address.
 *
 * Aliasing: an output must not overlap an input, except that relu, add,
 * eltwise, binary, batch_norm and copy may run in place (the output is an input with the same
 * sizes and strides) and conv2d's residual may be its output. An output that
 * starts where an input starts without being allowed to is rejected
 * (MEMFMT_STATUS_INVALID_ARGUMENT); other partial overlaps are undefined.
 *
 * The second half of this file is the small preprocessor toolkit that turns
 * Kernels.def's argument lists into C. It is public so that the runtime's
 * definitions and any other C or C++ client generate from the same lists:
 * include Kernels.def with
 *
 *   MEMFMT_DTYPE(T)  defined as MEMFMT_ABI_DTYPE(T)
 *   MEMFMT_IN(N) ... defined as MEMFMT_ABI_IN(N) ... (an argument sequence)
 *
 * and a MEMFMT_KERNEL(NAME, DTYPES, ARGS) that calls
 * MEMFMT_ABI_FOR_EACH_DTYPE(M, NAME, ARGS, DTYPES) to expand M(NAME, T, ARGS)
 * once per element type; inside M, MEMFMT_ABI_PARAMS(ARGS) is the parameter
 * list after `node` (with its leading comma).
 */

#ifndef MEMFMT_RUNTIME_KERNEL_ABI_H
#define MEMFMT_RUNTIME_KERNEL_ABI_H

#include "memfmt/runtime/elementwise_ops.h"
#include "memfmt/runtime/memfmt_runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// MLIR's unranked memref: the rank and a pointer to the ranked descriptor
/// (see the file comment for its layout).
typedef struct memfmt_memref {
  int64_t rank;
  void *descriptor;
} memfmt_memref_t;

/*===----------------------------------------------------------------------===*
 * Generating C from Kernels.def
 *===----------------------------------------------------------------------===*/

/* Element types become a comma list "(, f32 , f16 , bf16)"; arguments become
 * a sequence of (KIND, NAME) pairs "(IN, input)(I64, stride_h)...". */
#define MEMFMT_ABI_DTYPE(T) , T
#define MEMFMT_ABI_IN(N) (IN, N)
#define MEMFMT_ABI_OUT(N) (OUT, N)
#define MEMFMT_ABI_OUT_I64(N) (OUT_I64, N)
#define MEMFMT_ABI_IN_I64(N) (IN_I64, N)
#define MEMFMT_ABI_IN_F32(N) (IN_F32, N)
#define MEMFMT_ABI_OUT_F32(N) (OUT_F32, N)
#define MEMFMT_ABI_I64(N) (I64, N)
#define MEMFMT_ABI_F64(N) (F64, N)

#define MEMFMT_ABI_EXPAND(...) __VA_ARGS__
#define MEMFMT_ABI_CALL1(M, ARGS) M ARGS
#define MEMFMT_ABI_CALL2(M, ARGS) M ARGS
#define MEMFMT_ABI_DTYPES_CAT(A, B) MEMFMT_ABI_DTYPES_CAT_I(A, B)
#define MEMFMT_ABI_DTYPES_CAT_I(A, B) A##B

/* Counts 1 to 6 arguments. */
#define MEMFMT_ABI_COUNT(...)                                                  \
  MEMFMT_ABI_COUNT_I(__VA_ARGS__, 6, 5, 4, 3, 2, 1, )
#define MEMFMT_ABI_COUNT_I(_1, _2, _3, _4, _5, _6, N, ...) N

/// Expands M(NAME, T, ARGS) for every element type T of DTYPES (at most 6).
#define MEMFMT_ABI_FOR_EACH_DTYPE(M, NAME, ARGS, DTYPES)                       \
  MEMFMT_ABI_CALL1(MEMFMT_ABI_DTYPES_N,                                        \
                   (M, NAME, ARGS MEMFMT_ABI_EXPAND DTYPES))
#define MEMFMT_ABI_DTYPES_N(M, NAME, ARGS, ...)                                \
  MEMFMT_ABI_CALL2(MEMFMT_ABI_DTYPES_CAT(MEMFMT_ABI_DTYPES_,                   \
                                         MEMFMT_ABI_COUNT(__VA_ARGS__)),       \
                   (M, NAME, ARGS, __VA_ARGS__))
#define MEMFMT_ABI_DTYPES_1(M, N, A, T1) M(N, T1, A)
#define MEMFMT_ABI_DTYPES_2(M, N, A, T1, T2) M(N, T1, A) M(N, T2, A)
#define MEMFMT_ABI_DTYPES_3(M, N, A, T1, T2, T3)                               \
  M(N, T1, A) M(N, T2, A) M(N, T3, A)
#define MEMFMT_ABI_DTYPES_4(M, N, A, T1, T2, T3, T4)                           \
  M(N, T1, A) M(N, T2, A) M(N, T3, A) M(N, T4, A)
#define MEMFMT_ABI_DTYPES_5(M, N, A, T1, T2, T3, T4, T5)                       \
  M(N, T1, A) M(N, T2, A) M(N, T3, A) M(N, T4, A) M(N, T5, A)
#define MEMFMT_ABI_DTYPES_6(M, N, A, T1, T2, T3, T4, T5, T6)                   \
  M(N, T1, A) M(N, T2, A) M(N, T3, A) M(N, T4, A) M(N, T5, A) M(N, T6, A)

/// The C parameters of an argument sequence, each with a leading comma.
/// The A/B pair walks the sequence (as Boost.Preprocessor's SEQ does) and
/// the _END paste drops the name left after the last element; commas are
/// deferred (MEMFMT_ABI_COMMA, expanded one scan later) so that they are not
/// taken for macro-argument separators on the way.
#define MEMFMT_ABI_PARAMS(ARGS)                                                \
  MEMFMT_ABI_PARAMS_CAT(MEMFMT_ABI_PARAMS_A ARGS, _END)
#define MEMFMT_ABI_PARAMS_CAT(A, B) MEMFMT_ABI_PARAMS_CAT_I(A, B)
#define MEMFMT_ABI_PARAMS_CAT_I(A, B) A##B
#define MEMFMT_ABI_PARAMS_A(K, N) MEMFMT_ABI_PARAM_##K(N) MEMFMT_ABI_PARAMS_B
#define MEMFMT_ABI_PARAMS_B(K, N) MEMFMT_ABI_PARAM_##K(N) MEMFMT_ABI_PARAMS_A
#define MEMFMT_ABI_PARAMS_A_END
#define MEMFMT_ABI_PARAMS_B_END
#define MEMFMT_ABI_EMPTY()
#define MEMFMT_ABI_COMMA() ,
#define MEMFMT_ABI_PARAM_IN(N)                                                 \
  MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() const memfmt_memref_t *N
#define MEMFMT_ABI_PARAM_OUT(N)                                                \
  MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() const memfmt_memref_t *N
#define MEMFMT_ABI_PARAM_OUT_I64(N)                                            \
  MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() const memfmt_memref_t *N
#define MEMFMT_ABI_PARAM_IN_I64(N)                                             \
  MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() const memfmt_memref_t *N
#define MEMFMT_ABI_PARAM_IN_F32(N)                                             \
  MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() const memfmt_memref_t *N
#define MEMFMT_ABI_PARAM_OUT_F32(N)                                            \
  MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() const memfmt_memref_t *N
#define MEMFMT_ABI_PARAM_I64(N) MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() int64_t N
#define MEMFMT_ABI_PARAM_F64(N) MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()() double N

/// The C name of kernel NAME for element type T.
#define MEMFMT_ABI_SYMBOL(NAME, T) _mlir_ciface_memfmt_##NAME##_##T

/*===----------------------------------------------------------------------===*
 * The entry points
 *===----------------------------------------------------------------------===*/

#define MEMFMT_ABI_DECLARE_ENTRY(NAME, T, ARGS)                                \
  MEMFMT_RUNTIME_EXPORT int32_t MEMFMT_ABI_SYMBOL(NAME, T)(                    \
      memfmt_context_t * ctx, int64_t node MEMFMT_ABI_PARAMS(ARGS));

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
  MEMFMT_ABI_FOR_EACH_DTYPE(MEMFMT_ABI_DECLARE_ENTRY, NAME, ARGS, DTYPES)
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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMFMT_RUNTIME_KERNEL_ABI_H */
