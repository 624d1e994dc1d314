// GlimpseWorker: the Glimpse workbench's engine thread. It owns the image pyramid (decoded and built here,
// never on the GUI thread) and the write canvas, and answers requests the LabWorker way: only the newest
// pending request runs, every outcome carries its request's generation and is an immutable value sent
// over a queued signal.
//
// While a glimpse is dragged, the Gaussian read has a frame budget in multiply-adds: attn::glimpse::
// plan_read picks the finest pyramid level that fits and the outcome is labelled a preview. The budget
// follows the speed the reads actually reach on this machine (a running average of MACs per ms), so a
// slow or busy machine previews sooner instead of dropping frames. The exact read runs when the drag
// ends.
#pragma once

#include "attn/glimpse/convert.h"
#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/preview.h"
#include "attn/glimpse/resolve.h"
#include "attn/glimpse/settings.h"
#include "attn/glimpse/stn.h"
#include "attn/glimpse/window_forms.h"
#include "attn/vision/image.h"
#include "attn/vision/pyramid.h"
#include "render/glimpse_image.h"
#include "workbenches/common/mailbox.h"

#include <QByteArray>
#include <QImage>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace attn::ui {

// Where an image comes from: a file path (decoded with attn::load_image) or bytes already in memory,
// such as a Qt resource (attn::decode_image). `name` is what messages call it.
struct GlimpseSource {
  QString name;
  QString path;      // a file, or a ":/..." resource (read on the worker)
  QByteArray bytes;  // when not empty, decoded instead of `path`
  attn::ImageLimits limits;
};

struct GlimpseRequest {
  attn::glimpse::GlimpseSettings settings;
  bool dragging = false;     // a preview level is allowed when the exact read does not fit the frame budget
  bool writeMode = false;    // exact Gaussian reads are also written (added) to the canvas
  bool windowForms = false;  // exact requests: the window's soft mask, crop and matrix form (window_forms.h)
};

struct GlimpseOutcome {
  quint64 generation = 0;
  quint64 imageSerial = 0;
  GlimpseRequest request;
  int imageWidth = 0;
  int imageHeight = 0;

  // Gaussian read. sanitised, theta, stnWidth and stnHeight are what the request's settings resolve to on
  // this image (attn::glimpse::resolve, once per request).
  attn::glimpse::Sanitised sanitised;  // the glimpse used and what was clamped
  attn::glimpse::ReadPlan plan;        // level > 0: a preview
  attn::glimpse::ReadStats stats;
  std::shared_ptr<const attn::Image> gaussian;  // channels x Ny x Nx
  QImage gaussianImage;
  // Filterbanks of the exact glimpse (null for previews: the plots keep the last exact ones).
  std::shared_ptr<const attn::glimpse::FilterBank> fx;
  std::shared_ptr<const attn::glimpse::FilterBank> fy;

  // STN glimpse: the settings' STN, or in same-window mode the no-shear STN of the Gaussian's window; a
  // non-finite theta is sampled as the identity.
  attn::glimpse::Theta theta = attn::glimpse::kIdentityTheta;
  int stnWidth = 0;
  int stnHeight = 0;
  std::shared_ptr<const attn::Image> stn;
  QImage stnImage;

  // Same-window mode: |gaussian - stn|.
  bool compared = false;
  double maxError = 0.0;
  double rmsError = 0.0;
  QImage differenceImage;

  // Write mode: the canvas (at pyramid level canvasLevel), normalised to its peak for display.
  bool hasCanvas = false;
  QImage canvasImage;
  int canvasLevel = 0;
  double canvasPeak = 0.0;
  int canvasWrites = 0;

  // Window forms (exact requests with windowForms; null while dragging: the tab keeps the last ones), computed
  // on pyramid level formsLevel, the first whose longer side is at most kFormsMaxSide.
  std::shared_ptr<const attn::glimpse::WindowForms> forms;
  int formsLevel = 0;
  QImage maskedImage, cropImage, matrixImage;
  double readMs = 0.0;
  double stnMs = 0.0;
  double computeMs = 0.0;  // everything on the worker, conversions included
  double budgetMacs = 0.0;
};

class GlimpseWorker : public QObject {
  Q_OBJECT

 public:
  // The share of a 16 ms frame the Gaussian read may take while dragging; the rest is the STN, the
  // conversions, the hop between threads and the paint.
  static constexpr double kReadBudgetMs = 6.0;
  // The budget is in the planner's cost units (ReadStats::cost: banded-loop multiply-add equivalents);
  // the worker learns how many of them a millisecond holds from the exact and preview reads it runs.
  // The write canvas is kept at the first pyramid level whose longer side is at most this.
  static constexpr int kCanvasMaxSide = 1024;
  // The window forms run on the first pyramid level whose longer side is at most this: the soft mask is image
  // sized in float (4 bytes a pixel for a, 4 per channel for a (.) I), too much for a 30-megapixel photo.
  static constexpr int kFormsMaxSide = 2048;
  // What one pixel of an opened photo costs in this tab: the float image and its pyramid (12 bytes x 4/3), the
  // sampler's interleaved copy (16 bytes) and the display levels (4 bytes x 4/3).
  static constexpr double kBytesPerPixel = 12.0 * 4 / 3 + 16.0 + 4.0 * 4 / 3;
  // A photo that would take more is opened shrunk (area averaging) to the largest size that fits, and says so.
  static constexpr qint64 kMemoryBudget = qint64{1} << 30;

