#include "workbenches/transformer/transformer_patching.h"

#include "render/causal_figures.h"
#include "render/figure_export.h"
#include "render/strings.h"
#include "session/transformer_section.h"
#include "views/figure_map_view.h"
#include "workbenches/common/worker_thread.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace am = attn::models;

namespace {

constexpr am::Metric kMetrics[] = {am::Metric::LogitDiff, am::Metric::LogProb, am::Metric::Logit, am::Metric::KL};
constexpr am::Sweep kSweeps[] = {am::Sweep::Heads, am::Sweep::LayersPositions, am::Sweep::HeadsPositions};
constexpr int kFrameMs = 16;  // partial results are drawn at most this often

// What the worker thread needs, copied from the GUI thread before it starts.
struct SweepJob {
  std::shared_ptr<const am::TransformerModel> model;
  std::string clean, corrupt;
  am::MetricSpec metric;
  am::Sweep sweep = am::Sweep::Heads;
};

// The measured position of a text run: the last token (causal) or the first [MASK] (BERT, DistilBERT).
std::optional<int> measuredPosition(const am::TransformerModel& model, const am::TransformerRun& run) {
  const int n = int(run.attention.tokens.size());
  if (model.config().causal()) return n - 1;
  const auto* tokenizer = model.tokenizer();
  if (tokenizer && tokenizer->specials().mask) {
    const auto mask = std::find(run.ids.begin(), run.ids.end(), *tokenizer->specials().mask);
    if (mask != run.ids.end()) return int(mask - run.ids.begin());
  }
  return std::nullopt;
}

attn::Result<am::TransformerRun> runText(am::TransformerRunner& runner, const std::string& text, int position) {
  am::RunOptions options;
  options.capture = true;
  options.top_k = 0;
  options.logits_position = position;
  return runner.run_text(text, {}, options);
}

}  // namespace

PatchingPanel::PatchingPanel(TransformerWorkbench* workbench, QWidget* parent)
    : QWidget(parent), workbench_(workbench) {
  buildControls();
  connect(view_, &FigureMapView::cellClicked, this, &PatchingPanel::openCell);
  // One corrupted input (B): the line here shows the Intervene group's Compare box and writes into it.
  connect(workbench_->compareEdit(), &QLineEdit::textChanged, this, &PatchingPanel::syncCorruptText);
  connect(corruptEdit_, &QLineEdit::textEdited, this,
          [this](const QString& text) { workbench_->compareEdit()->setText(text); });
  syncCorruptText();
  view_->setToolTipText([this](int row, int column) { return cellText(row, column); });
  // Another model: its heads and tokens are not the sweep's, so the sweep in view goes.
  connect(workbench_, &TransformerWorkbench::sourceLoaded, this, [this] {
    if (workbench_->sourceKey() == resultSource_) return;
    cancel();
    ++serial_;
    if (thread_) thread_->wait();
    thread_ = nullptr;
    result_.reset();
    view_->setFigure({});
    note_->clear();
    updateControls();
  });
  // The prediction list offers its tokens as the answer and the wrong token.
  auto* list = workbench_->predictions();
  list->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(list, &QListWidget::customContextMenuRequested, this, [this, list](const QPoint& at) {
    auto* item = list->itemAt(at);
    if (!item || item->data(Qt::UserRole).toString().isEmpty()) return;
    list->setCurrentItem(item);
    QMenu menu;
    menu.addAction(tr("Use as answer (Patching)"), this, [this] { useFromPredictions(true); });
    menu.addAction(tr("Use as wrong (Patching)"), this, [this] { useFromPredictions(false); });
    menu.exec(list->viewport()->mapToGlobal(at));
  });
  updateControls();
}

PatchingPanel::~PatchingPanel() {
  if (cancel_) cancel_->store(true);
  if (thread_) thread_->wait();
}

