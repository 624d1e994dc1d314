// An entailment model's part of the Alignment tab's session section (session/alignment_section.h): "pair", the
// hypothesis (the tab's second input; the premise is the shared "text"), default empty. No Qt: compiled into
// attn_session.
#pragma once

#include "session/alignment_section.h"

#include <string>

namespace attn::ui {

std::string entailmentPair(const AlignmentSection& section);
void setEntailmentPair(AlignmentSection& section, std::string pair);

}  // namespace attn::ui
