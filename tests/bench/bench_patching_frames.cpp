// The GUI's frames while a patching sweep runs (issue 43: "the GUI stays at frame rate during a sweep"), printed as a
// frame-time distribution. The real Transformer tab (TransformerWorkbench) opens a decoder, its Patching view gets the
// clean text (the tab's text box), the corrupted input (the Compare box), an answer and a wrong token and a sweep, and
// PatchingPanel::run() starts the sweep on its thread. Meanwhile a 60 Hz clock on the GUI thread, as a display would,
// makes a frame every 16.7 ms: a mouse move and a tool-tip request over the sweep's heatmap (what hovering does: the
// cell under the pointer found, its tool tip written and shown), then the whole window repainted (QWidget::repaint
// paints synchronously: every visible widget, the heatmap with the cells done so far, the progress bar). A frame is
// timed from the input event to the end of the repaint. The clock's lateness, how long after its due time each tick
// fires, is the event loop's latency: the partial results the sweep posts (redrawn at most once a frame,
// PatchingPanel::partialShown) and everything else the GUI thread does between frames show there. A tick more than a
// period late skips the periods it missed, as a display's vsync would. The GUI thread's CPU time is printed too, in
// the frames and between them: time beyond it was spent waiting for a core (the sweep's threads share the machine's).
// The same frames are first measured with the tab idle (--idle-frames), for comparison.
//
// The model: a decoder folder (--model DIR; by default the SmolLM2-135M-shaped random checkpoint that bench_decoder
// --prepare writes, 30 layers x 9 heads, whose layers x positions sweep of a 32-token text takes seconds). A folder
// without a tokenizer is opened through a temporary folder of links to its files and a copy of --tokenizer FILE as its
// tokenizer.json (by default tests/data/tokenizers/golden/smollm.json: SmolLM's own tokenizer trimmed to the golden
// texts' entries, ids unchanged, so that words outside it take several tokens). The sweep's thread uses --threads
// OpenMP and OpenBLAS threads: the program restarts itself once with OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set,
// since both libraries read them when they start.
//
// Options: --model DIR, --tokenizer FILE, --text T, --corrupt T, --answer A, --wrong B,
// --sweep layers-positions|heads|heads-positions (layers-positions), --idle-frames N (60), --timeout S (1800),
// --threads N (2), --csv FILE.
#include "app/platform.h"
#include "attn/models/intervention.h"
#include "bench_models.h"
#include "bench_threads.h"
#include "frame_stats.h"
#include "views/figure_map_view.h"
#include "workbenches/transformer/transformer_patching.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QHelpEvent>
#include <QLabel>
#include <QMetaEnum>
#include <QMouseEvent>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <omp.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using attn::bench::percentile;
using attn::ui::PatchingPanel;
using attn::ui::TransformerWorkbench;

constexpr double kPeriodMs = 1000.0 / 60.0;
constexpr double kFrameBudgetMs = 16.0;
constexpr const char* kProgram = "bench_patching_frames";

struct Options {
  std::string model;
  std::string tokenizer = ATTN_SOURCE_DIR "/tests/data/tokenizers/golden/smollm.json";
  // 32 tokens with the default tokenizer; the corrupted input has "line" for the second "world" (one token each).
  std::string text =
      "Hello world! I'm sure you see the world: we can see two spaces and one trailing space, then a comment on the "
      "line, and we see the";
  std::string corrupt =
      "Hello world! I'm sure you see the line: we can see two spaces and one trailing space, then a comment on the "
      "line, and we see the";
  std::string answer = " world", wrong = " line";
  attn::models::Sweep sweep = attn::models::Sweep::LayersPositions;
  int idleFrames = 60;
  double timeoutS = 1800;
  std::string csv;
};

