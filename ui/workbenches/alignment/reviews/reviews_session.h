// A review classifier's part of the Alignment tab's session section (session/alignment_section.h): "readings",
// whether the three readings of saliency are shown side by side (default true). No Qt: compiled into attn_session.
#pragma once

#include "session/alignment_section.h"

namespace attn::ui {

bool reviewsReadings(const AlignmentSection& section);
void setReviewsReadings(AlignmentSection& section, bool readings);

}  // namespace attn::ui
