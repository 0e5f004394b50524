// terminal_text.cc: EscapeControlBytes and Excerpt (terminal_text.h).
#include "vocab/terminal_text.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace mla {
namespace {

void Hex(std::string* out, const char* prefix, unsigned value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, value);
  *out += buf;
}

// Length of the valid UTF-8 sequence of 2..4 bytes at text[i], or 0.
size_t Utf8Length(std::string_view text, size_t i, unsigned* code) {
  const unsigned char b = static_cast<unsigned char>(text[i]);
  size_t n = 0;
  unsigned cp = 0, min = 0;
  if (b >= 0xc2 && b <= 0xdf)
    n = 2, cp = b & 0x1f, min = 0x80;
  else if (b >= 0xe0 && b <= 0xef)
    n = 3, cp = b & 0x0f, min = 0x800;
  else if (b >= 0xf0 && b <= 0xf4)
    n = 4, cp = b & 0x07, min = 0x10000;
  else
    return 0;
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char c = static_cast<unsigned char>(text[i + k]);
    if ((c & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code = cp;
  return n;
}

}  // namespace

std::string EscapeControlBytes(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
      ++i;
    } else if (b == '\t') {
      out += "\\t", ++i;
    } else if (b == '\n') {
      out += keep_line_breaks ? "\n" : "\\n", ++i;
    } else if (b == '\r') {
      out += "\\r", ++i;
    } else if (b < 0x80) {
      Hex(&out, "\\x", b, 2), ++i;
    } else {
      unsigned cp = 0;
      const size_t n = Utf8Length(text, i, &cp);
      if (n == 0) {
        Hex(&out, "\\x", b, 2), ++i;
      } else if (cp < 0xa0) {
        Hex(&out, "\\u", cp, 4), i += n;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
    }
  }
  return out;
}

std::string Excerpt(std::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return std::string(value);
  size_t cut = max_bytes;
  // Back up over continuation bytes so that no UTF-8 character is split.
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xc0) == 0x80) --cut;
  return std::string(value.substr(0, cut)) + "\u2026 (" + std::to_string(value.size()) + " bytes)";
}

std::string Quoted(std::string_view value) { return "'" + Excerpt(value) + "'"; }

std::string TerminalExcerpt(std::string_view value) { return EscapeControlBytes(Excerpt(value)); }

std::string CountOf(long long n, std::string_view one, std::string_view many) {
  std::string text = std::to_string(n) + " ";
  if (n == 1) return text.append(one);
  return many.empty() ? text.append(one).append("s") : text.append(many);
}

bool PrintLine(std::string_view text, int fd) {
  const std::string line = "multilane: " + EscapeControlBytes(text) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace mla
