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
constexpr double kSizeSeconds = 0.3;     // the ways together, per size
constexpr int kMinRounds = 61, kMaxRounds = 2001;
// Sizes whose block is one call (a call of 20 us or more): each round's
// difference then carries one call's noise, so more rounds, for the median
// to settle to a few ns (seen: single runs of 1 MiB 6 to 164 ns apart).
constexpr double kSingleCallSizeSeconds = 1.0;
constexpr int kSingleCallMaxRounds = 8001;
constexpr int kMaxBlock = 4000;

enum class Way { kMpi, kPassthrough, kAuto, kEntry };
constexpr int kWays = 4;

// Seconds per call of `calls` calls made `way` on MPI_COMM_SELF.
double TimeCalls(Way way, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int calls) {
  const mla_choice passthrough{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) {
    if (way == Way::kMpi)
      PMPI_Allreduce(send, recv, count, type, op, MPI_COMM_SELF);
    else if (way == Way::kPassthrough)
      mla_allreduce_with(send, recv, count, type, op, MPI_COMM_SELF, &passthrough);
    else if (way == Way::kAuto)
      mla_allreduce(send, recv, count, type, op, MPI_COMM_SELF);
    else
      MPI_Allreduce(send, recv, count, type, op, MPI_COMM_SELF);  // the library's interposed entry point
  }
  return (MPI_Wtime() - start) / calls;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One size's row: `count` elements of `type`, the ways interleaved in rounds.
Overhead MeasureSize(int count, size_t esize, MPI_Datatype type, MPI_Op op) {
  std::vector<unsigned char> send(count * esize, 1), recv(count * esize, 0);
  // Warm-up, which also sizes a block: about kBlockSeconds of calls, so that
  // the clock's own cost is small beside it and a round is short enough for
  // the ways of it to see the same machine.
  TimeCalls(Way::kAuto, send.data(), recv.data(), count, type, op, 100);
  TimeCalls(Way::kEntry, send.data(), recv.data(), count, type, op, 100);
  const double one = TimeCalls(Way::kMpi, send.data(), recv.data(), count, type, op, 100);
  const int block = static_cast<int>(std::clamp(kBlockSeconds / std::max(one, 1e-9), 1.0, double(kMaxBlock)));
  const bool single = block == 1;
  const int rounds = static_cast<int>(
      std::clamp((single ? kSingleCallSizeSeconds : kSizeSeconds) / (kWays * block * std::max(one, 1e-9)),
                 double(kMinRounds), double(single ? kSingleCallMaxRounds : kMaxRounds)));
  // ns per call of each way in each round.  Each round starts with another
  // way, so that whatever the order costs (the first of a round finding its
  // buffers out of cache, at the larger sizes) falls on each alike.
  std::vector<double> t[kWays];
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < kWays; ++i) {
      const int w = (r + i) % kWays;
      t[w].push_back(TimeCalls(static_cast<Way>(w), send.data(), recv.data(), count, type, op, block) * 1e9);
    }
  }
  // Each way's difference to the system MPI per round, so that a round's
  // drift cancels between them.
  const auto beyond = [&t, rounds](Way w) {
    std::vector<double> d;
    for (int r = 0; r < rounds; ++r) d.push_back(t[static_cast<int>(w)][r] - t[static_cast<int>(Way::kMpi)][r]);
    return Median(d);
  };
  Overhead o;
  o.bytes = static_cast<uint64_t>(count) * esize;
  o.mpi_ns = Median(t[static_cast<int>(Way::kMpi)]);
  o.passthrough_ns = beyond(Way::kPassthrough);
  o.auto_ns = beyond(Way::kAuto);
  o.entry_ns = beyond(Way::kEntry);
  o.rounds = rounds;
  o.block = block;
  return o;
}

}  // namespace

std::vector<Overhead> MeasureOverhead(const Options& opt) {
  std::vector<Overhead> out;
  const size_t esize = type_size(opt.type);
  for (uint64_t bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= opt.factor) {
    const int count = static_cast<int>(std::max<uint64_t>(1, bytes / esize));
    out.push_back(MeasureSize(count, esize, mpi_datatype(opt.type), mpi_op(opt.op)));
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
  lines.push_back("#        size     mpi_ns  passthrough_ns    auto_ns  MPI_Allreduce_ns   rounds  block");
  for (const Overhead& o : rows) {
    std::snprintf(line, sizeof line, "%14llu %10.1f %15.1f %10.1f %17.1f %8d %6d",
                  static_cast<unsigned long long>(o.bytes), o.mpi_ns, o.passthrough_ns, o.auto_ns, o.entry_ns, o.rounds,
                  o.block);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace mlabench
