#include "vocab/profile.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <tuple>

#include "vocab/terminal_text.h"
#include "vocab/algo_names.h"

namespace mla {
namespace {

constexpr std::string_view kHeader = "multilane-profile";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The line of `text` that starts at *pos ('\n' and ';' end one) without its
// comment ('#' on) and the space around it; moves *pos past it and sets
// *last when it ends the text.
std::string_view NextLine(std::string_view text, size_t* pos, bool* last) {
  size_t end = text.find_first_of("\n;", *pos);
  if (end == std::string_view::npos) end = text.size();
  const std::string_view raw = text.substr(*pos, end - *pos);
  *pos = end + 1;
  *last = end == text.size();
  return Trim(raw.substr(0, raw.find('#')));
}

std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) words.push_back(s.substr(i, j - i));
    i = j;
  }
  return words;
}

bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  if (s.empty() || s.size() > 9) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || *end != '\0' || errno != 0 || !(v >= 0)) return false;
  *out = v;
  return true;
}

// Why a chunk of `bytes` cannot stand in a profile, or "".
std::string ChunkProblem(uint64_t bytes) {
  if (bytes == 0 || bytes >= kMinProfileChunkBytes) return "";
  return "chunk=" + FormatByteSize(bytes) + " is below " + FormatByteSize(kMinProfileChunkBytes) +
         " (every piece pays each step's latency: such chunks run 50-100x slower): remove chunk= to take "
         "the whole message, give " +
         FormatByteSize(kMinProfileChunkBytes) + " or more, or run multilane tune";
}

// Reads the header line's words ("multilane-profile 1 key=value...") into
// *metadata; on a broken header returns false with *why.
bool ParseHeaderWords(const std::vector<std::string_view>& words, std::map<std::string, std::string>* metadata,
                      std::string* why) {
  if (words[0] != kHeader) {
    *why = "a profile must start with '" + std::string(kHeader) + " " + std::to_string(MLA_PROFILE_FORMAT_VERSION) +
           "', found " + Quoted(words[0]);
    return false;
  }
  int version = 0;
  if (words.size() < 2 || !ParseInt(words[1], 0, 1000000, &version)) {
    *why = "the header needs a format version: '" + std::string(kHeader) + " " +
           std::to_string(MLA_PROFILE_FORMAT_VERSION) + "'";
    return false;
  }
  if (version != MLA_PROFILE_FORMAT_VERSION) {
    *why = "format version " + std::to_string(version) + " is not supported (this library reads version " +
           std::to_string(MLA_PROFILE_FORMAT_VERSION) + "); re-tune with this library's multilane";
    return false;
  }
  for (size_t i = 2; i < words.size(); ++i) {
    size_t eq = words[i].find('=');
    if (eq == std::string_view::npos || eq == 0) {
      *why = "header metadata must be key=value, found " + Quoted(words[i]);
      return false;
    }
    const std::string key(words[i].substr(0, eq));
    if (!metadata->emplace(key, std::string(words[i].substr(eq + 1))).second) {
      *why = "header key " + Quoted(key) + " is given twice: keep one";
      return false;
    }
  }
  return true;
}

// The largest time a point may record, in microseconds: 11 days.  Keeps
// every extrapolated price finite.
constexpr double kMaxPointTimeUs = 1e12;

