// profile_check.h: a stored profile checked with the library's own parser:
// its text must parse (vocab/profile.h) and say what its entry rows
// say, so that `show` (the rows) and `run` (the text) never disagree.
#ifndef MLDB_PROFILE_CHECK_H_
#define MLDB_PROFILE_CHECK_H_

#include <string>
#include <vector>

#include "db/profile_store.h"

namespace mldb {

// Returns true when `profile_text` parses with the library's parser and
// holds exactly the entries of `entries` (in any order): the same memory
// kind, range, ppg, algorithm, lanes, chunk and transport ("" = auto), and
// times equal to 1e-5 relative where both are known.  Otherwise returns false
// and sets *error to one line naming the first problem: the parser's message,
// an entry of one side missing from the other, or the count.  Pure: no I/O.
bool CheckProfileText(const std::string& profile_text, const std::vector<ProfileEntryRow>& entries, std::string* error);

}  // namespace mldb

#endif  // MLDB_PROFILE_CHECK_H_
