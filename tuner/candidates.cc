#include "tuner/candidates.h"

#include "vocab/byte_size.h"
#include "vocab/profile.h"
#include "vocab/algo_names.h"
#include "vocab/refuse.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

namespace mltuner {

const char* MemKindName(MemKind kind) { return kind == MemKind::kDevice ? "device" : "host"; }

bool MemKindFromName(const std::string& name, MemKind* kind) {
  if (name == "host") {
    *kind = MemKind::kHost;
    return true;
  }
  if (name == "device") {
    *kind = MemKind::kDevice;
    return true;
  }
  return false;
}

bool ParseByteSize(const std::string& text, uint64_t* out) { return mla::ParseByteSize(text, out); }

std::string FormatByteSize(uint64_t bytes) { return mla::FormatByteSize(bytes); }

const Dimension* Space::Find(const std::string& name) const {
  for (const Dimension& d : dimensions)
    if (d.name == name) return &d;
  return nullptr;
}

Dimension* Space::Find(const std::string& name) {
  for (Dimension& d : dimensions)
    if (d.name == name) return &d;
  return nullptr;
}

bool Space::Restrict(const std::string& name, const std::vector<std::string>& values, std::string* error) {
  if (name == "algo") {
    std::vector<Algorithm> kept;
    for (const std::string& v : values) {
      auto it = std::find_if(algorithms.begin(), algorithms.end(), [&](const Algorithm& a) { return a.name == v; });
      if (it == algorithms.end()) return mla::Refuse(error, "algo: '" + v + "' is not an algorithm of the space");
      kept.push_back(*it);
    }
    algorithms = kept;
    return true;
  }
  Dimension* d = Find(name);
  if (d == nullptr) return mla::Refuse(error, "'" + name + "' is not a dimension of the space");
  for (const std::string& v : values) {
    mla_choice scratch{};
    std::string why;
    if (!d->apply(v, &scratch, &why)) return mla::Refuse(error, name + ": " + why);
  }
  d->values = values;
  d->restricted = true;
  return true;
}

namespace {

bool ApplyLanes(const std::string& v, mla_choice* c, std::string* error) {
  uint64_t n = 0;
  if (!ParseByteSize(v, &n) || v.find_first_not_of("0123456789") != std::string::npos || n > 1u << 20)
    return mla::Refuse(error, "lanes='" + v + "' is not a count (0 = all)");
  c->lanes = static_cast<int>(n);
  return true;
}

bool ApplyChunk(const std::string& v, mla_choice* c, std::string* error) {
  uint64_t n = 0;
  if (!ParseByteSize(v, &n)) return mla::Refuse(error, "chunk='" + v + "' is not a byte size (0 = default)");
  if (n > 0 && n < mla::kMinProfileChunkBytes) {
    // The library refuses such a profile entry (profile.h): never tune one.
    return mla::Refuse(error, "chunk='" + v + "' is below " + mla::FormatByteSize(mla::kMinProfileChunkBytes) +
                                  ", which profiles refuse (such chunks run 50-100x slower); use 0 or at least that");
  }
  c->chunk_bytes = n;
  return true;
}

bool ApplyTransport(const std::string& v, mla_choice* c, std::string* error) {
  mla_transport t;
  if (!mla::TransportFromName(v.c_str(), &t))
    return mla::Refuse(error, "transport='" + v + "' is not " + mla::TransportNames());
  c->transport = t;
  return true;
}

// mpi=NAME: one of the system MPI's own allreduce algorithms, spelled as a
// profile spells it (vocab/profile.h); whether this MPI has it is known only
// at run time (mlprobe asks it).  It sets nothing in an mla_choice.
bool ApplySystemAlgorithm(const std::string& v, mla_choice*, std::string* error) {
  if (mla::IsSystemAlgorithmName(v)) return true;
  return mla::Refuse(error, "mpi='" + v +
                                "' is not the name of a system MPI allreduce algorithm (lowercase letters, digits "
                                "and '_', such as ring)");
}

// The transports that mean something: device buffers take auto, mpi or nccl
// on lane and split (hier's device steps have no transport); host buffers
// take shm on lane and hier (their node steps on shared memory), where the
// segment's slot is the chunk, so never beside a chunk.  auto, the default,
// is never dropped.
bool TransportExcluded(const std::string& v, const std::string& algo, const Layout& layout, const Candidate& partial) {
  if (layout.mem == MemKind::kDevice) return v == "shm" || algo == "hier";
  if (v != "shm" || algo == "split") return true;
  return std::any_of(partial.params.begin(), partial.params.end(), [](const auto& kv) { return kv.first == "chunk"; });
}

bool AppliesTo(const Dimension& d, const std::string& algo, MemKind mem) {
  bool algo_ok =
      d.applies_to.empty() || std::find(d.applies_to.begin(), d.applies_to.end(), algo) != d.applies_to.end();
  bool mem_ok = d.memory.empty() || std::find(d.memory.begin(), d.memory.end(), mem) != d.memory.end();
  return algo_ok && mem_ok;
}

// Passthrough takes only the keys that name it.
bool AppliesToAlgo(const Dimension& d, const std::string& algo) {
  const bool named = std::find(d.applies_to.begin(), d.applies_to.end(), algo) != d.applies_to.end();
  return named || (d.applies_to.empty() && algo != "passthrough");
}

}  // namespace

Space DefaultSpace() {
  Space s;
  // One node rank (lane, hier) or one rank per GPU (split): the algorithm is a
  // plain allreduce over all ranks, i.e. the system MPI with extra steps.
  s.algorithms = {
      {"lane", [](const Layout& l) { return l.ranks_per_node == 1; }},
      {"hier", [](const Layout& l) { return l.ranks_per_node == 1; }},
      {"split", [](const Layout& l) { return l.ranks_per_gpu == 1; }},
  };
  // THE TABLE: one entry per dimension.
  s.dimensions = {
      {"lanes",
       {"0", "1", "2"},
       {"lane"},
       {},
       "0",
       ApplyLanes,
       // lanes >= ranks per node is "all" (the default) or impossible
       [](const std::string& v, const Layout& l) {
         return l.ranks_per_node > 0 && std::strtoll(v.c_str(), nullptr, 10) >= l.ranks_per_node;
       },
       nullptr,
       nullptr},
      {"chunk",
       {"0", "1M", "4M"},
       {"lane", "hier", "split"},
       {},
       "0",
       ApplyChunk,
       nullptr,
       // a chunk no smaller than the message is the whole message
       [](const std::string& v, uint64_t bytes) {
         uint64_t n = 0;
         return ParseByteSize(v, &n) && n >= bytes;
       },
       nullptr},
      {"transport",
       {"auto", "mpi", "nccl", "shm"},
       {"lane", "hier", "split"},
       {},
       "auto",
       ApplyTransport,
       nullptr,
       nullptr,
       TransportExcluded},
      // The system MPI's own algorithms (device memory: of the staged path's
      // host collective): no values here (Expand makes no passthrough
      // candidates); mlprobe adds those the MPI offers.
      {"mpi", {}, {"passthrough"}, {}, "", ApplySystemAlgorithm, nullptr, nullptr, nullptr},
  };
  return s;
}

std::string Candidate::Render() const {
  std::string out = algo;
  for (const auto& kv : params) out += " " + kv.first + "=" + kv.second;
  return out;
}

Candidate Passthrough() { return Candidate{"passthrough", {}}; }

std::string Candidate::SystemAlgorithm() const {
  for (const auto& kv : params)
    if (kv.first == "mpi") return kv.second;
  return "";
}

std::vector<Candidate> SystemCandidates(const Space& space, const std::vector<std::string>& offered,
                                        std::vector<std::string>* not_offered) {
  const Dimension* d = space.Find("mpi");
  std::vector<Candidate> out;
  if (d == nullptr) return out;
  for (const std::string& name : d->restricted ? d->values : offered) {
    if (std::find(offered.begin(), offered.end(), name) == offered.end()) {
      if (not_offered != nullptr) not_offered->push_back(name);
      continue;
    }
    out.push_back(Candidate{"passthrough", {{"mpi", name}}});
  }
  return out;
}

std::vector<Candidate> Expand(const Space& space, const Layout& layout) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (const Algorithm& a : space.algorithms) {
    if (a.meaningless && a.meaningless(layout)) continue;
    std::vector<Candidate> partial{Candidate{a.name, {}}};
    for (const Dimension& d : space.dimensions) {
      if (!AppliesTo(d, a.name, layout.mem)) continue;
      std::vector<Candidate> next;
      for (const Candidate& c : partial) {
        for (const std::string& v : d.values) {
          if (v != d.default_value && d.meaningless && d.meaningless(v, layout)) continue;
          if (v != d.default_value && d.excluded && d.excluded(v, a.name, layout, c)) continue;
          Candidate n = c;
          if (v != d.default_value) n.params.emplace_back(d.name, v);
          next.push_back(n);
        }
      }
      partial.swap(next);
    }
    for (const Candidate& c : partial)
      if (seen.insert(c.Render()).second) out.push_back(c);
  }
  return out;
}