// Reads the value of `pts=` ("4K:21.5/20.9/0.03,16K:38.1/36.2") into
// e->points; on a problem returns it ("" when fine).  The sizes must rise
// strictly and lie in the entry's range.
std::string ParsePoints(std::string_view value, ProfileEntry* e) {
  const std::string form = " (expected SIZE:TIME_US/MPI_TIME_US[/NOISE],... such as 16K:38.1/36.2/0.04)";
  if (value.empty()) return "pts needs at least one point" + form;
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t comma = value.find(',', pos);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view item = value.substr(pos, comma - pos);
    pos = comma + 1;
    if (e->points.size() >= kMaxProfilePointsPerEntry)
      return "pts holds more than " + std::to_string(kMaxProfilePointsPerEntry) + " points: keep the probed sizes";
    const size_t colon = item.find(':');
    ProfilePoint p;
    if (colon == std::string_view::npos || !ParseByteSize(item.substr(0, colon), &p.bytes))
      return "bad point " + Quoted(item) + form;
    std::string_view rest = item.substr(colon + 1);
    double numbers[3] = {0, 0, -1};
    int count = 0;
    for (; count < 3 && !rest.empty(); ++count) {
      const size_t slash = rest.find('/');
      if (!ParseDouble(rest.substr(0, slash), &numbers[count]) || !std::isfinite(numbers[count]))
        return "bad point " + Quoted(item) + form;
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
      if (slash != std::string_view::npos && rest.empty()) return "bad point " + Quoted(item) + form;
    }
    if (count < 2 || !rest.empty()) return "bad point " + Quoted(item) + form;
    if (p.bytes == 0) return "point " + Quoted(item) + ": a probed size is at least 1 byte" + form;
    if (numbers[0] > kMaxPointTimeUs || numbers[1] > kMaxPointTimeUs)
      return "point " + Quoted(item) + ": a time above 1e12 us (11 days) is no measurement" + form;
    p.time_us = numbers[0];
    p.mpi_time_us = numbers[1];
    p.noise = count == 3 ? numbers[2] : -1;
    if (p.noise > kMaxProfileNoise) return "point " + Quoted(item) + ": the noise is a fraction of at most 10" + form;
    if (p.bytes < e->min_bytes || p.bytes >= e->max_bytes)
      return "point " + Quoted(item) + " lies outside the entry's size range: keep the sizes measured in it";
    if (!e->points.empty() && p.bytes <= e->points.back().bytes)
      return "point " + Quoted(item) + ": the sizes of pts must rise strictly";
    e->points.push_back(p);
    if (comma == value.size()) break;
  }
  return "";
}

