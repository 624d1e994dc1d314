#include "workbenches/transformer/transformer_detectors.h"

#include "render/causal_figures.h"
#include "render/figure_export.h"
#include "render/strings.h"
#include "views/figure_map_view.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace aa = attn::analysis;

DetectorsPanel::DetectorsPanel(TransformerWorkbench* workbench, QWidget* parent)
    : QWidget(parent), workbench_(workbench) {
  auto* layout = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  detectButton_ = new QPushButton(tr("Detect heads"), this);
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  exportButton_ = new QPushButton(tr("Export\u2026"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  row->addWidget(detectButton_);
  row->addWidget(cancelButton_);
  row->addWidget(progress_, 1);
  row->addWidget(exportButton_);
  layout->addLayout(row);
  note_ = new QLabel(tr("Scores every head on repeated random sequences [prefix] S S (|S| = 20, 4 inputs, seed 0): "
                        "how much it attends to the previous token, to the same token's earlier copy, to the token "
                        "after it (induction, at the offset written in its cell) and to the first token (sink)."),
                     this);
  note_->setWordWrap(true);
  layout->addWidget(note_);
  auto* grid = new QGridLayout;
  for (const auto d : aa::head_detectors()) {
    auto* v = new FigureMapView(this);
    v->setEmptyText(render::detectorTitle(d));
    v->setToolTipText([this](int row, int column) { return cellText(row, column); });
    connect(v, &FigureMapView::cellClicked, this, [this](int layer, int head) { workbench_->openHead(layer, head); });
    views_[std::size_t(d)] = v;
    grid->addWidget(v, int(d) / 2, int(d) % 2);
  }
  layout->addLayout(grid, 1);
  connect(workbench_, &TransformerWorkbench::sourceLoaded, this, [this] {
    if (workbench_->sourceKey() == resultSource_) return;
    cancel();
    ++serial_;
    if (thread_) thread_->wait();
    thread_ = nullptr;
    progress_->setValue(0);
    setResult(std::nullopt);
  });
  connect(detectButton_, &QPushButton::clicked, this, [this] { detect(); });
  connect(cancelButton_, &QPushButton::clicked, this, &DetectorsPanel::cancel);
  connect(exportButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Head detectors"), u"heads.png"_s,
                                                      tr("Pictures and tables (*.png *.svg *.pdf *.csv)"));
    if (path.isEmpty()) return;
    if (auto written = exportTo(path); !written) note_->setText(fromStd(written.error().message()));
  });
  updateControls();
}

DetectorsPanel::~DetectorsPanel() {
  if (cancel_) cancel_->store(true);
  if (thread_) thread_->wait();
}

void DetectorsPanel::updateControls() {
  detectButton_->setEnabled(!isRunning());
  cancelButton_->setEnabled(isRunning());
  exportButton_->setEnabled(result_.has_value());
}

bool DetectorsPanel::detect() {
  if (isRunning()) return false;
  const auto* source = workbench_->source();
  if (!source || !source->model || !source->model->tokenizer() || source->isVision()) {
    note_->setText(tr("The head detectors read text: open a text model with its tokenizer (not a dump, not a ViT)."));
    return false;
  }
  const quint64 serial = ++serial_;
  resultSource_ = workbench_->sourceKey();
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  progress_->setValue(0);
  note_->setText(tr("Detecting\u2026"));
  aa::HeadDetectionOptions options;
  options.model_name = source->name.toStdString();
  thread_ = QThread::create([this, model = source->model, options, serial, cancel = cancel_] {
    auto found = aa::detect_heads(model, options, cancel.get(), [this, serial](double fraction) {
      QMetaObject::invokeMethod(
          this,
          [this, serial, fraction] {
            if (serial == serial_) progress_->setValue(int(fraction * 1000));
          },
          Qt::QueuedConnection);
    });
    std::optional<aa::HeadDetection> result;
    QString error;
    if (found)
      result = std::move(*found);
    else
      error = found.error().kind == attn::ErrorKind::Cancelled ? tr("Cancelled.") : fromStd(found.error().message());
    QMetaObject::invokeMethod(
        this, [this, serial, result = std::move(result), error] { onEnded(serial, result, error); },
        Qt::QueuedConnection);
  });
  connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
  thread_->start();
  updateControls();
  return true;
}

void DetectorsPanel::cancel() {
  if (cancel_) cancel_->store(true);
}