Options parse(int argc, char** argv) {
  Options o;
  o.model = (attn::bench::bench_dir() / "smollm2-135m-bf16").string();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--model") {
      o.model = next();
    } else if (arg == "--tokenizer") {
      o.tokenizer = next();
    } else if (arg == "--text") {
      o.text = next();
    } else if (arg == "--corrupt") {
      o.corrupt = next();
    } else if (arg == "--answer") {
      o.answer = next();
    } else if (arg == "--wrong") {
      o.wrong = next();
    } else if (arg == "--sweep") {
      const std::string name = next();
      const auto sweep = attn::models::parse_sweep(name);
      using attn::models::Sweep;
      if (!sweep || (*sweep != Sweep::Heads && *sweep != Sweep::LayersPositions && *sweep != Sweep::HeadsPositions)) {
        std::fprintf(stderr, "%s: --sweep %s: say layers-positions, heads or heads-positions\n", kProgram,
                     name.c_str());
        std::exit(2);
      }
      o.sweep = *sweep;
    } else if (arg == "--idle-frames") {
      o.idleFrames = std::max(0, std::atoi(next().c_str()));
    } else if (arg == "--timeout") {
      o.timeoutS = std::max(1.0, std::atof(next().c_str()));
    } else if (arg == "--csv") {
      o.csv = next();
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "%s [--model DIR] [--tokenizer FILE] [--text T] [--corrupt T] [--answer A] [--wrong B]\n"
          "    [--sweep layers-positions|heads|heads-positions] [--idle-frames N] [--timeout S] [--threads N] "
          "[--csv FILE]\n",
          kProgram);
      std::exit(0);
    } else {
      std::fprintf(stderr, "%s: unknown option %s (--help lists them)\n", kProgram, arg.c_str());
      std::exit(2);
    }
  }
  return o;
}

// OpenMP and OpenBLAS read their thread counts when the program starts, and the sweep runs on a thread of its own
// (omp_set_num_threads here would set the GUI thread's count only): the program restarts itself once with both
// variables set to `count`. Returns when they already are.
void restartWithThreads(int count, char** originalArgv) {
  const std::string want = std::to_string(count);
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const char* blas = std::getenv("OPENBLAS_NUM_THREADS");
  if (omp && want == omp && blas && want == blas) return;
  ::setenv("OMP_NUM_THREADS", want.c_str(), 1);
  ::setenv("OPENBLAS_NUM_THREADS", want.c_str(), 1);
  std::fflush(nullptr);
  ::execv("/proc/self/exe", originalArgv);
  std::fprintf(stderr, "%s: could not restart with OMP_NUM_THREADS=%s; the sweep uses the default count\n", kProgram,
               want.c_str());
}

bool hasTokenizer(const fs::path& folder) {
  for (const char* name : {"tokenizer.json", "tokenizer.model", "vocab.txt", "vocab.json"}) {
    if (fs::exists(folder / name)) return true;
  }
  return false;
}

// `model` itself when it has a tokenizer; else a folder in `temp` of links to its files and `tokenizer` copied as its
// tokenizer.json. Empty after printing why.
QString modelFolder(const Options& options, const QTemporaryDir& temp, std::string& tokenizerSource) {
  const fs::path folder = options.model;
  if (!fs::is_directory(folder)) {
    std::fprintf(stderr, "%s: no model folder at %s (write it with build/ci/tests/bench/bench_decoder --prepare)\n",
                 kProgram, folder.c_str());
    return {};
  }
  if (hasTokenizer(folder)) {
    tokenizerSource = "the folder's own";
    return QString::fromStdString(folder.string());
  }
  if (!temp.isValid() || !fs::is_regular_file(options.tokenizer)) {
    std::fprintf(stderr, "%s: %s has no tokenizer and --tokenizer %s is not a file\n", kProgram, folder.c_str(),
                 options.tokenizer.c_str());
    return {};
  }
  const fs::path to = temp.path().toStdString();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.is_regular_file()) fs::create_symlink(fs::absolute(entry.path()), to / entry.path().filename(), ec);
    if (ec) break;
  }
  if (!ec) fs::copy_file(options.tokenizer, to / "tokenizer.json", ec);
  if (ec) {
    std::fprintf(stderr, "%s: could not make the model's folder with a tokenizer in %s: %s\n", kProgram, to.c_str(),
                 ec.message().c_str());
    return {};
  }
  tokenizerSource = options.tokenizer + " (the folder has none)";
  return QString::fromStdString(to.string());
}

// Runs the event loop until the tab is idle; false after `ms` milliseconds.
bool waitIdle(TransformerWorkbench& w, int ms) {
  QElapsedTimer t;
  t.start();
  while (!w.isIdle()) {
    QApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 5);
    if (t.elapsed() > ms) return false;
  }
  QApplication::processEvents();
  return true;
}

// What the GUI thread does between frames: the time of each delivery of the sweep's results to the panel (a queued
// call: a partial result copied, its figure made and set; or the sweep's start or end), and the slowest events it
// handled while the sweep's frames were made, other than the frames themselves.
class BenchApplication : public QApplication {
 public:
  struct Slow {
    double ms;
    const char* receiver;
    int type;
  };
  using QApplication::QApplication;
  QObject* watched = nullptr;  // the Patching panel
  bool recording = false;      // the sweep's frames are being made
  bool inFrame = false;        // a frame's tick ran inside the event being handled
  std::vector<double> deliveriesMs;
  std::vector<Slow> slowest;  // the 5 slowest, slowest first

