// entry_points.h: what the report says about the ways a job called its
// allreduces (the file's "entries"): which language bindings and entry points
// it used, and how many calls multilane did not serve, and why (the
// entry point, or the file's "unsupported" reasons).
#ifndef MULTILANE_REPORT_ENTRY_POINTS_H_
#define MULTILANE_REPORT_ENTRY_POINTS_H_

#include <string>

#include "report/report_reader.h"

namespace mlreport {

// The reader's words for one entry point (mla::EntryName's `name`), e.g.
// "Fortran use mpi_f08 (Open MPI)"; an unknown name is returned as it is.
std::string EntryLabel(const std::string& name);

// Why calls through `name` were not served ("nonblocking: passed to the
// system MPI"); "" for the entry points whose calls are all served.
std::string EntryNotServedWhy(const std::string& name);

// "MPI_Allreduce (C, C++, Python; MPICH's Fortran) 120 calls, Fortran use
// mpi_f08 (Open MPI) 18 calls": the entry points with calls, or "" when the
// file does not say (written before they were counted) or holds no calls.
std::string EntryPointsUsed(const JobReport& r);

// "1 call through MPI_Iallreduce (nonblocking: passed to the system MPI)",
// one clause per entry point with calls not served, joined by "; "; ""
// when every call was served.
std::string EntryPointsNotServed(const JobReport& r);

// "594 calls a multilane algorithm was chosen for went to the system MPI:
// one rank 594": rank 0's unsupported calls with their reasons; "" when none
// (or the file does not say).
std::string UnsupportedCalls(const JobReport& r);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_ENTRY_POINTS_H_
