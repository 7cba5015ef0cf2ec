//===- SafeTensorsFuzzer.cpp - Fuzz the .safetensors reader ---------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target for the weight files a user passes with --weights, to
// memfmt-compile (step 2) and to the runtime's loader: both read them with
// the runtime's reader (runtime/io), through its two entry points:
//
//  * memfmt::io::SafeTensorsFile::parse on the bytes, which must either fail
//    with a message or give tensors whose bytes lie inside the file: every
//    tensor's bytes are read (AddressSanitizer checks the reads) and, for
//    F32/F16/BF16, converted to f32 as the loader does;
//  * memfmt::io::SafeTensorsFile::open on a path (a memfd), which maps the
//    file as memfmt-compile and the loader do.
//
// Both must return, never crash, and agree: the same verdict, and the same
// tensors (name, dtype, shape, offsets) where they accept the file. A
// disagreement aborts, so libFuzzer keeps it as a crash.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/SafeTensors.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <sys/mman.h>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace io = memfmt::io;

namespace {

/// A memfd that SafeTensorsFile::open opens by path (/proc/self/fd/N).
struct MemFile {
  int Fd = -1;
  std::string Path;

  MemFile() {
    Fd = ::memfd_create("memfmt-fuzz-safetensors", MFD_CLOEXEC);
    if (Fd < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    Path = "/proc/self/fd/" + std::to_string(Fd);
  }

  void write(const uint8_t *Data, size_t Size) {
    if (::ftruncate(Fd, 0) != 0 ||
        (Size && ::pwrite(Fd, Data, Size, 0) != static_cast<ssize_t>(Size))) {
      std::perror("memfd write");
      std::abort();
    }
  }
};

[[noreturn]] void disagree(const std::string &What) {
  std::fprintf(stderr,
               "memfmt-fuzz-safetensors: SafeTensorsFile::parse and "
               "SafeTensorsFile::open disagree: %s\n",
               What.c_str());
  std::abort();
}

using Key = std::tuple<std::string, std::vector<int64_t>, uint64_t, uint64_t>;

/// Each tensor's dtype, shape and offsets in the data section, by name.
std::map<std::string, Key> describe(const io::SafeTensorsFile &File) {
  // The data section starts where the tensor at offset 0 starts (the
  // tensors tile it from there).
  const uint8_t *DataStart = nullptr;
  for (const io::TensorView &T : File.tensors())
    if (!DataStart || T.Data < DataStart)
      DataStart = T.Data;
  std::map<std::string, Key> Tensors;
  for (const io::TensorView &T : File.tensors()) {
    auto Begin = static_cast<uint64_t>(T.Data - DataStart);
    Tensors[T.Name] =
        Key(io::dtypeName(T.Type), T.Shape, Begin, Begin + T.NumBytes);
  }
  return Tensors;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static MemFile File;

  // The bytes, parsed.
  io::Result<io::SafeTensorsFile> Parsed = io::SafeTensorsFile::parse(
      std::vector<uint8_t>(Data, Data + Size), "fuzz.safetensors");
  if (Parsed) {
    volatile uint8_t Sum = 0;
    for (const io::TensorView &T : Parsed->tensors()) {
      for (size_t I = 0; I < T.NumBytes; ++I)
        Sum = Sum + T.Data[I];
      if (T.Type == io::DType::F32 || T.Type == io::DType::F16 ||
          T.Type == io::DType::BF16)
        (void)io::convertToF32(T.Type, T.Data, T.NumBytes);
      if (!Parsed->find(T.Name))
        std::abort();
    }
  } else if (Parsed.error().empty()) {
    std::fprintf(stderr, "SafeTensorsFile::parse failed without a message\n");
    std::abort();
  }

  // The same bytes, opened by path.
  File.write(Data, Size);
  io::Result<io::SafeTensorsFile> Opened = io::SafeTensorsFile::open(File.Path);
  if (!Opened && Opened.error().empty()) {
    std::fprintf(stderr, "SafeTensorsFile::open failed without a message\n");
    std::abort();
  }
  if (bool(Parsed) != bool(Opened))
    disagree(Parsed ? "open rejects the file: " + Opened.error()
                    : "parse rejects the file: " + Parsed.error());
  if (Parsed && describe(*Parsed) != describe(*Opened))
    disagree("they see other tensors");
  return 0;
}
