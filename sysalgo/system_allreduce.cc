#include "sysalgo/system_allreduce.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace mlsys {
namespace {

// Open MPI's segmented ring with no segment size is the plain ring: it runs
// with this one.
constexpr int kSegmentBytes = 1 << 20;

// MPICH's allreduce algorithms in the order of the variable's values, per
// release line (4.3 inserts recursive_multiplying and so moves the values);
// the one whose names the variable's description lists, in this order, with
// one "- Force" per name but auto, is the one in use.
const std::vector<std::vector<std::string>>& MpichTables() {
  static const std::vector<std::vector<std::string>> tables = {
      {"auto", "nb", "smp", "recursive_doubling", "reduce_scatter_allgather"},  // 4.0
      {"auto", "nb", "smp", "recursive_doubling", "reduce_scatter_allgather", "tree", "recexch", "ring",
       "k_reduce_scatter_allgather"},  // 4.1, 4.2
  };
  return tables;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Whether `names` appear in `description` in this order, each followed by
// spaces and "- " (MPICH's descriptions run the lines together).
bool ListsInOrder(const std::string& description, const std::vector<std::string>& names) {
  size_t at = 0;
  for (const std::string& name : names) {
    size_t found = std::string::npos;
    for (size_t p = description.find(name, at); p != std::string::npos; p = description.find(name, p + 1)) {
      size_t q = p + name.size();
      while (q < description.size() && description[q] == ' ') ++q;
      if (q > p + name.size() && description.compare(q, 2, "- ") == 0) {
        found = q;
        break;
      }
    }
    if (found == std::string::npos) return false;
    at = found;
  }
  return true;
}

std::string Description(int index) {
  char name[256], desc[4096];
  int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type;
  MPI_T_enum enumtype;
  if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len, &bind, &scope) !=
      MPI_SUCCESS)
    return "";
  return std::string(desc);
}

// Whether an Open MPI parameter name (without OMPI_MCA_) decides tuned's
// allreduce once its dynamic rules are on: the forced algorithm and its
// parameters, or a rules file.
bool DecidesAllreduce(const std::string& name) {
  return name.rfind("coll_tuned_allreduce_", 0) == 0 || name == "coll_tuned_dynamic_rules_filename";
}

// The first coll_tuned_ setting of the user's that `counts` (a parameter name
// without OMPI_MCA_), named, or "": a variable OMPI_MCA_coll_tuned_* in the
// environment, or a coll_tuned_ line in the MCA parameter files Open MPI
// reads (the user's, and Debian's and $OPAL_PREFIX's system file).
std::string UsersTunedSetting(bool (*counts)(const std::string& name)) {
  static const char kPrefix[] = "OMPI_MCA_";
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    if (entry.rfind(std::string(kPrefix) + "coll_tuned_", 0) != 0) continue;
    const std::string name = entry.substr(0, entry.find('='));
    if (counts(name.substr(sizeof kPrefix - 1))) return "you set " + name;
  }
  std::vector<std::string> files = {"/etc/openmpi/openmpi-mca-params.conf"};
  if (const char* home = std::getenv("HOME")) files.push_back(std::string(home) + "/.openmpi/mca-params.conf");
  if (const char* prefix = std::getenv("OPAL_PREFIX"))
    files.push_back(std::string(prefix) + "/etc/openmpi-mca-params.conf");
  for (const std::string& path : files) {
    std::ifstream in(path);
    std::string line;
    for (int lines = 0; lines < 10000 && std::getline(in, line); ++lines) {
      const size_t start = line.find_first_not_of(" \t");
      if (start == std::string::npos || line[start] == '#' || line.compare(start, 11, "coll_tuned_") != 0) continue;
      const size_t end = line.find_first_of(" \t=", start);
      if (counts(line.substr(start, end == std::string::npos ? std::string::npos : end - start)))
        return "coll/tuned is set in " + path;
    }
  }
  return "";
}

// "you set NAME" when the user chose MPICH's allreduce algorithm (or its
// selection) in the environment, under any of the names MPICH reads for a
// control variable (MPIR_CVAR_X, MPICH_X, MPIR_PARAM_X), else "".
std::string UsersMpichSetting() {
  for (const char* variable : {"ALLREDUCE_INTRA_ALGORITHM", "DEVICE_COLLECTIVES", "COLL_SELECTION_TUNING_JSON_FILE",
                               "CH4_COLL_SELECTION_TUNING_JSON_FILE"})
    for (const char* prefix : {"MPIR_CVAR_", "MPICH_", "MPIR_PARAM_"}) {
      const std::string name = std::string(prefix) + variable;
      if (std::getenv(name.c_str()) != nullptr) return "you set " + name;
    }
  return "";
}

int LargestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

std::string PrepareBeforeInit() {
  if (const char* on = std::getenv("OMPI_MCA_coll_tuned_use_dynamic_rules")) {
    if (std::strcmp(on, "1") != 0 && std::strcmp(on, "true") != 0)
      return std::string("you set OMPI_MCA_coll_tuned_use_dynamic_rules=") + on;
    // The user turned the rules on: their own allreduce choice (a forced
    // algorithm, its parameters, a rules file) is in force and wins.
    return UsersTunedSetting(DecidesAllreduce);
  }
  // The rules off: turning them on would put any coll_tuned_ setting of the
  // user's in force, not only the allreduce's.
  if (std::string why = UsersTunedSetting([](const std::string&) { return true; }); !why.empty()) return why;
  setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
  return "";
}

SystemAllreduce::SystemAllreduce() {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    why_none_ = "the MPI tool interface (MPI_T) did not start";
    return;
  }
  int index = -1;
  if (MPI_T_cvar_get_index("coll_tuned_allreduce_algorithm", &index) == MPI_SUCCESS) {
    FindOpenMpi();
  } else if (MPI_T_cvar_get_index("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", &index) == MPI_SUCCESS) {
    FindMpich();
  } else {
    why_none_ = "this MPI offers no allreduce algorithm variable through MPI_T (known: Open MPI's coll/tuned, MPICH)";
  }
  if (names_.empty()) mechanism_.clear();
}

SystemAllreduce::~SystemAllreduce() {
  Release();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (auto& d : dups_) PMPI_Comm_free(&d.second);
  for (Variable* v : {&algorithm_, &segment_, &device_})
    if (v->handle != MPI_T_CVAR_HANDLE_NULL) MPI_T_cvar_handle_free(&v->handle);
  // No MPI_T_finalize: Open MPI 4.1, whose MPI_T was finalized before
  // MPI_Finalize, leaves its operations' and PMIx's memory behind at
  // MPI_Finalize (LeakSanitizer saw 35 blocks); MPI_T left initialized ends
  // with the MPI, as the standard allows.
}

bool SystemAllreduce::OpenVariable(const char* name, Variable* v) {
  int count = 0;
  return MPI_T_cvar_get_index(name, &v->index) == MPI_SUCCESS &&
         MPI_T_cvar_handle_alloc(v->index, nullptr, &v->handle, &count) == MPI_SUCCESS && count == 1;
}

bool SystemAllreduce::ReadInt(const Variable& v, int* value) const {
  return MPI_T_cvar_read(v.handle, value) == MPI_SUCCESS;
}

bool SystemAllreduce::WriteInt(const Variable& v, int value) const {
  return MPI_T_cvar_write(v.handle, &value) == MPI_SUCCESS;
}

void SystemAllreduce::FindOpenMpi() {
  mechanism_ = kOpenMpi;
  Variable dynamic;
  int on = 0;
  if (!OpenVariable("coll_tuned_use_dynamic_rules", &dynamic) || !ReadInt(dynamic, &on) || !on) {
    why_none_ =
        "Open MPI's coll/tuned takes a forced algorithm only with its dynamic rules on: start the job "
        "with OMPI_MCA_coll_tuned_use_dynamic_rules=1";
  } else if (const char* file = std::getenv("OMPI_MCA_coll_tuned_dynamic_rules_filename"); file && *file) {
    why_none_ = std::string("a coll/tuned rules file is in force (") + file +
                ") and takes precedence over a forced algorithm: unset OMPI_MCA_coll_tuned_dynamic_rules_filename "
                "to measure the system's algorithms";
  }
  if (dynamic.handle != MPI_T_CVAR_HANDLE_NULL) MPI_T_cvar_handle_free(&dynamic.handle);
  if (!why_none_.empty()) return;
  char name[256], desc[1024];
  int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0, items = 0;
  MPI_Datatype type;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  if (!OpenVariable("coll_tuned_allreduce_algorithm", &algorithm_) ||
      MPI_T_cvar_get_info(algorithm_.index, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len, &bind,
                          &scope) != MPI_SUCCESS ||
      enumtype == MPI_T_ENUM_NULL) {
    why_none_ = "Open MPI's coll_tuned_allreduce_algorithm cannot be read through MPI_T";
    return;
  }
  OpenVariable("coll_tuned_allreduce_algorithm_segmentsize", &segment_);
  name_len = sizeof name;
  MPI_T_enum_get_info(enumtype, &items, name, &name_len);
  for (int i = 0; i < items; ++i) {
    int value = 0;
    name_len = sizeof name;
    if (MPI_T_enum_get_item(enumtype, i, &value, name, &name_len) != MPI_SUCCESS || value == 0) continue;
    if (std::strcmp(name, "segmented_ring") == 0 && segment_.handle == MPI_T_CVAR_HANDLE_NULL) continue;
    names_.push_back(name);
    values_.push_back(value);
  }
  if (names_.empty()) why_none_ = "Open MPI's coll_tuned_allreduce_algorithm lists no algorithm";
  FindHan();
}

