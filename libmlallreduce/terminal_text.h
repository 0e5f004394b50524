// terminal_text.h: text from outside (variables, database fields, report
// fields) made safe to print on a terminal.
// Shared by the library and the launcher (which compiles this file in).
#ifndef MLA_TERMINAL_TEXT_H_
#define MLA_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace mla {

// Returns `text` with every byte a terminal could act on written out: C0
// controls and DEL as \t, \n, \r or \xNN, the C1 controls U+0080..U+009F as
// \u0080..\u009f, and bytes that are not valid UTF-8 as \xNN.  Printable
// ASCII and valid UTF-8 pass unchanged, so ordinary text is not altered.
std::string EscapeControlBytes(std::string_view text);

}  // namespace mla

#endif  // MLA_TERMINAL_TEXT_H_
