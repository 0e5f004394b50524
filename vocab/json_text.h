// json_text.h: the few pieces of JSON text the library writes (the job
// report), by hand, so that the injected library depends on nothing.
#ifndef MLA_JSON_TEXT_H_
#define MLA_JSON_TEXT_H_

#include <string>
#include <string_view>

namespace mla {

// Returns `s` as a JSON string literal, quotes included: `"` and `\` are
// escaped, control characters become \n, \t, ... or \u00XX.  Bytes of 0x80
// and above are copied unchanged (UTF-8 stays UTF-8).
std::string JsonString(std::string_view s);

// Returns `v` as a JSON number: whole numbers below 1e20 exactly ("4120",
// byte counts), others with 6 significant digits ("0.61", "1.5e-07"); "null"
// when `v` is not finite.
std::string JsonNumber(double v);

}  // namespace mla

#endif  // MLA_JSON_TEXT_H_