void PatchingPanel::buildControls() {
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  corruptEdit_ = new QLineEdit(this);
  corruptEdit_->setObjectName(u"patchingCorrupt"_s);
  corruptEdit_->setPlaceholderText(tr("B, the corrupted input: the same number of tokens as the text (A)"));
  corruptEdit_->setToolTip(
      tr("The corrupted input is the Compare box's (B, in the Intervene group): typing here types there, and a "
         "click on a cell of the sweep shows that head's map of A and B side by side."));
  form->addRow(tr("Corrupted (B):"), corruptEdit_);  // short: the tab's minimum width is 1024
  auto* row = new QHBoxLayout;
  metricBox_ = new QComboBox(this);
  metricBox_->addItems({tr("logit difference"), tr("log-probability"), tr("logit"), tr("KL divergence")});
  answerEdit_ = new QLineEdit(this);
  answerEdit_->setPlaceholderText(tr("answer token"));
  wrongEdit_ = new QLineEdit(this);
  wrongEdit_->setPlaceholderText(tr("wrong token"));
  form->addRow(tr("Metric:"), metricBox_);
  row->addWidget(answerEdit_);
  row->addWidget(new QLabel(tr("wrong"), this));
  row->addWidget(wrongEdit_);
  form->addRow(tr("Answer:"), row);
  auto* runRow = new QHBoxLayout;
  sweepBox_ = new QComboBox(this);
  sweepBox_->addItems({tr("every head"), tr("layers \u00d7 positions (residual)"), tr("heads \u00d7 positions")});
  runButton_ = new QPushButton(tr("Run sweep"), this);
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  exportButton_ = new QPushButton(tr("Export\u2026"), this);
  progress_ = new QProgressBar(this);
  progress_->setTextVisible(true);
  runRow->addWidget(sweepBox_);
  runRow->addWidget(runButton_);
  runRow->addWidget(cancelButton_);
  form->addRow(tr("Sweep:"), runRow);
  auto* progressRow = new QHBoxLayout;
  progressRow->addWidget(progress_, 1);
  progressRow->addWidget(exportButton_);
  form->addRow(QString(), progressRow);
  // The tab keeps its narrow minimum width (every statistics column visible at 1024 px): the boxes may shrink.
  for (auto* box : {metricBox_, sweepBox_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(6);
  }
  for (auto* edit : {corruptEdit_, answerEdit_, wrongEdit_}) edit->setMinimumWidth(40);
  progress_->setMinimumWidth(60);
  layout->addLayout(form);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(note_);
  view_ = new FigureMapView(this);
  view_->setEmptyText(
      tr("Activation patching runs the corrupted input with one activation taken from the clean run (the text "
         "above) and measures how much of the clean metric comes back: 1 = all of it, 0 = none.\nType a corrupted "
         "input of the same token count, an answer and a wrong token (or right-click a prediction), and Run."));
  layout->addWidget(view_, 1);
  connect(metricBox_, &QComboBox::currentIndexChanged, this, [this] { updateControls(); });
  connect(runButton_, &QPushButton::clicked, this, [this] { run(); });
  connect(cancelButton_, &QPushButton::clicked, this, &PatchingPanel::cancel);
  connect(exportButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Patching"), u"patching.png"_s,
                                                      tr("Pictures and tables (*.png *.svg *.pdf *.csv)"));
    if (path.isEmpty()) return;
    if (auto written = exportTo(path); !written) note_->setText(fromStd(written.error().message()));
  });
}

void PatchingPanel::updateControls() {
  const auto kind = metric();
  answerEdit_->setEnabled(kind != am::Metric::KL);
  wrongEdit_->setEnabled(kind == am::Metric::LogitDiff);
  runButton_->setEnabled(!isRunning());
  cancelButton_->setEnabled(isRunning());
  exportButton_->setEnabled(result_.has_value());
}

