// entry_points.cc: the report's words for the library's entry points.
#include "report/entry_points.h"

#include <algorithm>

#include "mlallreduce_types.h"
#include "vocab/algo_names.h"

namespace mlreport {
namespace {

struct EntryWords {
  mla_entry entry;
  const char* label;
  const char* not_served_why;  // "" where every call is served
};

// One row per mla_entry, in its order.
constexpr EntryWords kWords[MLA_ENTRY_COUNT] = {
    {MLA_ENTRY_C, "MPI_Allreduce (C, C++, Python; MPICH's Fortran)", ""},
    {MLA_ENTRY_FORTRAN, "Fortran mpif.h / use mpi (Open MPI)", ""},
    {MLA_ENTRY_F08, "Fortran use mpi_f08 (Open MPI)", ""},
    {MLA_ENTRY_LARGE_COUNT, "MPI_Allreduce_c (MPI-4 large count)",
     "more than INT_MAX elements: passed to the system MPI"},
    {MLA_ENTRY_NONBLOCKING, "MPI_Iallreduce", "nonblocking: passed to the system MPI"},
    {MLA_ENTRY_PERSISTENT, "MPI_Allreduce_init", "persistent: passed to the system MPI"},
};

const EntryWords* Find(const std::string& name) {
  for (const EntryWords& w : kWords)
    if (name == mla::EntryName(w.entry)) return &w;
  return nullptr;
}

std::string Calls(int64_t n) { return std::to_string(n) + (n == 1 ? " call" : " calls"); }

}  // namespace

std::string EntryLabel(const std::string& name) {
  const EntryWords* w = Find(name);
  return w != nullptr ? w->label : name;
}

std::string EntryNotServedWhy(const std::string& name) {
  const EntryWords* w = Find(name);
  return w != nullptr ? w->not_served_why : "passed to the system MPI";
}

std::string EntryPointsUsed(const JobReport& r) {
  std::string out;
  for (const ReportEntry& e : r.entries) {
    if (e.calls == 0) continue;
    out += (out.empty() ? "" : ", ") + EntryLabel(e.name) + " " + Calls(e.calls);
  }
  return out;
}

std::string EntryPointsNotServed(const JobReport& r) {
  std::string out;
  for (const ReportEntry& e : r.entries) {
    if (e.not_served == 0) continue;
    out += (out.empty() ? "" : "; ") + Calls(e.not_served) + " through " + EntryLabel(e.name) + " (" +
           EntryNotServedWhy(e.name) + ")";
  }
  return out;
}

std::string UnsupportedCalls(const JobReport& r) {
  std::string reasons;
  int64_t total = 0;
  for (const auto& [name, calls] : r.unsupported) {
    if (calls <= 0) continue;
    total += calls;
    std::string words = name;  // mla::UnsupportedName's, '_' read as a space
    std::replace(words.begin(), words.end(), '_', ' ');
    reasons += (reasons.empty() ? "" : ", ") + words + " " + std::to_string(calls);
  }
  if (total == 0) return "";
  return Calls(total) + " a multilane algorithm was chosen for went to the system MPI: " + reasons;
}

}  // namespace mlreport
