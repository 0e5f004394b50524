// candidates.h: the tuner's candidate space, as data.
//
// A candidate is one way to run an allreduce: an algorithm and values for the
// parameters that apply to it ("lane lanes=2 chunk=4M").  The space is a
// table of dimensions; Expand() takes the cross product of the values that
// apply to each algorithm and memory kind and drops the combinations that
// mean nothing on the layout at hand.
//
// Adding a dimension is adding ONE entry to the table of DefaultSpace() (in
// candidates.cc): its profile key, its values, the algorithms and memory kinds
// it applies to, the value that means "default" (left out of the profile
// words), how a value sets an mla_choice, and optionally when a value is
// meaningless.  Nothing else changes: Expand, rendering, parsing and the probe
// all walk the table.  (candidates_test.cc shows it.)
//
// Pure C++: no MPI, not even its header.  ToChoice uses mla::AlgoFromName /
// mla::TransportFromName of the shared vocabulary (vocab/algo_names.h).
#ifndef MLTUNER_CANDIDATES_H_
#define MLTUNER_CANDIDATES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mlallreduce_types.h"

namespace mltuner {

enum class MemKind { kHost = 0, kDevice = 1 };

// "host" or "device".
const char* MemKindName(MemKind kind);
bool MemKindFromName(const std::string& name, MemKind* kind);

// Byte counts as the profile writes them, by the library's own rules
// (vocab/byte_size.h): digits with an optional binary suffix K/KiB,
// M/MiB, G/GiB, T/TiB (case-insensitive) or B.
bool ParseByteSize(const std::string& text, uint64_t* out);
// Largest exact binary suffix: 65536 -> "64K", 1000 -> "1000".
std::string FormatByteSize(uint64_t bytes);

// What Expand knows about the job the candidates are for.
struct Layout {
  MemKind mem = MemKind::kHost;
  int ranks_per_node = 0;  // 0: unknown, nothing is dropped for it
  int ranks_per_gpu = 0;   // 0: unknown, nothing is dropped for it
};

struct Candidate;

// One dimension of the space: a profile key and its values.
struct Dimension {
  std::string name;                     // profile key: "lanes", "chunk", "transport", ...
  std::vector<std::string> values;      // value words, in order ("0", "1M", "nccl")
  std::vector<std::string> applies_to;  // algorithm names; empty = every algorithm
  std::vector<MemKind> memory;          // memory kinds; empty = every kind
  std::string default_value;            // the value that means "default": not rendered
  // Sets the choice from a value; false (with *error) when the value is bad.
  std::function<bool(const std::string& value, mla_choice* choice, std::string* error)> apply;
  // Optional: true when the value means nothing on this layout (dropped).
  std::function<bool(const std::string& value, const Layout& layout)> meaningless;
  // Optional: true when the value is equivalent to the default at a message
  // of this many bytes (the probe skips such candidates at that size).
  std::function<bool(const std::string& value, uint64_t bytes)> redundant_at;
  // Optional: true when the value means nothing for algorithm `algo` on this
  // layout beside the values `partial` took in the dimensions before this
  // one (dropped): shm, a host transport, beside a chunk.
  std::function<bool(const std::string& value, const std::string& algo, const Layout& layout, const Candidate& partial)>
      excluded;
  bool restricted = false;  // the values were set by Space::Restrict (a plan's "space")
};

// An algorithm of the space, with the layouts it needs.
struct Algorithm {
  std::string name;  // "lane", "hier", "split"
  // Optional: true when the algorithm means nothing on this layout.
  std::function<bool(const Layout& layout)> meaningless;
};

struct Space {
  std::vector<Algorithm> algorithms;
  std::vector<Dimension> dimensions;

  const Dimension* Find(const std::string& name) const;
  Dimension* Find(const std::string& name);
  // Keeps only the listed values of a dimension (or, for name "algo", the
  // listed algorithms); false with *error when a name or value is unknown.
  bool Restrict(const std::string& name, const std::vector<std::string>& values, std::string* error);
};

// algo ∈ {lane, hier, split}; lanes ∈ {0=all, 1, 2} (lane only);
// chunk ∈ {0=default, 1M, 4M}; transport ∈ {auto, mpi, nccl} (device memory,
// lane and split) or {auto, shm} (host memory, lane and hier, without chunk);
// mpi (passthrough): the system MPI's own algorithms (for device memory, of
// the staged path's host collective), whose names only the running MPI knows
// (SystemCandidates).
Space DefaultSpace();

// A point of the space.  params holds only the non-default values, in the
// order of the space's dimensions.
struct Candidate {
  std::string algo;
  std::vector<std::pair<std::string, std::string>> params;

  // The profile entry words: "lane lanes=2 chunk=4M"; "passthrough".
  std::string Render() const;
  // The system MPI, with its own choice or (mpi=NAME) one of its algorithms.
  bool IsPassthrough() const { return algo == "passthrough"; }
  // NAME of mpi=NAME; "" for every other candidate.
  std::string SystemAlgorithm() const;
  bool operator==(const Candidate& o) const { return algo == o.algo && params == o.params; }
  bool operator!=(const Candidate& o) const { return !(*this == o); }
};

// The system MPI.
Candidate Passthrough();

// Every meaningful candidate of the space for this layout (passthrough is not
// among them: callers measure it separately), without duplicates.
std::vector<Candidate> Expand(const Space& space, const Layout& layout);
// The same with the layout given as its parts (ranks_per_gpu 0: unknown).
std::vector<Candidate> Expand(const Space& space, MemKind mem, int ranks_per_node, int ranks_per_gpu = 0);

// "passthrough mpi=NAME" for each of the system MPI's algorithms to probe:
// those of the space's "mpi" values (a plan restricted them) that the MPI
// offers, the rest added to *not_offered; else every algorithm offered.
std::vector<Candidate> SystemCandidates(const Space& space, const std::vector<std::string>& offered,
                                        std::vector<std::string>* not_offered);

// Parses profile words ("lane lanes=2 chunk=4M") against the space's keys;
// values equal to a dimension's default are dropped, the rest put in table
// order.  "passthrough" takes only mpi=.
bool ParseCandidate(const Space& space, const std::string& words, Candidate* out, std::string* error);

// The mla_choice that runs the candidate.
bool ToChoice(const Space& space, const Candidate& c, mla_choice* choice, std::string* error);

// True when some parameter of c is equivalent to its default at this message
// size (e.g. chunk >= size): the candidate then repeats a simpler one.
bool RedundantAtSize(const Space& space, const Candidate& c, uint64_t bytes);

}  // namespace mltuner

#endif  // MLTUNER_CANDIDATES_H_
