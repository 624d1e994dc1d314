// The Display row the review and entailment views share: which attribution shades the words of the predicted label
// (none, gradient x input, integrated gradients), as a request option (AlignmentRequest::attribution) and the
// section's "attribution" key. Each of the two kinds has its own row, shown while that kind is open; the two rows
// keep one choice.
#pragma once

#include "attn/models/word_attribution.h"
#include "render/alignment_render.h"

#include <optional>

class QComboBox;
class QFormLayout;
class QWidget;

namespace attn::ui {

class AlignmentViews;
struct AlignmentOutcome;
struct AlignmentRequest;
struct AlignmentSection;

class AttributionDisplay {
 public:
  // The row (hidden until setOpen(true)); a change makes `views` ask for a run (inputChanged).
  void build(QWidget* group, QFormLayout& form, AlignmentViews* views);
  void setOpen(bool open);
  std::optional<attn::models::WordAttributionMethod> method() const;
  void addToRequest(AlignmentRequest& request) const;  // while its kind is open
  void save(AlignmentSection& section) const;
  void restore(const AlignmentSection& section);

 private:
  QWidget* row_ = nullptr;
  bool open_ = false;
  QComboBox* box_ = nullptr;
};

// What a run's figure shades by: the outcome's attribution, or the reason it has none (nothing when not asked).
render::AttributionShading attributionShading(const AlignmentOutcome& outcome);

}  // namespace attn::ui
