// The Alignment tab's page for the date models (character seq2seq: a date in any form to ISO).
#pragma once

#include "workbenches/alignment/alignment_page.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<const AlignmentPage> makeDatesPage();

}  // namespace attn::ui