  bool notify(QObject* receiver, QEvent* event) override {
    const bool outer = depth_ == 0;
    const bool delivery = receiver == watched && event->type() == QEvent::MetaCall;
    if (!outer && !delivery) return QApplication::notify(receiver, event);
    const Slow what{0, receiver->metaObject()->className(), int(event->type())};  // the receiver may be deleted
    if (outer) inFrame = false;
    ++depth_;
    QElapsedTimer t;
    t.start();
    const bool handled = QApplication::notify(receiver, event);
    const double ms = double(t.nsecsElapsed()) / 1e6;
    --depth_;
    if (delivery) deliveriesMs.push_back(ms);
    if (outer && recording && !inFrame) keep({ms, what.receiver, what.type});
    return handled;
  }

 private:
  void keep(const Slow& slow) {
    if (slowest.size() == 5 && slow.ms <= slowest.back().ms) return;
    slowest.insert(std::upper_bound(slowest.begin(), slowest.end(), slow,
                                    [](const Slow& a, const Slow& b) { return a.ms > b.ms; }),
                   slow);
    if (slowest.size() > 5) slowest.pop_back();
  }
  int depth_ = 0;
};

struct Frame {
  bool sweeping;
  double lateMs;   // the tick after its due time
  double inputMs;  // the mouse move and the tool tip
  double paintMs;  // the window's repaint
  double cpuMs;    // the GUI thread's CPU time in the frame: below the frame's time, it waited for a core
  double busyMs;   // the GUI thread's CPU time since the previous frame: a late tick with little, it waited for a core
  int skipped;     // whole periods the tick came too late for
  int partials;    // partial redraws of the heatmap so far
};

double threadCpuMs() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

