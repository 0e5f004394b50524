// tune_folder.cc: the tune's working folder (tune_folder.h).
#include "launcher/tune/tune_folder.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "vocab/refuse.h"

namespace multilane {

TuneFolder::~TuneFolder() {
  if (path_.empty() || kept_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: nothing to report to
}

namespace {

// `keep` without trailing slashes ("/" stays "/").
std::string WithoutTrailingSlashes(std::string keep) {
  while (keep.size() > 1 && keep.back() == '/') keep.pop_back();
  return keep;
}

// Whether the existing `keep` (lstat in *st) is a folder this tune may trust:
// a real folder (not a link), the caller's own, that no one else may write.
bool Trusted(const std::string& keep, const struct stat& st, std::string* error) {
  const std::string what = "the folder --keep " + keep;
  if (S_ISLNK(st.st_mode)) {
    *error = what + " is a symbolic link: give the folder itself (a link may lead anywhere)";
  } else if (!S_ISDIR(st.st_mode)) {
    *error = "cannot make " + what + ": a file of that name is in the way; give a folder you may write";
  } else if (st.st_uid != geteuid()) {
    *error = what + " belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " + std::to_string(geteuid()) +
             "): its files could be anyone's; give a new folder of your own";
  } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *error =
        what + " may be written by others (mode " + mode + "): run `chmod go-w " + keep + "`, or give a new folder";
  } else {
    return true;
  }
  return false;
}

// Makes `keep` (mode 0700, its parents as usual) unless it exists; then
// checks it (Trusted).
bool MakeKept(const std::string& keep, std::string* error) {
  struct stat st;
  if (lstat(keep.c_str(), &st) != 0) {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(keep).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if ((mkdir(keep.c_str(), 0700) != 0 && errno != EEXIST) || lstat(keep.c_str(), &st) != 0)
      return mla::Refuse(error, "cannot make the folder --keep " + keep + ": " + std::strerror(errno) +
                                    "; give a folder you may write");
  }
  return Trusted(keep, st, error);
}

}  // namespace

bool TuneFolder::Make(const std::string& keep, const std::string& parent, std::string* error) {
  if (!keep.empty()) {
    const std::string folder = WithoutTrailingSlashes(keep);
    if (!MakeKept(folder, error)) return false;
    path_ = folder;
    kept_ = true;
    return true;
  }
  std::string tmpl = parent + "/multilane-tune.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr)
    return mla::Refuse(error, "cannot make a folder for the tune's files in " + parent + ": " + std::strerror(errno) +
                                  "; set TMPDIR to a folder you may write, or give --keep DIR");
  path_ = buf.data();
  kept_ = false;
  return true;
}

std::string TemporaryParent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && tmp[0] == '/' ? std::string(tmp) : std::string("/tmp");
}

}  // namespace multilane
