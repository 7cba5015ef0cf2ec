//===- ContextError.cpp - Leaving loader errors in a context --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Leaves a loader error message in a context through the runtime's public
// memfmt_context_set_error, so that callers read every failure the same way
// (memfmt_context_last_error).
//
//===----------------------------------------------------------------------===//

#include "ContextError.h"

#include "memfmt/runtime/memfmt_runtime.h"

void memfmt::loader::setContextError(memfmt_context_t *Ctx,
                                     std::string Message) {
  if (Ctx)
    memfmt_context_set_error(Ctx, Message.c_str());
}
