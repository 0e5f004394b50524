// mpi_families.cc: the MPI family table and the version key (mpi_families.h).
#include "vocab/mpi_families.h"

#include "vocab/family_files.h"  // generated: the file names (cmake/MultilaneMpiFamilies.cmake)

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
       {"openmpi"},
       {"orterun", "prterun"},
       "pmix",
       {"--map-by", ":OVERSUBSCRIBE"},
       {{4, "ORTE", "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_orte_tmpdir_base"},
        {5, "PRRTE", "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe", "PRTE_MCA_prte_tmpdir_base"}}},
      {MpiFamily::kMpich,
       "mpich",
       {"MPICH", "MVAPICH", "Intel(R) MPI", "Intel MPI"},
       {"libmpich.so.12", "libmpi.so.12"},
       "mpiexec.mpich",
       LauncherKind::kHydra,
       "-n",
       {"HYDRA", "Intel(R) MPI"},
       {"hydra", "mpich"},
       {},
       "pmi2",
       {},
       {{4, "hydra", "", ""}}},
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

std::string SrunMpiAdvice() {
  std::string out;
  for (const MpiFamilyInfo& f : MpiFamilies()) {
    if (f.srun_mpi.empty()) continue;
    out += (out.empty() ? "srun --mpi=" : ", --mpi=") + f.srun_mpi + " for " + f.version_words.front();
  }
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

namespace {

// The generated row of `family`; nullptr for a family the build does not know.
const FamilyFileNames* FileNamesOf(const std::string& family) {
  for (const FamilyFileNames& row : kFamilyFileNames)
    if (family == row.family) return &row;
  return nullptr;
}

}  // namespace

std::string FamilyLibraryFile(const std::string& family) {
  const FamilyFileNames* row = FileNamesOf(family);
  return row ? row->library : "";
}

std::string FamilyCudaModuleFile(const std::string& family) {
  const FamilyFileNames* row = FileNamesOf(family);
  return row ? row->cuda_module : "";
}

std::string FamilyProbeFile(const std::string& family) {
  const FamilyFileNames* row = FileNamesOf(family);
  return row ? row->probe : "";
}

const char* BuildDefaultFamily() { return kFamilyFileNames[0].family; }

int LauncherMajorVersion(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || (i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9')) continue;
    size_t end = i;
    int major = 0;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9' && major < 10000)
      major = major * 10 + (text[end++] - '0');
    if (end + 1 < text.size() && text[end] == '.' && text[end + 1] >= '0' && text[end + 1] <= '9') return major;
  }
  return 0;
}

const LauncherGeneration* FindLauncherGeneration(const MpiFamilyInfo& family, int major) {
  for (const LauncherGeneration& g : family.generations)
    if (g.major == major) return &g;
  return nullptr;
}

std::string LauncherGenerationChoices(const MpiFamilyInfo& family) {
  std::string out;
  for (const LauncherGeneration& g : family.generations) out += (out.empty() ? "" : ", ") + std::to_string(g.major);
  return out;
}

std::string MpiVersionKey(std::string_view version_text) {
  std::string line(version_text.substr(0, version_text.find_first_of(std::string_view("\r\n\0", 3))));
  for (char& c : line)
    if (c == '\t') c = ' ';
  while (!line.empty() && (line.back() == ' ' || line.back() == ',')) line.pop_back();
  return line;
}

}  // namespace mla
