// A speech model's part of the Alignment tab's session section (session/alignment_section.h): "shaping", its
// attention weights as its decoder makes them ({"sharpen", "smooth", "top_k", "window"}; the defaults: the
// model's own). No Qt: compiled into attn_session.
#pragma once

#include "attn/models/seq2seq.h"
#include "session/alignment_section.h"

namespace attn::ui {

models::AttentionShaping speechShaping(const AlignmentSection& section);
void setSpeechShaping(AlignmentSection& section, const models::AttentionShaping& shaping);

}  // namespace attn::ui
