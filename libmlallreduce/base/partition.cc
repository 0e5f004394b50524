#include "libmlallreduce/base/partition.h"

#include <algorithm>

namespace mla::lib {

void BlockOf(long long count, int active, int b, long long* first, long long* n) {
  if (b >= active) {
    *first = count;
    *n = 0;
    return;
  }
  const long long base = count / active, extra = count % active;
  *first = b * base + std::min<long long>(b, extra);
  *n = base + (b < extra ? 1 : 0);
}

Partition BlockPartition(int count, int parts, int active) {
  Partition p;
  if (parts < 1) parts = 1;
  active = std::clamp(active, 1, parts);
  p.counts.assign(parts, 0);
  p.displs.assign(parts, 0);
  for (int i = 0; i < parts; ++i) {
    long long first = 0, n = 0;
    BlockOf(count, active, i, &first, &n);
    p.displs[i] = static_cast<int>(first);
    p.counts[i] = static_cast<int>(n);
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