void DetectorsPanel::onEnded(quint64 serial, std::optional<aa::HeadDetection> result, const QString& error) {
  if (serial != serial_) return;
  if (thread_) thread_->wait();
  thread_ = nullptr;
  if (result) {
    progress_->setValue(1000);
    setResult(std::move(result));
    note_->setText(tr("%1 \u00b7 %2 inputs [prefix] S S, |S| = %3, seed 0, S from %4 \u00b7 the number in an "
                      "induction cell is the offset of its stripe")
                       .arg(workbench_->source() ? workbench_->source()->name : QString())
                       .arg(result_->sequences)
                       .arg(result_->layout.length)
                       .arg(fromStd(result_->pool)));
  } else {
    progress_->setValue(0);
    note_->setText(error);
  }
  updateControls();
  emit finished(result_.has_value() && error.isEmpty());
}

void DetectorsPanel::setResult(std::optional<aa::HeadDetection> result) {
  result_ = std::move(result);
  redraw();
  updateControls();
}

void DetectorsPanel::redraw() {
  for (const auto d : aa::head_detectors()) {
    auto* v = views_[std::size_t(d)];
    v->setFigure(result_ ? render::detectorFigure(*result_, d) : render::HeatmapFigure{});
  }
}

QString DetectorsPanel::cellText(int layer, int head) const {
  if (!result_) return {};
  const auto it = std::find_if(result_->scores.begin(), result_->scores.end(),
                               [&](const aa::HeadScore& s) { return s.layer == layer && s.head == head; });
  if (it == result_->scores.end()) return {};
  return tr("layer %1 \u00b7 head %2\nprevious token %3\nduplicate token %4\ninduction %5 at offset +%6\nsink %7")
      .arg(layer)
      .arg(head)
      .arg(double(it->previous_token), 0, 'f', 3)
      .arg(double(it->duplicate_token), 0, 'f', 3)
      .arg(double(it->induction), 0, 'f', 3)
      .arg(it->induction_offset)
      .arg(double(it->sink), 0, 'f', 3);
}

attn::Result<void> DetectorsPanel::exportTo(const QString& path, QSize size) const {
  if (!result_) return attn::fail(attn::ErrorKind::Unsupported, "export: no head detection to export");
  const auto all = aa::head_detectors();
  if (path.endsWith(u".csv"_s, Qt::CaseInsensitive))
    return writeExport(path, render::headsCsv(*result_, {all.begin(), all.end()}));
  const QSize area = size.isEmpty() ? QSize(4 * 380, std::clamp(result_->layers * 40 + 160, 260, 1600)) : size;
  const int tile = area.width() / 4;
  return exportTitledDrawing(
      path, tr("Head detectors \u00b7 %1").arg(workbench_->exportTitle(TransformerWorkbench::View::Model)), font(),
      area, [&](QPainter& painter) {
        for (const auto d : all)
          render::paintHeatmapFigure(painter, QRect(int(d) * tile + 12, 0, tile - 24, area.height()),
                                     render::detectorFigure(*result_, d), font());
      });
}

}  // namespace attn::ui

namespace attn::ui {

void DetectorsPanel::saveTo(CausalSection& section) const {
  section.heads.reset();
  if (!result_) return;
  auto& h = section.heads.emplace();
  h.layers = result_->layers;
  h.heads = result_->heads;
  h.sequences = result_->sequences;
  h.length = result_->layout.length;
  h.max_offset = result_->max_offset;
  h.pool = result_->pool;
  for (const auto& s : result_->scores) {
    h.previous_token.push_back(s.previous_token);
    h.duplicate_token.push_back(s.duplicate_token);
    h.induction.push_back(s.induction);
    h.induction_offset.push_back(s.induction_offset);
    h.sink.push_back(s.sink);
  }
}

void DetectorsPanel::restoreFrom(const CausalSection& section, const QString& source) {
  cancel();
  resultSource_ = source;
  ++serial_;
  if (!section.heads) return setResult(std::nullopt);
  const auto& h = *section.heads;
  aa::HeadDetection found;
  found.layers = h.layers;
  found.heads = h.heads;
  found.sequences = h.sequences;
  found.layout.length = h.length;
  found.max_offset = h.max_offset;
  found.pool = h.pool;
  for (std::size_t i = 0; i < h.induction.size(); ++i) {
    aa::HeadScore s;
    s.layer = int(i) / std::max(1, h.heads);
    s.head = int(i) % std::max(1, h.heads);
    s.previous_token = float(h.previous_token[i]);
    s.duplicate_token = float(h.duplicate_token[i]);
    s.induction = float(h.induction[i]);
    s.induction_offset = h.induction_offset[i];
    s.sink = float(h.sink[i]);
    found.scores.push_back(std::move(s));
  }
  setResult(std::move(found));
}

}  // namespace attn::ui
