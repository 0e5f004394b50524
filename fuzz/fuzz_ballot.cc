// fuzz_ballot.cc: the start-up agreement's reader of other ranks' ballots
// (libmlallreduce/startup/ballot.h): DecodeBallot and Decide over any published
// texts, DecodeSummary over any leader's summary (ballot_summary.h), and
// DecideFromWords over any combined words.  The decision must hold its
// invariants whatever the ranks published.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "libmlallreduce/startup/ballot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  // One published text per line; a line "-" is a rank that published none.
  std::vector<std::optional<std::string>> published;
  size_t start = 0;
  while (start <= input.size() && published.size() < 64) {
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    const std::string line = input.substr(start, end - start);
    published.push_back(line == "-" ? std::nullopt : std::optional<std::string>(line));
    if (auto b = mla::lib::DecodeBallot(line)) {
      // What decodes encodes back to a text that decodes the same.
      const auto again = mla::lib::DecodeBallot(mla::lib::EncodeBallot(*b));
      if (!again || again->version != b->version || again->settings != b->settings || again->on != b->on ||
          again->counts != b->counts || again->reason != b->reason)
        std::abort();
    }
    if (auto summary = mla::lib::DecodeSummary(line, "0/1/1")) {
      // What decodes encodes back to the same text, and decides within its rules.
      if (mla::lib::EncodeSummary(*summary, "0/1/1") != line) std::abort();
      const mla::lib::Verdict d = mla::lib::DecideFromSummary(*summary);
      if (d.on && !d.consistent) std::abort();
    }
    start = end + 1;
  }
  const mla::lib::Verdict v = mla::lib::Decide(published);
  if (v.on && !v.consistent) std::abort();
  if (v.reporter < -1 || v.reporter >= static_cast<int>(published.size())) std::abort();

  if (size >= sizeof(uint64_t) * mla::lib::kBallotWords) {
    uint64_t words[mla::lib::kBallotWords];
    std::memcpy(words, data, sizeof words);
    mla::lib::Ballot mine;
    mine.version = "0.1.0";
    const mla::lib::Verdict w = mla::lib::DecideFromWords(words, mine, 3);
    if (w.on && !w.consistent) std::abort();
  }
  return 0;
}