// "21.5", "0.04": a number of pts= as ToString writes it (6 significant digits).
std::string PointNumber(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Reads one `key=value` of an entry into *e (*points: the points of the
// profile so far, pts= adds to it); returns the problem, "" when fine.  The
// keys of one kind of value share its reading and its message.
std::string ParseEntryKey(std::string_view key, std::string_view value, ProfileEntry* e, size_t* points) {
  int* const count = key == "lanes" ? &e->choice.lanes : key == "ppg" ? &e->ppg : nullptr;
  double* const time = key == "time_us" ? &e->time_us : key == "mpi_time_us" ? &e->mpi_time_us : nullptr;
  uint64_t* const size = key == "chunk" ? &e->choice.chunk_bytes : key == "at" ? &e->measured_bytes : nullptr;
  const std::string found = ", found " + Quoted(value);
  if (count != nullptr && !ParseInt(value, 1, 1 << 20, count))
    return std::string(key) + " must be a positive integer" + found;
  if (time != nullptr && !ParseDouble(value, time)) return std::string(key) + " must be a non-negative number" + found;
  if (size != nullptr && !ParseByteSize(value, size))
    return std::string(key) + " must be a byte size such as 4M" + found;
  if (count != nullptr || time != nullptr || size != nullptr) return key == "chunk" ? ChunkProblem(*size) : "";
  if (key == "transport") {
    if (!mla::TransportFromName(std::string(value).c_str(), &e->choice.transport))
      return std::string("transport must be ") + mla::TransportNames() + found;
    if (e->choice.transport == MLA_TRANSPORT_SHM && e->kind != MemKind::kHost)
      return "transport=shm is for host memory (the node steps of lane and hier through shared memory); a device "
             "entry takes auto, mpi or nccl" +
             found;
  } else if (key == "pts") {
    if (std::string why = ParsePoints(value, e); !why.empty()) return why;
    *points += e->points.size();
    if (*points > kMaxProfilePoints)
      return "the profile holds more than " + std::to_string(kMaxProfilePoints) +
             " points (pts=): tuned profiles hold a few hundred; keep the probed sizes";
  } else if (key == "mpi") {
    if (!IsSystemAlgorithmName(value))
      return "mpi must name one of the system MPI's allreduce algorithms (lowercase letters, digits and '_', such "
             "as ring)" +
             found;
    e->system_algorithm = std::string(value);
  } else {
    return "unknown key " + Quoted(key) + " (known: lanes, chunk, transport, ppg, mpi, time_us, mpi_time_us, at, pts)";
  }
  return "";
}

// Reads the words of one entry line ("MEMORY FROM TO ALGORITHM
// [key=value...]", four words at least) into *e; returns the problem, ""
// when fine.
std::string ParseEntry(const std::vector<std::string_view>& words, ProfileEntry* e, size_t* points) {
  if (words[0] == "host")
    e->kind = MemKind::kHost;
  else if (words[0] == "device")
    e->kind = MemKind::kDevice;
  else
    return "unknown memory kind " + Quoted(words[0]) + " (expected host or device)";
  if (!ParseByteSize(words[1], &e->min_bytes)) {
    return "bad size " + Quoted(words[1]) + " (expected bytes with an optional K, M, G suffix)";
  }
  if (words[2] == "inf" || words[2] == "-") {
    e->max_bytes = UINT64_MAX;
  } else if (!ParseByteSize(words[2], &e->max_bytes)) {
    return "bad size " + Quoted(words[2]) + " (expected bytes with an optional K, M, G suffix, or inf)";
  }
  if (e->max_bytes <= e->min_bytes) {
    return "empty size range " + std::string(words[1]) + " to " + std::string(words[2]) + " (TO must be above FROM)";
  }
  std::string algo_name(words[3]);
  if (!mla::AlgoFromName(algo_name.c_str(), &e->choice.algo)) {
    return "unknown algorithm " + Quoted(words[3]) + " (expected passthrough, lane, hier or split)";
  }
  std::set<std::string_view> keys;
  for (size_t i = 4; i < words.size(); ++i) {
    size_t eq = words[i].find('=');
    if (eq == std::string_view::npos) return "expected key=value, found " + Quoted(words[i]);
    std::string_view key = words[i].substr(0, eq), value = words[i].substr(eq + 1);
    if (!keys.insert(key).second) return "key " + Quoted(key) + " is given twice: keep one";
    if (std::string why = ParseEntryKey(key, value, e, points); !why.empty()) return why;
  }
  if (!e->system_algorithm.empty() && e->choice.algo != MLA_ALGO_PASSTHROUGH)
    return "mpi=" + e->system_algorithm + " names the system MPI's own algorithm: it goes with passthrough, not " +
           std::string(words[3]);
  return "";
}

// Why two entries' size ranges overlap for one memory kind and ppg ("" when
// none do), with *entry_no the later entry's line.  Sorted once by (kind,
// ppg, from), two ranges of one (kind, ppg) overlap exactly when two
// neighbours in that order do.
std::string OverlapProblem(const std::vector<ProfileEntry>& entries, int* entry_no) {
  std::vector<const ProfileEntry*> order;
  order.reserve(entries.size());
  for (const ProfileEntry& e : entries) order.push_back(&e);
  auto key = [](const ProfileEntry* e) { return std::make_tuple(e->kind, e->ppg, e->min_bytes, e->line); };
  std::sort(order.begin(), order.end(), [&](const ProfileEntry* a, const ProfileEntry* b) { return key(a) < key(b); });
  for (size_t i = 1; i < order.size(); ++i) {
    const ProfileEntry& a = *order[i - 1];
    const ProfileEntry& b = *order[i];
    if (a.kind == b.kind && a.ppg == b.ppg && b.min_bytes < a.max_bytes) {
      *entry_no = std::max(a.line, b.line);
      return "size range overlaps entry " + std::to_string(std::min(a.line, b.line)) +
             " for the same memory kind and ppg";
    }
  }
  return "";
}

}  // namespace

std::string ProfileHeaderValue(std::string_view text, const std::string& key) {
  size_t pos = 0;
  for (bool last = false; !last;) {
    const std::string_view raw = NextLine(text, &pos, &last);
    if (raw.empty()) continue;
    std::map<std::string, std::string> metadata;
    std::string why;
    if (!ParseHeaderWords(SplitWords(raw), &metadata, &why)) return "";
    auto it = metadata.find(key);
    return it == metadata.end() ? "" : it->second;
  }
  return "";
}

const char* MemKindName(MemKind kind) { return kind == MemKind::kHost ? "host" : "device"; }

bool Profile::Parse(std::string_view text, std::string* error) {
  std::vector<ProfileEntry> entries;
  std::map<std::string, std::string> metadata;
  bool seen_header = false;
  int entry_no = 0;
  size_t points = 0;
  auto fail = [&](const std::string& msg) {
    *error = "entry " + std::to_string(entry_no) + ": " + msg;
    return false;
  };

  // A NUL byte would cut the text short wherever it is handled as a C string.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    entry_no = 1;
    for (size_t i = 0; i < nul; ++i) entry_no += (text[i] == '\n' || text[i] == ';') ? 1 : 0;
    return fail("the profile holds a NUL byte (at byte " + std::to_string(nul) +
                "): a profile is text; write it again with multilane show or tune");
  }

  size_t pos = 0;
  for (bool last = false; !last;) {
    const std::string_view raw = NextLine(text, &pos, &last);
    ++entry_no;
    if (raw.empty()) continue;
    std::vector<std::string_view> words = SplitWords(raw);
    if (!seen_header) {
      std::string why;
      if (!ParseHeaderWords(words, &metadata, &why)) return fail(why);
      seen_header = true;
      continue;
    }

    if (words.size() < 4) {
      return fail("expected 'MEMORY FROM TO ALGORITHM [key=value...]', found " + Quoted(raw));
    }
    if (entries.size() >= kMaxProfileEntries) {
      return fail("too many entries (at most " + std::to_string(kMaxProfileEntries) +
                  "; tuned profiles have a few dozen): merge neighbouring size ranges");
    }
    ProfileEntry e;
    e.line = entry_no;
    if (std::string why = ParseEntry(words, &e, &points); !why.empty()) return fail(why);
    entries.push_back(e);
  }
  if (!seen_header) {
    entry_no = 1;
    return fail("empty profile: a profile starts with '" + std::string(kHeader) + " " +
                std::to_string(MLA_PROFILE_FORMAT_VERSION) + "'");
  }
  if (std::string why = OverlapProblem(entries, &entry_no); !why.empty()) return fail(why);
  entries_ = std::move(entries);
  metadata_ = std::move(metadata);
  return true;
}