// The 60 Hz clock: a frame at each due time (start + k periods) until `done` says stop after a frame.
template <class Done>
void runFrames(QWidget& window, attn::ui::FigureMapView& map, bool sweeping, const int& partials, Done&& done,
               std::vector<Frame>& frames) {
  QEventLoop loop;
  QElapsedTimer clock;
  clock.start();
  const auto now = [&] { return double(clock.nsecsElapsed()) / 1e6; };
  long long k = 1;
  double lastCpu = threadCpuMs();
  std::function<void()> arm;
  const auto tick = [&] {
    const double due = double(k) * kPeriodMs;
    static_cast<BenchApplication*>(QCoreApplication::instance())->inFrame = true;
    Frame f{sweeping, now() - due, 0, 0, 0, 0, 0, partials};
    // The pointer wanders over the heatmap, as a hovering user's does.
    const double n = double(frames.size());
    const QPointF at(map.width() * (0.1 + 0.8 * std::fmod(n * 0.0137, 1.0)),
                     map.height() * (0.1 + 0.8 * std::fmod(n * 0.0291, 1.0)));
    const QPointF global = map.mapToGlobal(at);
    QElapsedTimer t;
    const double cpu = threadCpuMs();
    f.busyMs = cpu - lastCpu;
    t.start();
    QMouseEvent move(QEvent::MouseMove, at, global, Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(&map, &move);
    QHelpEvent help(QEvent::ToolTip, at.toPoint(), global.toPoint());
    QApplication::sendEvent(&map, &help);
    f.inputMs = double(t.nsecsElapsed()) / 1e6;
    window.repaint();
    f.paintMs = double(t.nsecsElapsed()) / 1e6 - f.inputMs;
    lastCpu = threadCpuMs();
    f.cpuMs = lastCpu - cpu;
    const long long next = std::max(k + 1, static_cast<long long>(std::floor(now() / kPeriodMs)) + 1);
    f.skipped = int(next - k - 1);
    k = next;
    frames.push_back(f);
    if (done()) {
      loop.quit();
      return;
    }
    arm();
  };
  // Timers count whole milliseconds: a tick is armed for the first millisecond at or after its due time.
  arm = [&] {
    const int wait = std::max(0, int(std::ceil(double(k) * kPeriodMs - now())));
    QTimer::singleShot(wait, Qt::PreciseTimer, &loop, tick);
  };
  arm();
  loop.exec();
}

struct Summary {
  std::vector<double> frame, late, input, paint, cpu, busy;
  int skipped = 0, over = 0;
};

Summary summarize(const std::vector<Frame>& frames, bool sweeping) {
  Summary s;
  for (const auto& f : frames) {
    if (f.sweeping != sweeping) continue;
    s.frame.push_back(f.inputMs + f.paintMs);
    s.late.push_back(f.lateMs);
    s.input.push_back(f.inputMs);
    s.paint.push_back(f.paintMs);
    s.cpu.push_back(f.cpuMs);
    s.busy.push_back(f.busyMs);
    s.skipped += f.skipped;
    s.over += f.inputMs + f.paintMs > kFrameBudgetMs;
  }
  return s;
}

void printSummary(const char* what, const Summary& s) {
  const auto& v = s.frame;
  std::printf("%s: %zu frames\n", what, v.size());
  std::printf(
      "  frame time (input event -> window repainted): min %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f ms;  "
      "over %.0f ms: %d\n",
      percentile(v, 0), percentile(v, 50), percentile(v, 90), percentile(v, 99), percentile(v, 100), kFrameBudgetMs,
      s.over);
  std::printf("    of which the hover and tool tip p50 %.2f  max %.2f ms, the repaint p50 %.2f  max %.2f ms\n",
              percentile(s.input, 50), percentile(s.input, 100), percentile(s.paint, 50), percentile(s.paint, 100));
  std::printf(
      "    the GUI thread's CPU time in a frame (less than the frame: it waited for a core): p50 %.2f  p99 %.2f  "
      "max %.2f ms\n",
      percentile(s.cpu, 50), percentile(s.cpu, 99), percentile(s.cpu, 100));
  std::printf(
      "  timer lateness (the 16.7 ms clock's tick after its due time): p50 %.2f  p90 %.2f  p99 %.2f  max %.2f "
      "ms;  periods missed: %d\n",
      percentile(s.late, 50), percentile(s.late, 90), percentile(s.late, 99), percentile(s.late, 100), s.skipped);
  int lateTicks = 0;
  double lateBusy = 0;
  for (std::size_t i = 0; i < s.late.size(); ++i) {
    if (s.late[i] <= kPeriodMs) continue;
    ++lateTicks;
    lateBusy = std::max(lateBusy, s.busy[i]);
  }
  std::printf(
      "    the GUI thread's CPU time between frames: p50 %.2f  p99 %.2f  max %.2f ms; before the %d ticks later than "
      "a period: at most %.2f ms (the rest of their lateness it waited for a core)\n",
      percentile(s.busy, 50), percentile(s.busy, 99), percentile(s.busy, 100), lateTicks, lateBusy);
}

void writeCsv(const std::string& path, const std::vector<Frame>& frames) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "%s: cannot write %s\n", kProgram, path.c_str());
    return;
  }
  std::fputs("phase,late_ms,input_ms,paint_ms,frame_ms,cpu_ms,cpu_between_ms,periods_missed,partial_redraws\n", f);
  for (const auto& fr : frames) {
    std::fprintf(f, "%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%d\n", fr.sweeping ? "sweep" : "idle", fr.lateMs, fr.inputMs,
                 fr.paintMs, fr.inputMs + fr.paintMs, fr.cpuMs, fr.busyMs, fr.skipped, fr.partials);
  }
  std::fclose(f);
}

