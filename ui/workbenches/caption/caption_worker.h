// CaptionWorker: the Captioning tab's engine thread. It loads captioners, decodes images (files and
// bundled photos through the engine's header checks and limits) or generates scenes, captions them
// (greedy or beam search) and smooths every word's α for the overlays, the AlignmentWorker way: only the
// newest pending request of each kind runs, every answer carries its request's serial or generation and
// is an immutable value sent over a queued signal. A change of smoothing re-smooths the maps of the run on
// screen without captioning again; the other overlay settings never reach this thread.
#pragma once

#include "attn/error.h"
#include "attn/models/captioner.h"
#include "attn/vision/image.h"
#include "render/caption_render.h"
#include "workbenches/caption/caption_models.h"
#include "workbenches/common/mailbox.h"

#include <QImage>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace attn::ui {

// A loaded captioner. Immutable once sent.
struct CaptionSource {
  quint64 serial = 0;
  CaptionModel model;
  double loadMs = 0.0;
};

// Where an input comes from: a file, a ":/" resource (a bundled photo) or a generated scene.
struct CaptionInput {
  enum class Kind { File, Resource, Scene } kind = Kind::Scene;
  QString path;            // File, Resource
  std::uint64_t seed = 0;  // Scene
  attn::ImageLimits limits;
  QString name() const;  // "astronaut.png", "scene 7"
};

// A decoded (or generated) image. Immutable once sent.
struct CaptionImage {
  quint64 serial = 0;
  CaptionInput input;
  QString name;
  int width = 0;  // as decoded
  int height = 0;
  std::shared_ptr<const attn::Image> image;  // 3 planes in [0, 1]
  QImage display;                            // render::captionDisplayImage of it
  QString sceneCaption;  // a generated scene: the caption its generator wrote (what is really there)
  double loadMs = 0.0;
};

struct CaptionRequest {
  int beam = 1;  // 1 = greedy
};

// One hypothesis' maps for one smoothing: every word's α (render::smoothedAlpha) and the coverage.
struct CaptionMaps {
  int hypothesis = 0;
  double sigma = 0.0;
  std::vector<attn::Matrix> words;
  attn::Matrix coverage;
  double ms = 0.0;
};

struct CaptionOutcome {
  quint64 generation = 0;
  quint64 sourceSerial = 0;
  quint64 imageSerial = 0;
  CaptionRequest request;
  std::shared_ptr<const attn::models::CaptionRun> run;
  std::shared_ptr<const CaptionMaps> maps;  // the best hypothesis' at the request's sigma
  std::optional<attn::Error> error;         // the run was refused (nothing else is set)
  QStringList modelWarnings;                // the model's load-time warnings: non-finite weights, tensors not used
  double runMs = 0.0;
  bool ok() const { return run != nullptr; }
  QStringList warnings() const;  // the model's, then the run's
};

// The maps of hypothesis `h` of a run (pure; the worker and attnscope-cli caption call it).
std::shared_ptr<const CaptionMaps> captionMaps(const attn::models::CaptionRun& run, int h, double sigma);
// Word `t` of the maps' hypothesis over `display` as the tab draws it: the layer of render::alphaLayer and,
// for hard attention, the cell the step read outlined.
QImage captionWordOverlay(const QImage& display, const attn::models::CaptionRun& run, const CaptionMaps& maps, int t,
                          const render::CaptionOverlayOptions& options);
// The grid export: the image, then every word of the maps' hypothesis over its overlay, titled by the word.
render::CaptionGridFigure captionGridFigure(const QImage& display, const attn::models::CaptionRun& run,
                                            const CaptionMaps& maps, const render::CaptionOverlayOptions& options,
                                            int perRow, const QString& heading);
// A decoded or generated input with its display image; errors name the file and the reason.
attn::Result<CaptionImage> readCaptionInput(const CaptionInput& input);

class CaptionWorker : public QObject {
  Q_OBJECT

 public:
  CaptionWorker();

  // Thread-safe, each replacing a request of its kind that has not started.
  void load(quint64 serial, QString nameOrFolder);
  void open(quint64 serial, CaptionInput input);
  // Runs against the model and image the tab has open: the worker switches to them when its own differ (a load
  // or an open the tab had superseded may have finished here after the tab's newer one failed).
  void submit(quint64 generation, std::shared_ptr<const CaptionSource> source,
              std::shared_ptr<const CaptionImage> image, CaptionRequest request, double sigma);
  // The maps of hypothesis `h` of `run` (the outcome `generation` on screen) for `sigma`.
  void smooth(quint64 generation, std::shared_ptr<const attn::models::CaptionRun> run, int h, double sigma);
  int runs() const { return runs_.load(); }        // captions computed
  int smooths() const { return smooths_.load(); }  // maps recomputed without a new caption

 signals:
  void loaded(std::shared_ptr<const attn::ui::CaptionSource> source);
  void loadFailed(quint64 serial, const QString& message);
  void opened(std::shared_ptr<const attn::ui::CaptionImage> image);
  void openFailed(quint64 serial, const QString& message);
  void finished(std::shared_ptr<const attn::ui::CaptionOutcome> outcome);
  void smoothed(quint64 generation, std::shared_ptr<const attn::ui::CaptionMaps> maps);

 private:
  Q_INVOKABLE void drain();
  void runLoad(quint64 serial, const QString& nameOrFolder);
  void runOpen(quint64 serial, const CaptionInput& input);

  struct PendingLoad {
    quint64 serial = 0;
    QString nameOrFolder;
  };
  struct PendingOpen {
    quint64 serial = 0;
    CaptionInput input;
  };
  struct PendingRun {
    quint64 generation = 0;
    quint64 sourceSerial = 0;
    quint64 imageSerial = 0;
    CaptionRequest request;
    double sigma = 0.0;
    std::shared_ptr<const CaptionSource> source;  // the tab's; null: the last ones loaded here
    std::shared_ptr<const CaptionImage> image;
  };
  struct PendingSmooth {
    quint64 generation = 0;
    std::shared_ptr<const attn::models::CaptionRun> run;
    int hypothesis = 0;
    double sigma = 0.0;
  };
  Mailbox mailbox_{this};
  Latest<PendingLoad> pendingLoad_;      // guarded by mailbox_
  Latest<PendingOpen> pendingOpen_;      // guarded by mailbox_
  Latest<PendingRun> pendingRun_;        // guarded by mailbox_
  Latest<PendingSmooth> pendingSmooth_;  // guarded by mailbox_
  std::atomic<int> runs_{0};
  std::atomic<int> smooths_{0};

  // Worker-thread state.
  std::shared_ptr<const CaptionSource> source_;
  std::shared_ptr<const CaptionImage> image_;
  std::unique_ptr<attn::models::CaptionerRunner> runner_;
};

}  // namespace attn::ui

Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::CaptionSource>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::CaptionImage>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::CaptionOutcome>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::CaptionMaps>)