std::vector<Candidate> Expand(const Space& space, MemKind mem, int ranks_per_node, int ranks_per_gpu) {
  return Expand(space, Layout{mem, ranks_per_node, ranks_per_gpu});
}

bool ParseCandidate(const Space& space, const std::string& words, Candidate* out, std::string* error) {
  std::istringstream in(words);
  std::string algo;
  if (!(in >> algo)) return mla::Refuse(error, "empty candidate");
  mla_algo parsed_algo;
  if (!mla::AlgoFromName(algo.c_str(), &parsed_algo)) return mla::Refuse(error, "'" + algo + "' is not an algorithm");
  Candidate c{algo, {}};
  std::vector<std::pair<std::string, std::string>> given;
  std::string word;
  while (in >> word) {
    size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) return mla::Refuse(error, "'" + word + "' is not key=value");
    std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    const Dimension* d = space.Find(key);
    if (d == nullptr) return mla::Refuse(error, "'" + key + "' is not a parameter of the space");
    if (!AppliesToAlgo(*d, algo)) return mla::Refuse(error, "'" + key + "' does not apply to " + algo);
    for (const auto& g : given)
      if (g.first == key) return mla::Refuse(error, "'" + key + "' given twice");
    mla_choice scratch{};
    if (!d->apply(value, &scratch, error)) return false;
    given.emplace_back(key, value);
  }
  for (const Dimension& d : space.dimensions)
    for (const auto& g : given)
      if (g.first == d.name && g.second != d.default_value) c.params.push_back(g);
  *out = c;
  return true;
}

bool ToChoice(const Space& space, const Candidate& c, mla_choice* choice, std::string* error) {
  mla_choice out{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  if (!mla::AlgoFromName(c.algo.c_str(), &out.algo)) return mla::Refuse(error, "'" + c.algo + "' is not an algorithm");
  for (const auto& kv : c.params) {
    const Dimension* d = space.Find(kv.first);
    if (d == nullptr) return mla::Refuse(error, "'" + kv.first + "' is not a parameter of the space");
    if (!d->apply(kv.second, &out, error)) return false;
  }
  *choice = out;
  return true;
}

bool RedundantAtSize(const Space& space, const Candidate& c, uint64_t bytes) {
  for (const auto& kv : c.params) {
    const Dimension* d = space.Find(kv.first);
    if (d != nullptr && d->redundant_at && d->redundant_at(kv.second, bytes)) return true;
  }
  return false;
}

}  // namespace mltuner
