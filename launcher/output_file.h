// output_file.h: how the `multilane` command writes a file the user named
// (`export FILE`, `report --html OUT`): exactly as the library writes its job
// reports (vocab/atomic_file.h), so that a link planted at the
// temporary name or at the file itself is never followed.
#ifndef MULTILANE_LAUNCHER_OUTPUT_FILE_H_
#define MULTILANE_LAUNCHER_OUTPUT_FILE_H_

#include <string>

namespace multilane {

// Writes `text` to `path` through a new temporary file in the same folder
// (created exclusively, never through a link) renamed over `path`; a link at
// `path` is replaced, not followed.  Returns false and sets *error to one
// line naming the file, the cause and the fix.
bool WriteOutputFile(const std::string& path, const std::string& text, std::string* error);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_OUTPUT_FILE_H_
