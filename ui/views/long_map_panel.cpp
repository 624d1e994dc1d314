#include "views/long_map_panel.h"

#include "views/long_map_view.h"
#include "views/token_strip_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QThreadPool>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

// Rollout rows, one at a time (rollout_row runs on the engine's threads).
QThreadPool& rolloutPool() {
  static QThreadPool* pool = [] {
    auto* p = new QThreadPool;
    p->setMaxThreadCount(1);
    p->setObjectName(u"LongMapRollout"_s);
    return p;
  }();
  return *pool;
}

}  // namespace

LongMapPanel::LongMapPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  findEdit_ = new QLineEdit(this);
  findEdit_->setObjectName(u"longMapFind"_s);
  findEdit_->setPlaceholderText(tr("Find token\u2026"));
  findEdit_->setClearButtonEnabled(true);
  findEdit_->setToolTip(tr("Enter: the next token containing this text becomes the selected query"));
  bar->addWidget(findEdit_, 1);
  findNote_ = new QLabel(this);
  bar->addWidget(findNote_);
  poolingBox_ = new QComboBox(this);
  poolingBox_->addItem(tr("Max-pooled"), int(attn::HeadMapReader::Pooling::Max));
  poolingBox_->addItem(tr("Mean-pooled"), int(attn::HeadMapReader::Pooling::Mean));
  poolingBox_->setToolTip(
      tr("Zoomed out, a cell stands for many weights: their largest (a single sharp weight "
         "stays visible) or their mean"));
  bar->addWidget(poolingBox_);
  scaleBox_ = new QComboBox(this);
  scaleBox_->addItem(tr("Log colours"), int(LongMapView::Scale::Log));
  scaleBox_->addItem(tr("Linear colours"), int(LongMapView::Scale::Linear));
  scaleBox_->setToolTip(
      tr("Log: %1 decades below the head's largest weight; linear: 0 to that weight").arg(LongMapView::kLogDecades));
  bar->addWidget(scaleBox_);
  sinkLabel_ = new QLabel(this);
  sinkLabel_->setObjectName(u"longMapSink"_s);
  sinkLabel_->setToolTip(tr("The attention sink: the mean weight a query puts on the first token"));
  bar->addWidget(sinkLabel_);
  layout->addLayout(bar);

  auto* split = new QSplitter(Qt::Vertical, this);
  map_ = new LongMapView(split);
  map_->setObjectName(u"longMap"_s);
  auto* strips = new QWidget(split);
  auto* stripLayout = new QVBoxLayout(strips);
  stripLayout->setContentsMargins(0, 0, 0, 0);
  auto* rowBar = new QHBoxLayout;
  rowModeBox_ = new QComboBox(strips);
  rowModeBox_->setObjectName(u"longMapRowMode"_s);
  rowModeBox_->addItem(tr("This head"), int(RowMode::Head));
  rowModeBox_->addItem(tr("Rollout"), int(RowMode::Rollout));
  rowModeBox_->setToolTip(
      tr("The row strip: the selected query's attention in this head, or its row of the attention rollout over "
         "every layer (computed when asked: seconds for a few thousand tokens, minutes for tens of thousands)"));
  rowBar->addWidget(rowModeBox_);
  rowLabel_ = new QLabel(tr("Row: click a cell of the map to see its query's attention over the text."), strips);
  rowLabel_->setObjectName(u"longMapRowLabel"_s);
  rowLabel_->setTextFormat(Qt::PlainText);
  rowLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  rowBar->addWidget(rowLabel_, 1);
  stripLayout->addLayout(rowBar);
  rowStrip_ = new TokenStripView(strips);
  rowStrip_->setObjectName(u"longMapRow"_s);
  stripLayout->addWidget(rowStrip_, 1);
  auto* columnLabel = new QLabel(tr("Column: the attention each token receives, summed over every query."), strips);
  stripLayout->addWidget(columnLabel);
  columnStrip_ = new TokenStripView(strips);
  columnStrip_->setObjectName(u"longMapColumn"_s);
  stripLayout->addWidget(columnStrip_, 1);
  split->addWidget(map_);
  split->addWidget(strips);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);

  connect(map_, &LongMapView::querySelected, this, [this](qint64 query, qint64) { showRow(query); });
  connect(rowStrip_, &TokenStripView::tokenClicked, this, [this](qint64 key) {
    if (const auto q = map_->selectedQuery()) map_->centreOn(*q, key);
  });
  connect(columnStrip_, &TokenStripView::tokenClicked, this, [this](qint64 token) {
    selectQuery(token);
    map_->centreOn(token, token);
  });
  connect(findEdit_, &QLineEdit::returnPressed, this, [this] { findNext(findEdit_->text()); });
  connect(poolingBox_, &QComboBox::currentIndexChanged, this,
          [this] { map_->setPooling(attn::HeadMapReader::Pooling(poolingBox_->currentData().toInt())); });
  connect(scaleBox_, &QComboBox::currentIndexChanged, this,
          [this] { map_->setScale(LongMapView::Scale(scaleBox_->currentData().toInt())); });
  connect(rowModeBox_, &QComboBox::currentIndexChanged, this,
          [this] { setRowMode(RowMode(rowModeBox_->currentData().toInt())); });
}

