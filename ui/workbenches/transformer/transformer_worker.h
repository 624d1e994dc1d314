// TransformerWorker: the Transformer tab's engine thread. It loads model folders and attention dumps
// (with progress and a cancel flag the engine's progress callback reads), decodes photos for ViT, runs
// the model and the analysis (rollout, head statistics, model-view thumbnails) the LabWorker way: only the
// newest pending request of each kind runs, every outcome carries its request's generation and is an
// immutable value sent over a queued signal. The layer in view is sent ahead as soon as it is computed. The
// TransformerRunner (scratch buffers) lives here, never on the GUI thread; a rollout-only change re-uses the last run
// instead of running the model again.
#pragma once

#include "attn/analysis/attention_analysis.h"
#include "attn/error.h"
#include "attn/layered_trace.h"
#include "attn/models/intervention.h"
#include "attn/models/transformer.h"
#include "attn/vision/image.h"
#include "render/head_grid_render.h"
#include "workbenches/common/mailbox.h"

#include <QByteArray>
#include <QImage>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::ui {

// A loaded model folder or attention dump. Immutable once sent.
struct TransformerSource {
  enum class Kind { Model, Dump };
  quint64 serial = 0;
  Kind kind = Kind::Model;
  QString path;
  QString name;         // folder or file name
  QString description;  // "BERT · 2 layers · 4 heads · d 64 · ..." or "dump · bert-base · 12 layers"
  std::shared_ptr<const attn::models::TransformerModel> model;  // Kind::Model
  std::shared_ptr<const attn::LayeredTrace> dump;               // Kind::Dump
  // Kind::Dump of version 2 (a run kept on demand): its layers, reading the mapped file; `dump` has the tokens.
  std::shared_ptr<const std::vector<attn::OnDemandLayer>> dumpOnDemand;
  std::vector<int> dumpSpecial;  // special positions guessed from tokens
  // Kind::Dump: whether the mapped file is unchanged since it was opened (attn::io::AttentionDump::intact): another
  // process may truncate it, and what was read of it then is zeros, to be refused, not drawn.
  std::function<attn::Result<void>()> dumpIntact;
  QStringList warnings;
  // Markdown about the model: a GGUF file's types, chat template and metadata, or a folder's MODEL_CARD.md; empty
  // when there is none.
  QString card;
  double loadMs = 0.0;

  bool isVision() const;
  bool takesPair() const;  // BERT: a second sentence with token types
  attn::models::Family family() const;
};

// A photo for ViT, read once into what is used (never its full-size float image): the model's input (resampled
// exactly as run_image would), a display copy (longer side at most 1024), and the photo's own size.
struct VisionInput {
  quint64 serial = 0;
  QString name;
  QString path;
  int width = 0, height = 0;                 // of the photo, in pixels
  std::shared_ptr<const attn::Image> image;  // image_size x image_size of the ViT open when it was read
  QImage display;
};

struct TransformerRequest {
  std::string text;
  std::string pair;
  std::shared_ptr<const VisionInput> image;  // ViT
  attn::analysis::RolloutOptions rollout;
  attn::models::RunOptions run;
  int previewLayer = -1;  // the layer in view: sent as a TransformerPreview the moment its maps are final
  // Decoders: generate after the text (its max_new_tokens, temperature, top-k, top-p and seed; on_token unused)
  // instead of running it; progress comes as generationProgress, Stop is stopGeneration().
  std::optional<attn::models::GenerateOptions> generation;
  bool lens = false;  // also read the logit lens (decoders and GPT-2) at the last kLensColumns positions
  // A generated run: the step the views show (0: the first generated token). The outcome's trace is then the run's
  // up to that token (every map's top-left block, its last row the step's attention), the statistics are of that
  // row; the run, the lens and the scrubber keep every token.
  std::optional<int> step;
  // Interventions (text runs; transformer_intervention_worker.cpp): these heads ablated (the plain run captured, then
  // re-run from the first ablated layer), and a second input run beside this one (Compare; resample's source).
  std::vector<attn::models::HeadRef> ablated;
  attn::models::AblationMode ablationMode = attn::models::AblationMode::Zero;
  std::optional<std::string> compare;
};
// Whether two requests ask the same interventions.
bool sameIntervention(const TransformerRequest& a, const TransformerRequest& b);

