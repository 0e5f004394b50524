// job_key.h: the one rule for a job key, the name under which the job
// history (`multilane history`, docs/history.md) keeps the runs of "the same
// job": written by the library into the job report (job.key), checked again
// by the launcher when it records or looks a key up.
#ifndef MLVOCAB_JOB_KEY_H_
#define MLVOCAB_JOB_KEY_H_

#include <string>

namespace mla {

// The longest job key.
inline constexpr size_t kMaxJobKeyLength = 128;

// Whether `key` is a job key: 1 to kMaxJobKeyLength characters among
// letters, digits and . _ - + : @ / (no space, no control character, never
// starting with '-').
bool ValidJobKey(const std::string& key);

// "1 to 128 letters, digits or . _ - + : @ /, not starting with -": what
// ValidJobKey takes, for messages.
std::string JobKeyRule();

// 16 hexadecimal digits of the 64-bit FNV-1a digest of `bytes`: the job
// key's digest, and the history's name for a profile text.
std::string Fnv1a64Hex(const std::string& bytes);

// The key of a job not named by its user (MULTILANE_JOB_KEY): the program's
// name, ':' and 12 hexadecimal digits of a 64-bit FNV-1a digest of its whole
// command line (`cmdline`: the arguments, each ended by a NUL, as
// /proc/self/cmdline holds them).  Characters of the name outside the rule
// become '_'; an empty name becomes "job".
std::string DefaultJobKey(const std::string& program, const std::string& cmdline);

}  // namespace mla

#endif  // MLVOCAB_JOB_KEY_H_