LongMapPanel::~LongMapPanel() {
  // A row being computed replies to `this`: stop it and wait (it stops between blocks of rows).
  if (rolloutJob_) rolloutJob_->cancel = true;
  rolloutPool().clear();
  rolloutPool().waitForDone();
}

void LongMapPanel::setRollout(RolloutRow rollout, const QString& what, const void* run) {
  rollout_ = std::move(rollout);
  if (what == rolloutWhat_ && run == rolloutRun_) return;
  rolloutWhat_ = what;
  rolloutRun_ = run;
  if (rolloutJob_) rolloutJob_->cancel = true;
  rolloutJob_.reset();
  rolloutShown_ = -1;
  rolloutRow_.clear();
  if (rowMode_ == RowMode::Rollout) {
    if (const auto q = map_->selectedQuery()) showRow(*q);
  }
}

void LongMapPanel::setRowMode(RowMode mode) {
  rowMode_ = mode;
  if (mode == RowMode::Head && rolloutJob_) {
    rolloutJob_->cancel = true;  // the strip computes what it shows: minutes of a long rollout are not left running
    rolloutJob_.reset();
  }
  const int index = rowModeBox_->findData(int(mode));
  if (index != rowModeBox_->currentIndex()) rowModeBox_->setCurrentIndex(index);  // comes back here once
  if (const auto q = map_->selectedQuery()) showRow(*q);
}

void LongMapPanel::setTokens(QStringList tokens) {
  tokens_ = std::move(tokens);
  rowStrip_->setTokens(tokens_);
  columnStrip_->setTokens(tokens_);
}

void LongMapPanel::setHead(LongMapHead head) {
  const std::optional<qint64> keep = map_->selectedQuery();
  const QPointF at = map_->topLeft();
  const double ppt = map_->pixelsPerToken();
  const bool sameSize = head_.reader && head.reader && head_.reader->tokens() == head.reader->tokens();
  head_ = std::move(head);
  map_->setMap(head_.reader, tokens_, head_.title);
  if (sameSize) map_->setView(at, ppt);  // another head of the same run: the same place
  sinkLabel_->setText(tr("sink %1").arg(head_.sinkMass, 0, 'f', 3));
  if (head_.received) {
    const auto& r = *head_.received;
    columnStrip_->setValues(r, r.empty() ? 1.0f : *std::max_element(r.begin(), r.end()));
  } else {
    columnStrip_->setValues({}, 1.0f);
  }
  if (keep && sameSize) {
    selectQuery(*keep);
  } else {
    rowStrip_->setValues({}, 1.0f);
  }
}

void LongMapPanel::clear() {
  if (rolloutJob_) rolloutJob_->cancel = true;
  rolloutJob_.reset();
  head_ = {};
  map_->clear();
  rowStrip_->setValues({}, 1.0f);
  columnStrip_->setValues({}, 1.0f);
  sinkLabel_->clear();
}

void LongMapPanel::setColormap(render::Colormap map) {
  map_->setColormap(map);
  rowStrip_->setColormap(map);
  columnStrip_->setColormap(map);
}

void LongMapPanel::selectQuery(qint64 query) {
  if (!head_.reader) return;
  if (map_->selectedQuery() == query) {
    showRow(query);  // the head changed under the same query
  } else {
    map_->selectQuery(query);  // showRow follows from querySelected
  }
}

std::optional<qint64> LongMapPanel::selectedQuery() const { return map_->selectedQuery(); }

