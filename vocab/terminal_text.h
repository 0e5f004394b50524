// terminal_text.h: text from outside (variables, database fields, report
// fields) made safe to print on a terminal.
// Shared by the library and the launcher (which compiles this file in).
// One place for both rules: what may reach a terminal, and how much of an
// outside value a message echoes.
#ifndef MLA_TERMINAL_TEXT_H_
#define MLA_TERMINAL_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace mla {

// Returns `text` with every byte a terminal could act on written out: C0
// controls (NUL included) and DEL as \t, \n, \r or \xNN, the C1 controls
// U+0080..U+009F as \u0080..\u009f, and bytes that are not valid UTF-8 as
// \xNN.  Printable ASCII and valid UTF-8 pass unchanged, so ordinary text is
// not altered, and escaping the result again changes nothing.  With
// `keep_line_breaks`, '\n' passes unchanged: a text of several lines (a
// report's summary) keeps its lines.  The one rule for outside text shown on a
// terminal, in a JSON document or in an HTML page.
std::string EscapeControlBytes(std::string_view text, bool keep_line_breaks = false);

// The most bytes of one outside value a message quotes.
inline constexpr size_t kExcerptBytes = 80;

// The most bytes of a reason one part of multilane hands another to repeat
// (MULTILANE_OFF: the Slurm plugin's one-line reason, which the library
// prints): long enough for a node name and a reason that ends with its fix.
inline constexpr size_t kRelayedReasonBytes = 1024;

// Returns `value` whole when it holds at most `max_bytes` bytes, else its
// first bytes (cut before a partial UTF-8 character) followed by
// "… (N bytes)": a message that echoes a variable, a path or a profile line
// stays one short line however long the value is.
std::string Excerpt(std::string_view value, size_t max_bytes = kExcerptBytes);

// Excerpt(value) in single quotes: how messages quote outside values.
std::string Quoted(std::string_view value);

// EscapeControlBytes(Excerpt(value)): an outside value (a path, a program's
// output) in a message printed as it is, not through PrintLine.
std::string TerminalExcerpt(std::string_view value);

// "1 rank", "2 ranks", "0 ranks": `n` and the noun, `one` when n is 1, else
// `many` (empty: `one` and "s").  How messages count things.
std::string CountOf(long long n, std::string_view one, std::string_view many = {});

// Writes "multilane: " + EscapeControlBytes(text) + "\n" to file descriptor
// `fd` (stderr by default) with one write(2) where the kernel takes it whole
// (a pipe takes up to PIPE_BUF bytes at once), retrying only the rest of a
// short write.  A line then reaches a launcher's output forwarding in one
// piece: stdio may split an unbuffered stream's line into several writes
// (glibc 2.37 and later write 256 bytes at a time), and Open MPI 5's
// forwarding was seen to deliver the first piece on stdout.  Returns false
// when the descriptor refused the bytes (the message is then lost, never
// the job).
bool PrintLine(std::string_view text, int fd = 2);

}  // namespace mla

#endif  // MLA_TERMINAL_TEXT_H_
