// synthetic_job: an MPI program whose time split is known, for testing the
// job report (MULTILANE_REPORT, docs/job-report-format.md).
//
// Each iteration "computes" for --compute-ms (a sleep, so that oversubscribed
// ranks keep exact timings), the chosen slow rank --imbalance-ms longer, and
// then calls MPI_Allreduce once per size of --bytes (floats, sum).  The other
// ranks wait for the slow one inside the first allreduce of the iteration.
//
// At the end world rank 0 prints the truth as one line of JSON:
//   synthetic_job truth: {"ranks": 4, "iterations": 50, ..., "bins": [...]}
// measured by the program itself around its own calls (wall time from the
// end of MPI_Init to the start of MPI_Finalize, time asleep, time inside
// MPI_Allreduce) and the waiting each rank had to do: per call, the time
// from its own arrival at MPI_Allreduce to the last rank's arrival
// (wait_s_mean; CLOCK_MONOTONIC is one clock for all processes of a host,
// so this holds on one host only), and per iteration the slowest rank's
// compute minus its own (imbalance_s_mean: equal to the waiting on an idle
// host; on a loaded one, ranks descheduled on the way to the call make the
// others wait longer).
//
// Usage: synthetic_job [--iterations N] [--compute-ms X] [--imbalance-ms Y]
//                      [--bytes SIZE[,SIZE...]] [--slow-rank R]
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void SleepMs(double ms) {
  if (ms <= 0) return;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ms / 1000);
  ts.tv_nsec = static_cast<long>((ms - ts.tv_sec * 1000.0) * 1e6);
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// "4K", "65536", "1M": bytes.
bool ParseSize(const std::string& s, uint64_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  uint64_t mult = 1;
  const std::string suffix = end;
  if (suffix == "K" || suffix == "k")
    mult = 1024;
  else if (suffix == "M" || suffix == "m")
    mult = 1024 * 1024;
  else if (!suffix.empty())
    return false;
  *out = v * mult;
  return *out >= 4 && *out % 4 == 0;
}

struct Options {
  int iterations = 50;
  double compute_ms = 20;
  double imbalance_ms = 0;
  std::vector<uint64_t> bytes{4096};
  int slow_rank = -1;  // -1: the last rank
};

bool Parse(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      *error = a + " needs a value";
      return false;
    }
    const std::string v = argv[++i];
    if (a == "--iterations") {
      o->iterations = std::atoi(v.c_str());
    } else if (a == "--compute-ms") {
      o->compute_ms = std::atof(v.c_str());
    } else if (a == "--imbalance-ms") {
      o->imbalance_ms = std::atof(v.c_str());
    } else if (a == "--slow-rank") {
      o->slow_rank = std::atoi(v.c_str());
    } else if (a == "--bytes") {
      o->bytes.clear();
      size_t start = 0;
      while (start <= v.size()) {
        const size_t comma = v.find(',', start);
        uint64_t n = 0;
        if (!ParseSize(v.substr(start, comma - start), &n)) {
          *error = "--bytes: '" + v + "' is not a list of sizes (multiples of 4, e.g. 4K,64K)";
          return false;
        }
        o->bytes.push_back(n);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else {
      *error = "unknown option " + a;
      return false;
    }
  }
  if (o->iterations < 1 || o->compute_ms < 0 || o->imbalance_ms < 0) {
    *error = "--iterations must be >= 1 and the times >= 0";
    return false;
  }
  return true;
}

