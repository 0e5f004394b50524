// tune_request.cc: `multilane tune`'s options read once (tune_request.h).
#include "launcher/tune/tune_request.h"

#include "vocab/byte_size.h"
#include "vocab/ranks_per_gpu.h"
#include "vocab/terminal_text.h"
#include "vocab/refuse.h"

namespace multilane {
namespace {

// "4K:64M" -> 4K, 16K, ... 64M (times `step`).
bool ParseSizes(const std::string& text, int step, TuneSizes* out, std::string* error) {
  const size_t colon = text.find(':');
  uint64_t lo = 0, hi = 0;
  if (colon == std::string::npos || !mla::ParseByteSize(text.substr(0, colon), &lo) ||
      !mla::ParseByteSize(text.substr(colon + 1), &hi) || lo < 4 || hi < lo) {
    *error =
        "--sizes '" + mla::Excerpt(text) + "' must be FROM:TO with byte sizes, FROM >= 4 and TO >= FROM, e.g. 4K:64M";
    return false;
  }
  if (step < 2) return mla::Refuse(error, "--step must be 2 or more");
  *out = TuneSizes{lo, hi, step, {}};
  for (uint64_t s = lo; s <= hi; s *= static_cast<uint64_t>(step)) {
    out->bytes.push_back(s / 4 * 4);
    if (s > hi / static_cast<uint64_t>(step)) break;
  }
  return true;
}

bool ParseMemory(const std::string& text, TuneMemory* out, std::string* error) {
  for (TuneMemory m : {TuneMemory::kAuto, TuneMemory::kHost, TuneMemory::kDevice, TuneMemory::kAll}) {
    if (text == TuneMemoryName(m)) {
      *out = m;
      return true;
    }
  }
  return mla::Refuse(error, "--memory must be host, device, all or auto, not '" + mla::Excerpt(text) + "'");
}

}  // namespace

const char* TuneMemoryName(TuneMemory memory) {
  switch (memory) {
    case TuneMemory::kHost:
      return "host";
    case TuneMemory::kDevice:
      return "device";
    case TuneMemory::kAll:
      return "all";
    case TuneMemory::kAuto:
      break;
  }
  return "auto";
}

std::string SrunMpiOf(const TuneRequest& r) {
  if (r.srun_mpi.empty()) return r.family->srun_mpi;
  return r.srun_mpi == "default" ? "" : r.srun_mpi;
}

bool ParseTuneRequest(const TuneOptions& opt, TuneRequest* request, std::string* error) {
  TuneRequest r;
  if (!ParseSizes(opt.sizes, opt.step, &r.sizes, error)) return false;
  if (opt.budget_s <= 0) return mla::Refuse(error, "--budget must be a positive number of seconds");
  r.budget_s = opt.budget_s;
  if (!opt.ranks_per_gpu.empty() &&
      !mla::ParseRanksPerGpuList(opt.ranks_per_gpu, "--ranks-per-gpu", &r.ranks_per_gpu, error))
    return false;
  if (!opt.weights.empty()) {
    r.weights.emplace();
    if (!mlreport::ReadJobReport(opt.weights, &*r.weights, error)) return mla::Refuse(error, "--weights: " + *error);
  }
  r.family = mla::FindMpiFamily(opt.mpi);
  if (r.family == nullptr)
    return mla::Refuse(error, "--mpi '" + mla::Excerpt(opt.mpi) + "' must be " + mla::MpiFamilyChoices());
  if (!ParseMemory(opt.memory, &r.memory, error)) return false;
  if (opt.srun_mpi.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    return mla::Refuse(error, "--srun-mpi '" + mla::Excerpt(opt.srun_mpi) +
                                  "' must be one of srun --mpi=list's types (letters, digits, _) or default");
  static_cast<TuneSettings&>(r) = opt;
  *request = std::move(r);
  return true;
}

}  // namespace multilane