void PatchingPanel::setCorruptText(const QString& text) { workbench_->compareEdit()->setText(text); }
QString PatchingPanel::corruptText() const { return workbench_->compareText(); }

void PatchingPanel::syncCorruptText() {
  // Only when it differs: setting the text a user is typing would move the cursor to its end.
  if (corruptEdit_->text() != workbench_->compareText()) corruptEdit_->setText(workbench_->compareText());
}

QString PatchingPanel::restoredCorrupt(const TransformerSection& state) {
  const QString compare = QString::fromStdString(state.compare_text);
  const QString patching = QString::fromStdString(state.causal.corrupt);
  if (patching.isEmpty() || patching == compare) return compare;
  if (compare.isEmpty()) return patching;
  const QString box = tr("the Compare box\u2019s"), sweep = tr("the Patching view\u2019s");
  note_->setText(tr("This session had two second inputs: %1 \u201c%2\u201d, kept as B (the one corrupted input of "
                    "Compare and Patching), and %3 \u201c%4\u201d.")
                     .arg(state.compare ? box : sweep, state.compare ? compare : patching)
                     .arg(state.compare ? sweep : box, state.compare ? patching : compare));
  return state.compare ? compare : patching;
}

void PatchingPanel::openCell(int row, int column) {
  if (!result_) return;
  const auto cell = render::sweepCellAt(*result_, row, column);
  // The matrix beside the tabs shows the cell's head of A and of B side by side (a layers x positions cell: its layer,
  // with the head in view). The sweep stays in view, to click the next cell, and stays what File > Export View writes.
  using Workbench = TransformerWorkbench;
  workbench_->setMatrixMode(Workbench::MatrixMode::Head);
  workbench_->setCompareShow(Workbench::CompareShow::SideBySide);
  if (cell.head >= 0)
    workbench_->openHead(cell.layer, cell.head);
  else
    workbench_->selectHead(cell.layer, workbench_->head());
  if (!workbench_->isComparing()) workbench_->setCompare(true, corruptText());
}
void PatchingPanel::setAnswer(const QString& text) { answerEdit_->setText(text); }
void PatchingPanel::setWrong(const QString& text) { wrongEdit_->setText(text); }
QString PatchingPanel::answer() const { return answerEdit_->text(); }
QString PatchingPanel::wrong() const { return wrongEdit_->text(); }

void PatchingPanel::setMetric(am::Metric m) {
  metricBox_->setCurrentIndex(int(std::find(std::begin(kMetrics), std::end(kMetrics), m) - std::begin(kMetrics)));
}
am::Metric PatchingPanel::metric() const { return kMetrics[std::clamp(metricBox_->currentIndex(), 0, 3)]; }
void PatchingPanel::setSweep(am::Sweep s) {
  const auto* at = std::find(std::begin(kSweeps), std::end(kSweeps), s);
  if (at != std::end(kSweeps)) sweepBox_->setCurrentIndex(int(at - std::begin(kSweeps)));
}
am::Sweep PatchingPanel::sweep() const { return kSweeps[std::clamp(sweepBox_->currentIndex(), 0, 2)]; }

void PatchingPanel::useFromPredictions(bool answer) {
  const auto* item = workbench_->predictions()->currentItem();
  if (!item) return;
  (answer ? answerEdit_ : wrongEdit_)->setText(item->data(Qt::UserRole).toString());
}

