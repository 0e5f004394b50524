// output_file.cc: files the command writes (output_file.h).
#include "launcher/output_file.h"

#include "vocab/atomic_file.h"
#include "vocab/refuse.h"

namespace multilane {

bool WriteOutputFile(const std::string& path, const std::string& text, std::string* error) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..")
    return mla::Refuse(error, "cannot write " + path + ": it names a folder; give a file name");
  const std::string why = mla::WriteFileAtomically(dir, name, text);
  if (why.empty()) return true;
  *error = "cannot write " + path + ": " + why + "; check that the folder " + dir + " exists and that you may write it";
  return false;
}

}  // namespace multilane
