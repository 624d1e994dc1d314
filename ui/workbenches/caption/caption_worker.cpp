#include "workbenches/caption/caption_worker.h"
#include "render/strings.h"

#include "attn/vision/pyramid.h"
#include "attn/vision/scenes.h"
#include "render/caption_render.h"
#include "render/glimpse_render.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>

#include <omp.h>

#include <algorithm>
#include <filesystem>
#include <span>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// The display image without converting a huge photo to a QImage first: halve it on the engine's pyramid
// until it is at most twice the display size.
QImage displayOf(const attn::Image& image) {
  if (std::max(image.width, image.height) <= 1536) return render::captionDisplayImage(render::toQImage(image));
  attn::Image smaller = attn::pyr_down(image);
  while (std::max(smaller.width, smaller.height) > 1536) smaller = attn::pyr_down(smaller);
  return render::captionDisplayImage(render::toQImage(smaller));
}

}  // namespace

QString CaptionInput::name() const {
  return kind == Kind::Scene ? CaptionWorker::tr("scene %1").arg(seed) : QFileInfo(path).fileName();
}

QStringList CaptionOutcome::warnings() const {
  QStringList out = modelWarnings;
  if (run) {
    for (const auto& w : run->warnings) out.append(QString::fromStdString(w));
  }
  return out;
}

std::shared_ptr<const CaptionMaps> captionMaps(const attn::models::CaptionRun& run, int h, double sigma) {
  QElapsedTimer timer;
  timer.start();
  auto maps = std::make_shared<CaptionMaps>();
  maps->hypothesis = h;
  maps->sigma = sigma;
  if (h < 0 || std::size_t(h) >= run.hypotheses.size()) return maps;
  const auto& alpha = run.hypotheses[std::size_t(h)].alpha;
  const auto cells = std::size_t(alpha.cols());
  maps->words.reserve(std::size_t(alpha.rows()));
  for (Index t = 0; t < alpha.rows(); ++t) {
    maps->words.push_back(render::smoothedAlpha(std::span<const float>(alpha.row(t).data(), cells), run.grid, sigma));
  }
  const auto coverage = render::alphaCoverage(alpha);
  maps->coverage = render::smoothedAlpha(coverage, run.grid, sigma);
  maps->ms = msSince(timer);
  return maps;
}

QImage captionWordOverlay(const QImage& display, const attn::models::CaptionRun& run, const CaptionMaps& maps, int t,
                          const render::CaptionOverlayOptions& options) {
  if (t < 0 || std::size_t(t) >= maps.words.size()) return display;
  int cell = -1;
  if (std::size_t(maps.hypothesis) < run.hypotheses.size()) {
    const auto& location = run.hypotheses[std::size_t(maps.hypothesis)].location;
    if (std::size_t(t) < location.size()) cell = location[std::size_t(t)];
  }
  return render::composeOverlay(display, render::alphaLayer(maps.words[std::size_t(t)], options), cell, run.grid);
}

render::CaptionGridFigure captionGridFigure(const QImage& display, const attn::models::CaptionRun& run,
                                            const CaptionMaps& maps, const render::CaptionOverlayOptions& options,
                                            int perRow, const QString& heading) {
  render::CaptionGridFigure figure;
  figure.heading = heading;
  figure.perRow = perRow;
  figure.cells.push_back({CaptionWorker::tr("image"), display});
  if (std::size_t(maps.hypothesis) >= run.hypotheses.size()) return figure;
  const auto& hyp = run.hypotheses[std::size_t(maps.hypothesis)];
  for (std::size_t t = 0; t < maps.words.size() && t < hyp.words.size(); ++t) {
    figure.cells.push_back(
        {QString::fromStdString(hyp.words[t]), captionWordOverlay(display, run, maps, int(t), options)});
  }
  return figure;
}

attn::Result<CaptionImage> readCaptionInput(const CaptionInput& input) {
  QElapsedTimer timer;
  timer.start();
  CaptionImage out;
  out.input = input;
  out.name = input.name();
  attn::Image image;
  if (input.kind == CaptionInput::Kind::Scene) {
    const attn::Scene scene = attn::generate_scene(input.seed);
    image = scene.image();
    out.sceneCaption = QString::fromStdString(scene.caption);
  } else {
    attn::Result<attn::Image> decoded =
        attn::fail(attn::ErrorKind::OutOfRange, "nothing to decode", out.name.toStdString());
    if (input.kind == CaptionInput::Kind::Resource) {
      QFile resource(input.path);
      if (!resource.open(QIODevice::ReadOnly)) {
        return attn::fail(
            attn::ErrorKind::Io,
            CaptionWorker::tr("cannot read the bundled image (%1)").arg(resource.errorString()).toStdString(),
            out.name.toStdString());
      }
      const QByteArray bytes = resource.readAll();
      const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.constData());
      decoded = attn::decode_image(std::span<const std::uint8_t>(data, std::size_t(bytes.size())),
                                   out.name.toStdString(), input.limits);
    } else {
      decoded = attn::load_image(toPath(input.path), input.limits);
    }
    if (!decoded) return std::unexpected(decoded.error());
    image = std::move(*decoded);
  }
  if (image.empty()) {
    return attn::fail(attn::ErrorKind::OutOfRange, CaptionWorker::tr("the image has no pixels").toStdString(),
                      out.name.toStdString());
  }
  out.width = image.width;
  out.height = image.height;
  out.display = displayOf(image);
  out.image = std::make_shared<const attn::Image>(std::move(image));
  out.loadMs = msSince(timer);
  return out;
}

