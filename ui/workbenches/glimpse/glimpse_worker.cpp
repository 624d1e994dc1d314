#include "workbenches/glimpse/glimpse_worker.h"
#include "render/strings.h"

#include "render/glimpse_render.h"

#include <QElapsedTimer>
#include <QFile>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <span>
#include <system_error>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using attn::glimpse::GaussianGlimpse;

// Reads below this many multiply-adds are too short to time reliably.
constexpr double kMinTimedMacs = 2.0e5;
constexpr double kMinRate = 5.0e4;  // MACs per ms: a very slow machine still gets a preview level
constexpr double kMaxRate = 1.0e8;
constexpr double kSingleThreadCost = 2.0e7;

// Same-window mode: |gaussian - stn| when the two glimpses have the same shape.
void compareSameWindow(GlimpseOutcome& out) {
  if (out.request.settings.same_window && out.gaussian->width == out.stn->width &&
      out.gaussian->height == out.stn->height && out.gaussian->channels == out.stn->channels) {
    const auto difference = attn::glimpse::compare(*out.gaussian, *out.stn);
    out.compared = true;
    out.maxError = difference.max_abs;
    out.rmsError = difference.rms;
    out.differenceImage = render::differenceImage(difference.difference, render::Colormap::Magma);
  }
}

}  // namespace

GlimpseWorker::GlimpseWorker() : defaultThreads_(std::max(1, omp_get_max_threads())) {
  qRegisterMetaType<std::shared_ptr<const attn::ui::GlimpseImage>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::GlimpseOutcome>>();
}

std::shared_ptr<const GlimpseOutcome> GlimpseWorker::computeNow(quint64 generation, quint64 imageSerial,
                                                                const GlimpseRequest& request) {
  if (!image_ || image_->serial != imageSerial) return nullptr;
  auto outcome = compute(generation, imageSerial, request);
  runs_.fetch_add(1);
  return outcome;
}

void GlimpseWorker::setMacsPerMs(double rate, bool fixed) {
  if (rate > 0.0) macsPerMs_.store(std::clamp(rate, kMinRate, kMaxRate));
  rateFixed_.store(fixed && rate > 0.0);
}

void GlimpseWorker::load(quint64 serial, GlimpseSource source) {
  mailbox_.post([&] { pendingLoad_.put(PendingLoad{serial, std::move(source)}); });
}

void GlimpseWorker::submit(quint64 generation, std::shared_ptr<const GlimpseImage> image, GlimpseRequest request) {
  const quint64 imageSerial = image ? image->serial : 0;
  mailbox_.post([&] {
    pendingCompute_.put(PendingCompute{generation, imageSerial, std::move(request), std::move(image)});
  });
}

void GlimpseWorker::clearCanvas() {
  mailbox_.locked([this] { clearCanvas_ = true; });
}

void GlimpseWorker::drain() {
  std::optional<PendingLoad> load;
  std::optional<PendingCompute> job;
  bool clear = false;
  // A load goes first: requests posted before it finishes refer to the new image anyway. A cleared canvas
  // is zeroed before the next request that runs.
  while (mailbox_.next([&] {
    load = pendingLoad_.take();
    job = load ? std::nullopt : pendingCompute_.take();
    if (!load && !job) return false;
    clear = std::exchange(clearCanvas_, false);
    return true;
  })) {
    if (clear) {  // the canvas is this thread's
      std::fill(canvas_.data.begin(), canvas_.data.end(), 0.0f);
      std::fill(coverage_.data.begin(), coverage_.data.end(), 0.0f);
      canvasWrites_ = 0;
      canvasDirty_ = true;
    }
    if (load) {
      runLoad(load->serial, std::move(load->source));
      continue;
    }
    if (job->image && job->image != image_) use(job->image);      // the tab kept another image
    if (!image_ || job->imageSerial != image_->serial) continue;  // settings for another image
    auto outcome = compute(job->generation, job->imageSerial, job->request);
    runs_.fetch_add(1);
    emit finished(std::move(outcome));
  }
}

