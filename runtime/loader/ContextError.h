//===- ContextError.h - Leaving loader errors in a context ------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The model API reports failures the way the runtime does: a status, and the
// message in memfmt_context_last_error(ctx). memfmt_runtime.h has no public
// call that sets a context's message, so this one function writes it, and
// is the only place in the loader that knows how a context stores it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LOADER_CONTEXTERROR_H
#define MEMFMT_RUNTIME_LOADER_CONTEXTERROR_H

#include "memfmt/runtime/memfmt_runtime.h"

#include <string>

namespace memfmt::loader {

/// Makes \p Message the last error of \p Ctx (a no-op for a null context).
void setContextError(memfmt_context_t *Ctx, std::string Message);

} // namespace memfmt::loader

#endif // MEMFMT_RUNTIME_LOADER_CONTEXTERROR_H
