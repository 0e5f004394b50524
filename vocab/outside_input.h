// outside_input.h: the rules for input that comes from outside multilane's
// control (files named on the command line or in a variable, database
// fields, report fields): read it with a bound, and echo it in messages only
// as a bounded excerpt.  Shared by the injected library, the launcher, db/
// and report/ (one rule, one place).
#ifndef MLVOCAB_OUTSIDE_INPUT_H_
#define MLVOCAB_OUTSIDE_INPUT_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "vocab/terminal_text.h"

namespace mla {

// The largest file `import`, `report` and `tune --weights` read: exports and
// job reports are KiB to a few MiB.
inline constexpr size_t kMaxInputFileBytes = size_t{16} << 20;

// How a bounded read of one file ended (ReadFileBounded).
struct FileRead {
  enum class Outcome { kRead, kCannotOpen, kIsLink, kNotRegular, kTooLarge, kReadFailed };
  Outcome outcome = Outcome::kRead;
  int error_number = 0;    // errno, for kCannotOpen and kReadFailed
  const char* kind = "";   // kNotRegular: what it is ("a folder", "a FIFO (named pipe)", ...)
  bool is_folder = false;  // kNotRegular: it is a folder
  uint64_t size = 0;       // kTooLarge: its size as fstat saw it (0 when it grew while read)
};

// What a file that is not a regular one is, for a message, from its stat
// mode: "a link" (lstat), "a folder", "a FIFO (named pipe)", "a character
// device", "a block device", "a socket", else "not a plain file".
const char* FileKind(mode_t mode);

// The one bounded read of a file: reads the whole regular file at `path` (a
// link to one is followed unless `refuse_links`) into *text when it holds at
// most `max_bytes`.  Never blocks on a FIFO (opened O_NONBLOCK and checked
// with fstat before anything is read) and never reads more than the bound
// plus one byte (/dev/zero, a file that grows while it is read).  *text is
// left unchanged unless the outcome is kRead.
FileRead ReadFileBounded(const std::string& path, size_t max_bytes, bool refuse_links, std::string* text);

// Reads `fd` (a pipe, a socket or a file) to its end into *text, at most one
// byte past `max_bytes`: kRead, kTooLarge (then *text holds what was read)
// or kReadFailed.  Retries on EINTR.
FileRead ReadFdBounded(int fd, size_t max_bytes, std::string* text);

// Reads the whole regular file at `path` (ReadFileBounded with
// kMaxInputFileBytes) into *text and returns true.  Otherwise returns false
// and sets *error to one line that starts with "cannot read: " and ends with
// the fix: the file is missing or unreadable, a link (with refuse_links), not
// a regular file (a folder, a FIFO, a device: named), or larger than
// kMaxInputFileBytes.
bool ReadInputFile(const std::string& path, std::string* text, std::string* error, bool refuse_links = false);

}  // namespace mla

#endif  // MLVOCAB_OUTSIDE_INPUT_H_
