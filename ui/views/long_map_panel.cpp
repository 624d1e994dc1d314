#include "views/long_map_panel.h"

#include "render/heatmap_render.h"
#include "views/long_map_view.h"
#include "views/token_strip_view.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QThreadPool>
#include <QToolButton>
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
  // The find row over the map's own choices (each row needs the width of a narrow panel).
  auto* findBar = new QHBoxLayout;
  buildFindBar(findBar);
  layout->addLayout(findBar);
  auto* bar = new QHBoxLayout;
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
  bar->addStretch(1);
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
  connect(poolingBox_, &QComboBox::currentIndexChanged, this,
          [this] { map_->setPooling(attn::HeadMapReader::Pooling(poolingBox_->currentData().toInt())); });
  connect(scaleBox_, &QComboBox::currentIndexChanged, this,
          [this] { map_->setScale(LongMapView::Scale(scaleBox_->currentData().toInt())); });
  connect(rowModeBox_, &QComboBox::currentIndexChanged, this,
          [this] { setRowMode(RowMode(rowModeBox_->currentData().toInt())); });
}

void LongMapPanel::buildFindBar(QHBoxLayout* bar) {
  findEdit_ = new QLineEdit(this);
  findEdit_->setObjectName(u"longMapFind"_s);
  findEdit_->setPlaceholderText(tr("Find in the text\u2026"));
  findEdit_->setClearButtonEnabled(true);
  findEdit_->setToolTip(
      tr("Finds text across token boundaries, case-insensitive (\u201cattention\u201d in \u201c att\u201d + "
         "\u201cention\u201d). Enter or F3: the next match; Shift+Enter or Shift+F3: the previous one. The match's "
         "first token becomes the selected query; its tokens' rows and columns are marked on the map."));
  findEdit_->installEventFilter(this);
  bar->addWidget(findEdit_, 1);
  const auto button = [this, bar](Qt::ArrowType arrow, const QString& name, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setObjectName(name);
    b->setArrowType(arrow);
    b->setAutoRaise(true);
    b->setToolTip(tip);
    b->setEnabled(false);
    bar->addWidget(b);
    return b;
  };
  findPreviousButton_ = button(Qt::UpArrow, u"longMapFindPrevious"_s, tr("The previous match (Shift+F3, Shift+Enter)"));
  findNextButton_ = button(Qt::DownArrow, u"longMapFindNext"_s, tr("The next match (F3, Enter)"));
  findNote_ = new QLabel(this);
  findNote_->setObjectName(u"longMapFindNote"_s);
  findNote_->setTextFormat(Qt::PlainText);
  bar->addWidget(findNote_, 1);
  // The platform's own keys (F3 and Shift+F3 on Linux and Windows), wherever the focus is in the panel; its
  // Find key (Ctrl+F) goes to the box.
  // Each named, as Help > Keyboard Shortcuts lists it.
  const auto action = [this](QKeySequence::StandardKey key, const QString& name, auto slot) {
    auto* a = new QAction(name, this);
    a->setShortcuts(key);
    a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(a, &QAction::triggered, this, slot);
    addAction(a);
  };
  action(QKeySequence::FindNext, tr("Find the next match in the long map"), [this] { findNext(findEdit_->text()); });
  action(QKeySequence::FindPrevious, tr("Find the previous match in the long map"),
         [this] { findPrevious(findEdit_->text()); });
  action(QKeySequence::Find, tr("Find text in the long map"), [this] {
    findEdit_->setFocus(Qt::ShortcutFocusReason);
    findEdit_->selectAll();
  });
  connect(findEdit_, &QLineEdit::textChanged, this, &LongMapPanel::updateMatches);
  connect(findNextButton_, &QToolButton::clicked, this, [this] { findNext(findEdit_->text()); });
  connect(findPreviousButton_, &QToolButton::clicked, this, [this] { findPrevious(findEdit_->text()); });
}

