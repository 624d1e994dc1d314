// The views of the headline models: the shared seq2seq views (alignment_seq2seq_views.h), nothing of their own.
#include "workbenches/alignment/alignment_seq2seq_views.h"

namespace attn::ui {

std::unique_ptr<AlignmentViews> makeHeadlinesViews(const AlignmentPage& page, QObject* parent) {
  return std::make_unique<Seq2SeqViews>(page, parent);
}

}  // namespace attn::ui
