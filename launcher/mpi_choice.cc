// mpi_choice.cc: how the command meets the MPI families of vocab/mpi_families.h (mpi_choice.h).
#include "launcher/mpi_choice.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "launcher/context.h"
#include "vocab/outside_input.h"
#include "launcher/process.h"
#include "vocab/elf_needed.h"

namespace multilane {
namespace {

namespace fs = std::filesystem;

// argv[0] as execvp would find it, links followed; "" when not found.
std::string ResolveProgram(const std::string& word) {
  std::error_code ec;
  if (word.find('/') != std::string::npos) {
    fs::path p = fs::weakly_canonical(word, ec);
    return ec ? word : p.string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const fs::path candidate = fs::path(dir) / word;
    if (access(candidate.c_str(), X_OK) == 0) {
      fs::path p = fs::canonical(candidate, ec);
      return ec ? candidate.string() : p.string();
    }
    start = end + 1;
  }
  return "";
}

using Family = mla::MpiFamilyInfo;

bool HasWord(const std::string& text, const std::vector<std::string>& words) {
  for (const std::string& w : words)
    if (text.find(w) != std::string::npos) return true;
  return false;
}

// The family one of whose `words` (launcher_version_words or
// launcher_name_words) is in `text`; for names, its launcher_programs too.
const Family* FamilyByWords(const std::string& text, std::vector<std::string> Family::*words) {
  for (const Family& f : mla::MpiFamilies())
    if (HasWord(text, f.*words) || (words == &Family::launcher_name_words && HasWord(text, f.launcher_programs)))
      return &f;
  return nullptr;
}

std::string BaseName(const std::string& path) { return fs::path(path).filename().string(); }

// Whether a file name is an MPI launcher's: the generic mpirun and mpiexec
// (mpiexec.hydra, mpirun.openmpi...) or a family's own (the family table's
// launcher_programs).
bool LauncherName(const std::string& path) {
  const std::string name = BaseName(path);
  std::vector<std::string> prefixes = {"mpirun", "mpiexec"};
  for (const Family& f : mla::MpiFamilies())
    prefixes.insert(prefixes.end(), f.launcher_programs.begin(), f.launcher_programs.end());
  for (const std::string& prefix : prefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

LauncherKind KindOfLauncher(const std::vector<std::string>& command, std::string* note) {
  if (command.empty()) return LauncherKind::kOther;
  const std::string& word = command[0];
  if (BaseName(word) == "srun") return LauncherKind::kSrun;
  const std::string program = ResolveProgram(word);
  if (!LauncherName(word) && !LauncherName(program)) return LauncherKind::kOther;
  if (!program.empty()) {
    std::string version;
    RunAndCapture({program, "--version"}, &version);
    if (const Family* f = FamilyByWords(version, &Family::launcher_version_words)) return f->launcher_kind;
  }
  if (const Family* f = FamilyByWords(BaseName(word) + " " + BaseName(program), &Family::launcher_name_words))
    return f->launcher_kind;
  if (note != nullptr)
    *note = "cannot tell which MPI '" + mla::Excerpt(word) +
            "' is (its --version names neither Open MPI nor "
            "MPICH's hydra): the ranks get the library through the environment only; where remote ranks miss it, "
            "give --mpi and pass LD_PRELOAD and MULTILANE_PROFILE with your launcher's own flag";
  return LauncherKind::kOther;
}

std::vector<std::string> ForwardVariables(LauncherKind kind, const std::vector<std::string>& command,
                                          const std::vector<std::string>& variables) {
  if (command.empty() || (kind != LauncherKind::kOpenMpi && kind != LauncherKind::kHydra)) return command;
  std::vector<std::string> out{command[0]};
  for (const std::string& name : variables) {
    const char* value = std::getenv(name.c_str());
    if (kind == LauncherKind::kOpenMpi)
      out.insert(out.end(), {"-x", name});
    else
      out.insert(out.end(), {"-genv", name, value != nullptr ? value : ""});
  }
  out.insert(out.end(), command.begin() + 1, command.end());
  return out;
}

std::string JobMpiFamily(const std::string& requested, LauncherKind launcher, const std::string& program_family,
                         std::string* error) {
  if (mla::FindMpiFamily(requested) != nullptr) return requested;
  if (!requested.empty() && requested != "auto") {
    *error = "--mpi '" + mla::Excerpt(requested) + "' must be auto, " + mla::MpiFamilyChoices();
    return "";
  }
  if (!program_family.empty()) return program_family;
  for (const Family& f : mla::MpiFamilies())
    if (f.launcher_kind == launcher) return f.name;
  return mla::MpiFamilies().front().name;
}

std::string FamilyOfProgram(const std::string& program, const std::string& path, const std::string& dir) {
  if (program.empty()) return "";
  std::vector<std::string> files;
  if (program.find('/') != std::string::npos) {
    files.push_back(program[0] == '/' || dir.empty() ? program : dir + "/" + program);
  } else {
    size_t start = 0;
    while (start <= path.size()) {
      size_t colon = path.find(':', start);
      if (colon == std::string::npos) colon = path.size();
      const std::string d = path.substr(start, colon - start);
      if (!d.empty()) files.push_back(d + "/" + program);
      start = colon + 1;
    }
  }
  for (const std::string& file : files) {
    if (access(file.c_str(), X_OK) != 0) continue;
    std::vector<std::string> needed;
    std::string why;
    if (!mla::ElfNeeded(file, &needed, &why)) return "";
    for (const mla::MpiFamilyInfo& f : mla::MpiFamilies())
      for (const std::string& lib : f.mpi_libraries)
        if (std::find(needed.begin(), needed.end(), lib) != needed.end()) return f.name;
    // A launcher's own process (hydra_pmi_proxy under mpiexec, prterun): by its name.
    const std::string base = file.substr(file.rfind('/') + 1);
    if (const Family* f = FamilyByWords(base, &Family::launcher_name_words)) return f->name;
    return "";
  }
  return "";
}

std::string FamilyOfCommand(const std::vector<std::string>& command, LauncherKind launcher) {
  if (command.empty()) return "";
  const char* path = std::getenv("PATH");
  std::error_code ec;
  const std::string dir = fs::current_path(ec).string();
  if (launcher == LauncherKind::kOther) return FamilyOfProgram(command[0], path ? path : "", dir);
  if (launcher != LauncherKind::kSrun) return "";
  for (size_t i = 1; i < command.size(); ++i) {  // srun's program: the first word that is one
    if (command[i].empty() || command[i][0] == '-') continue;
    const std::string family = FamilyOfProgram(command[i], path ? path : "", dir);
    if (!family.empty()) return family;
  }
  return "";
}

std::string ProbeOfFamily(const std::string& probe, const std::string& family) {
  return (fs::path(probe).parent_path() / mla::FamilyProbeFile(family)).string();
}

std::string MpiVersionOfFamily(const std::string& family, const std::string& probe, std::string* error) {
  if (family == mla::MpiFamilies().front().name) return MpiLibraryVersion();  // this command's own MPI
  std::string out;
  const int status = RunAndCapture({probe, "--mpi-version"}, &out);
  const std::string first = out.substr(0, out.find('\n'));
  if (status != 0 || first.empty()) {
    *error = "cannot learn the " + family + " MPI's version from " + probe + " --mpi-version (exit status " +
             std::to_string(status) + (first.empty() ? "" : ": " + first) + "); install multilane's " + family +
             " build (docs/admin.md, \"MPI families\")";
    return "";
  }
  return first;
}

}  // namespace multilane
