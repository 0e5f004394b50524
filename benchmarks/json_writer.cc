// json_writer.cc: see json_writer.h.
#include "json_writer.h"

#include <cinttypes>
#include <cmath>

namespace mlabench {

std::string JsonWriter::escape(const std::string &s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through unchanged
        }
    }
  }
  return out;
}

void JsonWriter::newline() {
  fputc('\n', f_);
  for (size_t i = 0; i < stack_.size(); ++i) fputs("  ", f_);
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level &l = stack_.back();
  if (!l.first) fputc(',', f_);
  if (l.inline_) {
    if (!l.first) fputc(' ', f_);
  } else {
    newline();
  }
  l.first = false;
}

void JsonWriter::open(char c, bool inline_) {
  before_value();
  fputc(c, f_);
  // A container inside an inline one is inline too.
  bool in = inline_ || (!stack_.empty() && stack_.back().inline_);
  stack_.push_back({in, true});
}

void JsonWriter::close(char c) {
  Level l = stack_.back();
  stack_.pop_back();
  if (!l.inline_ && !l.first) newline();
  fputc(c, f_);
  if (stack_.empty()) fputc('\n', f_);
}

void JsonWriter::key(const char *k) {
  before_value();
  fprintf(f_, "\"%s\": ", escape(k).c_str());
  after_key_ = true;
}

void JsonWriter::str(const std::string &s) {
  before_value();
  fprintf(f_, "\"%s\"", escape(s).c_str());
}

void JsonWriter::num(double v) {
  before_value();
  if (std::isfinite(v))
    fprintf(f_, "%.9g", v);
  else
    fputs("null", f_);
}

void JsonWriter::integer(int64_t v) {
  before_value();
  fprintf(f_, "%" PRId64, v);
}

void JsonWriter::uinteger(uint64_t v) {
  before_value();
  fprintf(f_, "%" PRIu64, v);
}

void JsonWriter::boolean(bool v) {
  before_value();
  fputs(v ? "true" : "false", f_);
}

void JsonWriter::null() {
  before_value();
  fputs("null", f_);
}

}  // namespace mlabench