// The tab opened on the model with the clean text run; false after printing why.
bool openTab(TransformerWorkbench& w, const QString& folder, const Options& options) {
  w.openPath(folder);
  if (!waitIdle(w, 300000) || !w.source()) {
    std::fprintf(stderr, "%s: the model did not load: %s\n", kProgram, qPrintable(w.errorBanner()->text()));
    return false;
  }
  w.setText(QString::fromStdString(options.text));
  if (!waitIdle(w, 300000) || !w.outcome()) {
    std::fprintf(stderr, "%s: the clean text's run did not finish: %s\n", kProgram,
                 qPrintable(w.errorBanner()->text()));
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> originalArgv(argv, argv + argc);
  originalArgv.push_back(nullptr);
  const auto threads = attn::bench::take_threads(argc, argv, kProgram);
  if (!threads) return 2;
  restartWithThreads(threads->count, originalArgv.data());
  attn::ui::useOffscreenPlatformWithoutDisplay();
  BenchApplication app(argc, argv);
  const Options options = parse(argc, argv);
  const std::string loadBefore = attn::bench::load_average();
  int sweepThreads = 0;  // what a new thread's OpenMP regions get: the sweep's count
  std::thread([&] { sweepThreads = omp_get_max_threads(); }).join();

  QTemporaryDir temp;
  std::string tokenizerSource;
  const QString folder = modelFolder(options, temp, tokenizerSource);
  if (folder.isEmpty()) return 1;
  TransformerWorkbench w;
  w.resize(1400, 900);
  w.show();
  if (!openTab(w, folder, options)) return 1;
  PatchingPanel& panel = *w.patchingPanel();
  w.viewTabs()->setCurrentWidget(&panel);
  panel.setCorruptText(QString::fromStdString(options.corrupt));
  panel.setMetric(attn::models::Metric::LogitDiff);
  panel.setAnswer(QString::fromStdString(options.answer));
  panel.setWrong(QString::fromStdString(options.wrong));
  panel.setSweep(options.sweep);
  if (!waitIdle(w, 300000)) return 1;
  app.watched = &panel;

  int partials = 0, lastDone = 0;
  QObject::connect(&panel, &PatchingPanel::partialShown, [&](int done) {
    ++partials;
    lastDone = done;
  });
  bool ended = false, complete = false;
  QObject::connect(&panel, &PatchingPanel::finished, [&](bool whole) {
    ended = true;
    complete = whole;
  });

  std::vector<Frame> frames;
  int idleLeft = options.idleFrames;
  if (idleLeft > 0)
    runFrames(
        w, *panel.view(), false, partials, [&] { return --idleLeft <= 0; }, frames);

  QElapsedTimer wall;
  wall.start();
  if (!panel.run()) {
    std::fprintf(stderr, "%s: the Patching view refused the sweep: %s\n", kProgram, qPrintable(panel.note()->text()));
    return 1;
  }
  bool timedOut = false;
  app.recording = true;
  runFrames(
      w, *panel.view(), true, partials,
      [&] {
        if (!timedOut && double(wall.elapsed()) > options.timeoutS * 1000.0) {
          timedOut = true;
          panel.cancel();
        }
        return ended;
      },
      frames);
  const double wallS = double(wall.nsecsElapsed()) / 1e9;
  app.recording = false;
  const auto* result = panel.result();
  const int cells = result ? int(result->values.size()) : 0;

  std::printf("%s: %s, %d layers x %d heads; tokenizer: %s\n", kProgram, options.model.c_str(),
              w.source()->model->config().layers, w.source()->model->config().heads, tokenizerSource.c_str());
  std::printf("  %zu tokens; clean \"%s\", corrupted \"%s\"; logit difference of \"%s\" and \"%s\"\n",
              panel.tokens().size(), options.text.c_str(), options.corrupt.c_str(), options.answer.c_str(),
              options.wrong.c_str());
  std::printf("  sweep %s: %d cells, %d done%s; %.2f s wall (the clean and corrupted runs included), %.1f cells/s\n",
              attn::models::sweep_name(options.sweep), cells, result ? result->done : 0,
              complete ? "" : (timedOut ? " (cancelled at --timeout)" : " (not complete)"), wallS,
              result ? double(result->done) / wallS : 0.0);
  std::printf(
      "  threads: %d for the sweep's thread (%s; OpenMP gives it %d), the GUI thread beside it; window %d x %d, "
      "%s\n",
      threads->count, threads->source.c_str(), sweepThreads, w.width(), w.height(),
      qPrintable(QApplication::platformName()));
  if (options.idleFrames > 0) printSummary("Before the sweep (the tab idle)", summarize(frames, false));
  printSummary("During the sweep", summarize(frames, true));
  const auto& d = app.deliveriesMs;
  std::printf(
      "  partial redraws seen: %d (the last with %d cells); the sweep's %zu deliveries to the panel on the GUI "
      "thread: p50 %.2f  p99 %.2f  max %.2f ms\n",
      partials, lastDone, d.size(), percentile(d, 50), percentile(d, 99), percentile(d, 100));
  std::printf("  the slowest events the GUI thread handled between the sweep's frames:");
  for (const auto& slow : app.slowest) {
    const char* type = QMetaEnum::fromType<QEvent::Type>().valueToKey(slow.type);
    std::printf(" %.2f ms %s to %s;", slow.ms, type ? type : "event", slow.receiver);
  }
  std::printf("\n");
  const Summary during = summarize(frames, true);
  const bool kept = percentile(during.frame, 99) < kFrameBudgetMs && percentile(during.late, 99) < kPeriodMs;
  std::printf("Frame rate kept during the sweep (p99 frame < %.0f ms and p99 lateness < %.1f ms): %s\n", kFrameBudgetMs,
              kPeriodMs, kept ? "yes" : "NO");
  std::printf("Load average before %s, after %s\n", loadBefore.c_str(), attn::bench::load_average().c_str());
  if (!options.csv.empty()) writeCsv(options.csv, frames);
  return complete ? 0 : 1;
}