// One token of the model's tokenizer; otherwise `why` says how the text tokenises (as attnscope-cli patch does).
std::optional<int> PatchingPanel::tokenIndex(const QString& text, const QString& what, QString& why) const {
  const auto* tokenizer = workbench_->source()->model->tokenizer();
  if (text.isEmpty()) {
    why = tr("The %1 metric needs the %2 token.").arg(metricBox_->currentText(), what);
    return std::nullopt;
  }
  auto tokens = tokenizer->encode(text.toStdString());
  if (!tokens) {
    why = tr("%1: %2").arg(what, fromStd(tokens.error().message()));
    return std::nullopt;
  }
  if (tokens->size() == 1) return tokens->front().id;
  QStringList pieces;
  for (const auto& t : *tokens) pieces.append(u"\u201c%1\u201d"_s.arg(fromStd(tokenizer->display(t.id))));
  QString hint;
  if (!text.startsWith(u' ')) {
    auto spaced = tokenizer->encode(" " + text.toStdString());
    if (spaced && spaced->size() == 1) hint = tr(" (\u201c %1\u201d, with its leading space, is one)").arg(text);
  }
  why = tr("The %1 \u201c%2\u201d is %3 tokens here (%4), not one%5.")
            .arg(what, text)
            .arg(tokens->size())
            .arg(pieces.join(u" + "_s), hint);
  return std::nullopt;
}

bool PatchingPanel::run() {
  if (isRunning()) return false;
  const auto* source = workbench_->source();
  const auto refuse = [this](const QString& why) {
    note_->setText(why);
    return false;
  };
  if (!source || !source->model || !source->model->has_prediction_head())
    return refuse(
        tr("Patching measures the model's output: open a model with its output head (GPT-2, a decoder, "
           "BERT with its MLM head)."));
  if (!source->model->tokenizer() || source->isVision())
    return refuse(tr("Patching here takes text: this model reads no text through a tokenizer."));
  SweepJob job{
      source->model, workbench_->text().toStdString(), corruptText().toStdString(), {metric(), -1, -1}, sweep()};
  QString why;
  if (job.metric.kind != am::Metric::KL) {
    const auto id = tokenIndex(answer(), tr("answer"), why);
    if (!id) return refuse(why);
    job.metric.answer = *id;
  }
  if (job.metric.kind == am::Metric::LogitDiff) {
    const auto id = tokenIndex(wrong(), tr("wrong"), why);
    if (!id) return refuse(why);
    job.metric.wrong = *id;
  }
  const auto* tokenizer = source->model->tokenizer();
  auto a = tokenizer->encode_for_model(job.clean), b = tokenizer->encode_for_model(job.corrupt);
  if (!a || !b) return refuse(fromStd((a ? b : a).error().message()));
  if (a->tokens.size() != b->tokens.size())
    return refuse(tr("The text is %1 tokens and the corrupted input %2: patching takes each position's activation "
                     "from the clean run, so both need the same count.")
                      .arg(a->tokens.size())
                      .arg(b->tokens.size()));
  const quint64 serial = ++serial_;
  resultSource_ = workbench_->sourceKey();
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  note_->setText(tr("Running the clean and the corrupted input\u2026"));
  progress_->setRange(0, 0);
  thread_ = QThread::create([this, job, serial, cancel = cancel_] {
    // Minutes of every core: the GUI thread keeps its frames (bench_patching_frames).
    lowerThisThreadsPriority();
    am::TransformerRunner runner(job.model);
    const auto fail = [&](const QString& message) {
      QMetaObject::invokeMethod(
          this, [=, this] { onEnded(serial, std::nullopt, message); }, Qt::QueuedConnection);
    };
    auto probe = runText(runner, job.clean, -1);
    if (!probe) return fail(fromStd(probe.error().message()));
    const auto position = measuredPosition(*job.model, *probe);
    if (!position) return fail(tr("The text has no [MASK] token: a masked-language model is measured at one."));
    auto clean = runText(runner, job.clean, *position);
    if (!clean) return fail(fromStd(clean.error().message()));
    auto corrupt = runText(runner, job.corrupt, *position);
    if (!corrupt) return fail(fromStd(corrupt.error().message()));
    auto patching = am::Patching::make(std::move(*clean), std::move(*corrupt), job.metric, *position);
    if (!patching) return fail(fromStd(patching.error().message()));
    const auto& cfg = job.model->config();
    const int n = patching->tokens();
    const bool heads = job.sweep != am::Sweep::LayersPositions;
    const int cells = cfg.layers * (heads ? cfg.heads : 1) * (job.sweep == am::Sweep::Heads ? 1 : n);
    QMetaObject::invokeMethod(
        this,
        [=, this, tokens = patching->corrupt().attention.tokens, c = patching->clean_metric(),
         k = patching->corrupt_metric()] { onPrepared(serial, tokens, c, k, cells); },
        Qt::QueuedConnection);
    QElapsedTimer sincePosted;
    sincePosted.start();
    const auto onCell = [&](const am::SweepCell&, double, const am::SweepResult& soFar) {
      if (sincePosted.elapsed() >= kFrameMs) {
        QMetaObject::invokeMethod(
            this, [=, this] { onPartial(serial, soFar); }, Qt::QueuedConnection);
        sincePosted.restart();
      }
      return true;
    };
    auto swept = patching->sweep(runner, job.sweep, onCell, cancel.get());
    if (!swept) return fail(fromStd(swept.error().message()));
    QMetaObject::invokeMethod(
        this, [=, this, r = std::move(*swept)] { onEnded(serial, r, {}); }, Qt::QueuedConnection);
  });
  connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
  thread_->start();
  updateControls();
  return true;
}

