//===- SharedLibrary.cpp - libmemfmt_model.so ------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The one source of libmemfmt_model.so, the model API of
// memfmt/runtime/model.h as a shared library (for Python through ctypes,
// and other programs that do not link memfmt's static libraries). The
// library is the whole MemFmtModelLoader archive (CMake links it with
// WHOLE_ARCHIVE); this file only gives the target a source and checks, at
// compile time, that the API it exports is the header's.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/model.h"

static_assert(sizeof(memfmt_model_tensor_info_t) > 0,
              "memfmt/runtime/model.h declares the exported API");