int SizeBin(uint64_t bytes) { return bytes == 0 ? 0 : 64 - __builtin_clzll(bytes); }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double start = Now();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  std::string error;
  if (!Parse(argc, argv, &o, &error)) {
    if (rank == 0) std::fprintf(stderr, "synthetic_job: %s\n", error.c_str());
    MPI_Finalize();
    return 2;
  }
  const int slow = o.slow_rank >= 0 && o.slow_rank < size ? o.slow_rank : size - 1;

  uint64_t largest = *std::max_element(o.bytes.begin(), o.bytes.end());
  std::vector<float> send(largest / 4, 1.0f), recv(largest / 4, 0.0f);
  std::vector<double> compute(o.iterations);
  const size_t calls = static_cast<size_t>(o.iterations) * o.bytes.size();
  std::vector<double> arrivals(calls);
  double allreduce_s = 0;
  bool right = true;
  for (int it = 0; it < o.iterations; ++it) {
    const double t0 = Now();
    SleepMs(o.compute_ms + (rank == slow ? o.imbalance_ms : 0));
    const double t1 = Now();
    compute[it] = t1 - t0;
    for (size_t j = 0; j < o.bytes.size(); ++j) {
      const int count = static_cast<int>(o.bytes[j] / 4);
      const double a0 = Now();
      arrivals[it * o.bytes.size() + j] = a0;
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      allreduce_s += Now() - a0;
      if (recv[0] != static_cast<float>(size) || recv[count - 1] != static_cast<float>(size)) right = false;
    }
  }
  const double wall = Now() - start;

  // The truth, from what every rank measured (no MPI_Allreduce: it would count).
  std::vector<double> all_compute(rank == 0 ? static_cast<size_t>(size) * o.iterations : 0);
  MPI_Gather(compute.data(), o.iterations, MPI_DOUBLE, all_compute.data(), o.iterations, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<double> all_arrivals(rank == 0 ? static_cast<size_t>(size) * calls : 0);
  MPI_Gather(arrivals.data(), static_cast<int>(calls), MPI_DOUBLE, all_arrivals.data(), static_cast<int>(calls),
             MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double mine[4] = {wall, 0, allreduce_s, right ? 0.0 : 1.0};
  for (double c : compute) mine[1] += c;
  std::vector<double> all(rank == 0 ? 4 * size : 0);
  MPI_Gather(mine, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int status = 0;
  if (rank == 0) {
    double wall_sum = 0, compute_sum = 0, allreduce_sum = 0, wait_sum = 0, imbalance_sum = 0;
    int wrong = 0;
    for (int r = 0; r < size; ++r) {
      wall_sum += all[4 * r];
      compute_sum += all[4 * r + 1];
      allreduce_sum += all[4 * r + 2];
      wrong += all[4 * r + 3] > 0;
    }
    for (int it = 0; it < o.iterations; ++it) {
      double slowest = 0;
      for (int r = 0; r < size; ++r)
        slowest = std::max(slowest, all_compute[static_cast<size_t>(r) * o.iterations + it]);
      for (int r = 0; r < size; ++r) imbalance_sum += slowest - all_compute[static_cast<size_t>(r) * o.iterations + it];
    }
    for (size_t c = 0; c < calls; ++c) {
      double last = 0;
      for (int r = 0; r < size; ++r) last = std::max(last, all_arrivals[r * calls + c]);
      for (int r = 0; r < size; ++r) wait_sum += last - all_arrivals[r * calls + c];
    }
    std::map<int, std::pair<uint64_t, uint64_t>> bins;  // bin -> calls, bytes
    for (uint64_t b : o.bytes) {
      bins[SizeBin(b)].first += o.iterations;
      bins[SizeBin(b)].second += b * o.iterations;
    }
    std::printf(
        "synthetic_job truth: {\"ranks\": %d, \"iterations\": %d, \"slow_rank\": %d, "
        "\"compute_ms\": %g, \"imbalance_ms\": %g, \"wall_s_mean\": %.6f, \"compute_s_mean\": %.6f, "
        "\"allreduce_s_mean\": %.6f, \"wait_s_mean\": %.6f, \"imbalance_s_mean\": %.6f, "
        "\"wrong_ranks\": %d, \"bins\": [",
        size, o.iterations, slow, o.compute_ms, o.imbalance_ms, wall_sum / size, compute_sum / size,
        allreduce_sum / size, wait_sum / size, imbalance_sum / size, wrong);
    bool first = true;
    for (const auto& [bin, cb] : bins) {
      std::printf("%s{\"memory\": \"host\", \"from\": %llu, \"calls\": %llu, \"bytes\": %llu}", first ? "" : ", ",
                  1ull << (bin - 1), static_cast<unsigned long long>(cb.first),
                  static_cast<unsigned long long>(cb.second));
      first = false;
    }
    std::printf("]}\n");
    std::fflush(stdout);
    if (wrong > 0) {
      std::fprintf(stderr, "synthetic_job: %d rank(s) got a wrong allreduce result\n", wrong);
      status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
