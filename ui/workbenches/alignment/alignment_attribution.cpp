#include "workbenches/alignment/alignment_attribution.h"

#include "session/alignment_section.h"
#include "workbenches/alignment/alignment_run.h"
#include "workbenches/alignment/alignment_views.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {
using Method = attn::models::WordAttributionMethod;
// The box's entries after "None", in the session's names (attn::models::word_method_name).
constexpr Method kMethods[] = {Method::GradientXInput, Method::IntegratedGradients};
}  // namespace

void AttributionDisplay::build(QWidget* group, QFormLayout& form, AlignmentViews* views) {
  row_ = new QWidget(group);
  auto* layout = new QHBoxLayout(row_);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* label = new QLabel(QObject::tr("A&ttribution:"), row_);
  box_ = new QComboBox(row_);
  box_->setObjectName(u"alignmentAttribution"_s);
  box_->addItem(QObject::tr("None"));
  box_->addItem(QObject::tr("Gradient \u00d7 input"));
  box_->addItem(QObject::tr("Integrated gradients (%1 steps)").arg(kAlignmentAttributionSteps));
  box_->setToolTip(
      QObject::tr("Shade the words by how much the predicted label's logit depends on each (a backward pass through "
                  "the model): red for the label, blue against it"));
  label->setBuddy(box_);
  layout->addWidget(label);
  layout->addWidget(box_, 1);
  form.addRow(row_);
  row_->setVisible(false);
  QObject::connect(box_, &QComboBox::currentIndexChanged, views, &AlignmentViews::inputChanged);
  // The other kind's row in the group, when built: the two boxes show one choice (the session keeps one), and only
  // the one changed asks for a run.
  for (QComboBox* other : group->findChildren<QComboBox*>(box_->objectName())) {
    if (other == box_) continue;
    QObject::connect(box_, &QComboBox::currentIndexChanged, other, [other](int index) {
      const QSignalBlocker block(other);
      other->setCurrentIndex(index);
    });
    QObject::connect(other, &QComboBox::currentIndexChanged, box_, [box = box_](int index) {
      const QSignalBlocker block(box);
      box->setCurrentIndex(index);
    });
  }
}

void AttributionDisplay::setOpen(bool open) {
  open_ = open;
  row_->setVisible(open);
}

std::optional<Method> AttributionDisplay::method() const {
  const int index = box_->currentIndex();
  if (index < 1 || index > int(std::size(kMethods))) return std::nullopt;
  return kMethods[index - 1];
}

// Only the open kind's row: the other's box may not have followed a change yet (the run is asked for first).
void AttributionDisplay::addToRequest(AlignmentRequest& request) const {
  if (open_) request.attribution = method();
}

void AttributionDisplay::save(AlignmentSection& section) const {
  const auto m = method();
  section.attribution = m ? attn::models::word_method_name(*m) : std::string("none");
}

void AttributionDisplay::restore(const AlignmentSection& section) {
  const QSignalBlocker block(box_);  // the tab runs once every input is set
  int index = 0;
  for (std::size_t i = 0; i < std::size(kMethods); ++i) {
    if (attn::models::word_method_name(kMethods[i]) == section.attribution) index = int(i) + 1;
  }
  box_->setCurrentIndex(index);
}

render::AttributionShading attributionShading(const AlignmentOutcome& outcome) {
  render::AttributionShading shading;
  if (!outcome.request.attribution) return shading;
  shading.attribution = outcome.attribution;
  shading.method = *outcome.request.attribution;
  shading.steps = kAlignmentAttributionSteps;
  shading.note = outcome.attributionNote;
  return shading;
}

}  // namespace attn::ui
