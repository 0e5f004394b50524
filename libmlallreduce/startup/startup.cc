// startup.cc: the start-up agreement (startup.h).
#include "libmlallreduce/startup/startup.h"

#include <elf.h>
#include <link.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "libmlallreduce/startup/one_program.h"
#include "libmlallreduce/startup/pmix_channel.h"
#include "vocab/mpi_families.h"

namespace mla::lib {
namespace {

enum class Channel { kNone, kPmix, kPmixFailed };

Channel g_channel = Channel::kNone;
std::string g_pmix_error;
AgreementCost g_cost;

constexpr char kOffForAll[] = "multilane is off for the whole job and every rank runs unchanged";

// Why this rank may make the frozen collective without PMIx.
enum class Certificate {
  kNone,        // nothing says that every rank makes it
  kLinkedOnly,  // this program is linked with the family build, but the other ranks may run another one
  kEveryRank,   // the launcher said so, or every rank runs this linked program
};

#ifndef MLA_SIMULATION
#ifdef MLA_MPI_FAMILY
// True when the program's own executable names `soname` among the libraries
// it needs (DT_NEEDED): every rank that runs this program carries it.
bool ProgramNeeds(const std::string& soname) {
  struct Search {
    const std::string* soname;
    bool found = false;
  } search{&soname};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
          const auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
          const char* strtab = nullptr;
          for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
            if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
          }
          for (const ElfW(Dyn)* d = dyn; strtab != nullptr && d->d_tag != DT_NULL; ++d) {
            if (d->d_tag == DT_NEEDED && *s->soname == strtab + d->d_un.d_val) s->found = true;
          }
        }
        return 1;  // the first object is the program itself
      },
      &search);
  return search.found;
}
#endif

// Without PMIx, the frozen collective runs only where every rank is known to
// call it: the launcher said so (MULTILANE_ALL_RANKS=1: multilane run and
// srun --multilane give it to every rank with the library), or the program
// itself is linked with this family build and every rank runs this program.
// The link alone says nothing of the other ranks: in an MPMD job they run
// other programs, and no PMI-1/2 launcher tells a rank so (one_program.h).
Certificate Certified(int world_size) {
  const char* v = std::getenv("MULTILANE_ALL_RANKS");
  if (v != nullptr && std::strcmp(v, "1") == 0) return Certificate::kEveryRank;
#ifdef MLA_MPI_FAMILY
  if (!ProgramNeeds(FamilyLibraryFile(MLA_MPI_FAMILY).c_str())) return Certificate::kNone;
  return EveryRankRunsThisProgram(world_size) ? Certificate::kEveryRank : Certificate::kLinkedOnly;
#else
  (void)world_size;
  return Certificate::kNone;  // the front: never linked into a program
#endif
}
#else
// An SMPI program: SimGrid runs the same program on every rank.
Certificate Certified(int) { return Certificate::kEveryRank; }
#endif

// A world-rank-0 decision to stay off, said by rank 0.
Verdict OffSaidByRankZero(const std::string& line) {
  Verdict v;
  v.reporter = 0;
  v.line = line;
  return v;
}

Verdict Collective(const Ballot& mine, const StartupMpi& mpi, int rank) {
  uint64_t words[kBallotWords];
  BallotToWords(mine, rank, words);
  if (!mpi.combine_max(words, kBallotWords)) {
    return OffSaidByRankZero(std::string("the start-up agreement's MPI_Allreduce failed; ") + kOffForAll);
  }
  return DecideFromWords(words, mine, rank);
}

Verdict Count(const Ballot& mine, const StartupMpi& mpi, int ranks_per_node) {
  const int size = mpi.world_size();
  const int rank = mpi.world_rank();
  if (g_channel == Channel::kPmix) {
    if (auto all = PmixAgree(size, rank, ranks_per_node, mine, &g_cost.reads)) return DecideFromSummary(*all);
  }
  if (g_channel == Channel::kPmixFailed) {
    // The other ranks see this one as absent and stay off too.
    return OffSaidByRankZero("the start-up agreement cannot use PMIx (" + g_pmix_error + "); " + kOffForAll +
                             "; the admin checks the MPI's PMIx (multilane doctor)");
  }
  if (size <= 1) return Decide({EncodeBallot(mine)});
  const Certificate certificate = Certified(size);
  if (certificate == Certificate::kEveryRank) return Collective(mine, mpi, rank);
  // Every rank ends here alike (nothing was exchanged); rank 0 says why, its
  // own reason first when it has one.
  if (!mine.on) return OffSaidByRankZero(mine.reason);
  const char* fix =
      "; start it with multilane run or srun --multilane, or set MULTILANE_ALL_RANKS=1 for every rank when each "
      "one gets the library";
  if (certificate == Certificate::kLinkedOnly) {
    return OffSaidByRankZero(std::string("this program is linked with multilane, but its launcher offers no PMIx and "
                                         "does not show that every rank runs it (an MPMD job, ranks on several "
                                         "nodes, or a wrapper between the launcher and the program); ") +
                             kOffForAll + fix);
  }
  return OffSaidByRankZero(std::string("this job's launcher offers no PMIx and does not certify that every rank "
                                       "carries multilane; ") +
                           kOffForAll + fix);
}

}  // namespace

void CastBallot(const Ballot& mine) {
#ifndef MLA_SIMULATION
  if (!PmixLaunched()) return;
  g_channel = PmixPublish(EncodeBallot(mine), &g_pmix_error) ? Channel::kPmix : Channel::kPmixFailed;
#else
  (void)mine;  // an SMPI program: SimGrid is its launcher, every rank the same program
#endif
}

Verdict CountBallots(const Ballot& mine, const StartupMpi& mpi, int ranks_per_node) {
  const auto start = std::chrono::steady_clock::now();
  const Verdict v = Count(mine, mpi, ranks_per_node);
  g_cost.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return v;
}

AgreementCost LastAgreementCost() { return g_cost; }

void ReleaseBallotChannel() {
  if (g_channel == Channel::kPmix) PmixRelease();
}

}  // namespace mla::lib
