#include "workbenches/alignment/alignment_worker.h"
#include "render/strings.h"

#include "render/alignment_render.h"

#include <QElapsedTimer>

#include <omp.h>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {}  // namespace

QStringList AlignmentOutcome::warnings() const {
  QStringList out = modelWarnings;
  const std::vector<std::string>* list = seq2seq      ? &seq2seq->warnings
                                         : classifier ? &classifier->warnings
                                         : entailment ? &entailment->warnings
                                                      : nullptr;
  if (speech) {
    for (const auto& w : speech->audio.warnings) out.append(QString::fromStdString(w));
  }
  if (list) {
    for (const auto& w : *list) out.append(QString::fromStdString(w));
  }
  return out;
}

std::shared_ptr<const attn::AttentionMap> alignmentMap(const attn::models::Seq2SeqRun& run, std::size_t h, int layer) {
  auto base = layer < 0 ? run.alignment(h) : run.layer_alignment(std::size_t(layer), h);
  if (!base) return nullptr;
  auto map = std::make_shared<attn::AttentionMap>(*base);
  map->col_labels = render::sourceColumnLabels(run);
  map->row_axis = run.frames ? "phonemes" : run.words ? "headline words" : "output characters";
  if (run.frames && !run.spans.empty()) {
    // A speech model's steps: their log-mel frames, 10 ms apart.
    map->col_axis = "audio (a step is " + std::to_string(10 * (run.spans[0].end - run.spans[0].begin)) + " ms)";
  } else {
    map->col_axis = run.words ? "source words" : "source characters";
  }
  return map;
}

namespace {

std::shared_ptr<const attn::AttentionMap> markUnknown(const attn::models::ClassifierRun& run,
                                                      const std::shared_ptr<const attn::AttentionMap>& base) {
  if (!base) return nullptr;
  auto map = std::make_shared<attn::AttentionMap>(*base);
  for (std::size_t w = 0; w < map->col_labels.size() && w < run.unknown.size(); ++w) {
    if (run.unknown[w]) map->col_labels[w] += " (unk)";
  }
  return map;
}

}  // namespace

std::shared_ptr<const attn::AttentionMap> wordMap(const attn::models::ClassifierRun& run) {
  return markUnknown(run, run.word_map());
}

AlignmentWorker::AlignmentWorker() {
  qRegisterMetaType<std::shared_ptr<const attn::ui::AlignmentSource>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::AlignmentOutcome>>();
}

void AlignmentWorker::load(quint64 serial, QString nameOrFolder) {
  mailbox_.post([&] { pendingLoad_.put(PendingLoad{serial, std::move(nameOrFolder)}); });
}

void AlignmentWorker::submit(quint64 generation, std::shared_ptr<const AlignmentSource> source,
                             AlignmentRequest request) {
  const quint64 sourceSerial = source ? source->serial : 0;
  mailbox_.post([&] { pendingRun_.put(PendingRun{generation, sourceSerial, std::move(request), std::move(source)}); });
}

void AlignmentWorker::drain() {
  // The models are small (a few hundred thousand parameters): their matrix products take microseconds, and
  // a team of OpenMP threads (Eigen's and the BLAS's products use one) costs more to assemble than it
  // saves; on a busy machine a run took 0.5 s instead of 5 ms. This thread's products stay on it.
  omp_set_num_threads(1);
  std::optional<PendingLoad> load;
  std::optional<PendingRun> run;
  // A load before a run: the run may be for the model being loaded.
  while (mailbox_.next([&] {
    load = pendingLoad_.take();
    run = load ? std::nullopt : pendingRun_.take();
    return load || run;
  })) {
    if (load) {
      runLoad(load->serial, load->nameOrFolder);
    } else if (run) {
      if (run->source && run->source != source_) use(run->source);     // the tab kept another model
      if (!source_ || run->sourceSerial != source_->serial) continue;  // for a model no longer loaded
      auto outcome = compute(run->generation, run->sourceSerial, run->request);
      runs_.fetch_add(1);
      emit finished(std::move(outcome));
    }
  }
}

void AlignmentWorker::runLoad(quint64 serial, const QString& nameOrFolder) {
  QElapsedTimer timer;
  timer.start();
  auto model = loadAlignmentModel(nameOrFolder);
  if (!model) {
    emit loadFailed(serial, QString::fromStdString(model.error().message()));
    return;
  }
  auto source = std::make_shared<AlignmentSource>();
  source->serial = serial;
  source->model = std::move(*model);
  source->loadMs = msSince(timer);
  use(source);
  emit loaded(source_);
}

void AlignmentWorker::use(std::shared_ptr<const AlignmentSource> source) {
  source_ = std::move(source);
  seq2seqSession_.reset();
  classifierSession_.reset();
  entailmentSession_.reset();
  if (source_->model.entailment) {
    entailmentSession_ = std::make_unique<attn::models::EntailmentRunner>(source_->model.entailment);
  }
  if (source_->model.seq2seq) seq2seqSession_ = std::make_unique<attn::models::Seq2SeqRunner>(source_->model.seq2seq);
  if (source_->model.classifier) {
    classifierSession_ = std::make_unique<attn::models::ClassifierRunner>(source_->model.classifier);
  }
}

