// overhead.cc: the library's own cost per call (overhead.h).
#include "benchmarks/overhead.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "mlallreduce.h"

namespace mlabench {
namespace {

constexpr int kCalls = 4000;  // per round and way
constexpr int kRounds = 9;

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
  const int calls = kCalls, rounds = kRounds;
  std::vector<Overhead> out;
  const size_t esize = type_size(opt.type);
  for (uint64_t bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= opt.factor) {
    const int count = static_cast<int>(std::max<uint64_t>(1, bytes / esize));
    std::vector<unsigned char> send(count * esize, 1), recv(count * esize, 0);
    std::vector<double> mpi, pass, autos;
    TimeCalls(Way::kAuto, send.data(), recv.data(), count, mpi_datatype(opt.type), mpi_op(opt.op), calls / 10);
    // Each round starts with another of the three, so that whatever the
    // order costs (the first of a round finding its buffers out of cache, at
    // the larger sizes) falls on each alike.
    const Way ways[3] = {Way::kMpi, Way::kPassthrough, Way::kAuto};
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < 3; ++i) {
        const Way w = ways[(r + i) % 3];
        const double t =
            TimeCalls(w, send.data(), recv.data(), count, mpi_datatype(opt.type), mpi_op(opt.op), calls) * 1e9;
        (w == Way::kMpi ? mpi : w == Way::kPassthrough ? pass : autos).push_back(t);
      }
    }
    Overhead o;
    o.bytes = static_cast<uint64_t>(count) * esize;
    o.mpi_ns = Median(mpi);
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
  std::snprintf(line, sizeof line,
                "# overhead: ns per call beyond PMPI_Allreduce, MPI_COMM_SELF, host buffers, median of %d rounds "
                "of %d calls",
                kRounds, kCalls);
  lines.push_back(line);
  lines.push_back("#        size     mpi_ns  passthrough_ns    auto_ns");
  for (const Overhead& o : rows) {
    std::snprintf(line, sizeof line, "%14llu %10.1f %15.1f %10.1f", static_cast<unsigned long long>(o.bytes), o.mpi_ns,
                  o.passthrough_ns, o.auto_ns);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace mlabench
