#include "workbenches/transformer/transformer_worker.h"
#include "render/strings.h"
#include "workbenches/common/model_files.h"

#include "attn/io/attention_dump.h"
#include "attn/text/token_ids.h"

#include <QElapsedTimer>
#include <QLocale>
#include <QFile>

#include <algorithm>
#include <filesystem>
#include <span>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

QImage displayImage(const attn::Image& image) {
  QImage out(image.width, image.height, QImage::Format_RGBX8888);  // image_to_u8 writes R, G, B, X bytes
  attn::image_to_u8(image, out.bits(), out.bytesPerLine(), 4);
  return out.convertToFormat(QImage::Format_RGB32);
}

// The photo at `path` (a file or a ":/" resource) decoded once into each of `sizes`, and its own size from the
// header: a big photo's full-size float image is never made (attn::ImageSize).
struct DecodedPhoto {
  std::vector<attn::Image> images;
  int width = 0, height = 0;
};
attn::Result<DecodedPhoto> decodePhoto(const QString& path, const QString& name,
                                       std::span<const attn::ImageSize> sizes) {
  DecodedPhoto out;
  if (path.startsWith(u':')) {
    QFile resource(path);
    if (!resource.open(QIODevice::ReadOnly)) {
      return attn::fail(attn::ErrorKind::Io,
                        "cannot read the bundled image (" + resource.errorString().toStdString() + ")",
                        name.toStdString());
    }
    const QByteArray bytes = resource.readAll();
    const std::span<const std::uint8_t> data(reinterpret_cast<const std::uint8_t*>(bytes.constData()),
                                             std::size_t(bytes.size()));
    auto info = attn::probe_image_bytes(data, name.toStdString());
    if (!info) return std::unexpected(info.error());
    auto images = attn::decode_image_sizes(data, name.toStdString(), sizes);
    if (!images) return std::unexpected(images.error());
    return DecodedPhoto{std::move(*images), info->width, info->height};
  }
  const auto file = toPath(path);
  auto info = attn::probe_image(file);
  if (!info) return std::unexpected(info.error());
  auto images = attn::load_image_sizes(file, sizes);
  if (!images) return std::unexpected(images.error());
  return DecodedPhoto{std::move(*images), info->width, info->height};
}

attn::ImageSize modelSize(int side) { return {.fit = attn::ImageSize::Fit::Exact, .width = side, .height = side}; }

bool sameImage(const std::shared_ptr<const VisionInput>& a, const std::shared_ptr<const VisionInput>& b) {
  if (!a || !b) return a == b;
  return a->serial == b->serial;
}

bool sameGeneration(const std::optional<attn::models::GenerateOptions>& a,
                    const std::optional<attn::models::GenerateOptions>& b) {
  if (!a || !b) return !a && !b;
  return a->max_new_tokens == b->max_new_tokens && a->temperature == b->temperature && a->top_k == b->top_k &&
         a->top_p == b->top_p && a->seed == b->seed && a->stop_at_eos == b->stop_at_eos;
}

// The position the views pin: a generated run's step, else the last token (where a reader looks first).
int pinnedPosition(const attn::models::TransformerRun& run, std::optional<int> step) {
  const int n = static_cast<int>(run.ids.size());
  if (step && run.prompt_tokens > 0) return std::clamp(run.prompt_tokens + *step, 0, std::max(0, n - 1));
  return n - 1;
}

// The logit lens at kLensColumns positions around the pinned one (it three quarters along, the run's last positions
// when nothing is pinned), so that the lens follows the scrubber.
void readLens(TransformerOutcome& outcome, const attn::models::TransformerModel& model) {
  const auto& run = *outcome.run;
  const int n = static_cast<int>(run.ids.size());
  const int columns = TransformerWorker::kLensColumns;
  const int start =
      std::clamp(pinnedPosition(run, outcome.request.step) - columns * 3 / 4 + 1, 0, std::max(0, n - columns));
  std::vector<int> positions;
  for (int p = start; p < std::min(n, start + columns); ++p) positions.push_back(p);
  auto lens = model.logit_lens(run, positions, 5);
  if (lens) {
    outcome.lens = std::make_shared<const attn::models::LogitLens>(std::move(*lens));
  } else {
    outcome.lensError = fromStd(lens.error().message());
  }
}

