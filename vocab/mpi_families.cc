// mpi_families.cc: the MPI family table and the version key (mpi_families.h).
#include "vocab/mpi_families.h"

namespace mla {

const std::vector<MpiFamilyInfo>& MpiFamilies() {
  static const std::vector<MpiFamilyInfo> families = {
      {MpiFamily::kOpenMpi,
       "openmpi",
       {"Open MPI"},
       {"libmpi.so.40"},
       "mpirun",
       LauncherKind::kOpenMpi,
       "-np",
       {"Open MPI", "OpenRTE", "PMIx Reference RunTime"},
       {"openmpi", "orterun", "prterun"},
       ""},
      {MpiFamily::kMpich,
       "mpich",
       {"MPICH", "MVAPICH", "Intel(R) MPI", "Intel MPI"},
       {"libmpich.so.12", "libmpi.so.12"},
       "mpiexec.mpich",
       LauncherKind::kHydra,
       "-n",
       {"HYDRA", "Intel(R) MPI"},
       {"hydra", "mpich"},
       "pmi2"},
  };
  return families;
}

const MpiFamilyInfo* FindMpiFamily(std::string_view name) {
  for (const MpiFamilyInfo& f : MpiFamilies())
    if (f.name == name) return &f;
  return nullptr;
}

const MpiFamilyInfo& MpiFamilyRow(MpiFamily family) {
  for (const MpiFamilyInfo& f : MpiFamilies())
    if (f.family == family) return f;
  return MpiFamilies().front();
}

std::string MpiFamilyChoices() {
  std::string out;
  const auto& all = MpiFamilies();
  for (size_t i = 0; i < all.size(); ++i) out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i].name;
  return out;
}

MpiFamily MpiFamilyFromVersion(std::string_view version) {
  for (const MpiFamilyInfo& f : MpiFamilies())
    for (const std::string& word : f.version_words)
      if (version.find(word) != std::string_view::npos) return f.family;
  return MpiFamily::kNeither;
}

const char* MpiFamilyName(MpiFamily family) {
  return family == MpiFamily::kNeither ? "neither" : MpiFamilyRow(family).name.c_str();
}

std::string FamilyLibraryFile(const std::string& family) { return "libmlallreduce-" + family + ".so.0"; }

std::string FamilyCudaModuleFile(const std::string& family) {
  return family == MpiFamilies().front().name ? "libmlallreduce_cuda.so" : "libmlallreduce_cuda-" + family + ".so";
}

std::string FamilyProbeFile(const std::string& family) {
  return family == MpiFamilies().front().name ? "mlprobe" : "mlprobe-" + family;
}

std::string MpiVersionKey(std::string_view version_text) {
  std::string line(version_text.substr(0, version_text.find_first_of(std::string_view("\r\n\0", 3))));
  for (char& c : line)
    if (c == '\t') c = ' ';
  while (!line.empty() && (line.back() == ' ' || line.back() == ',')) line.pop_back();
  return line;
}

}  // namespace mla
