//===- SafeTensorsFuzzer.cpp - Fuzz the two .safetensors readers ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target for the weight files a user passes with --weights. The
// bytes are read as a .safetensors file twice:
//
//  * by the runtime's reader (memfmt::io::SafeTensorsFile::parse, used by
//    the model loader), which must either fail with a message or give
//    tensors whose bytes lie inside the file: every tensor's bytes are read
//    (AddressSanitizer checks the reads) and, for F32/F16/BF16, converted to
//    f32 as the loader does;
//  * by the compiler's header check (memfmt::compile::readSafeTensorsHeader,
//    memfmt-compile step 2), through a memfd so that it reads a real path.
//
// Both must return, never crash. They are also compared: a file the runtime
// accepts must pass the compiler's check with the same tensors (name,
// dtype, shape, offsets), or a model would compile and then fail to load.
// A disagreement aborts, so libFuzzer keeps it as a crash.
//
//===----------------------------------------------------------------------===//

#include "WeightsCheck.h"

#include "memfmt/runtime/io/SafeTensors.h"

#include "llvm/Support/raw_ostream.h"

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

/// A memfd the compiler's reader opens by path (/proc/self/fd/N).
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
               "memfmt-fuzz-safetensors: the runtime's reader accepts the "
               "file but the compiler's check %s\n",
               What.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static MemFile File;

  // The runtime's reader.
  io::Result<io::SafeTensorsFile> Runtime = io::SafeTensorsFile::parse(
      std::vector<uint8_t>(Data, Data + Size), "fuzz.safetensors");
  if (Runtime) {
    volatile uint8_t Sum = 0;
    for (const io::TensorView &T : Runtime->tensors()) {
      for (size_t I = 0; I < T.NumBytes; ++I)
        Sum = Sum + T.Data[I];
      if (T.Type == io::DType::F32 || T.Type == io::DType::F16 ||
          T.Type == io::DType::BF16)
        (void)io::convertToF32(T.Type, T.Data, T.NumBytes);
      if (!Runtime->find(T.Name))
        std::abort();
    }
  } else if (Runtime.error().empty()) {
    std::fprintf(stderr, "the runtime's reader failed without a message\n");
    std::abort();
  }

  // The compiler's header check.
  File.write(Data, Size);
  std::string Message;
  llvm::raw_string_ostream Errors(Message);
  mlir::FailureOr<std::vector<memfmt::compile::SafeTensorsEntry>> Compiler =
      memfmt::compile::readSafeTensorsHeader(File.Path, Errors);
  if (mlir::failed(Compiler) && Message.empty()) {
    std::fprintf(stderr, "the compiler's check failed without a message\n");
    std::abort();
  }

  // Runtime accepts => compiler accepts the same tensors.
  if (!Runtime)
    return 0;
  if (mlir::failed(Compiler))
    disagree("rejects it: " + Message);
  // The data section starts where the tensor at offset 0 starts (the
  // tensors tile it from there).
  const uint8_t *DataStart = nullptr;
  for (const io::TensorView &T : Runtime->tensors())
    if (!DataStart || T.Data < DataStart)
      DataStart = T.Data;
  using Key = std::tuple<std::string, std::vector<int64_t>, uint64_t, uint64_t>;
  std::map<std::string, Key> Expected, Got;
  for (const io::TensorView &T : Runtime->tensors()) {
    auto Begin = static_cast<uint64_t>(T.Data - DataStart);
    Expected[T.Name] = Key(io::dtypeName(T.Type), T.Shape, Begin,
                           Begin + T.NumBytes);
  }
  for (const memfmt::compile::SafeTensorsEntry &E : *Compiler)
    Got[E.name] = Key(E.dtype,
                      std::vector<int64_t>(E.shape.begin(), E.shape.end()),
                      E.begin, E.end);
  if (Expected != Got)
    disagree("sees other tensors (" + std::to_string(Got.size()) + " vs " +
             std::to_string(Expected.size()) + ")");
  return 0;
}
