// elf_needed.h: the shared libraries a program file names as needed
// (DT_NEEDED of its dynamic section), read from the file without loading or
// running it: how `multilane resolve` tells which MPI family a job's program
// is built for.  The file is outside input: every offset and count is
// checked against the file's size and a bound.
#ifndef MLVOCAB_ELF_NEEDED_H_
#define MLVOCAB_ELF_NEEDED_H_

#include <string>
#include <string_view>
#include <vector>

namespace mla {

// The DT_NEEDED names of a 64-bit little-endian ELF image held in `image`
// (the whole file or at least its headers, dynamic section and string
// table).  Returns false, with *why, for anything else (not ELF, 32-bit,
// big-endian, no dynamic section, offsets outside `image`); a static program
// gives true with no names.
bool ElfNeededFromImage(std::string_view image, std::vector<std::string>* needed, std::string* why);

// ElfNeededFromImage of the regular file at `path`, of which at most 64 MiB
// are read (the dynamic section and its strings lie near the start).
bool ElfNeeded(const std::string& path, std::vector<std::string>* needed, std::string* why);

}  // namespace mla

#endif  // MLVOCAB_ELF_NEEDED_H_
