// probe_system.cc: the system MPI's algorithms as mlprobe's candidates
// (probe_system.h).
#include "tuner/probe_system.h"

#include <algorithm>

#include "tuner/probe_sizes.h"

namespace mltuner {

SystemAlgorithms::SystemAlgorithms(const std::string& left_off) {
  system_ = std::make_unique<mlsys::SystemAllreduce>();
  if (!left_off.empty()) {
    why_none_ = left_off;
  } else if (system_->names().empty()) {
    why_none_ = system_->why_none();
  }
}

SystemAlgorithms::~SystemAlgorithms() {
  for (auto& kv : comms_)
    if (kv.second != MPI_COMM_NULL && kv.second != MPI_COMM_WORLD) PMPI_Comm_free(&kv.second);
}

bool SystemAlgorithms::PerCall() const { return !system_->ChoosesPerCommunicator(); }

void SystemAlgorithms::Begin(const std::string& name) {
  std::string ignored;  // CommFor checked that every rank's MPI takes it
  if (PerCall()) system_->Select(name, MPI_COMM_WORLD, &ignored);
}

void SystemAlgorithms::End() {
  if (PerCall()) system_->Release();
}

std::vector<Candidate> SystemAlgorithms::Candidates(const Space& space, MemKind mem) {
  (void)mem;  // device memory: the staged path's host collective runs them
  if (!why_none_.empty()) return {};
  std::vector<std::string> missing;
  std::vector<Candidate> out = SystemCandidates(space, system_->names(), &missing);
  for (const std::string& m : missing)
    if (std::find(not_offered_.begin(), not_offered_.end(), m) == not_offered_.end()) not_offered_.push_back(m);
  return out;
}

bool SystemAlgorithms::Applies(const Candidate& c, int count, int nranks) const {
  const std::string name = c.SystemAlgorithm();
  return name.empty() || system_->Applies(name, count, static_cast<long>(count) * 4, nranks, true);
}

MPI_Comm SystemAlgorithms::CommFor(const Candidate& c, std::string* error) {
  const std::string name = c.SystemAlgorithm();
  if (!why_none_.empty()) {  // the same on every rank: nothing collective happens
    *error = "not probed: " + why_none_;
    return MPI_COMM_NULL;
  }
  auto it = comms_.find(name);
  if (it == comms_.end()) {
    std::string why;
    MPI_Comm made = MPI_COMM_WORLD;
    if (PerCall()) {  // a trial: whether this MPI takes the name
      if (system_->Select(name, MPI_COMM_WORLD, &why) == MPI_COMM_NULL) made = MPI_COMM_NULL;
      system_->Release();
    } else {
      made = system_->MakeCommunicator(name, MPI_COMM_WORLD, &why);
    }
    // Kept only where every rank has one: ranks on different communicators
    // would wait on each other.
    if (AnyRank(made == MPI_COMM_NULL) && made != MPI_COMM_NULL) {
      if (made != MPI_COMM_WORLD) PMPI_Comm_free(&made);
      made = MPI_COMM_NULL;
    }
    it = comms_.emplace(name, made).first;
    if (made == MPI_COMM_NULL)
      why_made_[name] = why.empty() ? "a rank could not make it" : why;
    else
      probed_.push_back(name);
  }
  if (it->second == MPI_COMM_NULL) *error = "the MPI refused mpi=" + name + ": " + why_made_[name];
  return it->second;
}

nlohmann::json SystemAlgorithms::Describe() const {
  nlohmann::json j = {{"mechanism", system_->mechanism()},
                      {"offered", system_->names()},
                      {"probed", probed_},
                      {"not_offered", not_offered_}};
  if (!why_none_.empty()) j["why_none"] = why_none_;
  if (!why_made_.empty()) j["refused"] = why_made_;  // name -> why the MPI would not run it here
  return j;
}

}  // namespace mltuner
