// AlignmentWorker: the Alignment tab's engine thread. It loads models (a bundled one from the binary's
// resources or a folder) and runs them (seq2seq: greedy or beam decoding; classifier: attention pooling;
// entailment: the premise and the hypothesis word by word)
// the TransformerWorker way: only the newest pending request runs, every outcome carries its request's
// generation and is an immutable value sent over a queued signal. The sessions (scratch buffers) live
// here, never on the GUI thread. The models are small: a run takes milliseconds, so a run in progress is
// never interrupted; a burst of keystrokes costs the run in flight plus one run of the newest text.
#pragma once

#include "attn/error.h"
#include "attn/models/classifier.h"
#include "attn/models/entailment.h"
#include "attn/models/seq2seq.h"
#include "attn/trace.h"
#include "render/alignment_render.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/speech/speech_input.h"
#include "workbenches/common/mailbox.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::ui {

// A loaded model. Immutable once sent.
struct AlignmentSource {
  quint64 serial = 0;
  AlignmentModel model;
  double loadMs = 0.0;
  bool isSeq2Seq() const { return model.isSeq2Seq(); }
};

struct AlignmentRequest {
  std::string text;             // UTF-8, as typed (an entailment model's premise)
  std::string hypothesis;       // an entailment model's hypothesis, UTF-8
  int beam = 1;                 // seq2seq: 1 = greedy
  bool readings = false;        // a flat classifier: also run the bundled readings of saliency (kReadingModels)
  QString wavPath;              // a speech model: this audio file instead of `text` said by espeak-ng
  std::string voice = "en-us";  // a speech model: the espeak-ng voice `text` is said in
  attn::models::AttentionShaping shaping;  // a speech model: how its scores become weights (the defaults: its own)
};

// The bundled review classifiers whose saliency needs no query, in the order the tab shows them: attention
// pooling, the LSTM's gates, the CNN's max pooling.
inline constexpr const char* kReadingModels[] = {"sentiment-pooling", "sentiment-lstm", "sentiment-cnn"};

struct AlignmentOutcome {
  quint64 generation = 0;
  quint64 sourceSerial = 0;
  AlignmentRequest request;
  std::shared_ptr<const attn::models::Seq2SeqRun> seq2seq;
  std::shared_ptr<const SpeechInput> speech;  // a speech model's audio, true phonemes and log-mel frames
  // Each hypothesis' alignment (rows: output characters, "</s>" for the end; columns: source characters,
  // an unknown one marked "(unk)"), in the run's order (best first).
  std::vector<std::shared_ptr<const attn::AttentionMap>> alignments;
  // ConvS2S: per hypothesis, each decoder layer's map (the alignment above is their mean); empty lists otherwise.
  std::vector<std::vector<std::shared_ptr<const attn::AttentionMap>>> layerAlignments;
  std::shared_ptr<const attn::models::ClassifierRun> classifier;
  std::shared_ptr<const attn::AttentionMap> wordMap;  // classifier: heads x words (or the saliency row)
  // classifier: every matrix of the run (ClassifierRun::maps(), unknown words marked), wordMap first
  std::vector<std::shared_ptr<const attn::AttentionMap>> maps;
  // request.readings: the bundled readings that could run on the text (the open model's own run where it is
  // one of them), and why any other could not ("sentiment-cnn: ...").
  std::vector<render::SaliencyReading> readings;
  QStringList readingNotes;
  std::shared_ptr<const attn::models::EntailmentRun> entailment;
  std::shared_ptr<const attn::AttentionMap> entailmentMap;  // hypothesis words x premise words
  std::optional<attn::Error> error;                         // the run was refused (nothing else is set)
  QStringList modelWarnings;  // the model's load-time warnings: non-finite weights, tensors not used
  double runMs = 0.0;
  bool ok() const { return seq2seq != nullptr || classifier != nullptr || entailment != nullptr; }
  QStringList warnings() const;  // the model's, then the run's
};

// The alignment of hypothesis `h` of a run as the heatmap shows it (unknown source characters marked); a ConvS2S
// run's decoder layer `layer` (from 0) instead of the layers' mean when layer >= 0 (null when there is none).
std::shared_ptr<const attn::AttentionMap> alignmentMap(const attn::models::Seq2SeqRun& run, std::size_t h,
                                                       int layer = -1);
// The word map of a classifier run with unknown words marked.
std::shared_ptr<const attn::AttentionMap> wordMap(const attn::models::ClassifierRun& run);

class AlignmentWorker : public QObject {
  Q_OBJECT

 public:
  AlignmentWorker();

  // Thread-safe. A bundled model's key or a folder; replaces a load that has not started.
  void load(quint64 serial, QString nameOrFolder);
  // Thread-safe. Replaces any run that has not started; runs against `source`, the model the tab has open: the
  // worker switches to it when its own differs (a load the tab had superseded may have finished here after the
  // tab's newer load failed).
  void submit(quint64 generation, std::shared_ptr<const AlignmentSource> source, AlignmentRequest request);
  int runs() const { return runs_.load(); }

 signals:
  void loaded(std::shared_ptr<const attn::ui::AlignmentSource> source);
  void loadFailed(quint64 serial, const QString& message);
  void finished(std::shared_ptr<const attn::ui::AlignmentOutcome> outcome);

 private:
  Q_INVOKABLE void drain();
  void runLoad(quint64 serial, const QString& nameOrFolder);
  void use(std::shared_ptr<const AlignmentSource> source);  // runs go against `source` from now on
  std::shared_ptr<const AlignmentOutcome> compute(quint64 generation, quint64 sourceSerial,
                                                  const AlignmentRequest& request);

  struct PendingLoad {
    quint64 serial = 0;
    QString nameOrFolder;
  };
  struct PendingRun {
    quint64 generation = 0;
    quint64 sourceSerial = 0;
    AlignmentRequest request;
    std::shared_ptr<const AlignmentSource> source;  // the tab's; null: the last one loaded here
  };
  Mailbox mailbox_{this};
  Latest<PendingLoad> pendingLoad_;  // guarded by mailbox_
  Latest<PendingRun> pendingRun_;    // guarded by mailbox_
  std::atomic<int> runs_{0};

  // Worker-thread state.
  std::shared_ptr<const AlignmentSource> source_;
  std::unique_ptr<attn::models::Seq2SeqRunner> seq2seqSession_;
  std::unique_ptr<attn::models::ClassifierRunner> classifierSession_;
  std::unique_ptr<attn::models::EntailmentRunner> entailmentSession_;
  // The readings' models, loaded on first use and kept (a few hundred kilobytes each).
  struct Reader {
    QString key;
    std::shared_ptr<const attn::models::ClassifierModel> model;
    std::unique_ptr<attn::models::ClassifierRunner> runner;
    QString error;  // it could not be loaded
  };
  std::vector<Reader> readers_;
  void runReadings(const AlignmentRequest& request, AlignmentOutcome& outcome);
};

}  // namespace attn::ui

Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::AlignmentSource>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::AlignmentOutcome>)