attn::Result<attn::ImageInfo> GlimpseWorker::probe(const GlimpseSource& source) {
  if (!source.bytes.isEmpty()) {
    const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(source.bytes.constData()),
                                              std::size_t(source.bytes.size()));
    return attn::probe_image_bytes(bytes, source.name.toStdString(), source.limits);
  }
  if (source.path.startsWith(u':')) {
    QFile resource(source.path);
    if (!resource.open(QIODevice::ReadOnly))
      return attn::fail(attn::ErrorKind::Io, "cannot read the bundled image", source.name.toStdString());
    GlimpseSource read = source;
    read.bytes = resource.readAll();
    return probe(read);
  }
  const std::filesystem::path path = toPath(source.path);
  std::error_code error;
  // symlink_status: a dangling link is there (and refused by the probe), not "not found".
  if (std::filesystem::symlink_status(path, error).type() == std::filesystem::file_type::not_found)
    return attn::fail(attn::ErrorKind::Io, "not found", path.string());
  return attn::probe_image(path, source.limits);
}

void GlimpseWorker::runLoad(quint64 serial, GlimpseSource source) {
  QElapsedTimer timer;
  timer.start();
  if (source.bytes.isEmpty() && source.path.startsWith(u':')) {
    QFile resource(source.path);
    if (!resource.open(QIODevice::ReadOnly)) {
      emit loadFailed(serial, tr("%1: cannot read the bundled image (%2)").arg(source.name, resource.errorString()));
      return;
    }
    source.bytes = resource.readAll();
  }
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(source.bytes.constData()),
                                            std::size_t(source.bytes.size()));
  // The size first, from the header: a photo that would take more than the budget is decoded shrunk, never whole.
  const auto info = probe(source);
  if (!info) {
    emit loadFailed(serial, fromStd(info.error().message()));
    return;
  }
  const auto pixels = qint64(info->width) * info->height;
  const auto fullBytes = qint64(double(pixels) * kBytesPerPixel);
  attn::ImageSize size;  // Full
  if (fullBytes > kMemoryBudget) {
    size = {.fit = attn::ImageSize::Fit::Within, .max_pixels = qint64(double(kMemoryBudget) / kBytesPerPixel)};
  }
  emit loadProgress(serial, 5,
                    fullBytes > kMemoryBudget
                        ? tr("decoding %1: %2 \u00d7 %3 would take %4 here; shrinking it to fit %5")
                              .arg(source.name)
                              .arg(info->width)
                              .arg(info->height)
                              .arg(dataSize(fullBytes), dataSize(kMemoryBudget))
                        : tr("decoding %1 (%2 \u00d7 %3, %4)")
                              .arg(source.name)
                              .arg(info->width)
                              .arg(info->height)
                              .arg(dataSize(fullBytes)));
  const std::span<const attn::ImageSize> sizes(&size, 1);
  auto decoded = bytes.empty() ? attn::load_image_sizes(toPath(source.path), sizes, source.limits)
                               : attn::decode_image_sizes(bytes, source.name.toStdString(), sizes, source.limits);
  if (!decoded) {
    emit loadFailed(serial, fromStd(decoded.error().message()));
    return;
  }
  if (decoded->front().empty()) {
    emit loadFailed(serial, tr("%1: the image has no pixels").arg(source.name));
    return;
  }
  emit loadProgress(serial, 50, tr("building the pyramid"));
  auto base = std::make_shared<const attn::Image>(std::move(decoded->front()));
  auto pyramid = std::make_shared<const attn::ImagePyramid>(base);
  emit loadProgress(serial, 70, tr("packing for the sampler"));
  auto packed = std::make_shared<const attn::glimpse::PackedImage>(attn::glimpse::pack(*base));
  emit loadProgress(serial, 80, tr("preparing the display"));
  auto image = std::make_shared<GlimpseImage>();
  image->serial = serial;
  image->name = source.name;
  image->path = source.path;
  image->width = base->width;
  image->height = base->height;
  image->photoWidth = info->width;
  image->photoHeight = info->height;
  image->bytes = qint64(double(image->width) * image->height * kBytesPerPixel);
  image->pyramid = pyramid;
  image->packed = std::move(packed);
  image->display.reserve(std::size_t(pyramid->levels()));
  for (int level = 0; level < pyramid->levels(); ++level)
    image->display.push_back(render::toQImage(pyramid->level(level)));
  image->loadMs = msSince(timer);
  use(image);
  emit loadProgress(serial, 100, tr("ready"));
  emit loaded(std::move(image));
}

