// What a Lab run will draw and hold, estimated from the request before anything is built, and checked against the
// Lab's budgets: the seeded random weights (kMaxLabWeights) and the maps and working memory (kMaxLabWorkingFloats).
// One function for every mechanism of the catalogue (lab_budget.cpp): a new mechanism gets its row there.
#pragma once

#include "attn/error.h"
#include "attn/lab/lab.h"

#include <cstdint>
#include <string_view>

namespace attn::lab::budget {

// 2^26 weights (about 0.3 s to draw) keep a keystroke's run short; 2^29 floats (2 GiB) of maps and scratch are what
// a run may hold at once: the Reformer's 8,192-word default (about 1.9 GB) fits, 16 hash rounds (5.5 GB measured)
// and 64 heads of multi-head attention over 2,048 words (2.7 GB) do not.
inline constexpr double kMaxLabWeights = 67108864.0;
inline constexpr double kMaxLabWorkingFloats = 536870912.0;

struct LabCost {
  double weights = 0;  // seeded random parameters drawn
  double working = 0;  // floats of the maps kept (and their recorded copies) and the largest intermediates
};

// The cost of running `p.mechanism` on `query` and `source` words (the counts after truncation).
LabCost estimate_cost(const LabParams& p, std::int64_t query, std::int64_t source);

// Refuses a request over either budget, naming the mechanism, the figure, the limit and what to lower; `what` is
// where the request came from (the file of `attnscope-cli lab --input`), named as the refusal's file.
Result<void> check_budget(const LabParams& p, std::int64_t query, std::int64_t source,
                          std::string_view what = kInMemoryRequest);

}  // namespace attn::lab::budget