bool sameRollout(const attn::analysis::RolloutOptions& a, const attn::analysis::RolloutOptions& b) {
  return a.fusion == b.fusion && a.discard_ratio == b.discard_ratio && a.residual == b.residual &&
         a.first_layer == b.first_layer && a.last_layer == b.last_layer;
}

// The preview of the layer just finished (the last of `so_far`): the tokens so far and that layer's maps,
// every other of the `layers` layers an empty stack.
std::shared_ptr<TransformerPreview> layerPreview(quint64 generation, quint64 sourceSerial,
                                                 const attn::LayeredTrace& so_far, int layers) {
  const auto& done = so_far.layers.back();
  auto early = std::make_shared<TransformerPreview>();
  early->generation = generation;
  early->sourceSerial = sourceSerial;
  early->layer = done.layer;
  early->stage = done.stage;
  auto trace = std::make_shared<attn::LayeredTrace>();
  trace->tokens = so_far.tokens;
  trace->spans = so_far.spans;
  trace->cross_rows = so_far.cross_rows;
  trace->layers.resize(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    trace->layers[static_cast<std::size_t>(l)].stage = done.stage;
    trace->layers[static_cast<std::size_t>(l)].layer = l;
  }
  trace->layers[static_cast<std::size_t>(done.layer)].maps = done.maps;  // a copy: the run goes on
  early->trace = std::move(trace);
  return early;
}

// A run into `outcome`: its trace (up to the generated token `step` when given) and stage, the head statistics (of
// that token's row) and the model view's thumbnails.
void analyseRun(TransformerOutcome& outcome, const std::shared_ptr<const attn::models::TransformerRun>& run,
                std::optional<int> step) {
  outcome.run = run;
  if (!run->on_demand.empty()) {
    // Kept on demand (a long input): no maps to cut at a step; the statistics the forward streamed, and
    // thumbnails from each head's preview.
    outcome.trace = std::shared_ptr<const attn::LayeredTrace>(run, &run->attention);
    outcome.stage = run->on_demand.front().causal() ? attn::Stage::Decoder : attn::Stage::Encoder;
    outcome.stats = std::make_shared<const std::vector<attn::analysis::HeadStats>>(
        attn::analysis::streamed_statistics(run->on_demand, run->special_positions));
    outcome.thumbnails = std::make_shared<const render::HeadThumbnails>(
        render::makeThumbnails(run->on_demand, TransformerWorker::kThumbnailSide));
    return;
  }
  const auto tokens = static_cast<attn::Index>(run->attention.tokens.size());
  std::optional<attn::Index> query;
  if (step && run->prompt_tokens > 0 && tokens > 0)
    query = std::clamp<attn::Index>(run->prompt_tokens + *step, 0, tokens - 1);
  if (query && *query + 1 < tokens) {
    outcome.trace = std::make_shared<const attn::LayeredTrace>(run->attention.prefix(*query + 1));
  } else {
    outcome.trace = std::shared_ptr<const attn::LayeredTrace>(run, &run->attention);
  }
  outcome.stage = run->attention.layers.empty() ? attn::Stage::Encoder : run->attention.layers.front().stage;
  attn::analysis::StatsOptions stats;
  stats.stage = outcome.stage;
  stats.special_positions = run->special_positions;
  stats.grid_rows = run->grid_rows;
  stats.grid_cols = run->grid_cols;
  stats.query_row = query;
  outcome.stats = std::make_shared<const std::vector<attn::analysis::HeadStats>>(
      attn::analysis::head_statistics(*outcome.trace, stats));
  outcome.thumbnails = std::make_shared<const render::HeadThumbnails>(
      render::makeThumbnails(*outcome.trace, outcome.stage, TransformerWorker::kThumbnailSide));
}

