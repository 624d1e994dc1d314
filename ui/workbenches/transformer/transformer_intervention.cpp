// The Transformer tab's interventions: head ablation (the model view's Ctrl+click, context menu, A and Escape; the
// Intervene group's mode and Restore) and Compare (a second input; both maps side by side or B - A). The runs are the
// worker's (transformer_intervention_worker.cpp); this draws what they return.
#include "workbenches/transformer/transformer_workbench.h"

#include "models/head_stats_model.h"
#include "render/strings.h"
#include "views/head_grid_view.h"
#include "views/heatmap_view.h"
#include "views/token_lines_view.h"
#include "workbenches/transformer/transformer_patching.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QStandardItemModel>

#include <algorithm>
#include <cmath>
#include <optional>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

using attn::models::AblationMode;
using attn::models::HeadRef;

QString headNames(const std::vector<HeadRef>& heads) {
  QStringList names;
  for (const auto& h : heads) names.append(u"%1.%2"_s.arg(h.layer).arg(h.head));
  return names.join(u", "_s);
}

// The probability of token `id` at `position` (softmax of the run's logits row there), or the candidate's own.
std::optional<double> probability(const attn::models::TransformerRun& run, int position, int id) {
  for (const auto& p : run.predictions) {
    if (p.position != position) continue;
    for (const auto& c : p.top) {
      if (c.id == id) return double(c.probability);
    }
  }
  const auto row = position - run.logits_from;
  if (row < 0 || row >= run.logits.rows() || id < 0 || id >= run.logits.cols()) return std::nullopt;
  // The engine's log-softmax (attn/models/intervention.h), as the Patching view's logprob metric.
  const attn::RowVector logits = run.logits.row(row);
  return std::exp(attn::models::metric_value({attn::models::Metric::LogProb, id, -1}, logits, logits));
}

// B - A cell by cell (the same shape), labelled by A's tokens, "a→b" where the two differ.
std::shared_ptr<const attn::AttentionMap> difference(const attn::AttentionMap& a, const attn::AttentionMap& b) {
  auto map = std::make_shared<attn::AttentionMap>(a);
  map->name = "B - A";
  map->quantity = "B - A";
  map->weights = b.weights - a.weights;
  const auto merge = [](attn::Labels& into, const attn::Labels& other) {
    for (std::size_t i = 0; i < into.size() && i < other.size(); ++i) {
      if (into[i] != other[i]) into[i] += "\u2192" + other[i];
    }
  };
  merge(map->row_labels, b.row_labels);
  merge(map->col_labels, b.col_labels);
  return map;
}

}  // namespace

QGroupBox* TransformerWorkbench::buildInterventionGroup(QWidget* panel) {
  auto* group = new QGroupBox(tr("Intervene"), panel);
  group->setObjectName(u"interveneGroup"_s);
  auto* form = new QFormLayout(group);
  ablationModeBox_ = new QComboBox(group);
  ablationModeBox_->setObjectName(u"ablationMode"_s);
  ablationModeBox_->addItem(tr("zero"), int(AblationMode::Zero));
  ablationModeBox_->addItem(tr("mean over positions"), int(AblationMode::Mean));
  ablationModeBox_->addItem(tr("resample from B"), int(AblationMode::Resample));
  ablationModeBox_->setToolTip(
      tr("What an ablated head's output (z = A V, before the output projection) becomes at "
         "every position. Ctrl+click a head in the model view (or its context menu, or A "
         "on the selected tile) to ablate it; Escape there restores every head."));
  form->addRow(tr("Ablate heads:"), ablationModeBox_);
  restoreButton_ = new QPushButton(tr("Restore all heads"), group);
  restoreButton_->setObjectName(u"restoreHeads"_s);
  form->addRow(restoreButton_);
  compareCheck_ = new QCheckBox(tr("Compare with:"), group);
  compareCheck_->setObjectName(u"compareCheck"_s);
  compareEdit_ = new QLineEdit(group);
  compareEdit_->setObjectName(u"compareEdit"_s);
  compareEdit_->setPlaceholderText(tr("a second input (B, the corrupted one)"));
  form->addRow(compareCheck_, compareEdit_);
  compareShowBox_ = new QComboBox(group);
  compareShowBox_->setObjectName(u"compareShow"_s);
  compareShowBox_->addItem(tr("difference B \u2212 A"), int(CompareShow::Difference));
  compareShowBox_->addItem(tr("side by side"), int(CompareShow::SideBySide));
  compareShowBox_->setToolTip(tr("B \u2212 A: red where B attends more, blue where less, white where equal"));
  form->addRow(tr("Show:"), compareShowBox_);
  interventionNote_ = new QLabel(group);
  interventionNote_->setObjectName(u"interventionNote"_s);
  interventionNote_->setWordWrap(true);
  interventionNote_->setTextFormat(Qt::PlainText);
  interventionNote_->hide();
  form->addRow(interventionNote_);

  connect(ablationModeBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (!ablated_.empty()) post();
  });
  connect(restoreButton_, &QPushButton::clicked, this, &TransformerWorkbench::restoreHeads);
  connect(compareCheck_, &QCheckBox::toggled, this, [this] {
    updateMatrix();
    post();
  });
  connect(compareEdit_, &QLineEdit::textChanged, this, [this] {
    if (compareCheck_->isChecked()) post();
  });
  connect(compareShowBox_, &QComboBox::currentIndexChanged, this, &TransformerWorkbench::updateMatrix);
  return group;
}

