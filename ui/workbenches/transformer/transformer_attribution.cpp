#include "workbenches/transformer/transformer_attribution.h"

#include "render/figure_export.h"
#include "render/heatmap_render.h"
#include "render/strings.h"
#include "views/export.h"
#include "views/figure_map_view.h"
#include "views/qcustomplot.h"
#include "views/token_strip_view.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/transformer/transformer_workbench.h"

#include "attn/text/tokenizer.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace am = attn::models;

namespace {

constexpr int kAttributionDebounceMs = 250;
constexpr int kAttributionFrameMs = 16;
constexpr int kAttributionTextRole = Qt::UserRole + 1;  // a target item's token text (empty: the default target)

QString attributionMethodTitle(am::AttributionMethod method) {
  switch (method) {
    case am::AttributionMethod::GradXInput: return QObject::tr("gradient \u00d7 input");
    case am::AttributionMethod::IntegratedGradients: return QObject::tr("integrated gradients");
    case am::AttributionMethod::AttnGrad: return QObject::tr("attention \u00d7 gradient");
    case am::AttributionMethod::AttnLrp: return QObject::tr("AttnLRP");
    case am::AttributionMethod::Rollout: return QObject::tr("rollout");
    case am::AttributionMethod::Flow: return QObject::tr("attention flow");
    case am::AttributionMethod::Attention: return QObject::tr("raw attention (last layer)");
    case am::AttributionMethod::Random: return QObject::tr("random (the floor)");
  }
  return {};
}

// What the gap of a method measures, for the value line's tool tip.
QString attributionGapMeaning() {
  return QObject::tr(
      "F is the explained scalar: the target token's logit (or log-probability) at the explained position.\n"
      "The gap checks the method's bookkeeping: integrated gradients' completeness gap is |\u03a3 scores \u2212 "
      "(F(input) \u2212 F(baseline))|, AttnLRP's conservation gap |\u03a3 scores \u2212 F|. Near 0: the scores "
      "add up to what they explain (more steps close integrated gradients' gap). The other methods promise no sum.");
}

std::string attributionJobKey(const AttributionJob& job) {
  std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(job.model.get())) + "/" +
                    std::to_string(reinterpret_cast<std::uintptr_t>(job.image.get()));
  for (int id : job.ids) key += "," + std::to_string(id);
  key += ";" + std::to_string(int(job.target.kind)) + "," + std::to_string(job.target.position) + "," +
         std::to_string(job.target.token) + "," + std::to_string(int(job.options.method)) + "," +
         std::to_string(job.options.steps) + "," + std::to_string(int(job.options.baseline));
  return key;
}

}  // namespace

AttributionPanel::AttributionPanel(TransformerWorkbench* workbench, QWidget* parent)
    : QWidget(parent), workbench_(workbench) {
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(kAttributionDebounceMs);
  connect(debounce_, &QTimer::timeout, this, [this] {
    if (isVisible()) run();
  });
  buildControls();
  connect(workbench_, &TransformerWorkbench::resultShown, this, [this] {
    fillTargets();
    schedule();
  });
  connect(workbench_, &TransformerWorkbench::selectionChanged, this, [this] { showAttention(); });
  connect(workbench_, &TransformerWorkbench::sourceLoaded, this, [this] {
    cancel();
    result_.reset();
    lastKey_.clear();
    showResult();
  });
  fillTargets();
  showResult();
}

AttributionPanel::~AttributionPanel() {
  if (cancel_) cancel_->store(true);
  if (thread_) thread_->wait();
}

