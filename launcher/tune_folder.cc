// tune_folder.cc: the tune's working folder (tune_folder.h).
#include "tune_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace multilane {

TuneFolder::~TuneFolder() {
  if (path_.empty() || kept_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: nothing to report to
}

bool TuneFolder::Make(const std::string& keep, const std::string& parent, std::string* error) {
  if (!keep.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(keep, ec);
    if (ec || !std::filesystem::is_directory(keep, ec)) {
      *error = "cannot make the folder --keep " + keep + ": " +
               (ec ? ec.message() : std::string("a file of that name is in the way")) +
               "; give a folder you may write";
      return false;
    }
    path_ = keep;
    kept_ = true;
    return true;
  }
  std::string tmpl = parent + "/multilane-tune.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    *error = "cannot make a folder for the tune's files in " + parent + ": " + std::strerror(errno) +
             "; set TMPDIR to a folder you may write, or give --keep DIR";
    return false;
  }
  path_ = buf.data();
  kept_ = false;
  return true;
}

std::string TemporaryParent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && tmp[0] == '/' ? std::string(tmp) : std::string("/tmp");
}

}  // namespace multilane
