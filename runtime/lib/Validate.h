//===- Validate.h - Argument checks shared by every backend -----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// One `validate` overload per kernel of Kernels.def: ranks, shapes (e.g. a
// convolution's output size against its attributes), attribute ranges, flag
// values and output aliasing. A failure is reported through the KernelCall
// (status and message naming the kernel and node) and returned; backends
// only ever see arguments that passed.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_VALIDATE_H
#define MEMFMT_RUNTIME_LIB_VALIDATE_H

#include "KernelArgs.h"

namespace memfmt::runtime {

class KernelCall;

#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  memfmt_status_t validate(KernelCall &call, const args::NAME &a);
#include "memfmt/runtime/Kernels.def"

} // namespace memfmt::runtime

#endif // MEMFMT_RUNTIME_LIB_VALIDATE_H
