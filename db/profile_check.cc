// profile_check.cc: CheckProfileText (profile_check.h).
#include "db/profile_check.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "vocab/byte_size.h"
#include "vocab/outside_input.h"
#include "vocab/profile.h"
#include "vocab/algo_names.h"
#include "vocab/refuse.h"

namespace mldb {
namespace {

// An entry in words, for messages: "host 0 256K lane lanes=2" (an excerpt:
// the rows come from outside, an imported file).
std::string Describe(const ProfileEntryRow& e) {
  std::string s = e.mem_kind + " " + mla::FormatByteSize(static_cast<uint64_t>(e.min_bytes)) + " " +
                  (e.max_bytes ? mla::FormatByteSize(static_cast<uint64_t>(*e.max_bytes)) : std::string("inf")) + " " +
                  e.ChoiceWords();
  return mla::Excerpt(s);
}

// The parsed entry as a row, in the store's conventions.
ProfileEntryRow RowOf(const mla::ProfileEntry& e) {
  ProfileEntryRow r;
  r.mem_kind = mla::MemKindName(e.kind);
  r.min_bytes = static_cast<int64_t>(std::min<uint64_t>(e.min_bytes, INT64_MAX));
  if (e.max_bytes != UINT64_MAX) r.max_bytes = static_cast<int64_t>(std::min<uint64_t>(e.max_bytes, INT64_MAX));
  r.algo = mla::AlgoName(e.choice.algo);
  r.ppg = e.ppg;
  r.lanes = e.choice.lanes;
  r.chunk_bytes = static_cast<int64_t>(std::min<uint64_t>(e.choice.chunk_bytes, INT64_MAX));
  r.transport = e.choice.transport == MLA_TRANSPORT_AUTO ? "" : mla::TransportName(e.choice.transport);
  r.system_algorithm = e.system_algorithm;
  r.time_us = e.time_us;
  r.mpi_time_us = e.mpi_time_us;
  return r;
}

std::string Transport(const std::string& t) { return t == "auto" ? "" : t; }

auto Key(const ProfileEntryRow& e) {
  return std::make_tuple(e.mem_kind, e.ppg, e.min_bytes, e.max_bytes.value_or(INT64_MAX), e.algo, e.lanes,
                         e.chunk_bytes, Transport(e.transport), e.system_algorithm);
}

bool SameTime(double a, double b) {
  if (a < 0 || b < 0) return true;  // unknown on one side: nothing to compare
  return std::fabs(a - b) <= 1e-5 * std::max(std::fabs(a), std::fabs(b)) + 1e-9;
}

}  // namespace

bool CheckProfileText(const std::string& profile_text, const std::vector<ProfileEntryRow>& entries,
                      std::string* error) {
  mla::Profile profile;
  std::string why;
  if (!profile.Parse(profile_text, &why))
    return mla::Refuse(error, "profile_text: the library rejects it: " + mla::Excerpt(why));
  std::vector<ProfileEntryRow> text_rows;
  for (const mla::ProfileEntry& e : profile.entries()) text_rows.push_back(RowOf(e));
  std::vector<ProfileEntryRow> rows = entries;
  auto less = [](const ProfileEntryRow& a, const ProfileEntryRow& b) { return Key(a) < Key(b); };
  std::sort(text_rows.begin(), text_rows.end(), less);
  std::sort(rows.begin(), rows.end(), less);
  size_t i = 0, j = 0;
  while (i < text_rows.size() || j < rows.size()) {
    if (j == rows.size() || (i < text_rows.size() && less(text_rows[i], rows[j]))) {
      *error =
          "profile_text has '" + Describe(text_rows[i]) + "', which no entry has: the text and the entries disagree";
      return false;
    }
    if (i == text_rows.size() || less(rows[j], text_rows[i])) {
      *error =
          "an entry says '" + Describe(rows[j]) + "', which profile_text does not: the text and the entries disagree";
      return false;
    }
    if (!SameTime(text_rows[i].time_us, rows[j].time_us) || !SameTime(text_rows[i].mpi_time_us, rows[j].mpi_time_us))
      return mla::Refuse(error, "'" + Describe(rows[j]) + "': the times of profile_text and of the entry differ");
    ++i, ++j;
  }
  return true;
}

}  // namespace mldb