void AttributionPanel::buildControls() {
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  methodBox_ = new QComboBox(this);
  for (const auto m : am::all_methods()) methodBox_->addItem(attributionMethodTitle(m), int(m));
  methodBox_->setToolTip(
      tr("gradient \u00d7 input: the embedding times dF/d(embedding), summed per token.\n"
         "integrated gradients: the same gradient averaged on the way from a baseline (zero or the pad token).\n"
         "attention \u00d7 gradient: each head's weights times their gradient (positive part), rolled out.\n"
         "AttnLRP: layer-wise relevance propagation with the attention rules of Achtibat et al. 2024.\n"
         "rollout, attention flow: the attention graph alone (Abnar and Zuidema 2020).\n"
         "raw attention (last layer, mean of heads) and random: the floors a method should beat."));
  tokenBox_ = new QComboBox(this);
  tokenBox_->setObjectName(u"attributionToken"_s);
  tokenBox_->setToolTip(
      tr("The explained token: a candidate of the prediction list (a generated step: the token "
         "the scrubber picks)."));
  kindBox_ = new QComboBox(this);
  kindBox_->addItems({tr("logit"), tr("log-probability")});
  auto* target = new QHBoxLayout;
  target->addWidget(tokenBox_, 1);
  target->addWidget(kindBox_);
  form->addRow(tr("Method:"), methodBox_);
  form->addRow(tr("Target:"), target);
  stepsSpin_ = new QSpinBox(this);
  stepsSpin_->setRange(1, am::kMaxSteps);
  stepsSpin_->setValue(32);
  baselineBox_ = new QComboBox(this);
  baselineBox_->addItems({tr("zero baseline"), tr("pad-token baseline")});
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  auto* row = new QHBoxLayout;
  row->addWidget(stepsSpin_);
  row->addWidget(baselineBox_);
  row->addWidget(progress_, 1);
  row->addWidget(cancelButton_);
  form->addRow(tr("IG steps:"), row);
  for (auto* box : {methodBox_, tokenBox_, kindBox_, baselineBox_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(6);
  }
  progress_->setMinimumWidth(40);
  layout->addLayout(form);
  value_ = new QLabel(this);
  value_->setWordWrap(true);
  value_->setToolTip(attributionGapMeaning());
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(value_);
  layout->addWidget(note_);
  layout->addWidget(buildFigures(), 1);
  const auto changed = [this] {
    updateControls();
    schedule();
  };
  connect(methodBox_, &QComboBox::currentIndexChanged, this, changed);
  connect(kindBox_, &QComboBox::currentIndexChanged, this, changed);
  connect(stepsSpin_, &QSpinBox::valueChanged, this, changed);
  connect(baselineBox_, &QComboBox::currentIndexChanged, this, changed);
  connect(tokenBox_, &QComboBox::activated, this, [this, changed] {
    wantedToken_ = tokenBox_->currentData(kAttributionTextRole).toString();
    changed();
  });
  connect(cancelButton_, &QPushButton::clicked, this, &AttributionPanel::cancel);
  updateControls();
}

QWidget* AttributionPanel::buildFigures() {
  figures_ = new QWidget(this);
  figures_->setAutoFillBackground(true);
  auto* layout = new QVBoxLayout(figures_);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* split = new QSplitter(Qt::Vertical, figures_);
  auto* texts = new QWidget(split);
  auto* textLayout = new QVBoxLayout(texts);
  textLayout->setContentsMargins(0, 0, 0, 0);
  scoresTitle_ = new QLabel(texts);
  scoresTitle_->setWordWrap(true);
  scores_ = new TokenStripView(texts);
  scores_->setObjectName(u"attributionScores"_s);
  scores_->setColormap(render::Colormap::RdBu);
  attentionTitle_ = new QLabel(texts);
  attentionTitle_->setWordWrap(true);
  attention_ = new TokenStripView(texts);
  attention_->setColormap(render::Colormap::Viridis);
  textLayout->addWidget(scoresTitle_);
  textLayout->addWidget(scores_, 1);
  textLayout->addWidget(attentionTitle_);
  textLayout->addWidget(attention_, 1);
  auto* plots = new QSplitter(Qt::Horizontal, split);
  layers_ = new FigureMapView(plots);
  layers_->setMinimumWidth(120);
  deletion_ = new Plot(plots);
  deletion_->setMinimumWidth(120);
  deletion_->addGraph();
  deletion_->graph(0)->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));
  deletion_->graph(0)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
  deletion_->yAxis->setRange(0, 1);
  deletion_->plotLayout()->insertRow(0);
  deletionTitle_ =
      new QCPTextElement(deletion_, tr("Deletion curve"), QFont(font().family(), font().pointSize(), QFont::Bold));
  deletion_->plotLayout()->addElement(0, 0, deletionTitle_);
  // The texts are a few lines (scrolling when longer); the figures below take the room.
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  plots->setSizes({1, 1});
  layout->addWidget(split);
  return figures_;
}

