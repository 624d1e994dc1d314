// The Alignment tab's page for the entailment models (a hypothesis word by word over a premise).
#pragma once

#include "workbenches/alignment/alignment_page.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<const AlignmentPage> makeEntailmentPage();

}  // namespace attn::ui