void PatchingPanel::cancel() {
  if (cancel_) cancel_->store(true);
}

void PatchingPanel::onPrepared(quint64 serial, std::vector<std::string> tokens, double clean, double corrupt,
                               int cells) {
  if (serial != serial_) return;
  tokens_ = std::move(tokens);
  cleanMetric_ = clean;
  corruptMetric_ = corrupt;
  cells_ = cells;
  progress_->setRange(0, cells);
  progress_->setValue(0);
  result_.reset();
  title_ = tr("Patching %1: recovery of the %2 (clean %3, corrupted %4)")
               .arg(QLatin1String(am::sweep_name(sweep())), QLatin1String(am::metric_name(metric())))
               .arg(clean, 0, 'f', 3)
               .arg(corrupt, 0, 'f', 3);
  note_->setText(tr("%1 cells \u00b7 clean %2 %3, corrupted %4")
                     .arg(cells)
                     .arg(metricBox_->currentText())
                     .arg(clean, 0, 'f', 4)
                     .arg(corrupt, 0, 'f', 4));
}

void PatchingPanel::onPartial(quint64 serial, const am::SweepResult& result) {
  if (serial != serial_ || !isRunning()) return;
  result_ = result;
  progress_->setValue(result.done);
  redraw();
  emit partialShown(result.done);
}

void PatchingPanel::onEnded(quint64 serial, std::optional<am::SweepResult> result, const QString& error) {
  if (serial != serial_) return;
  // The thread ends right after posting this: wait for it so that a new run never overlaps it.
  if (thread_) thread_->wait();
  thread_ = nullptr;
  const bool complete = result && result->done == cells_ && error.isEmpty();
  if (result) result_ = std::move(result);
  if (!error.isEmpty()) {
    progress_->setRange(0, 1);
    progress_->setValue(0);
    note_->setText(error);
  } else if (result_) {
    progress_->setValue(result_->done);
    if (!complete)
      note_->setText(note_->text() + tr(" \u00b7 cancelled after %1 of %2 cells").arg(result_->done).arg(cells_));
    redraw();
  }
  updateControls();
  emit finished(complete);
}

void PatchingPanel::redraw() {
  if (!result_) return;
  auto figure = render::sweepFigure(*result_, tokens_, title_);
  // Every head alone: few cells, each with its recovery written in it.
  if (result_->kind == am::Sweep::Heads) {
    for (double v : result_->values) {
      // |v| < 0.005 reads "0.00", not "-0.00".
      figure.cellText.push_back(std::isnan(v) ? QString() : QString::number(std::abs(v) < 0.005 ? 0.0 : v, 'f', 2));
    }
  }
  view_->setFigure(std::move(figure));
}