void AttributionPanel::updateControls() {
  const bool ig = method() == am::AttributionMethod::IntegratedGradients;
  stepsSpin_->setEnabled(ig);
  baselineBox_->setEnabled(ig);
  cancelButton_->setEnabled(isRunning());
}

void AttributionPanel::setMethod(am::AttributionMethod m) { methodBox_->setCurrentIndex(methodBox_->findData(int(m))); }
am::AttributionMethod AttributionPanel::method() const {
  return am::AttributionMethod(methodBox_->currentData().toInt());
}
void AttributionPanel::setKind(am::AttributionTarget::Kind k) {
  kindBox_->setCurrentIndex(k == am::AttributionTarget::Kind::LogProb ? 1 : 0);
}
am::AttributionTarget::Kind AttributionPanel::kind() const {
  return kindBox_->currentIndex() == 1 ? am::AttributionTarget::Kind::LogProb : am::AttributionTarget::Kind::Logit;
}
void AttributionPanel::setSteps(int steps) { stepsSpin_->setValue(steps); }
int AttributionPanel::steps() const { return stepsSpin_->value(); }
void AttributionPanel::setBaseline(am::AttributeOptions::Baseline b) {
  baselineBox_->setCurrentIndex(b == am::AttributeOptions::Baseline::Pad ? 1 : 0);
}
am::AttributeOptions::Baseline AttributionPanel::baseline() const {
  return baselineBox_->currentIndex() == 1 ? am::AttributeOptions::Baseline::Pad : am::AttributeOptions::Baseline::Zero;
}

void AttributionPanel::setTargetToken(const QString& text) {
  wantedToken_ = text;
  fillTargets();
  schedule();
}
QString AttributionPanel::targetToken() const { return wantedToken_; }

void AttributionPanel::schedule() {
  if (!isVisible()) {
    stale_ = true;
    return;
  }
  debounce_->start();
}

void AttributionPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) {
    stale_ = false;
    debounce_->start();
  }
}

