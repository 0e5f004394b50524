// json_writer.cc: see json_writer.h.
#include "json_writer.h"

#include <cinttypes>
#include <cmath>

#include "vocab/json_text.h"

namespace mlabench {

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
  fprintf(f_, "%s: ", mla::JsonString(k).c_str());
  after_key_ = true;
}

void JsonWriter::str(const std::string &s) {
  before_value();
  fputs(mla::JsonString(s).c_str(), f_);
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