std::shared_ptr<const AlignmentOutcome> AlignmentWorker::compute(quint64 generation, quint64 sourceSerial,
                                                                 const AlignmentRequest& request) {
  auto outcome = std::make_shared<AlignmentOutcome>();
  outcome->generation = generation;
  outcome->sourceSerial = sourceSerial;
  outcome->request = request;
  if (source_) {
    const auto& model = source_->model;
    for (const auto& w : model.seq2seq      ? model.seq2seq->warnings()
                         : model.classifier ? model.classifier->warnings()
                         : model.entailment ? model.entailment->warnings()
                                            : std::vector<std::string>()) {
      outcome->modelWarnings.append(QString::fromStdString(w));
    }
  }
  QElapsedTimer timer;
  timer.start();
  if (seq2seqSession_) {
    attn::models::DecodeOptions options;
    options.beam = std::max(1, request.beam);
    attn::Result<attn::models::Seq2SeqRun> run;
    if (source_->model.seq2seq->config().frames) {
      // A speech model: the sentence said by espeak-ng (or the file read), then its log-mel frames decoded.
      auto input = speechInput(request.text, request.wavPath, request.voice);
      if (!input) {
        outcome->error = input.error();
        return outcome;
      }
      outcome->speech = std::make_shared<const SpeechInput>(std::move(*input));
      options.shaping = request.shaping;
      run = seq2seqSession_->run_frames(outcome->speech->logMel, options);
    } else {
      run = seq2seqSession_->run(request.text, options);
    }
    if (!run) {
      outcome->error = run.error();
      return outcome;
    }
    auto shared = std::make_shared<const attn::models::Seq2SeqRun>(std::move(*run));
    for (std::size_t h = 0; h < shared->hypotheses.size(); ++h) {
      outcome->alignments.push_back(alignmentMap(*shared, h));
      auto& layers = outcome->layerAlignments.emplace_back();
      for (std::size_t l = 0; l < shared->hypotheses[h].layers.size(); ++l) {
        layers.push_back(alignmentMap(*shared, h, int(l)));
      }
    }
    outcome->seq2seq = std::move(shared);
  } else if (classifierSession_) {
    auto run = classifierSession_->run(request.text);
    if (!run) {
      outcome->error = run.error();
      return outcome;
    }
    auto shared = std::make_shared<const attn::models::ClassifierRun>(std::move(*run));
    for (const auto& map : shared->maps()) outcome->maps.push_back(markUnknown(*shared, map));
    outcome->wordMap = outcome->maps.front();
    outcome->classifier = std::move(shared);
    if (request.readings && !source_->model.classifier->config().hierarchical) runReadings(request, *outcome);
  } else if (entailmentSession_) {
    auto run = entailmentSession_->run(request.text, request.hypothesis);
    if (!run) {
      outcome->error = run.error();
      return outcome;
    }
    auto shared = std::make_shared<const attn::models::EntailmentRun>(std::move(*run));
    outcome->entailmentMap = shared->map();
    outcome->entailment = std::move(shared);
  } else {
    outcome->error = attn::Error{{}, -1, -1, "no model loaded", attn::ErrorKind::OutOfRange};
  }
  outcome->runMs = msSince(timer);
  return outcome;
}

void AlignmentWorker::runReadings(const AlignmentRequest& request, AlignmentOutcome& outcome) {
  if (readers_.empty()) {
    for (const char* key : kReadingModels) readers_.push_back(Reader{QString::fromLatin1(key), nullptr, nullptr, {}});
  }
  for (Reader& reader : readers_) {
    render::SaliencyReading reading;
    const auto& open = source_->model;
    if (open.key == reader.key) {  // the open model: its own run
      reading.run = outcome.classifier;
      reading.model = open.classifier;
      outcome.readings.push_back(std::move(reading));
      continue;
    }
    if (!reader.model && reader.error.isEmpty()) {
      auto loaded = loadAlignmentModel(reader.key);
      if (!loaded) {
        reader.error = QString::fromStdString(loaded.error().message());
      } else if (!loaded->classifier) {
        reader.error = u"not a classifier"_s;
      } else {
        reader.model = loaded->classifier;
        reader.runner = std::make_unique<attn::models::ClassifierRunner>(reader.model);
      }
    }
    if (!reader.model) {
      outcome.readingNotes.append(reader.key + u": "_s + reader.error);
      continue;
    }
    auto run = reader.runner->run(request.text);
    if (!run) {
      outcome.readingNotes.append(reader.key + u": "_s + QString::fromStdString(run.error().message()));
      continue;
    }
    reading.model = reader.model;
    reading.run = std::make_shared<const attn::models::ClassifierRun>(std::move(*run));
    outcome.readings.push_back(std::move(reading));
  }
}

}  // namespace attn::ui