// The candidates at the explained position: a generated step's (the generated token first), or the prediction list's
// at the family's own position (a causal model's last token, BERT's first [MASK]), the top prediction first.
void AttributionPanel::fillTargets() {
  const QSignalBlocker block(tokenBox_);
  tokenBox_->clear();
  const auto* outcome = workbench_->outcome();
  const auto* source = workbench_->source();
  const bool text = source && source->model && source->model->tokenizer() && !source->isVision();
  if (!outcome || !outcome->run || !text) {
    tokenBox_->addItem(source && source->isVision() ? tr("top class") : tr("top prediction"), -1);
    tokenBox_->setItemData(0, QString(), kAttributionTextRole);
    return;
  }
  const auto& run = outcome->plainRun ? *outcome->plainRun : *outcome->run;
  const auto* tokenizer = source->model->tokenizer();
  const int generated = run.prompt_tokens > 0 ? int(run.ids.size()) - run.prompt_tokens : 0;
  const am::Prediction* prediction = nullptr;
  if (generated > 0) {
    const int step = std::clamp(outcome->request.step.value_or(generated - 1), 0, generated - 1);
    const int id = run.ids[std::size_t(run.prompt_tokens + step)];
    tokenBox_->addItem(
        tr("generated \u201c%1\u201d (step %2)").arg(render::tokenLabel(tokenizer->display(id))).arg(step), id);
    if (std::size_t(step) < run.step_predictions.size()) prediction = &run.step_predictions[std::size_t(step)];
  } else {
    tokenBox_->addItem(tr("top prediction"), -1);
    if (!run.predictions.empty())
      prediction = source->model->config().causal() ? &run.predictions.back() : &run.predictions.front();
  }
  tokenBox_->setItemData(0, QString(), kAttributionTextRole);
  if (prediction) {
    for (const auto& c : prediction->top) {
      tokenBox_->addItem(u"\u201c%1\u201d  %2%"_s.arg(render::tokenLabel(c.text)).arg(100.0 * c.probability, 0, 'f', 1),
                         c.id);
      tokenBox_->setItemData(tokenBox_->count() - 1, fromStd(c.text), kAttributionTextRole);
    }
  }
  if (wantedToken_.isEmpty()) return;
  int at = tokenBox_->findData(wantedToken_, kAttributionTextRole);
  if (at < 0) {
    // Any one token of the vocabulary may be explained, not only a candidate.
    const auto tokens = tokenizer->encode(wantedToken_.toStdString());
    if (!tokens || tokens->size() != 1) {
      note_->setText(tr("\u201c%1\u201d is not one token of this model: the top prediction is explained instead.")
                         .arg(wantedToken_));
      return;
    }
    tokenBox_->addItem(u"\u201c%1\u201d"_s.arg(render::tokenLabel(wantedToken_.toStdString())), tokens->front().id);
    at = tokenBox_->count() - 1;
    tokenBox_->setItemData(at, wantedToken_, kAttributionTextRole);
  }
  tokenBox_->setCurrentIndex(at);
}

std::optional<AttributionJob> AttributionPanel::makeJob(QString& why) const {
  const auto* source = workbench_->source();
  const auto* outcome = workbench_->outcome();
  if (!source || !source->model || !source->model->has_prediction_head()) {
    why =
        tr("Attribution explains a prediction: open a model with its output head (GPT-2, a decoder, BERT with its "
           "MLM head, a ViT classifier). An attention dump has no model to differentiate.");
    return std::nullopt;
  }
  if (!outcome || !outcome->run) {
    why = tr("Type a text (or open a photo) to explain the model's prediction.");
    return std::nullopt;
  }
  AttributionJob job;
  job.model = source->model;
  job.options.method = method();
  job.options.steps = steps();
  job.options.baseline = baseline();
  job.target.kind = kind();
  job.target.token = tokenBox_->currentData().toInt();
  const auto& run = outcome->plainRun ? *outcome->plainRun : *outcome->run;
  if (source->isVision()) {
    if (!outcome->request.image || !outcome->request.image->image) {
      why = tr("Open a photo to explain the ViT's class.");
      return std::nullopt;
    }
    job.image = outcome->request.image->image;
    return job;
  }
  job.ids = run.ids;
  job.type_ids = run.type_ids;
  if (run.prompt_tokens > 0 && run.ids.size() > std::size_t(run.prompt_tokens)) {
    // A generated step: the ids before its token, whose last position predicted it.
    const int generated = int(run.ids.size()) - run.prompt_tokens;
    const int step = std::clamp(outcome->request.step.value_or(generated - 1), 0, generated - 1);
    const std::size_t keep = std::size_t(run.prompt_tokens + step);
    job.ids.resize(keep);
    if (job.type_ids.size() > keep) job.type_ids.resize(keep);
    job.target.position = int(keep) - 1;
  }
  if (job.ids.empty()) {
    why = tr("Type a text to explain the model's prediction.");
    return std::nullopt;
  }
  return job;
}

