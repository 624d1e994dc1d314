#include "views/token_lines_view.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

class TokenLinesCanvas : public QWidget {
 public:
  explicit TokenLinesCanvas(TokenLinesView* view, QWidget* parent) : QWidget(parent), view_(view) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setObjectName(u"tokenLinesCanvas"_s);
  }

 protected:
  void paintEvent(QPaintEvent* event) override {
    QElapsedTimer timer;
    timer.start();
    QPainter painter(this);
    painter.fillRect(event->rect(), palette().base());
    auto scene = view_->scene();
    view_->stats_ = render::paintTokenLines(painter, scene, view_->canvasLayout(), QRectF(event->rect()));
    view_->lastPaintMs_ = double(timer.nsecsElapsed()) / 1e6;
  }
  void mouseMoveEvent(QMouseEvent* event) override {
    view_->hoverFromCanvas(view_->canvasLayout().tokenAt(event->position()));
  }
  void leaveEvent(QEvent*) override { view_->hoverFromCanvas(std::nullopt); }
  void mousePressEvent(QMouseEvent* event) override {
    if (event->button() == Qt::LeftButton) view_->clickFromCanvas(view_->canvasLayout().tokenAt(event->position()));
  }

 private:
  TokenLinesView* view_;
};

class HeadSwatchBar : public QWidget {
 public:
  explicit HeadSwatchBar(TokenLinesView* view, QWidget* parent) : QWidget(parent), view_(view) {
    setObjectName(u"headSwatches"_s);
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  }
  static constexpr int kSide = 20;
  static constexpr int kGap = 5;

  QRect rectOf(int head) const {
    const int perRow = std::max(1, (width() - 4) / (kSide + kGap));
    return QRect(2 + (head % perRow) * (kSide + kGap), 3 + (head / perRow) * (kSide + kGap), kSide, kSide);
  }
  int headAt(QPoint p) const {
    for (int h = 0; h < view_->headCount(); ++h) {
      if (rectOf(h).contains(p)) return h;
    }
    return -1;
  }
  QSize sizeHint() const override {
    const int heads = std::max(1, view_->headCount());
    return QSize(heads * (kSide + kGap) + 4, kSide + 6);
  }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int w) const override {
    const int perRow = std::max(1, (w - 4) / (kSide + kGap));
    const int rows = std::max(1, (view_->headCount() + perRow - 1) / perRow);
    return rows * (kSide + kGap) + 6;
  }
  // A horizontal layout does not ask for heightForWidth: the bar sets its own height, so the heads that
  // wrap onto a second row (12 heads beside the layer box) are not cut off.
  void refit() {
    const int h = heightForWidth(width());
    if (h != height()) setFixedHeight(h);
  }

 protected:
  void resizeEvent(QResizeEvent*) override { refit(); }
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() - 2));
    painter.setFont(small);
    for (int h = 0; h < view_->headCount(); ++h) {
      const QRect r = rectOf(h);
      const bool on = view_->isHeadEnabled(h);
      QColor fill = render::headColor(h);
      if (!on) fill.setAlpha(45);
      painter.setPen(on ? QPen(fill.darker(140), 1) : QPen(palette().color(QPalette::Mid), 1, Qt::DashLine));
      painter.setBrush(fill);
      painter.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
      painter.setPen(on ? QColor(Qt::white) : palette().color(QPalette::Text));
      painter.drawText(r, Qt::AlignCenter, QString::number(h));
      if (view_->isHeadAblated(h)) {
        const QColor ablation(255, 0, 200);
        painter.setBrush(Qt::NoBrush);
        painter.setPen(QPen(ablation, 2.0, Qt::DashLine));
        painter.drawRoundedRect(QRectF(r).adjusted(-1.5, -1.5, 1.5, 1.5), 3, 3);
      }
    }
  }
  void mousePressEvent(QMouseEvent* event) override {
    const int head = headAt(event->position().toPoint());
    if (head >= 0 && event->button() == Qt::LeftButton) view_->setHeadEnabled(head, !view_->isHeadEnabled(head));
  }
  void mouseDoubleClickEvent(QMouseEvent* event) override {
    const int head = headAt(event->position().toPoint());
    if (head >= 0) view_->soloHead(head);
  }
  void mouseMoveEvent(QMouseEvent* event) override {
    const int head = headAt(event->position().toPoint());
    setToolTip(head >= 0 ? QObject::tr("Head %1%2: click to show or hide, double-click to show it alone")
                               .arg(head)
                               .arg(view_->isHeadAblated(head) ? QObject::tr(" (ablated)") : QString())
                         : QString());
  }

 private:
  TokenLinesView* view_;
};

