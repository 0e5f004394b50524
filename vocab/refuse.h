// refuse.h: how a check that answers `bool` and says why through a
// `std::string* error` says no, in one statement.
#ifndef MLA_REFUSE_H_
#define MLA_REFUSE_H_

#include <string>
#include <utility>

namespace mla {

// Sets *error to `why` and returns false: `if (bad) return mla::Refuse(error, "why");`.
inline bool Refuse(std::string* error, std::string why) {
  *error = std::move(why);
  return false;
}

}  // namespace mla

#endif  // MLA_REFUSE_H_
