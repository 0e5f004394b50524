// json_writer.h: a small streaming JSON writer (no dependency), enough for
// the benchmark's result file.
#ifndef MLABENCH_JSON_WRITER_H_
#define MLABENCH_JSON_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mlabench {

class JsonWriter {
 public:
  explicit JsonWriter(FILE *f) : f_(f) {}

  // Containers.  inline_ = true writes the container on one line.
  void begin_object(bool inline_ = false) { open('{', inline_); }
  void end_object() { close('}'); }
  void begin_array(bool inline_ = false) { open('[', inline_); }
  void end_array() { close(']'); }

  // Inside an object: the key of the next value.
  void key(const char *k);

  void str(const std::string &s);
  void num(double v);  // non-finite values are written as null
  void integer(int64_t v);
  void uinteger(uint64_t v);
  void boolean(bool v);
  void null();

  // key + value shorthands.
  void kv(const char *k, const std::string &s) { key(k); str(s); }
  void kv(const char *k, const char *s) { key(k); str(s); }

 private:
  struct Level {
    bool inline_;
    bool first;
  };
  void open(char c, bool inline_);
  void close(char c);
  void before_value();  // comma and indentation before a new element
  void newline();

  FILE *f_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace mlabench

#endif  // MLABENCH_JSON_WRITER_H_