// The layer in view of a run still going: the new tokens and that layer's maps, every other layer an
// empty stack. The views of one layer (head view, matrix) draw it at once; the model view, statistics
// and rollout wait for the outcome.
struct TransformerPreview {
  quint64 generation = 0;
  quint64 sourceSerial = 0;
  int layer = 0;
  attn::Stage stage = attn::Stage::Encoder;
  std::shared_ptr<const attn::LayeredTrace> trace;
};

struct TransformerOutcome {
  quint64 generation = 0;
  quint64 sourceSerial = 0;
  TransformerRequest request;
  std::shared_ptr<const attn::models::TransformerRun> run;  // a dump's trace is wrapped in a run too
  std::shared_ptr<const attn::LayeredTrace> trace;          // run->attention, or its prefix up to request.step
  attn::Stage stage = attn::Stage::Encoder;
  std::shared_ptr<const attn::Matrix> rollout;  // null when the rollout failed
  QString rolloutError;
  std::shared_ptr<const std::vector<attn::analysis::HeadStats>> stats;
  std::shared_ptr<const render::HeadThumbnails> thumbnails;
  std::shared_ptr<const attn::models::LogitLens> lens;  // when asked and the model has a next-token head
  QString lensError;
  double generationMs = 0.0;         // the generation alone (prompt included), for tokens per second
  std::optional<attn::Error> error;  // the run was refused (nothing else is set)
  // A dump's run: asked after each view draws from it (TransformerSource::dumpIntact); empty for a model's run.
  std::function<attn::Result<void>()> intact;
  bool reusedRun = false;  // only the rollout was recomputed
  double runMs = 0.0;
  double analysisMs = 0.0;
  // Interventions: the run without the ablation (captured; `run` is the ablated one), the Compare input's run, and
  // why an intervention could not be made (the plain run is then shown).
  std::shared_ptr<const attn::models::TransformerRun> plainRun;
  std::shared_ptr<const attn::models::TransformerRun> compareRun;
  QString interventionError;
  bool ok() const { return run != nullptr; }
};

class TransformerWorker : public QObject {
  Q_OBJECT

 public:
  static constexpr int kThumbnailSide = 64;
  static constexpr int kLensColumns = 16;
  static constexpr int kDisplaySide = 1024;

  TransformerWorker();

  // Thread-safe. A model folder, a file inside one (config.json, *.safetensors) or a *.attn.safetensors
  // dump. Replaces a load that has not started; cancels the one running.
  void load(quint64 serial, QString path);
  // Thread-safe: a pending load is dropped, a running one stops at its next progress report; either
  // fails with "cancelled".
  void cancelLoad();
  // Thread-safe. A file, a ":/" resource or bytes.
  void loadImage(quint64 serial, QString path, QString name);
  // Thread-safe. Replaces any run that has not started. A run in progress gives way at its next layer once
  // its layer in view has been sent (so typing faster than the model runs still updates that layer with every
  // keystroke). Runs against `source`, the one the tab has open: the worker switches to it when its own differs
  // (a load the tab had superseded may have finished here after the tab's newer load failed or was cancelled;
  // its runs would otherwise be dropped and the tab would wait for them forever).
  void submit(quint64 generation, std::shared_ptr<const TransformerSource> source, TransformerRequest request);
  // Thread-safe: the generation running stops after its current token and its outcome follows (what was
  // generated so far).
  void stopGeneration() { stopGeneration_.store(true); }
  // Thread-safe: a run that has not started is dropped, the one running stops at its next layer (a decoder's at its
  // next block of rows); each is answered by an outcome whose error is of kind Cancelled.
  void cancelRun();
  // Thread-safe, for closing: the run in progress stops at its next layer (a run kept on demand at its next block
  // of rows) and nothing more runs.
  void abandon() {
    quitting_.store(true);
    runWaiting_.store(true);
    cancelRun_.store(true);
    stopGeneration_.store(true);
  }
  int runs() const { return runs_.load(); }
  int modelRuns() const { return modelRuns_.load(); }

