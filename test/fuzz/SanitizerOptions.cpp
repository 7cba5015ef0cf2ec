//===- SanitizerOptions.cpp - AddressSanitizer defaults of the fuzzers ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Linked into every fuzz target. memfmt's code is instrumented but the
// installed libMLIR.so is not, and both inline LLVM's BumpPtrAllocator: its
// instrumented copy poisons the unused tail of a slab, the uninstrumented
// one hands that memory out without unpoisoning it, and AddressSanitizer
// reports a use-after-poison that is not one. allow_user_poisoning=0 turns
// such manual poisoning off (heap, stack and global checks stay on);
// scripts/sanitize.sh sets the same for the tools. ASAN_OPTIONS in the
// environment still wins.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