QWidget* TransformerWorkbench::buildComparePane(QWidget* parent, QWidget* matrix) {
  comparePane_ = new QWidget(parent);
  auto* row = new QHBoxLayout(comparePane_);
  row->setContentsMargins(0, 0, 0, 0);
  matrix->setParent(comparePane_);
  row->addWidget(matrix, 1);
  compareHeatmap_ = new HeatmapView(HeatmapView::Style::Full, comparePane_);
  compareHeatmap_->setObjectName(u"compareHeatmap"_s);
  compareHeatmap_->hide();
  row->addWidget(compareHeatmap_, 1);
  connect(headGrid_, &HeadGridView::ablationToggled, this, &TransformerWorkbench::toggleAblation);
  connect(headGrid_, &HeadGridView::restoreRequested, this, &TransformerWorkbench::restoreHeads);
  return comparePane_;
}

void TransformerWorkbench::toggleAblation(int layer, int head) {
  const HeadRef ref{layer, head};
  auto heads = ablated_;
  const auto at = std::find(heads.begin(), heads.end(), ref);
  if (at != heads.end()) {
    heads.erase(at);
  } else {
    heads.push_back(ref);
  }
  setAblatedHeads(std::move(heads));
}

void TransformerWorkbench::setAblatedHeads(std::vector<HeadRef> heads) {
  std::sort(heads.begin(), heads.end(),
            [](const HeadRef& a, const HeadRef& b) { return std::pair(a.layer, a.head) < std::pair(b.layer, b.head); });
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  if (heads == ablated_) return;
  ablated_ = std::move(heads);
  updateMatrix();  // the outlines and the controls now; the maps with the run
  post();
}

void TransformerWorkbench::restoreHeads() { setAblatedHeads({}); }

void TransformerWorkbench::setAblationMode(AblationMode mode) {
  ablationModeBox_->setCurrentIndex(std::max(0, ablationModeBox_->findData(int(mode))));
}

AblationMode TransformerWorkbench::ablationMode() const {
  return AblationMode(ablationModeBox_->currentData().toInt());
}

void TransformerWorkbench::setCompare(bool on, const QString& text) {
  {
    const QSignalBlocker block(compareEdit_);
    compareEdit_->setText(text);
  }
  patching_->syncCorruptText();
  if (compareCheck_->isChecked() != on) {
    compareCheck_->setChecked(on);  // runs
  } else if (on) {
    post();
  }
}

bool TransformerWorkbench::isComparing() const { return compareCheck_->isChecked(); }
QString TransformerWorkbench::compareText() const { return compareEdit_->text(); }

void TransformerWorkbench::setCompareShow(CompareShow show) {
  compareShowBox_->setCurrentIndex(std::max(0, compareShowBox_->findData(int(show))));
}

TransformerWorkbench::CompareShow TransformerWorkbench::compareShow() const {
  return CompareShow(compareShowBox_->currentData().toInt());
}

void TransformerWorkbench::fillIntervention(TransformerRequest& request) const {
  if (!source_ || !source_->model || source_->isVision() || request.generation) return;
  request.ablated = ablated_;
  request.ablationMode = ablationMode();
  if (compareCheck_->isChecked()) request.compare = compareEdit_->text().toStdString();
  if (!ablated_.empty()) request.previewLayer = -1;  // the plain run's layer would flash before the ablated one
}

