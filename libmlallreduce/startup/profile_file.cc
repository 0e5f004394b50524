// profile_file.cc: the bounded read of MULTILANE_PROFILE_FILE (profile_file.h),
// with the one bounded reader of outside input (vocab/outside_input.h).
#include "libmlallreduce/startup/profile_file.h"

#include <cstring>

#include "vocab/outside_input.h"
#include "vocab/refuse.h"

namespace mla::lib {

bool ReadProfileFile(const std::string& path, std::string* text, std::string* why) {
  std::string content;
  const mla::FileRead r = mla::ReadFileBounded(path, kMaxProfileFileBytes, false, &content);
  using Outcome = mla::FileRead::Outcome;
  switch (r.outcome) {
    case Outcome::kRead:
      if (content.empty()) return mla::Refuse(why, "is empty: write a profile there or unset the variable");
      *text = std::move(content);
      return true;
    case Outcome::kNotRegular:
      return mla::Refuse(why, std::string("is not a regular file (") + r.kind +
                                  "): name a profile file written by "
                                  "multilane show or tune");
    case Outcome::kTooLarge:
      return mla::Refuse(why, r.size > 0
                                  ? "is larger than 1 MiB (" + std::to_string(r.size) +
                                        " bytes; tuned profiles are a few KiB): name the profile file itself"
                                  : "is larger than 1 MiB (it grew while it was read): name the profile file itself");
    case Outcome::kCannotOpen:
    case Outcome::kIsLink:
    case Outcome::kReadFailed:
      break;
  }
  return mla::Refuse(
      why, std::string("cannot be read (") + std::strerror(r.error_number) + "): check the path and its permissions");
}

}  // namespace mla::lib