// The rollout of the outcome's trace with its request's options (or why there is none) into `outcome`.
void rolloutInto(TransformerOutcome& outcome) {
  if (!outcome.run->on_demand.empty()) {
    outcome.rolloutError = TransformerWorker::tr(
                               "rollout: the whole matrix is not computed for a run whose attention is kept on "
                               "demand (%1 tokens); the row strip under the map gives one query's row of it "
                               "(\u201cRollout\u201d)")
                               .arg(outcome.run->attention.tokens.size());
    return;
  }
  auto options = outcome.request.rollout;
  options.stage = outcome.stage;
  auto rollout = attn::analysis::rollout(*outcome.trace, options);
  if (rollout) {
    outcome.rollout = std::make_shared<const attn::Matrix>(std::move(*rollout));
  } else {
    outcome.rolloutError = fromStd(rollout.error().message());
  }
}

// A run that may keep its attention on demand (its text has at least as many bytes as tokens): it sends no layer
// early, so a newer request stops it at once (RunOptions::cancel) instead of after that layer.
bool mayKeepOnDemand(const attn::models::TransformerConfig& config, const TransformerRequest& request) {
  attn::models::RunOptions::Keep keep{};
  attn::models::run_bytes(config, attn::Index(request.text.size() + request.pair.size()) + 16, request.run, &keep);
  return keep == attn::models::RunOptions::Keep::OnDemand;
}

// The last outcome's run for a request with the same input: its analysis too when the step is the same, and its
// rollout when that is the same as well (then true: nothing is left to compute).
bool reuseRun(TransformerOutcome& outcome, const TransformerOutcome& last,
              const attn::models::TransformerModel* model) {
  outcome.run = last.run;
  outcome.trace = last.trace;
  outcome.stage = last.stage;
  outcome.stats = last.stats;
  outcome.thumbnails = last.thumbnails;
  outcome.lens = last.lens;
  outcome.lensError = last.lensError;
  outcome.generationMs = last.generationMs;
  outcome.plainRun = last.plainRun;
  outcome.compareRun = last.compareRun;
  outcome.interventionError = last.interventionError;
  outcome.reusedRun = true;
  const bool sameStep = last.request.step == outcome.request.step;
  if (!sameStep) {
    analyseRun(outcome, outcome.run, outcome.request.step);  // another generated token in view
    // The lens follows it: read again when its columns do not hold the token now pinned.
    const int pinned = pinnedPosition(*outcome.run, outcome.request.step);
    if (outcome.lens && model && !outcome.run->hidden_states.empty() &&
        std::find(outcome.lens->positions.begin(), outcome.lens->positions.end(), pinned) ==
            outcome.lens->positions.end()) {
      readLens(outcome, *model);
    }
  }
  if (!sameStep || !sameRollout(last.request.rollout, outcome.request.rollout)) return false;
  outcome.rollout = last.rollout;
  outcome.rolloutError = last.rolloutError;
  return true;
}

// The ids of a text typed as "ids: 5 17 3" (checked against the vocabulary), nullopt for any other text.
std::optional<attn::Result<std::vector<int>>> typedIds(const attn::models::TransformerModel& model,
                                                       const std::string& text) {
  const auto list = attn::text::token_ids_text(text);
  if (!list) return std::nullopt;
  return attn::text::parse_token_ids(*list, model.config().vocab_size, "ids");
}

// A text the model cannot read, because it has no tokenizer: the engine's reason, and what to type instead.
attn::Error withIdsHint(attn::Error error, const attn::models::TransformerModel& model) {
  if (!model.tokenizer()) {
    error.reason +=
        "; type token ids instead, e.g. \"ids: 5 17 3\" (0-" + std::to_string(model.config().vocab_size - 1) + ")";
  }
  return error;
}

}  // namespace

attn::models::Family TransformerSource::family() const {
  return model ? model->config().family : attn::models::Family::Bert;
}
bool TransformerSource::isVision() const { return model && model->config().family == attn::models::Family::Vit; }
bool TransformerSource::takesPair() const { return model && model->config().family == attn::models::Family::Bert; }

TransformerWorker::TransformerWorker() {
  qRegisterMetaType<std::shared_ptr<const attn::ui::TransformerSource>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::VisionInput>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::TransformerOutcome>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::TransformerPreview>>();
}