void TransformerWorkbench::updateInterventionViews() {
  if (!compareCheck_ || !compareHeatmap_) return;  // still building
  const bool comparing = compareCheck_->isChecked();
  std::vector<QPoint> outlined;
  for (const auto& h : ablated_) outlined.emplace_back(h.head, h.layer);
  tokenLines_->setAblatedHeads(outlined);
  statsModel_->setAblated(outlined);
  headGrid_->setAblated(std::move(outlined));
  restoreButton_->setEnabled(!ablated_.empty());
  compareEdit_->setEnabled(comparing);
  compareShowBox_->setEnabled(comparing);
  if (auto* items = qobject_cast<QStandardItemModel*>(ablationModeBox_->model())) {
    auto* resample = items->item(ablationModeBox_->findData(int(AblationMode::Resample)));
    resample->setEnabled(comparing);
    resample->setToolTip(comparing ? tr("each ablated head's output taken from B's run (the same token count)")
                                   : tr("resample takes the Compare input's run: turn Compare on first"));
  }
  QStringList notes;
  if (outcome_ && !outcome_->interventionError.isEmpty()) notes.append(outcome_->interventionError);
  if ((!ablated_.empty() || comparing) && source_ && (!source_->model || source_->isVision())) {
    notes.append(source_->model ? tr("ablation and Compare run on text models: this ViT's run is shown as it is")
                                : tr("a dump holds attention only: nothing can be ablated or compared"));
  } else if ((!ablated_.empty() || comparing) && outcome_ && outcome_->request.generation) {
    notes.append(tr("a generated run is shown without ablation or Compare: change the text to run them"));
  }
  const bool wasDifference = differenceShown_;
  differenceShown_ = false;
  bool sideBySide = false;
  if (outcome_ && outcome_->plainRun && !outcome_->request.ablated.empty()) {
    matrixTitle_->setText(matrixTitle_->text() + tr(" \u00b7 ablated (%1): %2")
                                                     .arg(ablationModeBox_->itemText(ablationModeBox_->findData(
                                                         int(outcome_->request.ablationMode))))
                                                     .arg(headNames(outcome_->request.ablated)));
  }
  if (comparing && outcome_ && outcome_->compareRun && matrixMap_ && matrixMode() != MatrixMode::Rollout &&
      !isOnDemand()) {
    const auto& compare = *outcome_->compareRun;
    const auto b = compare.attention.map(outcome_->stage, layer_, matrixMode() == MatrixMode::Head ? head_ : -1,
                                         HeatmapView::kMaxCellsPerSide);
    const auto nA = outcome_->run->attention.tokens.size(), nB = compare.attention.tokens.size();
    if (!b) {
      notes.append(tr("B's run has no layer %1").arg(layer_));
    } else if (compareShow() == CompareShow::Difference && nA == nB &&
               b->weights.rows() == matrixMap_->weights.rows() && b->weights.cols() == matrixMap_->weights.cols()) {
      matrixMap_ = difference(*matrixMap_, *b);
      heatmap_->setColormap(render::Colormap::RdBu);
      heatmap_->setRangeMode(render::RangeMode::Symmetric);
      heatmap_->setMap(matrixMap_);
      differenceShown_ = true;
      matrixTitle_->setText(matrixTitle_->text() + tr(" \u00b7 B \u2212 A (red: B attends more, blue: less)"));
    } else {
      compareHeatmap_->setColormap(colormap_);
      compareHeatmap_->setMap(b);
      sideBySide = true;
      matrixTitle_->setText(matrixTitle_->text() + tr(" \u00b7 left A, right B"));
      if (nA != nB) notes.append(tr("A is %1 tokens, B is %2: the maps cannot be aligned by position").arg(nA).arg(nB));
    }
  } else if (comparing && matrixMode() == MatrixMode::Rollout) {
    notes.append(tr("Compare shows a head or a layer's mean, not the rollout"));
  }
  if (wasDifference && !differenceShown_) {
    heatmap_->setColormap(colormap_);
    heatmap_->setRangeMode(render::RangeMode::Data);
  }
  compareHeatmap_->setVisible(sideBySide);
  interventionNote_->setText(notes.join(u"\n"_s));
  interventionNote_->setVisible(!notes.isEmpty());
}

