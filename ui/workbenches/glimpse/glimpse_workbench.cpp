// GlimpseWorkbench: construction, loading, session, settings, requests; panel and results: glimpse_{panel,results}.cpp.
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/glimpse/glimpse_panel_parts.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/common/side_panel.h"

#include "attn/glimpse/resolve.h"
#include "views/glimpse_canvas.h"
#include "views/pixel_view.h"
#include "render/strings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using attn::glimpse::GaussianGlimpse;
using attn::glimpse::GlimpseSettings;
using glimpse_detail::kPlotIntervalNs;

Workbench::Identity glimpseIdentity() {
  return {attn::ui::SessionTab::Glimpse,
          GlimpseWorkbench::tr("&Glimpse"),
          GlimpseWorkbench::tr("DRAW's Gaussian glimpse and the spatial transformer's over any image"),
          {},
          GlimpseWorkbench::tr("Last glimpse: grid, preview or exact, read time and path, frame time")};
}

}  // namespace

// ---- construction -------------------------------------------------------------------------------------

GlimpseWorkbench::GlimpseWorkbench(QWidget* parent)
    : Workbench(glimpseIdentity(), 0, parent), worker_(std::make_unique<GlimpseWorker>()) {
  setObjectName(u"glimpseWorkbench"_s);
  clock_.start();
  connect(worker_.get(), &GlimpseWorker::finished, this, &GlimpseWorkbench::onFinished, Qt::QueuedConnection);
  connect(worker_.get(), &GlimpseWorker::loaded, this, &GlimpseWorkbench::onLoaded, Qt::QueuedConnection);
  connect(worker_.get(), &GlimpseWorker::loadFailed, this, &GlimpseWorkbench::onLoadFailed, Qt::QueuedConnection);
  connect(
      worker_.get(), &GlimpseWorker::loadProgress, this,
      [this](quint64 serial, int percent, const QString& stage) {
        if (serial != loadRequested_ || serial <= cancelledLoad_) return;
        busyRow_->setProgress(percent, 100, tr("%1% \u00b7 %2").arg(percent).arg(stage));
      },
      Qt::QueuedConnection);
  thread_.host(worker_.get(), u"glimpse worker"_s);
  connect(this, &GlimpseWorkbench::imageFailed, this, &Workbench::failed);

  // Results are shown on the next pass of the event loop: a burst that queued several is drawn once.
  busyTimer_.setSingleShot(true);
  busyTimer_.setInterval(150);
  connect(&busyTimer_, &QTimer::timeout, this, [this] {
    if (settled_ >= submitted_ || busy_) return;
    busy_ = true;
    busyLabel_->setText(tr("computing\u2026"));
    glimpseView_->setCursor(Qt::BusyCursor);
  });
  plotTimer_.setSingleShot(true);
  plotTimer_.setInterval(int(kPlotIntervalNs / 1'000'000));
  connect(&plotTimer_, &QTimer::timeout, this, [this] {
    if (auto pending = std::move(plotPending_)) applyPlots(*pending);
  });

  const SidePanelFrame frame =
      makeSidePanelFrame(this, u"glimpseSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); });
  splitter_ = frame.splitter;
  sideScroll_ = frame.scroll;
  sideScroll_->setMinimumWidth(340);

  auto* centre = new QWidget(splitter_);
  auto* centreLayout = new QVBoxLayout(centre);
  centreLayout->setContentsMargins(4, 6, 4, 4);
  centreLayout->setSpacing(4);
  errorBanner_ = new QLabel(centre);
  errorBanner_->setObjectName(u"glimpseError"_s);
  errorBanner_->setWordWrap(true);
  errorBanner_->setTextFormat(Qt::PlainText);
  errorBanner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  errorBanner_->setStyleSheet(
      u"QLabel { background: #fbe3e0; color: #8a1414; border: 1px solid #e0a39c; "
      "border-radius: 3px; padding: 4px 6px; }"_s);
  errorBanner_->setVisible(false);
  centreLayout->addWidget(errorBanner_);
  busyRow_ = new BusyRow(centre, this);
  busyRow_->setObjectName(u"glimpseBusyRow"_s);
  connect(busyRow_, &BusyRow::cancelRequested, this, &GlimpseWorkbench::cancelRun);
  centreLayout->addWidget(busyRow_);
  canvas_ = new GlimpseCanvas(centre);
  centreLayout->addWidget(canvas_, 1);

  auto* column = new QWidget(splitter_);
  buildRightColumn(column);

  splitter_->addWidget(sideScroll_);
  splitter_->addWidget(centre);
  splitter_->addWidget(column);
  splitter_->setStretchFactor(0, 0);
  splitter_->setStretchFactor(1, 1);
  splitter_->setStretchFactor(2, 0);
  splitter_->setSizes({350, 620, 430});

  connect(canvas_, &GlimpseCanvas::settingsEdited, this,
          [this](const GlimpseSettings& settings, bool dragging) { edit(settings, dragging); });

  adopt(presetSettings(Preset::DrawDefault, 512, 512));
  canvas_->setSettings(settings_, geometry_);
  syncPanel();
  updateStnControls();
}

GlimpseWorkbench::~GlimpseWorkbench() {
  stopApply();
  thread_.stop();
  worker_.reset();  // the thread has finished: none of the worker's events can run any more
}

// ---- samples and loading ------------------------------------------------------------------------------

bool GlimpseWorkbench::isImageFileName(const QString& path) {
  static const QStringList suffixes = {u"png"_s, u"jpg"_s, u"jpeg"_s, u"jpe"_s, u"bmp"_s,
                                       u"dib"_s, u"tif"_s, u"tiff"_s, u"webp"_s};
  return suffixes.contains(QFileInfo(path).suffix().toLower());
}

bool GlimpseWorkbench::openSample(const QString& key) {
  const QString resource = sampleImageResource(key);
  if (resource.isEmpty()) {
    emit statusMessage(tr("There is no sample called %1").arg(key), 6000);
    return false;
  }
  GlimpseSource source;
  source.name = QFileInfo(resource).fileName();
  source.path = resource;
  source.limits = limits_;
  startLoad(std::move(source));
  return true;
}

void GlimpseWorkbench::openFile(const QString& path) {
  GlimpseSource source;
  source.name = QFileInfo(path).fileName();
  source.path = path;
  source.limits = limits_;
  startLoad(std::move(source));
}

void GlimpseWorkbench::openWithSettings(const QString& path, const GlimpseSettings& settings) {
  GlimpseSource source;
  source.name = QFileInfo(path).fileName();
  source.path = path;
  source.limits = limits_;
  startLoad(std::move(source));
  settingsForLoad_ = std::pair{loadRequested_, settings};
}

void GlimpseWorkbench::startLoad(GlimpseSource source) {
  // A load that has not finished yet is dropped by the worker for this one. Keep it (with the settings and
  // session state that were to come with it): if this one fails, that one is what "the previous image"
  // means, so it is opened after all (`attnscope --image bad.png` over a restored session's photo).
  if (currentLoad_ && loadSettled_ < loadRequested_) {
    superseded_ = SupersededLoad{*currentLoad_,
                                 settingsForLoad_ && settingsForLoad_->first == loadRequested_
                                     ? std::optional(settingsForLoad_->second)
                                     : std::nullopt,
                                 pendingState_};
  }
  settingsForLoad_.reset();
  currentLoad_ = source;
  ++loadRequested_;
  loadingName_ = source.name;
  busyRow_->start(tr("Opening %1\u2026").arg(source.name));
  worker_->load(loadRequested_, std::move(source));
}

QString GlimpseWorkbench::imagePath() const { return image_ ? image_->path : QString(); }

attn::ui::GlimpseSection GlimpseWorkbench::state() const {
  attn::ui::GlimpseSection s;
  if (pendingState_) s = *pendingState_;
  s.write_mode = writeMode_;
  s.window_forms = windowForms_;
  s.edit_stn = editStnRadio_->isChecked();
  if (pendingState_ || !image_) return s;
  s.settings = settings_;
  s.image = {attn::ui::ImageRef::Kind::File, image_->path.toStdString()};
  for (const auto& sample : sampleImages()) {
    if (sample.resource == image_->path) s.image = {attn::ui::ImageRef::Kind::Sample, sample.key.toStdString()};
  }
  s.image_width = image_->width;
  s.image_height = image_->height;
  return s;
}

void GlimpseWorkbench::saveTo(attn::ui::Session& session) const { session.glimpse = state(); }

QString GlimpseWorkbench::sessionImageProblem(const attn::ui::ImageRef& image) const {
  const QString value = QString::fromStdString(image.value);
  if (image.kind == attn::ui::ImageRef::Kind::Sample)
    return sampleImageResource(value).isEmpty() ? tr("there is no sample called %1").arg(value) : QString();
  // The check every load makes first (File > Open's too), made now: the note below then says what happened.
  GlimpseSource source;
  source.name = QFileInfo(value).fileName();
  source.path = value;
  source.limits = limits_;
  const auto probed = GlimpseWorker::probe(source);
  if (probed) return {};
  const QString reason = fromStd(probed.error().message());
  return probed.error().reason == "not found" ? reason : tr("refused: %1").arg(reason);
}

QStringList GlimpseWorkbench::restoreFrom(const attn::ui::Session& session, const QString& origin) {
  // Pixel numbers refer to the image: without it the glimpse starts over on the default photo.
  const QString problem = session.glimpse ? sessionImageProblem(session.glimpse->image) : QString();
  if (session.glimpse && problem.isEmpty()) {
    applyState(*session.glimpse);
    return {};
  }
  setWriteMode(false);
  setWindowForms(false);
  setEditStn(false);
  openSample(defaultSampleKey());
  if (!session.glimpse) return {};
  // The default photo opens as a fallback: its "Opened ..." does not cover the note, and the tab says it too.
  fallbackLoad_ = loadRequested_;
  const QString fallback = QFileInfo(sampleImageResource(defaultSampleKey())).fileName();
  lastError_ = problem;
  errorBanner_->setText(tr("The session's image: %1\nThe tab opened %2 instead.").arg(problem, fallback));
  errorBanner_->setVisible(true);
  return {tr("%1: the Glimpse tab's image, %2; it opens %3 instead").arg(origin, problem, fallback)};
}

void GlimpseWorkbench::applyState(const attn::ui::GlimpseSection& state) {
  setWriteMode(state.write_mode);
  setWindowForms(state.window_forms);
  setEditStn(state.edit_stn);
  const QString path = state.image.kind == attn::ui::ImageRef::Kind::Sample
                           ? sampleImageResource(QString::fromStdString(state.image.value))
                           : QString::fromStdString(state.image.value);
  if (path.isEmpty()) return;
  if (image_ && image_->path == path && !isLoading()) {
    setSettings(state.settings);
    return;
  }
  openWithSettings(path, state.settings);
  pendingState_ = state;
}

GlimpseSettings GlimpseWorkbench::rescaled(const GlimpseSettings& settings, int fromW, int fromH, int toW,
                                           int toH) const {
  GlimpseSettings out = settings;
  if (fromW <= 0 || fromH <= 0) return out;
  const auto scaleAxis = [](attn::glimpse::GaussianAxis& axis, double k) {
    // Edges scale, not centres: pixel a's centre is at a, its left edge at a - 0.5.
    axis.first = (axis.first + 0.5) * k - 0.5;
    axis.stride *= k;
    axis.sigma *= k;
  };
  scaleAxis(out.gaussian.x, double(toW) / fromW);
  scaleAxis(out.gaussian.y, double(toH) / fromH);
  return out;  // the STN is in normalised coordinates: it covers the same part of any image
}

void GlimpseWorkbench::onLoaded(std::shared_ptr<const GlimpseImage> image) {
  if (!image || image->serial != loadRequested_) return;  // a newer load is on its way
  if (image->serial <= cancelledLoad_) return;            // cancelled: the previous image stays
  loadSettled_ = image->serial;
  updateBusyRow();
  superseded_.reset();
  const bool fallback = image->serial == fallbackLoad_;  // after a failed load: its error stays in view
  pendingState_.reset();
  const auto previous = image_;
  image_ = std::move(image);
  GlimpseSettings next = settings_;
  if (settingsForLoad_ && settingsForLoad_->first == image_->serial) {
    next = settingsForLoad_->second;
    settingsForLoad_.reset();
  } else if (previous) {
    next = rescaled(settings_, previous->width, previous->height, image_->width, image_->height);
  } else {
    next = presetSettings(Preset::DrawDefault, image_->width, image_->height, settings_);
  }
  if (!fallback) {
    lastError_.clear();
    errorBanner_->setVisible(false);
  }
  canvas_->setImage(image_);
  // A photo shrunk to the tab's memory budget says so, with what it would have taken.
  const QString size =
      image_->shrunk()
          ? tr("%1 \u00d7 %2 px (shrunk from %3 \u00d7 %4, which would take %5 here)")
                .arg(image_->width)
                .arg(image_->height)
                .arg(image_->photoWidth)
                .arg(image_->photoHeight)
                .arg(dataSize(qint64(double(image_->photoWidth) * image_->photoHeight * GlimpseWorker::kBytesPerPixel)))
          : tr("%1 \u00d7 %2 px").arg(image_->width).arg(image_->height);
  imageInfo_->setText(tr("%1 \u00b7 %2 \u00b7 %3 channels \u00b7 %4 pyramid levels \u00b7 %5 \u00b7 opened in %6 ms")
                          .arg(image_->name, size)
                          .arg(image_->pyramid->base().channels)
                          .arg(image_->pyramid->levels())
                          .arg(dataSize(image_->bytes))
                          .arg(image_->loadMs, 0, 'f', 0));
  imageInfo_->setToolTip(image_->path);
  {
    const QSignalBlocker block(sampleBox_);
    int index = -1;
    for (int i = 0; i < sampleBox_->count(); ++i) {
      if (sampleImageResource(sampleBox_->itemData(i).toString()) == image_->path) index = i;
    }
    sampleBox_->setCurrentIndex(index);
  }
  updateSliderRanges();
  setSettings(next);
  if (!fallback) {
    emit statusMessage(image_->shrunk()
                           ? tr("Opened %1 at %2 \u00d7 %3, shrunk from %4 \u00d7 %5 to stay within %6; "
                                "glimpse coordinates are in the shrunk image's pixels")
                                 .arg(image_->name)
                                 .arg(image_->width)
                                 .arg(image_->height)
                                 .arg(image_->photoWidth)
                                 .arg(image_->photoHeight)
                                 .arg(dataSize(GlimpseWorker::kMemoryBudget))
                           : tr("Opened %1 (%2 \u00d7 %3)").arg(image_->name).arg(image_->width).arg(image_->height),
                       image_->shrunk() ? 0 : 5000);
  }
  emit imageLoaded(image_->path);
}

void GlimpseWorkbench::onLoadFailed(quint64 serial, const QString& message) {
  if (serial != loadRequested_ || serial <= cancelledLoad_) return;
  loadSettled_ = serial;
  updateBusyRow();
  settingsForLoad_.reset();
  pendingState_.reset();
  if (!superseded_) {
    showError(message);
    emit imageFailed(message);
    return;
  }
  // The image this one replaced before it had opened is the previous image: it opens now, and the error
  // stays in view while it does (and after: onLoaded leaves it for a fallback).
  SupersededLoad back = std::move(*superseded_);
  superseded_.reset();
  showError(message, back.source.name);
  emit imageFailed(message);
  startLoad(back.source);
  fallbackLoad_ = loadRequested_;
  if (back.settings) settingsForLoad_ = std::pair{loadRequested_, *back.settings};
  pendingState_ = back.state;
}

void GlimpseWorkbench::showError(const QString& message, const QString& previousName) {
  lastError_ = message;
  const QString previous = !previousName.isEmpty() ? previousName : image_ ? image_->name : QString();
  const QString kept = !previous.isEmpty() ? tr("The previous image (%1) and its parameters stay.").arg(previous)
                                           : tr("No image is open.");
  errorBanner_->setText(tr("Cannot open the image: %1\n%2").arg(message, kept));
  errorBanner_->setVisible(true);
  emit statusMessage(tr("Cannot open the image: %1. %2").arg(message, kept), 0);
}

// ---- settings -----------------------------------------------------------------------------------------

GlimpseSettings GlimpseWorkbench::presetSettings(Preset preset, int width, int height, const GlimpseSettings& base) {
  GlimpseSettings s = base;
  const double cx = 0.5 * (width - 1);
  const double cy = 0.5 * (height - 1);
  GaussianGlimpse g;
  switch (preset) {
    case Preset::WholeImage: {
      const int n = 12;
      g = attn::glimpse::centred_glimpse(cx, cy, n, double(width) / n, 0.5 * double(width) / n);
      g.y.stride = double(height) / n;
      g.y.sigma = 0.5 * g.y.stride;
      g.y.first = cy - 0.5 * (n - 1) * g.y.stride;
      break;
    }
    case Preset::CentreQuarter: {
      const int n = 12;
      g = attn::glimpse::centred_glimpse(cx, cy, n, 0.5 * width / n, 0.25 * width / n);
      g.y.stride = 0.5 * height / n;
      g.y.sigma = 0.5 * g.y.stride;
      g.y.first = cy - 0.5 * (n - 1) * g.y.stride;
      break;
    }
    case Preset::Fine64: g = attn::glimpse::centred_glimpse(cx, cy, 64, 1.0, 0.5); break;
    case Preset::DrawDefault: {
      attn::glimpse::DrawParams params;  // all zeros: centred, delta~ = 1 (whole image), sigma = 1, gamma = 1
      params.nx = params.ny = 12;
      g = attn::glimpse::from_draw(params, width, height);
      break;
    }
  }
  s.gaussian = g;
  // The STN gets the same window, so switching the handles over shows the same region.
  s.stn = attn::glimpse::stn_over_window(g, width, height, s.stn);
  return s;
}

attn::Result<GlimpseSettings> GlimpseWorkbench::settingsFromSpecs(const QString& gaussianSpec, const QString& stnSpec,
                                                                  bool sameWindow) const {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  GlimpseSettings settings = presetSettings(Preset::DrawDefault, w, h);
  if (!gaussianSpec.isEmpty()) {
    auto parsed = attn::glimpse::parse_gaussian_spec(gaussianSpec.toStdString(), w, h, settings.gaussian);
    if (!parsed) return std::unexpected(parsed.error());
    settings.gaussian = *parsed;
    settings.stn = attn::glimpse::stn_over_window(settings.gaussian, w, h, settings.stn);
  }
  if (!stnSpec.isEmpty()) {
    auto parsed = attn::glimpse::parse_stn_spec(stnSpec.toStdString(), settings.stn);
    if (!parsed) return std::unexpected(parsed.error());
    settings.stn = *parsed;
  }
  settings.same_window = sameWindow;
  return settings;
}

void GlimpseWorkbench::applyPreset(Preset preset) {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  edit(presetSettings(preset, w, h, settings_), false);
  const QSignalBlocker block(presetBox_);
  presetBox_->setCurrentIndex(-1);  // the same preset can be chosen again after an edit
}

void GlimpseWorkbench::resetParameters() {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  GlimpseSettings s = presetSettings(Preset::DrawDefault, w, h);
  s.stn = attn::glimpse::StnSettings{};
  s.same_window = false;
  edit(s, false);
}

void GlimpseWorkbench::setSettings(const GlimpseSettings& settings) { edit(settings, false); }

void GlimpseWorkbench::setSameWindow(bool on) {
  if (settings_.same_window == on && sameWindowCheck_->isChecked() == on) return;
  auto s = settings_;
  s.same_window = on;
  edit(s, false);
}

void GlimpseWorkbench::setWriteMode(bool on) {
  if (writeMode_ == on && writeCheck_->isChecked() == on) return;
  writeMode_ = on;
  {
    const QSignalBlocker block(writeCheck_);
    writeCheck_->setChecked(on);
  }
  clearCanvasButton_->setEnabled(on);
  if (!on) {
    writeView_->setImage({});
    writeView_->setCaption(tr("Write canvas"));
  }
  post();
}

void GlimpseWorkbench::setWindowForms(bool on) {
  if (windowForms_ == on && formsCheck_->isChecked() == on) return;
  windowForms_ = on;
  {
    const QSignalBlocker block(formsCheck_);
    formsCheck_->setChecked(on);
  }
  formsRow_->setVisible(on);
  post();
}

void GlimpseWorkbench::clearCanvas() {
  worker_->clearCanvas();
  post();
}

void GlimpseWorkbench::setEditStn(bool stn) {
  {
    const QSignalBlocker a(editStnRadio_);
    const QSignalBlocker b(editGaussianRadio_);
    editStnRadio_->setChecked(stn);
    editGaussianRadio_->setChecked(!stn);
  }
  canvas_->setTarget(stn ? GlimpseCanvas::Target::Stn : GlimpseCanvas::Target::Gaussian);
  if (paramTabs_) paramTabs_->setCurrentIndex(stn ? 1 : 0);
}

void GlimpseWorkbench::adopt(const GlimpseSettings& settings) {
  settings_ = settings;
  geometry_ = attn::glimpse::resolve(settings_, image_ ? image_->width : 512, image_ ? image_->height : 512);
}

void GlimpseWorkbench::edit(const GlimpseSettings& settings, bool dragging) {
  adopt(settings);
  dragging_ = dragging;
  // Also after the canvas's own edits: its gestures start from the geometry it is handed.
  canvas_->setSettings(settings_, geometry_);
  syncPanel();
  updateStnControls();
  post();
  emit settingsChanged();
}

// ---- requests -----------------------------------------------------------------------------------------

void GlimpseWorkbench::post() {
  if (!image_) return;
  ++submitted_;
  postTimes_.emplace_back(submitted_, clock_.nsecsElapsed());
  if (postTimes_.size() > 64) postTimes_.erase(postTimes_.begin(), postTimes_.begin() + 32);
  GlimpseRequest request{settings_, dragging_, writeMode_, windowForms_};
  if (synchronous_) {
    pending_ = worker_->computeNow(submitted_, image_->serial, request);
    applyPending();
    return;
  }
  worker_->submit(submitted_, image_, std::move(request));
  if (!busyTimer_.isActive()) busyTimer_.start();
  if (!dragging_) busyRow_->start(tr("Reading the glimpse of %1\u2026").arg(image_->name));
}

void GlimpseWorkbench::onFinished(std::shared_ptr<const GlimpseOutcome> outcome) {
  if (!outcome || !image_ || outcome->imageSerial != image_->serial) return;
  if (outcome->generation <= shown_ || outcome->generation <= cancelledRun_) return;
  if (pending_ && pending_->generation > outcome->generation) return;
  pending_ = std::move(outcome);
  scheduleApply();
}

void GlimpseWorkbench::updateBusyRow() {
  if (loadSettled_ >= loadRequested_ && settled_ >= submitted_) busyRow_->stop();
}

void GlimpseWorkbench::cancelRun() {
  const bool loading = loadRequested_ > loadSettled_, running = submitted_ > settled_;
  if (!loading && !running) return;
  // The worker finishes what it has started; what it answers for these requests is dropped.
  if (loading) {
    cancelledLoad_ = loadSettled_ = loadRequested_;
    superseded_.reset();  // nothing to fall back to: the image on screen stays
    settingsForLoad_.reset();
    pendingState_.reset();
  }
  if (running) {
    cancelledRun_ = settled_ = submitted_;
    if (pending_ && pending_->generation <= cancelledRun_) pending_.reset();
    endBusy();
  }
  busyRow_->stop();
  emit statusMessage(image_ ? tr("Cancelled: the previous image and glimpse stay") : tr("Cancelled"), 8000);
}

void GlimpseWorkbench::endBusy() {
  busyTimer_.stop();
  if (!busy_) return;
  busy_ = false;
  busyLabel_->clear();
  glimpseView_->unsetCursor();
}

void GlimpseWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }

bool GlimpseWorkbench::isSidePanelVisible() const { return !sideScroll_->isHidden(); }

}  // namespace attn::ui
