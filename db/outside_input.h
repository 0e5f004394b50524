// outside_input.h: the rules for input that comes from outside multilane's
// control (files named on the command line, database fields, report fields):
// read it with a bound, and echo it in messages only as a bounded excerpt.
// Shared by the launcher, db/ and report/ (one rule, one place).
#ifndef MLDB_OUTSIDE_INPUT_H_
#define MLDB_OUTSIDE_INPUT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "libmlallreduce/terminal_text.h"

namespace mldb {

// The largest file `import`, `report` and `tune --weights` read: exports and
// job reports are KiB to a few MiB.
inline constexpr size_t kMaxInputFileBytes = size_t{16} << 20;

// Reads the whole regular file at `path` (a link to one is followed unless
// `refuse_links`) into *text and returns true.  Otherwise returns false and
// sets *error to one line that starts with "cannot read: " and ends with the
// fix: the file is missing or unreadable, a link (with refuse_links), not a
// regular file (a folder, a FIFO, a device: named), or larger than
// kMaxInputFileBytes.  Never blocks on a FIFO and never reads more than the
// bound plus one byte (/dev/zero, a file that grows while it is read).
bool ReadInputFile(const std::string& path, std::string* text, std::string* error, bool refuse_links = false);

// How a message echoes an outside value: mla::Excerpt
// (libmlallreduce/terminal_text.h), the one rule for every part.
using mla::Excerpt;

}  // namespace mldb

#endif  // MLDB_OUTSIDE_INPUT_H_