CaptionWorker::CaptionWorker() {
  qRegisterMetaType<std::shared_ptr<const attn::ui::CaptionSource>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::CaptionImage>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::CaptionOutcome>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::CaptionMaps>>();
}

void CaptionWorker::load(quint64 serial, QString nameOrFolder) {
  mailbox_.post([&] { pendingLoad_.put(PendingLoad{serial, std::move(nameOrFolder)}); });
}

void CaptionWorker::open(quint64 serial, CaptionInput input) {
  mailbox_.post([&] { pendingOpen_.put(PendingOpen{serial, std::move(input)}); });
}

void CaptionWorker::submit(quint64 generation, std::shared_ptr<const CaptionSource> source,
                           std::shared_ptr<const CaptionImage> image, CaptionRequest request, double sigma) {
  const quint64 sourceSerial = source ? source->serial : 0, imageSerial = image ? image->serial : 0;
  mailbox_.post([&] {
    pendingRun_.put(
        PendingRun{generation, sourceSerial, imageSerial, request, sigma, std::move(source), std::move(image)});
  });
}

void CaptionWorker::smooth(quint64 generation, std::shared_ptr<const attn::models::CaptionRun> run, int h,
                           double sigma) {
  mailbox_.post([&] { pendingSmooth_.put(PendingSmooth{generation, std::move(run), h, sigma}); });
}

void CaptionWorker::drain() {
  // As AlignmentWorker::drain: the model is small, a team of OpenMP threads costs more than it saves.
  omp_set_num_threads(1);
  std::optional<PendingLoad> load;
  std::optional<PendingOpen> open;
  std::optional<PendingRun> run;
  std::optional<PendingSmooth> smooth;
  // One request at a time, in this order: a model, an image, a run (which may need both), a smoothing.
  while (mailbox_.next([&] {
    load.reset();
    open.reset();
    run.reset();
    smooth.reset();
    if ((load = pendingLoad_.take())) return true;
    if ((open = pendingOpen_.take())) return true;
    if ((run = pendingRun_.take())) return true;
    return (smooth = pendingSmooth_.take()).has_value();
  })) {
    if (load) {
      runLoad(load->serial, load->nameOrFolder);
    } else if (open) {
      runOpen(open->serial, open->input);
    } else if (run) {
      // The tab kept another model or image than the last ones loaded here.
      if (run->source && run->source != source_) {
        source_ = run->source;
        runner_ = std::make_unique<attn::models::CaptionerRunner>(source_->model.model);
      }
      if (run->image) image_ = run->image;
      // For a model or an image no longer current: a newer request follows.
      if (!source_ || !image_ || run->sourceSerial != source_->serial || run->imageSerial != image_->serial) continue;
      auto outcome = std::make_shared<CaptionOutcome>();
      outcome->generation = run->generation;
      outcome->sourceSerial = run->sourceSerial;
      outcome->imageSerial = run->imageSerial;
      outcome->request = run->request;
      for (const auto& w : source_->model.model->warnings()) outcome->modelWarnings.append(QString::fromStdString(w));
      QElapsedTimer timer;
      timer.start();
      attn::models::CaptionOptions options;
      options.beam = std::max(1, run->request.beam);
      auto result = runner_->run(*image_->image, options);
      outcome->runMs = msSince(timer);
      if (result) {
        auto shared = std::make_shared<const attn::models::CaptionRun>(std::move(*result));
        outcome->maps = captionMaps(*shared, 0, run->sigma);
        outcome->run = std::move(shared);
      } else {
        outcome->error = result.error();
      }
      runs_.fetch_add(1);
      emit finished(std::move(outcome));
    } else if (smooth) {
      auto maps = captionMaps(*smooth->run, smooth->hypothesis, smooth->sigma);
      smooths_.fetch_add(1);
      emit smoothed(smooth->generation, std::move(maps));
    }
  }
}

void CaptionWorker::runLoad(quint64 serial, const QString& nameOrFolder) {
  QElapsedTimer timer;
  timer.start();
  auto model = loadCaptionModel(nameOrFolder);
  if (!model) {
    emit loadFailed(serial, QString::fromStdString(model.error().message()));
    return;
  }
  auto source = std::make_shared<CaptionSource>();
  source->serial = serial;
  source->model = std::move(*model);
  source->loadMs = msSince(timer);
  source_ = source;
  runner_ = std::make_unique<attn::models::CaptionerRunner>(source_->model.model);
  emit loaded(source_);
}

void CaptionWorker::runOpen(quint64 serial, const CaptionInput& input) {
  auto image = readCaptionInput(input);
  if (!image) {
    emit openFailed(serial, QString::fromStdString(image.error().message()));
    return;
  }
  image->serial = serial;
  image_ = std::make_shared<const CaptionImage>(std::move(*image));
  emit opened(image_);
}

}  // namespace attn::ui