bool AttributionPanel::run() {
  QString why;
  auto job = makeJob(why);
  if (!job) {
    note_->setText(why);
    emit finished(false);
    return false;
  }
  const std::string key = attributionJobKey(*job);
  if (isRunning()) {
    if (key == lastKey_) return true;  // that one is running
    again_ = true;                     // the newer request runs when the older has stopped
    cancel();
    return true;
  }
  if (key == lastKey_ && result_) {  // in view already: only what the tab says around it may have changed
    showResult();
    return true;
  }
  lastKey_ = key;
  const quint64 serial = ++serial_;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  progress_->setValue(0);
  note_->setText(tr("Computing %1\u2026").arg(attributionMethodTitle(job->options.method)));
  thread_ = QThread::create([this, job = std::move(*job), serial, cancel = cancel_, seen = workerThread_] {
    // A backward pass (32 of them for integrated gradients) and a curve of re-runs: the GUI keeps its frames.
    lowerThisThreadsPriority();
    seen->store(QThread::currentThreadId());
    QElapsedTimer sincePosted;
    sincePosted.start();
    const auto progress = [&](int done, int of) {
      if (sincePosted.elapsed() < kAttributionFrameMs && done < of) return;
      sincePosted.restart();
      QMetaObject::invokeMethod(
          this,
          [this, serial, done] {
            if (serial == serial_) progress_->setValue(done);
          },
          Qt::QueuedConnection);
    };
    auto result = computeAttribution(job, cancel.get(), progress);
    std::optional<AttributionResult> value;
    QString error;
    if (result)
      value = std::move(*result);
    else
      error = fromStd(result.error().message());
    QMetaObject::invokeMethod(
        this, [this, serial, value = std::move(value), error] { onEnded(serial, value, error); }, Qt::QueuedConnection);
  });
  connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
  thread_->start();
  updateControls();
  return true;
}

void AttributionPanel::cancel() {
  debounce_->stop();
  if (cancel_) cancel_->store(true);
}

void AttributionPanel::onEnded(quint64 serial, std::optional<AttributionResult> result, const QString& error) {
  // Each thread posts this once, right before it ends: wait for it so that a new one never overlaps it.
  if (thread_) thread_->wait();
  thread_ = nullptr;
  if (again_) {
    again_ = false;
    lastKey_.clear();
    updateControls();
    run();
    return;
  }
  if (serial != serial_) return;
  updateControls();
  if (!result) {
    lastKey_.clear();  // the same request may be asked again
    progress_->setValue(0);
    result_.reset();  // the scores in view were of another request
    showResult();
    note_->setText(error);
    emit finished(false);
    return;
  }
  result_ = std::move(result);
  showResult();
  emit finished(true);
}