// The value of Open MPI's component selection variable `framework` ("coll"),
// or "" where it is unset or cannot be read.
std::string SystemAllreduce::ReadSelection(const char* framework) {
  Variable v;
  int count = 0;
  std::string value;
  if (MPI_T_cvar_get_index(framework, &v.index) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(v.index, nullptr, &v.handle, &count) == MPI_SUCCESS && count > 0) {
    std::vector<char> text(static_cast<size_t>(count) + 1, '\0');
    if (MPI_T_cvar_read(v.handle, text.data()) == MPI_SUCCESS) value = text.data();
  }
  if (v.handle != MPI_T_CVAR_HANDLE_NULL) MPI_T_cvar_handle_free(&v.handle);
  return value;
}

// Open MPI 5's coll/han: above coll/tuned's priority it takes every
// communicator that spans machines (on one machine it steps aside), and runs
// its allreduce in steps on communicators of its own, where a forced tuned
// algorithm of the caller's communicator does not reach.
void SystemAllreduce::FindHan() {
  const std::string selection = ReadSelection("coll");
  if (!selection.empty()) {
    const bool excluding = selection[0] == '^';
    const bool named = ("," + selection.substr(excluding ? 1 : 0) + ",").find(",han,") != std::string::npos;
    if (excluding == named) return;  // ^...han... or a list without han: not in use
  }
  Variable han, tuned;
  int han_priority = 0, tuned_priority = 0;
  if (OpenVariable("coll_han_priority", &han) && ReadInt(han, &han_priority) &&
      OpenVariable("coll_tuned_priority", &tuned) && ReadInt(tuned, &tuned_priority) && han_priority > tuned_priority) {
    han_over_tuned_ =
        "Open MPI's coll/han (priority " + std::to_string(han_priority) + ", over coll/tuned's " +
        std::to_string(tuned_priority) +
        ") runs the allreduce of a communicator that spans machines, where coll/tuned's algorithm "
        "would not run as itself: set OMPI_MCA_coll_han_priority=0 to choose among coll/tuned's algorithms "
        "there";
  }
  for (Variable* v : {&han, &tuned})
    if (v->handle != MPI_T_CVAR_HANDLE_NULL) MPI_T_cvar_handle_free(&v->handle);
}

bool SystemAllreduce::SpansMachines(MPI_Comm comm) {
  MPI_Comm local = MPI_COMM_NULL;
  int size = 0, local_size = 0;
  PMPI_Comm_size(comm, &size);
  // Every rank makes the collective call, whatever its own answer.
  if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) != MPI_SUCCESS)
    return true;  // cannot tell: as if it did (the choice is then refused, never wrong)
  PMPI_Comm_size(local, &local_size);
  PMPI_Comm_free(&local);
  return local_size < size;
}

void SystemAllreduce::FindMpich() {
  mechanism_ = "MPICH";
  if (std::string why = UsersMpichSetting(); !why.empty()) {
    why_none_ = why + ", and your setting wins (unset it to let MPICH's algorithms be chosen per call)";
    return;
  }
  if (!OpenVariable("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", &algorithm_) ||
      !OpenVariable("MPIR_CVAR_DEVICE_COLLECTIVES", &device_)) {
    why_none_ = "MPICH's MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM or MPIR_CVAR_DEVICE_COLLECTIVES cannot be opened";
    return;
  }
  if (!ListsInOrder(Description(device_.index), {"all", "none", "percoll"})) {
    why_none_ = "MPICH's MPIR_CVAR_DEVICE_COLLECTIVES does not list all, none, percoll";
    return;
  }
  device_none_ = 1;
  const std::string desc = Description(algorithm_.index);
  for (const std::vector<std::string>& table : MpichTables()) {
    if (Count(desc, "- Force") != table.size() - 1 || !ListsInOrder(desc, table)) continue;
    for (size_t i = 1; i < table.size(); ++i) {  // 0 is auto: the system's own choice
      names_.push_back(table[i]);
      values_.push_back(static_cast<int>(i));
    }
    return;
  }
  why_none_ = "this MPICH's allreduce algorithms are not the ones multilane knows (MPICH 4.0 to 4.2): " + desc;
}