void GlimpseWorker::use(std::shared_ptr<const GlimpseImage> image) {
  const auto& pyramid = image->pyramid;
  // A new image gets a new, empty write canvas at a level small enough to add to every frame.
  canvasLevel_ = 0;
  while (canvasLevel_ + 1 < pyramid->levels() &&
         std::max(pyramid->level(canvasLevel_).width, pyramid->level(canvasLevel_).height) > kCanvasMaxSide) {
    ++canvasLevel_;
  }
  const auto& canvasShape = pyramid->level(canvasLevel_);
  canvas_ = attn::Image(canvasShape.width, canvasShape.height, canvasShape.channels, 0.0f);
  coverage_ = attn::Image(canvasShape.width, canvasShape.height, 1, 0.0f);
  canvasWrites_ = 0;
  canvasDirty_ = true;
  lastWritten_.reset();
  workspace_ = {};
  image_ = std::move(image);
}

std::shared_ptr<const GlimpseOutcome> GlimpseWorker::compute(quint64 generation, quint64 imageSerial,
                                                             const GlimpseRequest& request) {
  QElapsedTimer total;
  total.start();
  auto out = std::make_shared<GlimpseOutcome>();
  out->generation = generation;
  out->imageSerial = imageSerial;
  out->request = request;
  const attn::Image& base = image_->pyramid->base();
  out->imageWidth = base.width;
  out->imageHeight = base.height;
  // What the settings mean for this image, resolved once for the request: every step below reads it.
  const auto geometry = attn::glimpse::resolve(request.settings, base.width, base.height);
  out->sanitised = geometry.gaussian;
  out->theta = geometry.stn_theta;
  out->stnWidth = geometry.stn_width;
  out->stnHeight = geometry.stn_height;
  readGaussian(*out);
  readStn(*out);
  compareSameWindow(*out);
  writeCanvas(*out);
  computeForms(*out);
  out->computeMs = msSince(total);
  return out;
}

void GlimpseWorker::readGaussian(GlimpseOutcome& out) {
  const attn::ImagePyramid& pyramid = *image_->pyramid;
  const attn::Image& base = pyramid.base();
  const int width = base.width;
  const int height = base.height;
  const GlimpseRequest& request = out.request;

  // Gaussian read: exact, or a preview level when a drag frame cannot afford the exact one.
  const GaussianGlimpse& glimpse = out.sanitised.glimpse;
  out.budgetMacs = budgetMacs();
  // A drag frame's read is small and latency-bound: one thread. An OpenMP team on a busy machine waits
  // for its second thread to be scheduled at every parallel region (measured: a 3 M-MAC preview read took
  // 70-120 ms with two threads under load, 2 ms with one). The exact read gets the process's default.
  // Small exact reads stay on one thread too: below ~20 M cost units (a few ms) a team costs more than it
  // saves.
  const bool small = attn::glimpse::estimate_read(glimpse, width, height, base.channels).cost < kSingleThreadCost;
  omp_set_num_threads(request.dragging || small ? 1 : defaultThreads_);
  out.plan =
      request.dragging ? attn::glimpse::plan_read(glimpse, pyramid, out.budgetMacs) : attn::glimpse::ReadPlan{0, 0.0};
  {
    QElapsedTimer timer;
    timer.start();
    auto read =
        std::make_shared<attn::Image>(attn::glimpse::read_planned(pyramid, glimpse, out.plan, &out.stats, &workspace_));
    out.readMs = msSince(timer);
    const double cost = out.stats.cost > 0.0 ? out.stats.cost : out.stats.macs;
    if (!rateFixed_.load() && cost >= kMinTimedMacs && out.readMs > 0.05) {
      const double rate = std::clamp(cost / out.readMs, kMinRate, kMaxRate);
      // The first measurement replaces the guess; later ones are averaged so one slow frame (another
      // process on the core) does not swing the budget.
      macsPerMs_.store(rateMeasured_ ? 0.7 * macsPerMs_.load() + 0.3 * rate : rate);
      rateMeasured_ = true;
    }
    out.gaussianImage = render::toQImage(*read);
    out.gaussian = std::move(read);
  }
  if (!out.plan.preview()) {
    out.fx = std::make_shared<const attn::glimpse::FilterBank>(attn::glimpse::make_filterbank(glimpse.x, width));
    out.fy = std::make_shared<const attn::glimpse::FilterBank>(attn::glimpse::make_filterbank(glimpse.y, height));
  }
}

