//===- Npz.h - Reading NumPy .npz archives ----------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The NumPy .npz format: a zip archive with one .npy file per array, as
// np.savez (entries stored) and np.savez_compressed (entries deflated)
// write it; numpy forces zip64 local headers, so their sizes are read from
// the central directory (with its zip64 extra fields and zip64 end record
// when present). Deflate and the CRC-32 check are zlib's; each entry is
// then parsed with parseNpy (Npy.h). Reading is strict: a file that is not
// a zip archive, an archive split over several disks, an encrypted entry, a
// compression method other than stored or deflate, an entry running past
// the end of the file, a size or CRC-32 that does not match, a duplicate
// array name or a malformed .npy are errors whose message names the file
// and the entry.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_IO_NPZ_H
#define MEMFMT_RUNTIME_IO_NPZ_H

#include "memfmt/runtime/io/Tensor.h"

#include <cstdint>
#include <map>
#include <string>

namespace memfmt::io {

/// The arrays of an .npz archive by name: the entry name without its
/// ".npy" suffix ("x" for np.savez(f, x=...), "arr_0" for a positional
/// array).
using NpzArrays = std::map<std::string, Tensor>;

/// Parses the \p Size bytes at \p Bytes as an .npz archive; \p Name
/// (usually the path) starts every error message.
Result<NpzArrays> parseNpz(const uint8_t *Bytes, size_t Size,
                           const std::string &Name);

/// Reads the .npz archive at \p Path.
Result<NpzArrays> readNpz(const std::string &Path);

} // namespace memfmt::io

#endif // MEMFMT_RUNTIME_IO_NPZ_H
