// byte_size.h: byte counts as profiles, variables and the tuner write them.
// Shared by the library and the tuner (which compiles this file in).
#ifndef MLA_BYTE_SIZE_H_
#define MLA_BYTE_SIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace mla {

// Parses a byte count: digits with an optional binary suffix K, KiB, M, MiB,
// G, GiB, T, TiB (case-insensitive) or B.  "inf" is not accepted here.
// Returns false on anything else, including overflow.
bool ParseByteSize(std::string_view text, uint64_t* out);

// Renders a byte count with the largest exact binary suffix: 65536 -> "64K".
std::string FormatByteSize(uint64_t bytes);

}  // namespace mla

#endif  // MLA_BYTE_SIZE_H_
