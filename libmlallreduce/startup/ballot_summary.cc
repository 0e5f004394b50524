// ballot_summary.cc: a set of ranks' ballots in fields that merge
// (ballot_summary.h).
#include "libmlallreduce/startup/ballot_summary.h"

#include <algorithm>
#include <vector>

#include "libmlallreduce/startup/ballot.h"

namespace mla::lib {
namespace {

constexpr char kSummaryTag[] = "mls1";  // frozen: the summary's protocol
constexpr size_t kFields = 17;          // the tag, the scope, 13 numbers, two versions; then the reason

void MergeSample(RankSample* into, const RankSample& b) {
  int all[4] = {into->lowest[0], into->lowest[1], b.lowest[0], b.lowest[1]};
  std::sort(all, all + 4);
  into->count += b.count;
  into->lowest[0] = all[0];
  into->lowest[1] = all[1];
}

// The lowest rank of `s` whose version is not `version`, and that version.
std::pair<int, std::string> OtherThan(const BallotSummary& s, const std::string& version) {
  if (s.first == kNoRank) return {kNoRank, ""};
  if (s.first_version != version) return {s.first, s.first_version};
  return {s.other_version, s.other_version_text};
}

std::string Rank(int rank) { return rank == kNoRank ? "-" : std::to_string(rank); }

// Digits only, no leading zero, at most `max`; false for anything else (so
// that a text decodes only as EncodeSummary writes it).
bool Number(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (digit > max || v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

bool RankField(const std::string& text, int* out) {
  uint64_t v = 0;
  if (text == "-") {
    *out = kNoRank;
    return true;
  }
  if (!Number(text, kNoRank - 1, &v)) return false;
  *out = static_cast<int>(v);
  return true;
}

bool CountField(const std::string& text, int64_t* out) {
  uint64_t v = 0;
  if (!Number(text, INT64_MAX, &v)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// The numbers of EncodeSummary's text, in its order.
bool Numbers(const std::vector<std::string>& f, BallotSummary* s) {
  uint64_t same = 0;
  const bool ok =
      CountField(f[0], &s->ranks) && CountField(f[1], &s->bare.count) && RankField(f[2], &s->bare.lowest[0]) &&
      RankField(f[3], &s->bare.lowest[1]) && CountField(f[4], &s->foreign.count) &&
      RankField(f[5], &s->foreign.lowest[0]) && RankField(f[6], &s->foreign.lowest[1]) && RankField(f[7], &s->first) &&
      Number(f[8], UINT64_MAX, &s->first_settings) && Number(f[9], 1, &same) && RankField(f[10], &s->other_version) &&
      RankField(f[11], &s->first_off) && RankField(f[12], &s->first_counting);
  s->same_settings = same == 1;
  return ok;
}

}  // namespace

BallotSummary SummaryOfRank(int rank, const std::optional<std::string>& published) {
  BallotSummary s;
  s.ranks = 1;
  const std::optional<Ballot> b = published ? DecodeBallot(*published) : std::nullopt;
  RankSample* missing = !published ? &s.bare : !b ? &s.foreign : nullptr;
  if (missing != nullptr) {
    missing->count = 1;
    missing->lowest[0] = rank;
    return s;
  }
  s.first = rank;
  s.first_version = b->version;
  s.first_settings = b->settings;
  if (!b->on) {
    s.first_off = rank;
    s.off_reason = b->reason;
  }
  if (b->counts) s.first_counting = rank;
  return s;
}

void MergeInto(BallotSummary* into, const BallotSummary& b) {
  into->ranks += b.ranks;
  MergeSample(&into->bare, b.bare);
  MergeSample(&into->foreign, b.foreign);
  const bool settings_agree = into->first == kNoRank || b.first == kNoRank || into->first_settings == b.first_settings;
  into->same_settings = into->same_settings && b.same_settings && settings_agree;
  if (b.first < into->first) {
    into->first = b.first;
    into->first_version = b.first_version;
    into->first_settings = b.first_settings;
  }
  auto other = std::min(OtherThan(*into, into->first_version), OtherThan(b, into->first_version));
  into->other_version = other.first;
  into->other_version_text = std::move(other.second);
  if (b.first_off < into->first_off) {
    into->first_off = b.first_off;
    into->off_reason = b.off_reason;
  }
  into->first_counting = std::min(into->first_counting, b.first_counting);
}

std::string EncodeSummary(const BallotSummary& s, const std::string& scope) {
  std::string t = std::string(kSummaryTag) + "|" + scope;
  for (const std::string& field :
       {std::to_string(s.ranks), std::to_string(s.bare.count), Rank(s.bare.lowest[0]), Rank(s.bare.lowest[1]),
        std::to_string(s.foreign.count), Rank(s.foreign.lowest[0]), Rank(s.foreign.lowest[1]), Rank(s.first),
        std::to_string(s.first_settings), std::string(s.same_settings ? "1" : "0"), Rank(s.other_version),
        Rank(s.first_off), Rank(s.first_counting), s.first_version, s.other_version_text})
    t += "|" + field;
  return t + "|" + s.off_reason;
}

std::optional<BallotSummary> DecodeSummary(const std::string& text, const std::string& scope) {
  std::vector<std::string> f;
  size_t start = 0;
  while (f.size() < kFields) {
    const size_t bar = text.find('|', start);
    if (bar == std::string::npos) return std::nullopt;
    f.push_back(text.substr(start, bar - start));
    start = bar + 1;
  }
  if (f[0] != kSummaryTag || f[1] != scope) return std::nullopt;
  BallotSummary s;
  if (!Numbers(std::vector<std::string>(f.begin() + 2, f.end()), &s)) return std::nullopt;
  s.first_version = f[kFields - 2];
  s.other_version_text = f[kFields - 1];
  s.off_reason = text.substr(start);
  return s;
}

}  // namespace mla::lib
