// Choosing what to compute for a frame. When the exact Gaussian read of a glimpse costs more than a
// frame's budget (dragging a 256 x 256 grid over a 4096 x 4096 photo), the read is done on a coarser
// pyramid level where the same window costs less; the result is labelled as a preview and the exact read
// follows when the drag ends.
#pragma once

#include "attn/glimpse/gaussian.h"
#include "attn/vision/pyramid.h"

namespace attn::glimpse {

// The same glimpse expressed on pyramid level `level` (pixels 2^level times larger). Sigma shrinks with
// the level but keeps at least the pyramid's own blur into account, so a preview is never sharper than
// the exact read.
GaussianGlimpse at_level(const GaussianGlimpse& glimpse, int level);

struct ReadPlan {
  int level = 0;      // 0 = exact
  double macs = 0.0;  // estimated multiply-adds at that level
  bool preview() const { return level > 0; }
};
// The finest level whose estimated cost is within `budget_macs` (level 0 when the exact read fits). Levels
// where the grid's stride would be under one pixel are never used, so when none fits the plan is the
// coarsest useful level, over budget.
ReadPlan plan_read(const GaussianGlimpse& glimpse, const ImagePyramid& pyramid, double budget_macs);

// Reads at the plan's level; the result has the glimpse's exact shape (Ny x Nx) either way.
Image read_planned(const ImagePyramid& pyramid, const GaussianGlimpse& glimpse, const ReadPlan& plan,
                   ReadStats* stats = nullptr, ReadWorkspace* workspace = nullptr);

}  // namespace attn::glimpse