bool SystemAllreduce::Applies(const std::string& name, long count, long bytes, int comm_size, bool commutative) const {
  // Each needs a commutative op, or at least one element per rank (else the
  // MPI runs another algorithm, or MPICH 4.0 aborts).
  const bool needs_commutative = name == "ring" || name == "segmented_ring" || name == "rabenseifner" ||
                                 name == "smp" || name == "reduce_scatter_allgather" ||
                                 name == "k_reduce_scatter_allgather";
  if (needs_commutative && !commutative) return false;
  if (name == "ring") return count >= comm_size;
  // Below one segment per rank Open MPI runs the plain ring.
  if (name == "segmented_ring") return count >= comm_size && bytes >= static_cast<long>(comm_size) * kSegmentBytes;
  if (name == "rabenseifner" || name == "reduce_scatter_allgather") return count >= LargestPowerOfTwoAtMost(comm_size);
  return true;
}

int SystemAllreduce::IndexOf(const std::string& name, std::string* error) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  *error = "'" + name + "' is not an allreduce algorithm of this MPI" + (names_.empty() ? " (" + why_none_ + ")" : "");
  return -1;
}

MPI_Comm SystemAllreduce::Select(const std::string& name, MPI_Comm comm, std::string* error) {
  const int i = IndexOf(name, error);
  if (i < 0) return MPI_COMM_NULL;
  Release();
  if (mechanism_ == "MPICH") {
    if (!ReadInt(algorithm_, &saved_algorithm_) || !ReadInt(device_, &saved_device_) ||
        !WriteInt(device_, device_none_) || !WriteInt(algorithm_, values_[i])) {
      *error = "MPICH refused MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=" + name;
      WriteInt(device_, saved_device_);
      return MPI_COMM_NULL;
    }
    selected_ = true;
    return comm;
  }
  return SelectOpenMpi(values_[i], name == "segmented_ring", comm, error);
}

MPI_Comm SystemAllreduce::MakeCommunicator(const std::string& name, MPI_Comm comm, std::string* error) {
  if (!ChoosesPerCommunicator()) {
    *error = names_.empty() ? why_none_ : mechanism_ + " chooses its algorithm per call, not per communicator";
    return MPI_COMM_NULL;
  }
  const int i = IndexOf(name, error);
  if (i < 0) return MPI_COMM_NULL;
  return MakeOpenMpi(values_[i], name == "segmented_ring", comm, error);
}

MPI_Comm SystemAllreduce::SelectOpenMpi(int value, bool segmented, MPI_Comm comm, std::string* error) {
  auto key = std::make_pair(comm, value);
  auto found = dups_.find(key);
  if (found != dups_.end()) return found->second;
  MPI_Comm made = MakeOpenMpi(value, segmented, comm, error);
  if (made != MPI_COMM_NULL) dups_[key] = made;
  return made;
}

MPI_Comm SystemAllreduce::MakeOpenMpi(int value, bool segmented, MPI_Comm comm, std::string* error) {
  // Collective, and the same answer on every rank: whether any rank's
  // coll/han outranks tuned and the communicator spans machines.
  int mine[2] = {han_over_tuned_.empty() ? 0 : 1, SpansMachines(comm) ? 1 : 0}, all[2] = {1, 1};
  if (PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS || (all[0] && all[1])) {
    *error = !han_over_tuned_.empty() ? han_over_tuned_
                                      : "another rank's Open MPI runs coll/han on a communicator that spans machines, "
                                        "where coll/tuned's algorithm would not run as itself";
    return MPI_COMM_NULL;
  }
  int old = 0, old_segment = 0;
  if (!ReadInt(algorithm_, &old) || (segmented && !ReadInt(segment_, &old_segment)) || !WriteInt(algorithm_, value) ||
      (segmented && !WriteInt(segment_, kSegmentBytes))) {
    *error = "Open MPI refused a write of coll_tuned_allreduce_algorithm through MPI_T";
    WriteInt(algorithm_, old);
    return MPI_COMM_NULL;
  }
  // A split, not a duplicate: the caller's attributes (and their copy
  // callbacks) stay with the caller's communicator.
  int rank = 0;
  MPI_Comm made = MPI_COMM_NULL;
  int rc = PMPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_split(comm, 0, rank, &made);
  WriteInt(algorithm_, old);
  if (segmented) WriteInt(segment_, old_segment);
  if (rc != MPI_SUCCESS) {
    *error = "MPI_Comm_split failed";
    return MPI_COMM_NULL;
  }
  return made;
}

void SystemAllreduce::Release() {
  if (!selected_) return;
  WriteInt(algorithm_, saved_algorithm_);
  WriteInt(device_, saved_device_);
  selected_ = false;
}

}  // namespace mlsys