void GlimpseWorker::readStn(GlimpseOutcome& out) const {
  const attn::Image& base = image_->pyramid->base();
  const auto& settings = out.request.settings;

  // STN glimpse, always on the full-resolution image: its cost is the output size, not the window's. The
  // theta and the size are the resolved ones (in same-window mode the Gaussian's window).
  QElapsedTimer timer;
  timer.start();
  auto stn = std::make_shared<attn::Image>();
  if (image_->packed && !image_->packed->empty()) {
    attn::glimpse::stn_glimpse_into(*image_->packed, out.theta, out.stnWidth, out.stnHeight, settings.stn.sampler,
                                    *stn);
  } else {
    attn::glimpse::stn_glimpse_into(base, out.theta, out.stnWidth, out.stnHeight, settings.stn.sampler, *stn);
  }
  out.stnMs = msSince(timer);
  out.stnImage = render::toQImage(*stn);
  out.stn = std::move(stn);
}

void GlimpseWorker::computeForms(GlimpseOutcome& out) const {
  if (!out.request.windowForms || out.request.dragging) return;
  const attn::ImagePyramid& pyramid = *image_->pyramid;
  int level = 0;
  while (level + 1 < pyramid.levels() &&
         std::max(pyramid.level(level).width, pyramid.level(level).height) > kFormsMaxSide) {
    ++level;
  }
  auto forms = std::make_shared<attn::glimpse::WindowForms>(
      attn::glimpse::window_forms(pyramid.level(level), attn::glimpse::at_level(out.sanitised.glimpse, level)));
  out.formsLevel = level;
  out.maskedImage = render::toQImage(forms->masked);
  out.cropImage = forms->crop.empty() ? QImage() : render::toQImage(forms->crop);
  out.matrixImage = render::toQImage(forms->matrix);
  out.forms = std::move(forms);
}

void GlimpseWorker::writeCanvas(GlimpseOutcome& out) {
  const GlimpseRequest& request = out.request;
  const GaussianGlimpse& glimpse = out.sanitised.glimpse;
  if (request.writeMode && !out.plan.preview() && !canvas_.empty()) {
    if (!lastWritten_ || !(*lastWritten_ == glimpse)) {
      if (canvas_.channels == out.gaussian->channels) {
        const auto atLevel = attn::glimpse::at_level(glimpse, canvasLevel_);
        attn::glimpse::write_add(canvas_, *out.gaussian, atLevel);
        const attn::Image ones(out.gaussian->width, out.gaussian->height, 1, static_cast<float>(atLevel.gamma));
        attn::glimpse::write_add(coverage_, ones, atLevel);
        ++canvasWrites_;
        canvasDirty_ = true;
      }
      lastWritten_ = glimpse;
    }
  }
  if (request.writeMode) {
    out.hasCanvas = true;
    out.canvasLevel = canvasLevel_;
    out.canvasWrites = canvasWrites_;
    if (canvasDirty_) {  // drag frames do not write: reuse the last conversion
      canvasImage_ = render::toQImageByCoverage(canvas_, coverage_, &canvasPeak_);
      canvasDirty_ = false;
    }
    out.canvasImage = canvasImage_;
    out.canvasPeak = canvasPeak_;
  }
}

}  // namespace attn::ui
