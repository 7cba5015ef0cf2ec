//===- SafeTensors.h - Reading and writing .safetensors files -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The safetensors format (huggingface/safetensors):
//
//   N: uint64 little-endian   header: N bytes of UTF-8 JSON, possibly padded
//   with trailing spaces      data: the tensors' bytes, back to back
//
// The header is an object mapping each tensor name to
// {"dtype": "F32", "shape": [64, 3, 7, 7], "data_offsets": [begin, end]}
// (offsets relative to the start of the data section), plus an optional
// "__metadata__" object of string to string. Tensors are row-major and
// little-endian.
//
// SafeTensorsFile memory-maps a file and validates it completely when it is
// opened, as strictly as the reference implementation or more: the header
// must fit in the file and be well-formed JSON with no unknown keys, every
// dtype must be known, every size must equal shape x dtype, the tensors must
// tile the data section exactly (no overlap, gap or trailing bytes) and
// names must be unique. Each error message names the file and, where there
// is one, the tensor. Afterwards get() is a lookup that cannot fail on the
// file's account.
//
// The writer produces what the reference writer produces for the same list
// of tensors (compact JSON, "__metadata__" first, header padded with spaces
// to a multiple of 8 bytes), except that it keeps the caller's tensor order
// rather than sorting by dtype and name.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_IO_SAFETENSORS_H
#define MEMFMT_RUNTIME_IO_SAFETENSORS_H

#include "memfmt/runtime/io/Tensor.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memfmt::io {

/// The "__metadata__" entries of a file, in header order.
using SafeTensorsMetadata = std::vector<std::pair<std::string, std::string>>;

/// An open, validated .safetensors file. Tensor views point into the file's
/// memory mapping (or into the buffer it was parsed from) and stay valid as
/// long as this object lives; it is movable, not copyable.
class SafeTensorsFile {
public:
  /// Memory-maps and validates the file at \p Path.
  static Result<SafeTensorsFile> open(const std::string &Path);

  /// Validates the in-memory file \p Bytes, which the result keeps; \p Name
  /// starts error messages, as the path does for open().
  static Result<SafeTensorsFile> parse(std::vector<uint8_t> Bytes,
                                       std::string Name);

  SafeTensorsFile(SafeTensorsFile &&Other) noexcept;
  SafeTensorsFile &operator=(SafeTensorsFile &&Other) noexcept;
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;
  ~SafeTensorsFile();

  /// The path (or name) the file was opened with.
  const std::string &path() const { return Path; }

  /// The tensor names in header order.
  std::vector<std::string> names() const;

  /// The number of tensors.
  size_t size() const { return Tensors.size(); }

  /// All tensors in header order.
  const std::vector<TensorView> &tensors() const { return Tensors; }

  /// The tensor called \p Name, or nullptr.
  const TensorView *find(std::string_view Name) const;

  /// The tensor called \p Name; the error names the file and the tensor.
  Result<TensorView> get(std::string_view Name) const;

  /// The "__metadata__" entries, in header order (empty when absent).
  const SafeTensorsMetadata &metadata() const { return Metadata; }

private:
  SafeTensorsFile() = default;
  Status init();
  void release();

  std::string Path;
  const uint8_t *Base = nullptr; // The whole file.
  size_t Size = 0;
  bool Mapped = false;        // Base came from mmap (else from Owned).
  std::vector<uint8_t> Owned; // The bytes when parsed from memory.
  std::vector<TensorView> Tensors;
  std::unordered_map<std::string, size_t> Index; // Name -> Tensors index.
  SafeTensorsMetadata Metadata;
};

/// Encodes \p Tensors (name, dtype, shape, data, byte size; data laid out in
/// this order) and \p Metadata as a .safetensors file. Fails on a duplicate
/// or reserved ("__metadata__") name, a name or metadata string that is not
/// valid UTF-8, or a byte size that is not shape x dtype. The data section
/// starts at a multiple of 8 bytes; listing tensors from the widest element
/// type to the narrowest keeps every tensor aligned to its element size.
Result<std::vector<uint8_t>>
encodeSafeTensors(const std::vector<TensorView> &Tensors,
                  const SafeTensorsMetadata &Metadata = {});

/// Writes \p Tensors and \p Metadata to \p Path (see encodeSafeTensors).
Status writeSafeTensors(const std::string &Path,
                        const std::vector<TensorView> &Tensors,
                        const SafeTensorsMetadata &Metadata = {});

} // namespace memfmt::io

#endif // MEMFMT_RUNTIME_IO_SAFETENSORS_H