bool LongMapPanel::eventFilter(QObject* watched, QEvent* event) {
  // Enter in the find box: the next match; Shift+Enter: the previous one.
  if (watched == findEdit_ && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
      if (key->modifiers() & Qt::ShiftModifier) {
        findPrevious(findEdit_->text());
      } else {
        findNext(findEdit_->text());
      }
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
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

void LongMapPanel::setTokens(const QStringList& texts) {
  tokens_.clear();
  tokens_.reserve(texts.size());
  for (const QString& t : texts) tokens_.append(render::tokenLabel(t.toStdString()));
  rowStrip_->setTokens(tokens_);
  columnStrip_->setTokens(tokens_);
  text_ = tokenText(texts);
  matchesOf_.clear();
  updateMatches(findEdit_->text());
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
  if (current_ >= 0)
    map_->setHighlight(std::pair{matches_[std::size_t(current_)].first, matches_[std::size_t(current_)].last});
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
  job->query = query;
  job->caption = caption();
  rolloutJob_ = job;
  // The strip keeps the last row until this one is there; the caption says what is coming.
  rowLabel_->setText(job->caption + tr(": computing\u2026"));
  const RolloutRow fn = rollout_;
  rolloutPool().start([this, job, fn, query] {
    attn::Result<std::vector<float>> row = fn(query, &job->cancel, [this, &job](int done, int of) {
      {
        const std::lock_guard lock(job->mutex);
        job->done = done;
        job->of = of;
      }
      QMetaObject::invokeMethod(this, "rolloutProgressed", Qt::QueuedConnection);
    });
    {
      const std::lock_guard lock(job->mutex);
      job->row = std::move(row);
    }
    QMetaObject::invokeMethod(this, "rolloutFinished", Qt::QueuedConnection);
  });
}

void LongMapPanel::rolloutProgressed() {
  if (!rolloutJob_) return;
  int done = 0, of = 0;
  {
    const std::lock_guard lock(rolloutJob_->mutex);
    done = rolloutJob_->done;
    of = rolloutJob_->of;
  }
  if (of > 0) rowLabel_->setText(rolloutJob_->caption + tr(": %1 of %2 layers done\u2026").arg(done).arg(of));
}

void LongMapPanel::rolloutFinished() {
  // The current job's row, once it is there (a cancelled job's call finds a newer job, or none).
  const std::shared_ptr<RolloutJob> job = rolloutJob_;
  if (!job) return;
  std::optional<attn::Result<std::vector<float>>> row;
  {
    const std::lock_guard lock(job->mutex);
    row = std::move(job->row);
    job->row.reset();
  }
  if (row) rolloutDone(job, job->query, std::move(*row));
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

void LongMapPanel::updateMatches(const QString& text) {
  if (text == matchesOf_ && !text.isEmpty()) return;
  matchesOf_ = text;
  matches_ = findInTokens(text_, text);
  current_ = -1;
  map_->setHighlight(std::nullopt);
  const bool any = !matches_.empty();
  findNextButton_->setEnabled(any);
  findPreviousButton_->setEnabled(any);
  if (text.isEmpty()) {
    findNote_->clear();
  } else if (!any) {
    findNote_->setText(tr("not found"));
  } else {
    findNote_->setText(matches_.size() == 1 ? tr("1 match") : tr("%1 matches").arg(matches_.size()));
  }
}

bool LongMapPanel::findNext(const QString& text) { return find(text, true); }

bool LongMapPanel::findPrevious(const QString& text) { return find(text, false); }

bool LongMapPanel::find(const QString& text, bool forward) {
  updateMatches(text);
  if (matches_.empty() || !head_.reader) return false;
  const auto count = int(matches_.size());
  const std::optional<qint64> selected = map_->selectedQuery();
  if (current_ >= 0 && selected == matches_[std::size_t(current_)].first) {
    current_ = (current_ + (forward ? 1 : count - 1)) % count;  // from the match shown
  } else if (forward) {
    // The first match that starts after the selected query, or the first of all.
    const qint64 after = selected.value_or(-1);
    const auto it =
        std::find_if(matches_.begin(), matches_.end(), [after](const TextMatch& m) { return m.first > after; });
    current_ = it == matches_.end() ? 0 : int(it - matches_.begin());
  } else {
    const qint64 before = selected.value_or(qint64(tokens_.size()));
    const auto it =
        std::find_if(matches_.rbegin(), matches_.rend(), [before](const TextMatch& m) { return m.first < before; });
    current_ = it == matches_.rend() ? count - 1 : int(matches_.rend() - it) - 1;
  }
  showMatch();
  return true;
}

void LongMapPanel::showMatch() {
  const TextMatch m = matches_[std::size_t(current_)];
  selectQuery(m.first);
  map_->showTokens(m.first, m.last);
  map_->setHighlight(std::pair{m.first, m.last});
  const QString where =
      m.first == m.last ? tr("token %1").arg(m.first) : tr("tokens %1\u2013%2").arg(m.first).arg(m.last);
  // The count, then the match shown as every index is (0-based, its range given).
  findNote_->setText(tr("%1 matches: %2 (0\u2013%3) \u00b7 %4")
                         .arg(matches_.size())
                         .arg(current_)
                         .arg(matches_.size() - 1)
                         .arg(where));
}

}  // namespace attn::ui
