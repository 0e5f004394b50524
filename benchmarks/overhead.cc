// overhead.cc: the library's own cost per call (overhead.h).
#include "benchmarks/overhead.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "mlallreduce.h"

namespace mlabench {
namespace {

constexpr double kBlockSeconds = 20e-6;  // a block of calls of one way: about this long
constexpr double kSizeSeconds = 0.3;     // the three ways together, per size
constexpr int kMinRounds = 61, kMaxRounds = 2001;
// Sizes whose block is one call (a call of 20 us or more): each round's
// difference then carries one call's noise, so more rounds, for the median
// to settle to a few ns (seen: single runs of 1 MiB 6 to 164 ns apart).
constexpr double kSingleCallSizeSeconds = 1.0;
constexpr int kSingleCallMaxRounds = 8001;
constexpr int kMaxBlock = 4000;

enum class Way { kMpi, kPassthrough, kAuto };

// Seconds per call of `calls` calls made `way` on MPI_COMM_SELF.
double TimeCalls(Way way, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int calls) {
  const mla_choice passthrough{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) {
    if (way == Way::kMpi)
      PMPI_Allreduce(send, recv, count, type, op, MPI_COMM_SELF);
    else if (way == Way::kPassthrough)
      mla_allreduce_with(send, recv, count, type, op, MPI_COMM_SELF, &passthrough);
    else
      mla_allreduce(send, recv, count, type, op, MPI_COMM_SELF);
  }
  return (MPI_Wtime() - start) / calls;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<Overhead> MeasureOverhead(const Options& opt) {
  std::vector<Overhead> out;
  const size_t esize = type_size(opt.type);
  const MPI_Datatype type = mpi_datatype(opt.type);
  const MPI_Op op = mpi_op(opt.op);
  for (uint64_t bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= opt.factor) {
    const int count = static_cast<int>(std::max<uint64_t>(1, bytes / esize));
    std::vector<unsigned char> send(count * esize, 1), recv(count * esize, 0);
    // Warm-up, which also sizes a block: about kBlockSeconds of calls, so
    // that the clock's own cost is small beside it and a round is short
    // enough for the three of it to see the same machine.
    TimeCalls(Way::kAuto, send.data(), recv.data(), count, type, op, 100);
    const double one = TimeCalls(Way::kMpi, send.data(), recv.data(), count, type, op, 100);
    const int block = static_cast<int>(std::clamp(kBlockSeconds / std::max(one, 1e-9), 1.0, double(kMaxBlock)));
    const bool single = block == 1;
    const int rounds = static_cast<int>(
        std::clamp((single ? kSingleCallSizeSeconds : kSizeSeconds) / (3 * block * std::max(one, 1e-9)),
                   double(kMinRounds), double(single ? kSingleCallMaxRounds : kMaxRounds)));
    std::vector<double> mpi, pass, autos;
    // Each round starts with another of the three, so that whatever the
    // order costs (the first of a round finding its buffers out of cache, at
    // the larger sizes) falls on each alike.
    const Way ways[3] = {Way::kMpi, Way::kPassthrough, Way::kAuto};
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < 3; ++i) {
        const Way w = ways[(r + i) % 3];
        const double t = TimeCalls(w, send.data(), recv.data(), count, type, op, block) * 1e9;
        (w == Way::kMpi ? mpi : w == Way::kPassthrough ? pass : autos).push_back(t);
      }
    }
    Overhead o;
    o.bytes = static_cast<uint64_t>(count) * esize;
    o.mpi_ns = Median(mpi);
    o.rounds = rounds;
    o.block = block;
    // Per round, so that a round's drift cancels between the three.
    std::vector<double> dp, da;
    for (int r = 0; r < rounds; ++r) {
      dp.push_back(pass[r] - mpi[r]);
      da.push_back(autos[r] - mpi[r]);
    }
    o.passthrough_ns = Median(dp);
    o.auto_ns = Median(da);
    out.push_back(o);
    if (bytes > opt.max_bytes / opt.factor) break;
  }
  return out;
}

std::vector<std::string> OverheadLines(const std::vector<Overhead>& rows) {
  std::vector<std::string> lines;
  char line[160];
  lines.push_back(
      "# overhead: ns per call beyond PMPI_Allreduce, MPI_COMM_SELF, host buffers; median over rounds of one block "
      "of each way (a block: about 20 us of calls)");
  lines.push_back("#        size     mpi_ns  passthrough_ns    auto_ns   rounds  block");
  for (const Overhead& o : rows) {
    std::snprintf(line, sizeof line, "%14llu %10.1f %15.1f %10.1f %8d %6d", static_cast<unsigned long long>(o.bytes),
                  o.mpi_ns, o.passthrough_ns, o.auto_ns, o.rounds, o.block);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace mlabench
