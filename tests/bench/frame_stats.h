// What the frame-time programs (bench_glimpse_drag, bench_long_map_frames) share: percentiles of a sample and the
// machine's load average, printed with their figures.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace attn::bench {

// The p-th percentile (0..100) of v, linearly interpolated between the nearest ranks; 0 for no sample.
inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * double(v.size() - 1);
  const auto lo = std::size_t(std::floor(rank));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - double(lo));
}

// The 1, 5 and 15-minute load averages ("0.52 0.61 0.70"), or "unknown".
inline std::string load_average() {
  double a = 0, b = 0, c = 0;
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "unknown";
  const int read = std::fscanf(f, "%lf %lf %lf", &a, &b, &c);
  std::fclose(f);
  if (read != 3) return "unknown";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %.2f %.2f", a, b, c);
  return text;
}

}  // namespace attn::bench
