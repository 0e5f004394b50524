// profile.h: the profile, a table of message-size bins x memory kind ->
// algorithm and parameters, in the text format of docs/profile-format.md.
// Pure C++: no MPI, so it is unit-tested on its own.
#ifndef MLA_PROFILE_H_
#define MLA_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vocab/byte_size.h"
#include "mlallreduce_types.h"

namespace mla {

enum class MemKind { kHost = 0, kDevice = 1 };

// Returns "host" or "device".
const char* MemKindName(MemKind kind);

// One probed size of an entry (the `pts=` key, docs/profile-format.md): the
// medians the tune measured there for the entry's algorithm and for the
// system MPI, and the relative noise of that comparison (-1: not recorded).
struct ProfilePoint {
  uint64_t bytes = 0;
  double time_us = 0;
  double mpi_time_us = 0;
  double noise = -1;  // a fraction: 0.04 = 4 %
};

// One line of a profile: calls of `kind` memory whose message size in bytes
// lies in [min_bytes, max_bytes) run `choice`.  ppg > 0 restricts the line to
// jobs that run ppg ranks per GPU; 0 means any layout.
struct ProfileEntry {
  MemKind kind = MemKind::kHost;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = UINT64_MAX;  // exclusive; UINT64_MAX = no upper bound
  int ppg = 0;
  mla_choice choice{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  double time_us = -1;               // measured time of the winner, -1 when unknown
  double mpi_time_us = -1;           // measured time of the system MPI, -1 when unknown
  uint64_t measured_bytes = 0;       // the message size time_us was measured at, 0 when unknown
  std::vector<ProfilePoint> points;  // pts=: every probed size in [min_bytes, max_bytes), by size; may be empty
  // mpi=: on a passthrough entry, the system MPI's own allreduce algorithm
  // that runs the entry's calls ("ring"); empty: the MPI's own choice.
  std::string system_algorithm;
  int line = 0;  // 1-based entry number in the text, for messages
};

// The smallest `chunk` an entry may give (0, the whole message, is always
// fine).  Each piece pays every step's latency: chunks of a few bytes ran
// 50-100x slower than the whole message.  multilane tune writes 1M or 4M.
inline constexpr uint64_t kMinProfileChunkBytes = 64u << 10;

// The most entries a profile may have; Parse rejects more with a message.
// Tuned profiles have a few dozen.
inline constexpr size_t kMaxProfileEntries = 10000;

// The most points (`pts=`) one entry may carry, and the most in a whole
// profile; Parse rejects more.  A tune probes about a dozen sizes per memory
// kind and each size lands in one entry per ranks-per-GPU value, so tuned
// profiles carry a few dozen to a few hundred (a point is ~25 bytes of text).
inline constexpr size_t kMaxProfilePointsPerEntry = 64;
inline constexpr size_t kMaxProfilePoints = 4096;
// The largest relative noise a point may record (10 = 1000 %).
inline constexpr double kMaxProfileNoise = 10.0;

// Whether `name` is spelled as a system MPI algorithm name may be (`mpi=`:
// 1 to 40 lowercase letters, digits and '_'); which names exist is the
// running MPI's to say (sysalgo/).
bool IsSystemAlgorithmName(std::string_view name);

// "passthrough mpi=NAME": the entry text that chooses the system algorithm
// NAME, also the report's name for the calls it ran.
std::string SystemChoiceText(const std::string& name);

class Profile {
 public:
  // Parses `text`.  On success returns true and replaces *this; on failure
  // returns false, leaves *this unchanged and sets *error to a message that
  // names the entry and the problem.  Rejects a NUL byte anywhere, a key given
  // twice in one entry or in the header, a chunk below kMinProfileChunkBytes,
  // more than kMaxProfileEntries entries, overlapping ranges (found in
  // O(n log n)), and points (pts=) that are not strictly increasing sizes
  // inside their entry's range, or beyond kMaxProfilePointsPerEntry or
  // kMaxProfilePoints.
  bool Parse(std::string_view text, std::string* error);

  // Returns the entry for a call, or nullptr when no entry covers it (the
  // call then goes to the system MPI).  An entry whose ppg equals `ppg` wins
  // over one that holds for any layout.
  const ProfileEntry* Lookup(MemKind kind, uint64_t bytes, int ppg) const;

  // Renders the profile in the canonical text form, one entry per line; Parse
  // of the result gives the same profile.
  std::string ToString() const;

  const std::vector<ProfileEntry>& entries() const { return entries_; }
  // key=value pairs of the header line (node_type=..., tuned_at=...).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<ProfileEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// The value of `key` in the header line of a profile text ("multilane-profile
// 1 node_type=... ranks_per_gpu_tuned=1,2,4"), read with Profile::Parse's
// rules for the header (entries are not checked); "" when the key is absent
// or the header is broken.  Lines may end with newlines or ';'.
std::string ProfileHeaderValue(std::string_view profile_text, const std::string& key);

// ParseByteSize and FormatByteSize: byte_size.h.

}  // namespace mla

#endif  // MLA_PROFILE_H_
