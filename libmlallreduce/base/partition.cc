#include "libmlallreduce/base/partition.h"

#include <algorithm>

namespace mla::lib {

Partition BlockPartition(int count, int parts, int active) {
  Partition p;
  if (parts < 1) parts = 1;
  active = std::clamp(active, 1, parts);
  p.counts.assign(parts, 0);
  p.displs.assign(parts, 0);
  const int base = count / active;
  const int extra = count % active;
  int offset = 0;
  for (int i = 0; i < parts; ++i) {
    p.displs[i] = offset;
    if (i < active) p.counts[i] = base + (i < extra ? 1 : 0);
    offset += p.counts[i];
  }
  return p;
}

std::vector<int> Segments(int count, long long segment) {
  std::vector<int> out;
  if (count <= 0) return out;
  if (segment <= 0 || segment >= count) {
    out.push_back(count);
    return out;
  }
  for (long long done = 0; done < count; done += segment) {
    out.push_back(static_cast<int>(std::min<long long>(segment, count - done)));
  }
  return out;
}

}  // namespace mla::lib