QString PatchingPanel::cellText(int row, int column) const {
  if (!result_) return {};
  const auto cell = render::sweepCellAt(*result_, row, column);
  const double value = result_->at(cell.layer, std::max(cell.head, 0), std::max(cell.position, 0));
  QString text = tr("layer %1").arg(cell.layer);
  if (cell.head >= 0) text += tr(" \u00b7 head %1").arg(cell.head);
  if (cell.position >= 0 && std::size_t(cell.position) < tokens_.size())
    text += tr(" \u00b7 position %1 \u201c%2\u201d")
                .arg(cell.position)
                .arg(render::tokenLabel(tokens_[std::size_t(cell.position)]));
  text += u'\n' + (std::isnan(value) ? tr("recovery: not computed yet") : tr("recovery %1").arg(value, 0, 'f', 4));
  return text;
}

attn::Result<void> PatchingPanel::exportTo(const QString& path, QSize size) const {
  if (!result_) return attn::fail(attn::ErrorKind::Unsupported, "export: no patching sweep to export");
  if (path.endsWith(u".csv"_s, Qt::CaseInsensitive)) return writeExport(path, render::sweepCsv(*result_, tokens_));
  return exportHeatmapFigure(render::sweepFigure(*result_, tokens_, title_), size.isEmpty() ? view_->size() : size,
                             font(), path);
}

}  // namespace attn::ui

namespace attn::ui {

void PatchingPanel::saveTo(CausalSection& section) const {
  section.corrupt = corruptText().toStdString();  // the Compare box's, also in the session's compare_text
  section.metric = am::metric_name(metric());
  section.answer = answer().toStdString();
  section.wrong = wrong().toStdString();
  section.sweep = am::sweep_name(sweep());
  section.result.reset();
  if (!result_) return;
  auto& r = section.result.emplace();
  r.kind = am::sweep_name(result_->kind);
  r.layers = result_->layers;
  r.heads = result_->heads;
  r.positions = result_->positions;
  r.done = result_->done;
  r.values = result_->values;
  r.tokens = tokens_;
  r.clean_metric = cleanMetric_;
  r.corrupt_metric = corruptMetric_;
}

void PatchingPanel::restoreFrom(const CausalSection& section, const QString& source) {
  cancel();
  resultSource_ = source;
  // The corrupted input is the Compare box's: TransformerWorkbench::applyInterventionState restores it
  // (restoredCorrupt).
  if (const auto m = am::parse_metric(section.metric)) setMetric(*m);
  setAnswer(QString::fromStdString(section.answer));
  setWrong(QString::fromStdString(section.wrong));
  if (const auto s = am::parse_sweep(section.sweep)) setSweep(*s);
  ++serial_;  // a sweep still running is not shown over the restored one
  result_.reset();
  view_->setFigure({});
  const auto kind = section.result ? am::parse_sweep(section.result->kind) : std::nullopt;
  if (kind) {
    const auto& r = *section.result;
    result_.emplace();
    result_->kind = *kind;
    result_->layers = r.layers;
    result_->heads = r.heads;
    result_->positions = r.positions;
    result_->done = r.done;
    result_->values = r.values;
    tokens_ = r.tokens;
    cleanMetric_ = r.clean_metric;
    corruptMetric_ = r.corrupt_metric;
    cells_ = int(r.values.size());
    title_ = tr("Patching %1: recovery of the %2 (clean %3, corrupted %4)")
                 .arg(QString::fromStdString(r.kind), QString::fromStdString(section.metric))
                 .arg(r.clean_metric, 0, 'f', 3)
                 .arg(r.corrupt_metric, 0, 'f', 3);
    progress_->setRange(0, std::max(1, cells_));
    progress_->setValue(r.done);
    redraw();
  }
  updateControls();
}

}  // namespace attn::ui