std::string SystemChoiceText(const std::string& name) {
  return std::string(AlgoName(MLA_ALGO_PASSTHROUGH)) + " mpi=" + name;
}

bool IsSystemAlgorithmName(std::string_view name) {
  if (name.empty() || name.size() > 40) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

const ProfileEntry* Profile::Lookup(MemKind kind, uint64_t bytes, int ppg) const {
  const ProfileEntry* any_layout = nullptr;
  for (const ProfileEntry& e : entries_) {
    if (e.kind != kind || bytes < e.min_bytes || bytes >= e.max_bytes) continue;
    if (e.ppg == ppg) return &e;
    if (e.ppg == 0 && any_layout == nullptr) any_layout = &e;
  }
  return any_layout;
}

std::string Profile::ToString() const {
  std::ostringstream out;
  out << kHeader << ' ' << MLA_PROFILE_FORMAT_VERSION;
  for (const auto& [key, value] : metadata_) out << ' ' << key << '=' << value;
  out << '\n';
  for (const ProfileEntry& e : entries_) {
    out << MemKindName(e.kind) << ' ' << FormatByteSize(e.min_bytes) << ' '
        << (e.max_bytes == UINT64_MAX ? std::string("inf") : FormatByteSize(e.max_bytes)) << ' '
        << mla::AlgoName(e.choice.algo);
    if (e.choice.lanes > 0) out << " lanes=" << e.choice.lanes;
    if (e.choice.chunk_bytes > 0) out << " chunk=" << FormatByteSize(e.choice.chunk_bytes);
    if (e.choice.transport != MLA_TRANSPORT_AUTO) out << " transport=" << mla::TransportName(e.choice.transport);
    if (e.ppg > 0) out << " ppg=" << e.ppg;
    if (!e.system_algorithm.empty()) out << " mpi=" << e.system_algorithm;
    if (e.time_us >= 0) out << " time_us=" << e.time_us;
    if (e.mpi_time_us >= 0) out << " mpi_time_us=" << e.mpi_time_us;
    if (e.measured_bytes > 0) out << " at=" << FormatByteSize(e.measured_bytes);
    for (size_t i = 0; i < e.points.size(); ++i) {
      const ProfilePoint& p = e.points[i];
      out << (i == 0 ? " pts=" : ",") << FormatByteSize(p.bytes) << ':' << PointNumber(p.time_us) << '/'
          << PointNumber(p.mpi_time_us);
      if (p.noise >= 0) out << '/' << PointNumber(p.noise);
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace mla