std::vector<int> TransformerWorker::specialPositions(const attn::Labels& tokens) {
  std::vector<int> out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (t == "[CLS]" || t == "[SEP]" || t == "<s>" || t == "</s>" || t == "<|endoftext|>" || t == "[CLASS]" ||
        t == "<cls>") {
      out.push_back(int(i));
    }
  }
  return out;
}

void TransformerWorker::load(quint64 serial, QString path) {
  mailbox_.post([&] {
    pendingLoad_.put(PendingLoad{serial, std::move(path)});
    cancel_.store(true);  // a load still running gives way to the newer one
  });
}

void TransformerWorker::cancelLoad() {
  const std::optional<PendingLoad> dropped = mailbox_.locked([this] {
    cancel_.store(true);
    return pendingLoad_.take();
  });
  // A load that has not started is cancelled here; a running one at its next progress report.
  if (dropped) emit loadFailed(dropped->serial, tr("%1: cancelled").arg(dropped->path), true);
}

void TransformerWorker::cancelRun() {
  const std::optional<PendingRun> dropped = mailbox_.locked([this] {
    cancelRun_.store(true);
    runWaiting_.store(true);  // what stops a run kept on demand between its blocks of rows
    return pendingRun_.take();
  });
  stopGeneration_.store(true);
  if (dropped) {
    auto outcome = std::make_shared<TransformerOutcome>();
    outcome->generation = dropped->generation;
    outcome->sourceSerial = dropped->sourceSerial;
    outcome->request = dropped->request;
    outcome->error = attn::Error{{}, -1, -1, "cancelled", attn::ErrorKind::Cancelled};
    emit finished(std::move(outcome));
  }
}

void TransformerWorker::loadImage(quint64 serial, QString path, QString name) {
  mailbox_.post([&] { pendingImage_.put(PendingImage{serial, std::move(path), std::move(name)}); });
}

void TransformerWorker::submit(quint64 generation, std::shared_ptr<const TransformerSource> source,
                               TransformerRequest request) {
  const quint64 sourceSerial = source ? source->serial : 0;
  mailbox_.post([&] {
    pendingRun_.put(PendingRun{generation, sourceSerial, std::move(request), std::move(source)});
    runWaiting_.store(true);
  });
}

void TransformerWorker::drain() {
  std::optional<PendingLoad> load;
  std::optional<PendingImage> image;
  std::optional<PendingRun> run;
  // A model, then a photo, then a run.
  while (mailbox_.next([&] {
    image.reset();
    run.reset();
    if (quitting_.load()) return false;  // abandon(): nothing more runs
    if ((load = pendingLoad_.take())) {
      cancel_.store(false);  // under the lock: a cancel for this load can only come after this point
      return true;
    }
    if ((image = pendingImage_.take())) return true;
    if ((run = pendingRun_.take())) {
      runWaiting_.store(false);
      cancelRun_.store(false);  // under the lock: a cancel for this run can only come after this point
      return true;
    }
    return false;
  })) {
    if (load) {
      runLoad(load->serial, load->path);
    } else if (image) {
      runImage(image->serial, image->path, image->name);
    } else if (run) {
      if (run->source && run->source != source_) use(run->source);     // the tab kept another model
      if (!source_ || run->sourceSerial != source_->serial) continue;  // for a model no longer loaded
      auto outcome = compute(run->generation, run->sourceSerial, run->request);
      if (!outcome) continue;  // superseded mid-run: the newer request is next
      runs_.fetch_add(1);
      emit finished(std::move(outcome));
    }
  }
}