void AttributionPanel::showResult() {
  if (!result_) {
    scores_->setTokens({});
    scores_->setValues({}, 1.0f, true);
    scoresTitle_->setText(
        tr("Scores: none yet. The view computes them while it is shown, for the prediction of the "
           "text (or photo) in the tab."));
    value_->clear();
    layers_->setFigure({});
    layers_->setEmptyText(tr("The per-layer relevance appears here."));
    showAttention();
    showDeletion();
    return;
  }
  const auto& a = result_->attribution;
  QStringList tokens;
  for (const auto& t : result_->tokens) tokens.append(render::tokenLabel(t, 24));
  float max = 0;
  for (float s : a.scores) max = std::max(max, std::isfinite(s) ? std::abs(s) : 0.0f);
  scores_->setTokens(tokens);
  scores_->setValues(a.scores, max > 0 ? max : 1.0f, true);
  scores_->setMarked(a.position);
  const auto* tokenizer =
      workbench_->source() && workbench_->source()->model ? workbench_->source()->model->tokenizer() : nullptr;
  const QString token =
      tokenizer ? render::tokenLabel(tokenizer->display(a.token)) : tr("class %1").arg(a.token);  // ViT: a class
  resultToken_ = u"\u201c%1\u201d"_s.arg(token);
  resultTarget_ = tr("%1 at position %2").arg(resultToken_).arg(a.position);
  scoresTitle_->setText(tr("<b>%1</b> for %2 (outlined): <span style='color:#b2182b'>red raises</span> F, "
                           "<span style='color:#2166ac'>blue lowers</span> it; colours span \u00b1%3")
                            .arg(attributionMethodTitle(a.method), resultTarget_.toHtmlEscaped())
                            .arg(double(max), 0, 'g', 3));
  const QString kindText = kind() == am::AttributionTarget::Kind::LogProb ? tr("log-probability") : tr("logit");
  QString line = tr("F = %1 (the %2 of %3) \u00b7 p = %4")
                     .arg(double(a.value), 0, 'g', 5)
                     .arg(kindText, resultTarget_)
                     .arg(result_->probability, 0, 'f', 3);
  if (std::isfinite(a.gap))
    line += tr(" \u00b7 gap %1 (%2 of |F|)")
                .arg(a.gap, 0, 'g', 3)
                .arg(a.value != 0 ? QString::number(100.0 * a.gap / std::abs(double(a.value)), 'f', 1) + u'%'
                                  : u"\u2013"_s);
  const auto time = [](double s) { return s < 1 ? u"%1 ms"_s.arg(1000 * s, 0, 'f', 1) : u"%1 s"_s.arg(s, 0, 'f', 2); };
  line += tr(" \u00b7 %1 (the method %2, its runs the rest)").arg(time(result_->seconds), time(a.seconds));
  value_->setText(line);
  QString note = fromStd(a.note);
  // The scores are of the model itself: an ablation in view changes the maps and predictions, not what is explained.
  if (!workbench_->ablatedHeads().empty())
    note += (note.isEmpty() ? QString() : u" \u00b7 "_s) + tr("of the model without the ablated heads");
  note_->setText(note);
  if (a.per_layer.size() > 0) {
    auto map = std::make_shared<attn::AttentionMap>();
    map->weights = a.per_layer;
    const bool rolled = a.method == am::AttributionMethod::AttnGrad;
    const Index rows = a.per_layer.rows();
    for (Index l = 0; l < rows; ++l)
      map->row_labels.push_back(rolled ? "\u2265" + std::to_string(l) : (l + 1 == rows ? "out" : std::to_string(l)));
    for (const auto& t : result_->tokens) map->col_labels.push_back(t);
    map->row_axis = rolled ? "rollout of layers \u2265 row" : "residual entering layer";
    map->col_axis = "token";
    map->quantity = "relevance";
    render::HeatmapFigure figure;
    figure.map = std::move(map);
    figure.colormap = render::Colormap::RdBu;
    figure.rangeMode = render::RangeMode::Symmetric;
    figure.title = tr("Per layer: %1").arg(attributionMethodTitle(a.method));
    layers_->setFigure(std::move(figure));
  } else {
    layers_->setFigure({});
    layers_->setEmptyText(tr("%1 has no per-layer view (gradient \u00d7 input, attention \u00d7 gradient and AttnLRP "
                             "have one).")
                              .arg(attributionMethodTitle(a.method)));
  }
  showAttention();
  showDeletion();
}

