// profile_file.h: reads the file named by MULTILANE_PROFILE_FILE, with the
// rules that keep MPI_Init safe: a regular file (a symbolic link to one is
// fine), at most kMaxProfileFileBytes, opened so that a FIFO or a device never
// blocks and never streams without end.
#ifndef MLA_PROFILE_FILE_H_
#define MLA_PROFILE_FILE_H_

#include <cstddef>
#include <string>

namespace mla::lib {

// Profiles are a few KiB; 1 MiB leaves room for any tuned one.
inline constexpr size_t kMaxProfileFileBytes = 1 << 20;

// Reads the whole file at `path` into *text and returns true.  Otherwise
// returns false and sets *why to the rule that was broken, in words that
// follow "MULTILANE_PROFILE_FILE='PATH' ": "cannot be read (...)", "is not a
// regular file (a folder)", "is larger than 1 MiB (...)", "is empty".
// Never blocks on a FIFO: the file is opened with O_NONBLOCK and checked with
// fstat before anything is read.
bool ReadProfileFile(const std::string& path, std::string* text, std::string* why);

}  // namespace mla::lib

#endif  // MLA_PROFILE_FILE_H_