void TransformerWorker::runLoad(quint64 serial, const QString& path) {
  QElapsedTimer timer;
  timer.start();
  const std::filesystem::path fsPath = toPath(path);  // the name's bytes, UTF-8 or not
  auto source = std::make_shared<TransformerSource>();
  source->serial = serial;
  source->path = absolutePath(path);
  source->name = fileNameOf(path);
  if (attn::io::is_attention_dump_name(fsPath)) {
    emit loadProgress(serial, 10, tr("reading %1").arg(source->name));
    auto dump = attn::io::read_attention_dump(fsPath);
    if (!dump) {
      emit loadFailed(serial, fromStd(dump.error().message()), false);
      return;
    }
    if (dump->trace.layers.empty() && dump->on_demand.empty()) {
      emit loadFailed(serial, tr("%1: the dump holds no attention maps").arg(path), false);
      return;
    }
    source->kind = TransformerSource::Kind::Dump;
    source->dumpSpecial = specialPositions(dump->trace.tokens);
    const bool onDemand = !dump->on_demand.empty();
    const int layers =
        onDemand ? int(dump->on_demand.size()) : dump->trace.layer_count(dump->trace.layers.front().stage);
    const int heads = onDemand ? dump->on_demand.front().heads() : dump->trace.layers.front().maps.heads();
    source->description = tr("attention dump%1 \u00b7 %2%3 layers \u00b7 %4 heads \u00b7 %5 tokens")
                              .arg(onDemand ? tr(" (version 2: kept on demand)") : QString())
                              .arg(dump->model.empty() ? QString() : fromStd(dump->model) + u" \u00b7 "_s)
                              .arg(layers)
                              .arg(heads)
                              .arg(QLocale().toString(qlonglong(dump->trace.tokens.size())));
    if (onDemand) {
      source->dumpOnDemand = std::make_shared<const std::vector<attn::OnDemandLayer>>(std::move(dump->on_demand));
    }
    for (const auto& w : dump->warnings) source->warnings.append(fromStd(w));
    source->dumpIntact = dump->file_intact;
    source->dump = std::make_shared<const attn::LayeredTrace>(std::move(dump->trace));
  } else {
    // A file inside a model folder (config.json, model.safetensors) stands for its folder; anything else
    // (a pickled checkpoint, a stray file) goes to the engine, which names the problem.
    std::filesystem::path folder = fsPath;
    if (isFilePath(path) && (source->name == u"config.json"_s || path.endsWith(u".safetensors"_s))) {
      folder = fsPath.parent_path();
      source->path = folderOf(path);
      source->name = fileNameOf(source->path);
    }
    const auto progress = [this, serial](double fraction, const std::string& what) {
      emit loadProgress(serial, int(std::clamp(fraction, 0.0, 1.0) * 100.0), fromStd(what));
      return !cancel_.load();
    };
    auto model = attn::models::TransformerModel::load(folder, progress);
    if (!model) {
      const bool cancelled = model.error().reason == "cancelled";
      emit loadFailed(serial, fromStd(model.error().message()), cancelled);
      return;
    }
    source->kind = TransformerSource::Kind::Model;
    source->model = std::move(*model);
    source->description = fromStd(source->model->description());
    for (const auto& w : source->model->warnings()) source->warnings.append(fromStd(w));
    source->card = fromStd(source->model->card());
    if (source->card.isEmpty()) source->card = readModelCard(source->path);
  }
  source->loadMs = msSince(timer);
  use(source);
  emit loaded(source_);
}

void TransformerWorker::use(std::shared_ptr<const TransformerSource> source) {
  source_ = std::move(source);
  runner_.reset();
  if (source_->model) runner_ = std::make_unique<attn::models::TransformerRunner>(source_->model);
  last_.reset();
}

void TransformerWorker::runImage(quint64 serial, const QString& path, const QString& name) {
  // ViT's input at the open model's size (224 until a ViT is open) and the view's copy, from one decode.
  const int side = source_ && source_->isVision() ? source_->model->config().image_size : 224;
  const attn::ImageSize sizes[] = {modelSize(side), {.fit = attn::ImageSize::Fit::Within, .max_side = kDisplaySide}};
  auto decoded = decodePhoto(path, name, sizes);
  if (!decoded) {
    emit imageFailed(serial, fromStd(decoded.error().message()));
    return;
  }
  auto input = std::make_shared<VisionInput>();
  input->serial = serial;
  input->name = name;
  input->path = path;
  input->width = decoded->width;
  input->height = decoded->height;
  input->display = displayImage(decoded->images[1]);
  input->image = std::make_shared<const attn::Image>(std::move(decoded->images[0]));
  emit imageLoaded(std::move(input));
}