void AttributionPanel::showAttention() {
  const int layer = workbench_->layer(), head = workbench_->head();
  if (!result_ || result_->attentionRows.rows() == 0 || result_->heads == 0) {
    attention_->setTokens({});
    attention_->setValues({}, 1.0f);
    attentionTitle_->setText(result_ ? tr("Attention: this run keeps its attention on demand, not as maps.")
                                     : tr("Attention of the head in view: after the scores."));
    return;
  }
  const Index row = Index(layer) * result_->heads + head;
  if (row >= result_->attentionRows.rows()) return;
  std::vector<float> values(std::size_t(result_->attentionRows.cols()));
  float max = 0;
  for (Index k = 0; k < result_->attentionRows.cols(); ++k) {
    values[std::size_t(k)] = result_->attentionRows(row, k);
    max = std::max(max, values[std::size_t(k)]);
  }
  QStringList tokens;
  for (const auto& t : result_->tokens) tokens.append(render::tokenLabel(t, 24));
  attention_->setTokens(tokens);
  attention_->setValues(std::move(values), max > 0 ? max : 1.0f);
  attention_->setMarked(result_->attribution.position);
  attentionTitle_->setText(tr("<b>Attention</b> of layer %1 head %2 (the head in view) from position %3: viridis, "
                              "0 to %4")
                               .arg(layer)
                               .arg(head)
                               .arg(result_->attribution.position)
                               .arg(double(max), 0, 'g', 3));
}

void AttributionPanel::showDeletion() {
  auto* graph = deletion_->graph(0);
  const auto* curve = result_ && result_->deletion ? &*result_->deletion : nullptr;
  QVector<double> x, y;
  double top = 1e-6;
  if (curve) {
    for (std::size_t i = 0; i < curve->removed.size(); ++i) {
      x.append(curve->removed[i]);
      y.append(curve->probability[i]);
      top = std::max(top, curve->probability[i]);
    }
  }
  graph->setData(x, y);
  deletionTitle_->setText(curve ? tr("Deletion: top tokens %1").arg(fromStd(curve->how))
                                : (result_ ? tr("No deletion curve") : tr("Deletion curve")));
  deletion_->xAxis->setLabel(result_ && !curve ? fromStd(result_->deletionNote)
                                               : tr("tokens removed, top-ranked first"));
  deletion_->yAxis->setLabel(result_ ? tr("p(%1)").arg(resultToken_) : tr("probability"));
  deletion_->xAxis->setRange(0, x.isEmpty() ? 1.0 : std::max(1.0, x.back()));
  deletion_->yAxis->setRange(0, curve ? std::min(1.0, top * 1.1) : 1.0);
  deletion_->replot();
}

attn::Result<void> AttributionPanel::exportTo(const QString& path) const {
  if (!result_) return attn::fail(attn::ErrorKind::Unsupported, "export: no attribution to export");
  if (path.endsWith(u".csv"_s, Qt::CaseInsensitive)) {
    QByteArray csv = "index,token,score\r\n";
    const auto& scores = result_->attribution.scores;
    for (std::size_t i = 0; i < scores.size(); ++i) {
      const std::string token = i < result_->tokens.size() ? result_->tokens[i] : std::string();
      csv += QByteArray::number(qulonglong(i)) + ',' + csvField(token) + ',' +
             QByteArray::number(double(scores[i]), 'g', 9) + "\r\n";
    }
    return writeExport(path, csv);
  }
  return exportWidget(*figures_, path);
}

void AttributionPanel::saveTo(AttributionState& state) const {
  state.method = am::method_name(method());
  state.kind = kind() == am::AttributionTarget::Kind::LogProb ? "logprob" : "logit";
  state.token = targetToken().toStdString();
  state.steps = steps();
  state.baseline = baseline() == am::AttributeOptions::Baseline::Pad ? "pad" : "zero";
}

void AttributionPanel::restoreFrom(const AttributionState& state) {
  const QSignalBlocker a(methodBox_), b(kindBox_), c(stepsSpin_), d(baselineBox_);
  if (const auto m = am::parse_method(state.method)) setMethod(*m);
  setKind(state.kind == "logprob" ? am::AttributionTarget::Kind::LogProb : am::AttributionTarget::Kind::Logit);
  setSteps(std::clamp(state.steps, 1, am::kMaxSteps));
  setBaseline(state.baseline == "pad" ? am::AttributeOptions::Baseline::Pad : am::AttributeOptions::Baseline::Zero);
  updateControls();
  setTargetToken(QString::fromStdString(state.token));
}

}  // namespace attn::ui
