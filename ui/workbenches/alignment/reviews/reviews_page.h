// The Alignment tab's page for the review classifiers (attention pooling, hierarchical, and their readings of
// saliency).
#pragma once

#include "workbenches/alignment/alignment_page.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<const AlignmentPage> makeReviewsPage();

}  // namespace attn::ui