TokenLinesView::TokenLinesView(QWidget* parent) : QWidget(parent) {
  setObjectName(u"tokenLinesView"_s);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(4);
  auto* top = new QHBoxLayout();
  auto* layerLabel = new QLabel(tr("La&yer:"), this);
  layerBox_ = new QComboBox(this);
  layerBox_->setObjectName(u"headViewLayer"_s);
  layerBox_->setToolTip(tr("The layer whose heads are drawn"));
  layerLabel->setBuddy(layerBox_);
  top->addWidget(layerLabel);
  top->addWidget(layerBox_);
  auto* headsLabel = new QLabel(tr("Heads:"), this);
  top->addSpacing(8);
  top->addWidget(headsLabel);
  swatches_ = new HeadSwatchBar(this, this);
  swatches_->setToolTip(tr("Click a head to show or hide it, double-click to show it alone"));
  top->addWidget(swatches_, 1);
  layout->addLayout(top);

  scroll_ = new QScrollArea(this);
  scroll_->setWidgetResizable(true);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll_->setFrameShape(QFrame::StyledPanel);
  canvas_ = new TokenLinesCanvas(this, scroll_);
  scroll_->setWidget(canvas_);
  layout->addWidget(scroll_, 1);
  empty_ = new QLabel(tr("No attention yet: open a model or an attention dump"), this);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(empty_);
  scroll_->setVisible(false);

  connect(layerBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0 && index != layer_) setLayer(index);
  });
}

TokenLinesView::~TokenLinesView() = default;

void TokenLinesView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  updateCanvasSize();
}

QWidget* TokenLinesView::canvas() const { return canvas_; }
QWidget* TokenLinesView::swatchBar() const { return swatches_; }
QRect TokenLinesView::swatchRect(int head) const { return static_cast<HeadSwatchBar*>(swatches_)->rectOf(head); }

int TokenLinesView::layerCount() const { return trace_ ? trace_->layer_count(stage_) : 0; }

const attn::HeadStack* TokenLinesView::stack() const {
  if (!trace_) return nullptr;
  const auto* layer = trace_->find(stage_, layer_);
  return layer ? &layer->maps : nullptr;
}

int TokenLinesView::headCount() const {
  const auto* s = stack();
  return s ? s->heads() : 0;
}

void TokenLinesView::setEmptyText(const QString& text) {
  empty_->setWordWrap(true);
  empty_->setText(text);
}

QString TokenLinesView::emptyText() const { return empty_->text(); }
bool TokenLinesView::isShowingEmptyText() const { return !empty_->isHidden(); }

void TokenLinesView::setTrace(std::shared_ptr<const attn::LayeredTrace> trace, attn::Stage stage) {
  const int oldHeads = headCount();
  const int oldLayers = layerCount();
  trace_ = std::move(trace);
  stage_ = stage;
  const int layers = layerCount();
  if (layers != oldLayers) {
    const QSignalBlocker block(layerBox_);
    layerBox_->clear();
    for (int l = 0; l < layers; ++l) layerBox_->addItem(tr("%1").arg(l));
  }
  layer_ = std::clamp(layer_, 0, std::max(0, layers - 1));
  {
    const QSignalBlocker block(layerBox_);
    layerBox_->setCurrentIndex(layers > 0 ? layer_ : -1);
  }
  const int heads = headCount();
  if (heads != oldHeads || int(heads_.size()) != heads) heads_.assign(std::size_t(heads), true);
  // A token index past the new input is dropped.
  const auto valid = [this](const std::optional<render::TokenHit>& hit) {
    const auto layout = canvasLayout();
    return hit && hit->index < (hit->side == render::TokenSide::Query ? layout.rows : layout.cols);
  };
  if (!valid(hover_)) hover_.reset();
  if (!valid(pinned_)) pinned_.reset();
  // From the trace, not from scroll_->isVisible(): a view not shown yet (another tab in front) would keep its empty
  // text over the lines once shown.
  const bool drawn = trace_ != nullptr && layers > 0;
  scroll_->setVisible(drawn);
  empty_->setVisible(!drawn);
  static_cast<HeadSwatchBar*>(swatches_)->refit();
  swatches_->updateGeometry();
  swatches_->update();
  updateCanvasSize();
  canvas_->update();
}

void TokenLinesView::clear() { setTrace(nullptr, stage_); }

void TokenLinesView::setLayer(int layer) {
  layer = std::clamp(layer, 0, std::max(0, layerCount() - 1));
  if (layer == layer_ && layerBox_->currentIndex() == layer) return;
  layer_ = layer;
  {
    const QSignalBlocker block(layerBox_);
    layerBox_->setCurrentIndex(layer);
  }
  if (int(heads_.size()) != headCount()) heads_.assign(std::size_t(headCount()), true);
  updateCanvasSize();
  canvas_->update();
  swatches_->update();
  emit layerChanged(layer_);
}

void TokenLinesView::setHeadEnabled(int head, bool on) {
  if (head < 0 || head >= int(heads_.size()) || heads_[std::size_t(head)] == on) return;
  heads_[std::size_t(head)] = on;
  swatches_->update();
  canvas_->update();
  emit headsChanged();
}