attn::Result<std::shared_ptr<const attn::Image>> TransformerWorker::modelInput(const VisionInput& input, int side) {
  if (input.image && input.image->width == side && input.image->height == side) return input.image;
  // A ViT of another input size than the one the photo was read for: read it again, once.
  if (resized_ && resizedSerial_ == input.serial && resized_->width == side) return resized_;
  const attn::ImageSize sizes[] = {modelSize(side)};
  auto decoded = decodePhoto(input.path, input.name, sizes);
  if (!decoded) return std::unexpected(decoded.error());
  resized_ = std::make_shared<const attn::Image>(std::move(decoded->images[0]));
  resizedSerial_ = input.serial;
  return resized_;
}

attn::Result<attn::models::TransformerRun> TransformerWorker::generate(quint64 generation,
                                                                       const TransformerRequest& request,
                                                                       const attn::models::RunOptions& options,
                                                                       double& ms) {
  attn::models::GenerateOptions g = *request.generation;
  stopGeneration_.store(false);
  QElapsedTimer clock;
  clock.start();
  std::vector<int> ids;
  QString typed;  // without a tokenizer: the generated ids, as they would be typed
  g.on_token = [&](int, int id, float) {
    ids.push_back(id);
    const auto* tok = source_->model->tokenizer();
    if (!tok) typed += (typed.isEmpty() ? u""_s : u" "_s) + QString::number(id);
    const QString text = tok ? fromStd(tok->decode(ids)) : typed;
    emit generationProgress(generation, static_cast<int>(ids.size()), text, msSince(clock));
    return !stopGeneration_.load() && !runWaiting_.load();
  };
  attn::models::RunOptions run = options;
  run.on_layer = {};
  attn::Result<attn::models::TransformerRun> result = attn::fail(attn::ErrorKind::OutOfRange, "no prompt");
  if (auto prompt = typedIds(*source_->model, request.text)) {
    result = *prompt ? runner_->generate(**prompt, g, run) : std::unexpected(prompt->error());
  } else {
    result = runner_->generate_text(request.text, g, run);
    if (!result) result = std::unexpected(withIdsHint(result.error(), *source_->model));
  }
  ms = msSince(clock);
  return result;
}

attn::Result<attn::models::TransformerRun> TransformerWorker::runText(quint64 sourceSerial,
                                                                      const TransformerRequest& request,
                                                                      attn::models::RunOptions options) {
  // Typing at the end of a decoder's text: the tokens the last run shares are taken from it.
  if (last_ && last_->sourceSerial == sourceSerial && last_->ok() && !last_->request.generation &&
      last_->request.ablated.empty()) {
    options.previous = last_->run.get();
  }
  if (auto ids = typedIds(*source_->model, request.text)) {
    if (!*ids) return std::unexpected(ids->error());
    return runner_->run_ids(**ids, {}, options);
  }
  auto result = runner_->run_text(request.text, request.pair, options);
  if (!result) return std::unexpected(withIdsHint(result.error(), *source_->model));
  return result;
}

namespace {

// A dump's outcome: its statistics, thumbnails and rollout read the dump's mapped file. Had another process truncated
// it meanwhile, they read zeros there: the outcome becomes a refusal (false). Otherwise it keeps the check, which the
// views ask after each read.
bool keepIfIntact(TransformerOutcome& outcome, const TransformerSource& source) {
  auto ok = source.dumpIntact();
  if (!ok) {
    TransformerOutcome refused;
    refused.generation = outcome.generation;
    refused.sourceSerial = outcome.sourceSerial;
    refused.request = outcome.request;
    refused.error = ok.error();
    outcome = std::move(refused);
    return false;
  }
  outcome.intact = source.dumpIntact;
  return true;
}

}  // namespace