void LongMapPanel::showRow(qint64 query) {
  if (!head_.reader || query < 0 || query >= head_.reader->tokens()) return;
  if (rowMode_ == RowMode::Rollout) {
    startRollout(query);
  } else {
    showHeadRow(query);
  }
  columnStrip_->setMarked(query);
  columnStrip_->scrollToToken(query);
}

void LongMapPanel::showHeadRow(qint64 query) {
  std::vector<float> row(std::size_t(head_.reader->tokens()));
  head_.reader->row(query, row.data());  // one query over every key, exact
  setRowValues(query, std::move(row),
               tr("Row: query %1 \u201c%2\u201d over every key").arg(query).arg(tokens_.value(query).left(30)));
}

void LongMapPanel::setRowValues(qint64 query, std::vector<float> row, const QString& caption) {
  if (row.empty()) return;
  const auto top = std::max_element(row.begin(), row.end());
  const float max = *top;
  const auto best = qint64(top - row.begin());
  rowLabel_->setText(tr("%1 (largest %2 on key %3 \u201c%4\u201d)")
                         .arg(caption)
                         .arg(double(max), 0, 'g', 4)
                         .arg(best)
                         .arg(tokens_.value(best).left(30)));
  rowStrip_->setValues(std::move(row), max);
  rowStrip_->setMarked(query);
  rowStrip_->scrollToToken(best);
}

void LongMapPanel::startRollout(qint64 query) {
  const auto caption = [this, query] {
    return tr("Rollout: query %1 \u201c%2\u201d over %3")
        .arg(query)
        .arg(tokens_.value(query).left(30))
        .arg(rolloutWhat_);
  };
  if (query == rolloutShown_ && !rolloutRow_.empty()) {
    if (rolloutJob_) rolloutJob_->cancel = true;
    rolloutJob_.reset();
    setRowValues(query, rolloutRow_, caption());
    return;
  }
  if (!rollout_) {
    rowLabel_->setText(tr("Rollout: not available for this run."));
    return;
  }
  if (rolloutJob_) rolloutJob_->cancel = true;
  auto job = std::make_shared<RolloutJob>();
  rolloutJob_ = job;
  // The strip keeps the last row until this one is there; the caption says what is coming.
  rowLabel_->setText(caption() + tr(": computing\u2026"));
  const RolloutRow fn = rollout_;
  rolloutPool().start([this, job, fn, query, caption] {
    auto row = std::make_shared<attn::Result<std::vector<float>>>(
        fn(query, &job->cancel, [this, job, caption](int done, int of) {
          QMetaObject::invokeMethod(
              this,
              [this, job, caption, done, of] {
                if (job == rolloutJob_)
                  rowLabel_->setText(caption() + tr(": %1 of %2 layers done\u2026").arg(done).arg(of));
              },
              Qt::QueuedConnection);
        }));
    QMetaObject::invokeMethod(
        this, [this, job, query, row] { rolloutDone(job, query, std::move(*row)); }, Qt::QueuedConnection);
  });
}

void LongMapPanel::rolloutDone(const std::shared_ptr<RolloutJob>& job, qint64 query,
                               attn::Result<std::vector<float>> row) {
  if (job != rolloutJob_) return;  // cancelled, or a newer query asked since
  rolloutJob_.reset();
  if (!row) {
    rowLabel_->setText(tr("Rollout: query %1: %2").arg(query).arg(QString::fromStdString(row.error().message())));
    return;
  }
  rolloutShown_ = query;
  rolloutRow_ = std::move(*row);
  if (rowMode_ == RowMode::Rollout && map_->selectedQuery() == query) {
    setRowValues(
        query, rolloutRow_,
        tr("Rollout: query %1 \u201c%2\u201d over %3").arg(query).arg(tokens_.value(query).left(30)).arg(rolloutWhat_));
  }
  emit rolloutArrived(query);
}

bool LongMapPanel::findNext(const QString& text) {
  const qint64 n = tokens_.size();
  if (text.isEmpty() || n == 0 || !head_.reader) return false;
  const qint64 from = map_->selectedQuery().value_or(-1) + 1;
  for (qint64 k = 0; k < n; ++k) {
    const qint64 i = (from + k) % n;
    if (tokens_[i].contains(text, Qt::CaseInsensitive)) {
      findNote_->clear();
      selectQuery(i);
      map_->centreOn(i, i);
      return true;
    }
  }
  findNote_->setText(tr("not found"));
  return false;
}

}  // namespace attn::ui