  // Guesses [CLS]/[SEP]/BOS/class-token positions of a dump from its tokens.
  static std::vector<int> specialPositions(const attn::Labels& tokens);

 signals:
  void loadProgress(quint64 serial, int percent, const QString& what);
  void loaded(std::shared_ptr<const attn::ui::TransformerSource> source);
  void loadFailed(quint64 serial, const QString& message, bool cancelled);
  void imageLoaded(std::shared_ptr<const attn::ui::VisionInput> image);
  void imageFailed(quint64 serial, const QString& message);
  void finished(std::shared_ptr<const attn::ui::TransformerOutcome> outcome);
  void previewReady(std::shared_ptr<const attn::ui::TransformerPreview> preview);
  // A run of request `generation` has computed `done` of its `layers` layers over `tokens` tokens in `ms`.
  void runProgress(quint64 generation, int done, int layers, qint64 tokens, double ms);
  // A token generated by request `generation`: how many so far, the continuation's text, and the time.
  void generationProgress(quint64 generation, int tokens, const QString& text, double ms);

 private:
  Q_INVOKABLE void drain();
  void runLoad(quint64 serial, const QString& path);
  void use(std::shared_ptr<const TransformerSource> source);  // runs go against `source` from now on
  void runImage(quint64 serial, const QString& path, const QString& name);
  // The photo at the model's input size: the one read with it, or read again for a ViT of another size.
  attn::Result<std::shared_ptr<const attn::Image>> modelInput(const VisionInput& input, int side);
  // A generation request's run; `ms` its time.
  attn::Result<attn::models::TransformerRun> generate(quint64 generation, const TransformerRequest& request,
                                                      const attn::models::RunOptions& options, double& ms);
  // A text run: the text, or the ids typed as "ids: 5 17 3"; a decoder re-uses the tokens the last run shares.
  attn::Result<attn::models::TransformerRun> runText(quint64 sourceSerial, const TransformerRequest& request,
                                                     attn::models::RunOptions options);
  // A text run with request.ablated or request.compare (transformer_intervention_worker.cpp): the plain run (re-used
  // from the last outcome when only the interventions changed), the compare run, and the ablated re-run.
  attn::Result<attn::models::TransformerRun> intervene(quint64 sourceSerial, const TransformerRequest& request,
                                                       attn::models::RunOptions options, TransformerOutcome& outcome);
  // Null when a newer request stopped the run.
  std::shared_ptr<const TransformerOutcome> compute(quint64 generation, quint64 sourceSerial,
                                                    const TransformerRequest& request);

  struct PendingLoad {
    quint64 serial = 0;
    QString path;
  };
  struct PendingImage {
    quint64 serial = 0;
    QString path;
    QString name;
  };
  struct PendingRun {
    quint64 generation = 0;
    quint64 sourceSerial = 0;
    TransformerRequest request;
    std::shared_ptr<const TransformerSource> source;  // the tab's; null: the last one loaded here
  };
  Mailbox mailbox_{this};
  Latest<PendingLoad> pendingLoad_;    // guarded by mailbox_
  Latest<PendingImage> pendingImage_;  // guarded by mailbox_
  Latest<PendingRun> pendingRun_;      // guarded by mailbox_
  std::atomic<bool> cancel_{false};
  std::atomic<bool> runWaiting_{false};  // a newer run request is pending
  std::atomic<bool> stopGeneration_{false};
  std::atomic<bool> cancelRun_{false};  // cancelRun(): the run taken before it stops
  std::atomic<bool> quitting_{false};   // abandon()
  std::atomic<int> runs_{0};
  std::atomic<int> modelRuns_{0};

  // Worker-thread state.
  std::shared_ptr<const TransformerSource> source_;
  std::unique_ptr<attn::models::TransformerRunner> runner_;
  std::shared_ptr<const TransformerOutcome> last_;  // for re-use when only the rollout changed
  std::shared_ptr<const attn::Image> resized_;      // modelInput()'s photo read again for another ViT size
  quint64 resizedSerial_ = 0;
};

}  // namespace attn::ui

Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::TransformerSource>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::VisionInput>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::TransformerOutcome>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::TransformerPreview>)
