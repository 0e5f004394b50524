// verbose_level.h: MULTILANE_VERBOSE's one reading, shared by the library's
// settings (libmlallreduce/startup/config.cc) and the front (front/front.cc), so that
// a value the settings refuse never makes the front speak as well: a bad
// value is one line, the settings' warning.
#ifndef MLA_VERBOSE_LEVEL_H_
#define MLA_VERBOSE_LEVEL_H_

#include <string_view>

namespace mla {

// The level MULTILANE_VERBOSE's `value` asks for: 0 for "" (unset) and "0";
// N for a decimal number from 1 to 9999999 (digits only: no sign, space or
// 0x; leading zeros allowed); -1 for anything else, which the settings name
// as a bad variable.  Only 0 and 1 mean something: a larger N prints what 1
// prints (the settings warn once).
int VerboseLevel(std::string_view value);

}  // namespace mla

#endif  // MLA_VERBOSE_LEVEL_H_
