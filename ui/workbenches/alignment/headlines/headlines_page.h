// The Alignment tab's page for the headline models (word seq2seq: a news sentence to its headline).
#pragma once

#include "workbenches/alignment/alignment_page.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<const AlignmentPage> makeHeadlinesPage();

}  // namespace attn::ui
