// atomic_file.h: writing a file that readers see whole or not at all, in a
// directory that other users may be able to write (a shared report folder).
#ifndef MULTILANE_ATOMIC_FILE_H_
#define MULTILANE_ATOMIC_FILE_H_

#include <functional>
#include <string>

namespace mla {

// Fills the new file that ReplaceFileAtomically made: its open descriptor
// and its path.  Returns "" or what failed.
using FillFile = std::function<std::string(int fd, const std::string& tmp_path)>;

// Makes the file `path` whole or not at all: creates a new file with an
// unpredictable name beside it (mkstemp: O_CREAT|O_EXCL, mode 0600, never
// through a link someone left there), lets `fill` write it, and renames it
// over `path` (a link already there is replaced, never followed).  Returns ""
// on success, else fill's text or what failed (strerror text); on failure no
// temporary file is left behind.
std::string ReplaceFileAtomically(const std::string& path, const FillFile& fill);

// Writes `text` to DIR/NAME: first to a new file with an unpredictable name
// in DIR, created exclusively (mkstemp: O_CREAT|O_EXCL, never through a link
// someone left there), then renamed over DIR/NAME.  A link already at
// DIR/NAME is replaced, never followed.  The file gets mode 0666 minus the
// process's umask.  Returns "" on success, else what failed (strerror text);
// on failure no temporary file is left behind.
std::string WriteFileAtomically(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace mla

#endif  // MULTILANE_ATOMIC_FILE_H_