std::shared_ptr<const TransformerOutcome> TransformerWorker::compute(quint64 generation, quint64 sourceSerial,
                                                                     const TransformerRequest& request) {
  auto outcome = std::make_shared<TransformerOutcome>();
  outcome->generation = generation;
  outcome->sourceSerial = sourceSerial;
  outcome->request = request;
  QElapsedTimer timer;
  timer.start();

  // The same input as the last run: only the rollout may have changed.
  const bool sameInput = last_ && last_->sourceSerial == sourceSerial && last_->ok() &&
                         last_->request.text == request.text && last_->request.pair == request.pair &&
                         sameImage(last_->request.image, request.image) &&
                         sameGeneration(last_->request.generation, request.generation) &&
                         (last_->lens || !request.lens) && sameIntervention(last_->request, request);
  if (sameInput) {
    if (reuseRun(*outcome, *last_, source_->model.get())) {
      last_ = outcome;
      return outcome;
    }
  } else {
    std::shared_ptr<attn::models::TransformerRun> run;
    if (source_->dump) {
      run = std::make_shared<attn::models::TransformerRun>();
      run->attention = *source_->dump;
      run->special_positions = source_->dumpSpecial;
      if (source_->dumpOnDemand) run->on_demand = *source_->dumpOnDemand;  // views of the mapped file
    } else {
      attn::Result<attn::models::TransformerRun> result = attn::fail(attn::ErrorKind::OutOfRange, "no model loaded");
      auto options = request.run;
      const int layers = source_->model->config().layers;
      const bool preview = request.previewLayer >= 0 && request.previewLayer < layers;
      bool superseded = false;
      options.cancel = mayKeepOnDemand(source_->model->config(), request) ? &runWaiting_ : &cancelRun_;
      QElapsedTimer clock;
      clock.start();
      options.on_progress = [&](int done, int of, attn::Index tokens) {
        emit runProgress(generation, done, of, qint64(tokens), msSince(clock));
      };
      options.on_layer = [&](const attn::LayeredTrace& so_far) {
        if (so_far.layers.empty()) {  // kept on demand: no maps to send ahead
          if (runWaiting_.load()) superseded = true;
          return !superseded;
        }
        const auto& done = so_far.layers.back();
        if (cancelRun_.load()) return false;  // Cancel: at this layer's end
        if (done.layer > request.previewLayer && runWaiting_.load()) {
          superseded = true;  // its layer in view is out; the newer text matters more than the rest
          return false;
        }
        if (preview && done.layer == request.previewLayer) {
          emit previewReady(layerPreview(generation, sourceSerial, so_far, layers));
        }
        return true;
      };
      if (source_->isVision()) {
        if (!request.image || !request.image->image) {
          outcome->error =
              attn::Error{{}, -1, -1, "open an image: this is a vision transformer", attn::ErrorKind::Mismatch};
          return outcome;
        }
        auto input = modelInput(*request.image, source_->model->config().image_size);
        if (!input) {
          outcome->error = input.error();
          return outcome;
        }
        result = runner_->run_image(**input, options);
      } else if (request.generation) {
        result = generate(generation, request, options, outcome->generationMs);
      } else {
        result = request.ablated.empty() && !request.compare ? runText(sourceSerial, request, options)
                                                             : intervene(sourceSerial, request, options, *outcome);
      }
      modelRuns_.fetch_add(1);
      if (!result && cancelRun_.load() && !quitting_.load()) {
        // Cancel (not a newer request): the tab says so. A generation stopped keeps its tokens (that is Stop).
        outcome->error = attn::Error{{}, -1, -1, "cancelled", attn::ErrorKind::Cancelled};
        return outcome;
      }
      if (superseded || quitting_.load() ||
          (!result && result.error().kind == attn::ErrorKind::Cancelled && runWaiting_.load())) {
        return nullptr;
      }
      if (!result) {
        outcome->error = result.error();
        return outcome;
      }
      run = std::make_shared<attn::models::TransformerRun>(std::move(*result));
    }
    outcome->runMs = msSince(timer);
    timer.restart();
    analyseRun(*outcome, run, request.step);
    if (request.lens && source_->model && !outcome->run->hidden_states.empty()) readLens(*outcome, *source_->model);
  }
  rolloutInto(*outcome);
  outcome->analysisMs = msSince(timer);
  const bool kept = !source_->dumpIntact || keepIfIntact(*outcome, *source_);
  last_ = kept ? outcome : nullptr;
  return outcome;
}

}  // namespace attn::ui
