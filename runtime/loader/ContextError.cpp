//===- ContextError.cpp - Leaving loader errors in a context --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Writes a context's last-error string directly, through the runtime's
// private definition of memfmt_context (runtime/lib/Context.h). The loader
// is built from the same tree and with the same compiler as the runtime, so
// the layout agrees. When memfmt_runtime.h gains a public setter (e.g.
// memfmt_context_set_error), this file should call it instead.
//
//===----------------------------------------------------------------------===//

#include "ContextError.h"

#include "Context.h"

#include <utility>

void memfmt::loader::setContextError(memfmt_context_t *Ctx,
                                     std::string Message) {
  if (Ctx)
    Ctx->lastError = std::move(Message);
}