bool TransformerWorkbench::updateInterventionPredictions() {
  if (!outcome_ || (!outcome_->plainRun && !outcome_->compareRun) || !outcome_->run->labels.empty()) return false;
  const auto& run = *outcome_->run;
  const auto header = [this](const QString& text) {
    auto* item = new QListWidgetItem(text, predictions_);
    QFont font = item->font();
    font.setBold(true);
    item->setFont(font);
  };
  // Monospaced, so that the columns (before and after, A and B) line up.
  const auto line = [this](const QString& text) {
    auto* item = new QListWidgetItem(text, predictions_);
    item->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return item;
  };
  const auto number = [](std::optional<double> p) { return p ? QString::number(*p, 'f', 3) : u"?"_s; };
  if (outcome_->plainRun) {
    const auto& plain = *outcome_->plainRun;
    for (const auto& before : plain.predictions) {
      header(tr("position %1: without \u2192 with the ablation").arg(before.position));
      std::vector<std::pair<int, std::string>> tokens;  // the plain run's top, then the ablated run's new ones
      const auto add = [&](const attn::models::Prediction& p) {
        for (const auto& c : p.top) {
          if (std::none_of(tokens.begin(), tokens.end(), [&](const auto& t) { return t.first == c.id; })) {
            tokens.emplace_back(c.id, c.text);
          }
        }
      };
      add(before);
      for (const auto& p : run.predictions) {
        if (p.position == before.position) add(p);
      }
      for (const auto& [id, text] : tokens) {
        const auto p0 = probability(plain, before.position, id), p1 = probability(run, before.position, id);
        line(u"%1 %2 \u2192 %3  (%4)"_s.arg(render::tokenLabel(text, 12).leftJustified(6))
                 .arg(number(p0), number(p1))
                 .arg(p0 && p1 ? QString::asprintf("%+.3f", *p1 - *p0) : QString()));
      }
    }
  }
  if (outcome_->compareRun) {
    const auto& b = *outcome_->compareRun;
    const std::size_t n = std::max(run.predictions.size(), b.predictions.size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto* pa = i < run.predictions.size() ? &run.predictions[i] : nullptr;
      const auto* pb = i < b.predictions.size() ? &b.predictions[i] : nullptr;
      const auto at = [](const attn::models::Prediction* p) { return p ? QString::number(p->position) : u"-"_s; };
      auto* top = line(u"%1 \u2502 %2"_s.arg(tr("A at %1").arg(at(pa)).leftJustified(14), tr("B at %1").arg(at(pb))));
      QFont font = top->font();
      font.setBold(true);
      top->setFont(font);
      const std::size_t rows = std::max(pa ? pa->top.size() : 0, pb ? pb->top.size() : 0);
      const auto cell = [](const attn::models::Prediction* p, std::size_t r) {
        if (!p || r >= p->top.size()) return QString();
        return u"%1 %2"_s.arg(render::tokenLabel(p->top[r].text, 12).leftJustified(6))
            .arg(double(p->top[r].probability), 0, 'f', 3);
      };
      for (std::size_t r = 0; r < rows; ++r) {
        line(u"%1 \u2502 %2"_s.arg(cell(pa, r).leftJustified(14), cell(pb, r)));
      }
    }
  }
  return predictions_->count() > 0;
}

void TransformerWorkbench::saveInterventionState(attn::ui::TransformerSection& state) const {
  using Section = attn::ui::TransformerSection;
  QStringList heads;
  for (const auto& h : ablated_) heads.append(u"%1.%2"_s.arg(h.layer).arg(h.head));
  state.ablated = heads.join(u","_s).toStdString();
  switch (ablationMode()) {
    case AblationMode::Zero: state.ablation = Section::Ablation::Zero; break;
    case AblationMode::Mean: state.ablation = Section::Ablation::Mean; break;
    case AblationMode::Resample: state.ablation = Section::Ablation::Resample; break;
  }
  state.compare = isComparing();
  state.compare_text = compareText().toStdString();
  state.compare_show =
      compareShow() == CompareShow::SideBySide ? Section::CompareShow::SideBySide : Section::CompareShow::Difference;
}

// Before the run applyState posts: the widgets set without running; heads the model does not have are refused by the
// run (the Intervene group says which).
void TransformerWorkbench::applyInterventionState(const attn::ui::TransformerSection& state) {
  using Section = attn::ui::TransformerSection;
  const QSignalBlocker a(ablationModeBox_), b(compareCheck_), c(compareEdit_), d(compareShowBox_);
  setAblationMode(state.ablation == Section::Ablation::Mean       ? AblationMode::Mean
                  : state.ablation == Section::Ablation::Resample ? AblationMode::Resample
                                                                  : AblationMode::Zero);
  compareCheck_->setChecked(state.compare);
  compareEdit_->setText(patching_->restoredCorrupt(state));  // B is also the Patching view's corrupted input
  patching_->syncCorruptText();
  setCompareShow(state.compare_show == Section::CompareShow::SideBySide ? CompareShow::SideBySide
                                                                        : CompareShow::Difference);
  std::vector<HeadRef> heads;
  for (const QString& item : QString::fromStdString(state.ablated).split(u',', Qt::SkipEmptyParts)) {
    const QStringList parts = item.trimmed().split(u'.');
    bool okLayer = false, okHead = false;
    const int layer = parts.size() == 2 ? parts[0].toInt(&okLayer) : -1;
    const int head = parts.size() == 2 ? parts[1].toInt(&okHead) : -1;
    if (okLayer && okHead && layer >= 0 && head >= 0) heads.push_back({layer, head});
  }
  std::sort(heads.begin(), heads.end(),
            [](const HeadRef& x, const HeadRef& y) { return std::pair(x.layer, x.head) < std::pair(y.layer, y.head); });
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  ablated_ = std::move(heads);
  updateMatrix();
}

}  // namespace attn::ui