  GlimpseWorker();

  // The first check of every load (a file opened, a session's photo restored): a path that is not there is "not
  // found"; one that is not a regular file (a FIFO, a folder, a device), or whose header the engine refuses, is
  // refused with attn::probe_image's reason, which names the path. Reads the header only; a resource or bytes are
  // probed as bytes.
  static attn::Result<attn::ImageInfo> probe(const GlimpseSource& source);

  // Thread-safe. Replaces a load that has not started yet; a compute request for an older image is dropped.
  void load(quint64 serial, GlimpseSource source);
  // Thread-safe. Replaces any request that has not started yet. `image` is the one the tab has open, which the
  // settings' pixel numbers refer to: the worker switches to it (with a new write canvas) when its own differs
  // (a load the tab had superseded may have finished here after the tab's newer load failed).
  void submit(quint64 generation, std::shared_ptr<const GlimpseImage> image, GlimpseRequest request);
  // Thread-safe. Zeroes the write canvas before the next request runs.
  void clearCanvas();

  int runs() const { return runs_.load(); }
  double macsPerMs() const { return macsPerMs_.load(); }
  // The read budget (cost units) a drag frame gets now.
  double budgetMacs() const { return kReadBudgetMs * macsPerMs(); }
  // For tests and benchmarks: pretend reads run at this speed (<= 0: measure again).
  void setMacsPerMs(double rate, bool fixed);
  // Computes `request` on the calling thread and returns the outcome without emitting it. Only while the
  // worker thread has nothing queued or running (the workbench's synchronous mode, for benchmarks that
  // time compute + repaint without the hop between threads).
  std::shared_ptr<const GlimpseOutcome> computeNow(quint64 generation, quint64 imageSerial,
                                                   const GlimpseRequest& request);

 signals:
  void loadProgress(quint64 serial, int percent, const QString& stage);
  void loaded(std::shared_ptr<const attn::ui::GlimpseImage> image);
  void loadFailed(quint64 serial, const QString& message);
  void finished(std::shared_ptr<const attn::ui::GlimpseOutcome> outcome);

 private:
  Q_INVOKABLE void drain();  // on the worker thread
  void runLoad(quint64 serial, GlimpseSource source);
  void use(std::shared_ptr<const GlimpseImage> image);  // requests go against `image`, on a new canvas
  std::shared_ptr<const GlimpseOutcome> compute(quint64 generation, quint64 imageSerial, const GlimpseRequest& request);
  // The steps of compute, in order; each fills its part of `out`, whose request and image size are set.
  void readGaussian(GlimpseOutcome& out);  // the Gaussian read (exact or preview) and its filterbanks
  void readStn(GlimpseOutcome& out) const;
  void writeCanvas(GlimpseOutcome& out);         // write mode: adds an exact read to the canvas, converts it
  void computeForms(GlimpseOutcome& out) const;  // window forms: the soft mask, the crop, the matrix form

  struct PendingCompute {
    quint64 generation = 0;
    quint64 imageSerial = 0;
    GlimpseRequest request;
    std::shared_ptr<const GlimpseImage> image;  // the tab's; null: the last one loaded here
  };
  struct PendingLoad {
    quint64 serial = 0;
    GlimpseSource source;
  };
  Mailbox mailbox_{this};
  Latest<PendingLoad> pendingLoad_;        // guarded by mailbox_
  Latest<PendingCompute> pendingCompute_;  // guarded by mailbox_
  bool clearCanvas_ = false;               // guarded by mailbox_
  std::atomic<int> runs_{0};
  std::atomic<double> macsPerMs_{1.0e6};
  std::atomic<bool> rateFixed_{false};
  bool rateMeasured_ = false;  // worker thread only
  int defaultThreads_ = 1;     // OpenMP threads for exact reads (the process's default)

  // Worker-thread state.
  std::shared_ptr<const GlimpseImage> image_;
  attn::glimpse::ReadWorkspace workspace_;
  attn::Image canvas_;
  attn::Image coverage_;  // the same writes of a patch of gamma: the weight each canvas pixel received
  int canvasLevel_ = 0;
  int canvasWrites_ = 0;
  bool canvasDirty_ = true;
  QImage canvasImage_;
  double canvasPeak_ = 0.0;
  std::optional<attn::glimpse::GaussianGlimpse> lastWritten_;
};

}  // namespace attn::ui

Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::GlimpseImage>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::GlimpseOutcome>)