bool TokenLinesView::isHeadEnabled(int head) const {
  return head >= 0 && head < int(heads_.size()) && heads_[std::size_t(head)];
}

std::vector<int> TokenLinesView::enabledHeads() const {
  std::vector<int> out;
  for (int h = 0; h < int(heads_.size()); ++h) {
    if (heads_[std::size_t(h)]) out.push_back(h);
  }
  return out;
}

void TokenLinesView::setAllHeadsEnabled(bool on) {
  std::fill(heads_.begin(), heads_.end(), on);
  swatches_->update();
  canvas_->update();
  emit headsChanged();
}

void TokenLinesView::soloHead(int head) {
  if (head < 0 || head >= int(heads_.size())) return;
  for (int h = 0; h < int(heads_.size()); ++h) heads_[std::size_t(h)] = h == head;
  swatches_->update();
  canvas_->update();
  emit headsChanged();
  emit headSoloed(head);
}

void TokenLinesView::setHoverToken(std::optional<render::TokenHit> hit) {
  if (hit == hover_) return;
  hover_ = hit;
  canvas_->update();
  if (hit) {
    // Keep the hovered token in sight when the hover comes from another view.
    const QRectF r = tokenRect(hit->side, hit->index);
    scroll_->ensureVisible(int(r.center().x()), int(r.center().y()), 0, int(r.height()) * 2);
  }
}

void TokenLinesView::setSelectedToken(std::optional<render::TokenHit> hit) {
  if (hit == pinned_) return;
  pinned_ = hit;
  canvas_->update();
}

void TokenLinesView::hoverFromCanvas(std::optional<render::TokenHit> hit) {
  if (hit == hover_) return;
  hover_ = hit;
  canvas_->update();
  emit tokenHovered(hit ? int(hit->side) : 0, hit ? hit->index : -1);
}

void TokenLinesView::clickFromCanvas(std::optional<render::TokenHit> hit) {
  pinned_ = hit == pinned_ ? std::nullopt : hit;
  canvas_->update();
  emit tokenSelected(pinned_ ? int(pinned_->side) : 0, pinned_ ? pinned_->index : -1);
}

void TokenLinesView::setThreshold(float threshold) {
  threshold_ = std::clamp(threshold, 0.0f, 1.0f);
  canvas_->update();
}

render::TokenLinesLayout TokenLinesView::canvasLayout() const {
  render::TokenLinesLayout layout;
  const auto* s = stack();
  const auto tokens = trace_ ? int(trace_->tokens.size()) : 0;
  layout.rows = s ? int(s->rows()) : tokens;
  layout.cols = s ? int(s->cols()) : tokens;
  layout.width = canvas_->width();
  layout.top = 6;
  // Rows grow to fill the view when there are few tokens (up to 30 px), and scroll when there are many.
  const int minRow = std::max(16, canvas_->fontMetrics().height() + 3);
  const int tokensTall = std::max({layout.rows, layout.cols, 1});
  layout.rowHeight = std::clamp((scroll_->viewport()->height() - 12) / tokensTall, minRow, std::max(minRow, 30));
  layout.labelWidth = std::clamp(layout.width / 4, 70, 150);
  return layout;
}

render::TokenLinesScene TokenLinesView::scene() const {
  render::TokenLinesScene scene;
  scene.stack = stack();
  if (trace_) {
    const bool cross = stage_ == attn::Stage::Cross && !trace_->cross_rows.empty();
    scene.rowTokens = cross ? &trace_->cross_rows : &trace_->tokens;
    scene.colTokens = &trace_->tokens;
  }
  scene.heads = enabledHeads();
  scene.focus = focus();
  scene.threshold = threshold_;
  scene.text = palette().color(QPalette::Text);
  return scene;
}

void TokenLinesView::updateCanvasSize() { canvas_->setMinimumHeight(trace_ ? canvasLayout().height() + 6 : 0); }

QRectF TokenLinesView::tokenRect(render::TokenSide side, int index) const {
  return canvasLayout().tokenRect(side, index);
}

QImage TokenLinesView::renderImage(int width) const {
  auto s = scene();
  s.text = QColor(20, 20, 20);
  return render::tokenLinesImage(
      s, width, tr("Head view \u00b7 layer %1 \u00b7 %2 of %3 heads").arg(layer_).arg(s.heads.size()).arg(headCount()),
      font());
}

void TokenLinesView::setAblatedHeads(std::vector<QPoint> heads) {
  if (heads == ablated_) return;
  ablated_ = std::move(heads);
  swatches_->update();
}

bool TokenLinesView::isHeadAblated(int head) const {
  return std::find(ablated_.begin(), ablated_.end(), QPoint(head, layer_)) != ablated_.end();
}

}  // namespace attn::ui
