// A scripted pan-and-zoom session over one head's long map (LongMapView), printed as a frame-time distribution.
// The budget: frames never wait for the engine (tiles are computed on a background thread and a frame
// only draws the images that are there), p99 under 16 ms, while the tiles for what is in view keep arriving.
//
// A frame is timed from the input event sent to the view until the view has repainted (QWidget::repaint paints
// synchronously): the event handling, the tiles' colouring when a tile arrived since the last frame, the labels,
// the minimap. Between frames the event loop runs for the rest of a 60 Hz period (16.7 ms), as it would for a user,
// and delivers the tiles computed meanwhile; the time the GUI thread spent on those deliveries is printed as well.
// The session: the whole map shown, 36 wheel notches in around a point on the diagonal (whole map -> every weight),
// a 200-step drag along the diagonal, 60 arrow-key pans, 36 notches out around another point, Home.
//
// The run: a decoder folder (--model DIR, e.g. the SmolLM2-shaped checkpoint bench_decoder writes) or, by default,
// a copy of the random Llama fixture of tests/data with its context set to --tokens (its RoPE is defined at every
// position), run over --tokens token ids with the attention kept on demand. The OpenMP threads of the forward and of
// the tiles: --threads (2).
//
// Or a version-2 attention dump (--dump FILE): the time to open it (the header, statistics and overviews read and
// their checksums checked; then the shown head's queries and keys checked) is printed, and the session runs over
// the dump's memory-mapped head. --write-dump FILE writes the run as one first (the time and size printed).
//
// Options: --tokens N (32768), --model DIR, --dump FILE, --write-dump FILE, --layer L (last), --head H (0),
// --threads N (2), --csv FILE.
#include "app/platform.h"
#include "attn/io/attention_dump.h"
#include "attn/models/transformer.h"
#include "attn/on_demand_attention.h"
#include "bench_threads.h"
#include "frame_stats.h"
#include "views/long_map_view.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QTemporaryDir>
#include <QTimer>
#include <QWheelEvent>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using attn::bench::percentile;

using attn::ui::LongMapView;
constexpr double kFrameBudgetMs = 16.0;
constexpr double kPeriodMs = 1000.0 / 60.0;

struct Options {
  int tokens = 32768;
  std::string model;
  std::string dump, writeDump;
  int layer = -1;
  int head = 0;
  std::string csv;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : "0"; };
    if (arg == "--tokens") {
      o.tokens = std::max(16, std::atoi(next()));
    } else if (arg == "--model") {
      o.model = next();
    } else if (arg == "--dump") {
      o.dump = next();
    } else if (arg == "--write-dump") {
      o.writeDump = next();
    } else if (arg == "--layer") {
      o.layer = std::atoi(next());
    } else if (arg == "--head") {
      o.head = std::max(0, std::atoi(next()));
    } else if (arg == "--csv") {
      o.csv = next();
    } else if (arg == "--help" || arg == "-h") {
      std::puts(
          "bench_long_map_frames [--tokens N] [--model DIR | --dump FILE] [--write-dump FILE] [--layer L] [--head H] "
          "[--threads N] [--csv FILE]");
      std::exit(0);
    } else {
      std::fprintf(stderr, "bench_long_map_frames: unknown option %s (--help lists them)\n", arg.c_str());
      std::exit(2);
    }
  }
  return o;
}

// The fixture's folder copied with `max_position_embeddings` set to `tokens`.
bool copyFixture(const QString& to, int tokens) {
  const QString from = QStringLiteral(ATTN_TEST_DATA_DIR "/decoders/llama/");
  for (const QString& name : QDir(from).entryList(QDir::Files)) {
    if (!QFile::copy(from + name, to + u'/' + name)) return false;
  }
  QFile config(to + QStringLiteral("/config.json"));
  if (!config.open(QIODevice::ReadOnly)) return false;
  QByteArray text = config.readAll();
  config.close();
  const QByteArray was = "\"max_position_embeddings\": 64";
  if (!text.contains(was)) return false;
  text.replace(was, "\"max_position_embeddings\": " + QByteArray::number(tokens));
  return QFile::remove(config.fileName()) && config.open(QIODevice::WriteOnly) && config.write(text) == text.size();
}

// Runs the event loop (waking for events, not spinning) for `ms` milliseconds; returns the time the GUI thread
// spent handling what arrived (tile deliveries), in ms.
double idle(double ms) {
  QElapsedTimer timer;
  timer.start();
  double busy = 0.0;
  while (double(timer.nsecsElapsed()) / 1e6 < ms) {
    QElapsedTimer one;
    one.start();
    QCoreApplication::processEvents(QEventLoop::AllEvents);
    busy += double(one.nsecsElapsed()) / 1e6;
    const double left = ms - double(timer.nsecsElapsed()) / 1e6;
    if (left > 1.0) {
      QEventLoop loop;
      QTimer::singleShot(int(std::min(left, 4.0)), &loop, &QEventLoop::quit);
      loop.exec();
    }
  }
  return busy;
}

// The run of --model (or the fixture) over --tokens ids, attention kept on demand; its forward's time in `seconds`.
std::shared_ptr<const attn::models::TransformerRun> runModel(const Options& options, double& seconds) {
  QTemporaryDir dir;
  QString folder = QString::fromStdString(options.model);
  if (folder.isEmpty()) {
    if (!dir.isValid() || !copyFixture(dir.path(), options.tokens)) {
      std::fputs("bench_long_map_frames: could not copy the Llama fixture of tests/data\n", stderr);
      return nullptr;
    }
    folder = dir.path();
  }
  auto model = attn::models::TransformerModel::load(folder.toStdString());
  if (!model) {
    std::fprintf(stderr, "bench_long_map_frames: %s\n", model.error().message().c_str());
    return nullptr;
  }
  const auto& config = (*model)->config();
  std::vector<int> ids;
  for (int i = 0; i < options.tokens; ++i) ids.push_back(int((std::int64_t(i) * 7919 + 13) % config.vocab_size));
  attn::models::TransformerRunner runner(*model);
  attn::models::RunOptions run;
  run.keep = attn::models::RunOptions::Keep::OnDemand;
  QElapsedTimer forward;
  forward.start();
  auto result = runner.run_ids(ids, {}, run);
  if (!result) {
    std::fprintf(stderr, "bench_long_map_frames: the forward of %d tokens failed: %s\n", options.tokens,
                 result.error().message().c_str());
    return nullptr;
  }
  seconds = double(forward.nsecsElapsed()) / 1e9;
  return std::make_shared<const attn::models::TransformerRun>(std::move(*result));
}

// A version-2 dump opened as a run, what the Transformer tab does with one: the time to open it and to check the
// head that will be shown, printed.
std::shared_ptr<const attn::models::TransformerRun> openDump(const std::string& path, int layer, int head) {
  QElapsedTimer open;
  open.start();
  auto dump = attn::io::read_attention_dump(path);
  if (!dump) {
    std::fprintf(stderr, "bench_long_map_frames: %s\n", dump.error().message().c_str());
    return nullptr;
  }
  if (dump->on_demand.empty()) {
    std::fprintf(stderr, "bench_long_map_frames: %s is a version-1 dump (maps); give a version-2 one\n", path.c_str());
    return nullptr;
  }
  const double openMs = double(open.nsecsElapsed()) / 1e6;
  auto run = std::make_shared<attn::models::TransformerRun>();
  run->attention = std::move(dump->trace);
  run->on_demand = std::move(dump->on_demand);
  const int layers = int(run->on_demand.size());
  const auto& kept = run->on_demand[std::size_t(layer < 0 ? layers - 1 : std::min(layer, layers - 1))];
  QElapsedTimer check;
  check.start();
  if (auto ok = kept.verify(std::min(head, kept.heads() - 1)); !ok) {
    std::fprintf(stderr, "bench_long_map_frames: %s\n", ok.error().message().c_str());
    return nullptr;
  }
  std::printf(
      "  dump opened in %.0f ms (header, statistics, overviews, their checksums), the head's data checked in "
      "%.0f ms: %d layers x %d heads, %zu tokens, %.2f GB\n",
      openMs, double(check.nsecsElapsed()) / 1e6, layers, kept.heads(), run->attention.tokens.size(),
      double(QFileInfo(QString::fromStdString(path)).size()) / 1e9);
  return run;
}

struct Frame {
  const char* phase;
  double ms;
  double idleBusyMs;
  qint64 factor;
  bool exact;
};

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_long_map_frames");
  if (!threads) return 2;
  attn::ui::useOffscreenPlatformWithoutDisplay();
  QApplication app(argc, argv);
  Options options = parse(argc, argv);
  omp_set_num_threads(threads->count);
  const std::string loadBefore = attn::bench::load_average();

  double forwardS = 0.0;
  std::shared_ptr<const attn::models::TransformerRun> shared;
  std::string source = options.model.empty() ? "the Llama fixture of tests/data" : options.model;
  if (!options.dump.empty()) {
    shared = openDump(options.dump, options.layer, options.head);
    source = "the version-2 dump " + options.dump;
  } else {
    shared = runModel(options, forwardS);
  }
  if (!shared) return 1;
  if (!options.writeDump.empty()) {
    QElapsedTimer write;
    write.start();
    int shownLayer = -1;
    const int count = int(shared->on_demand.size());
    auto written = attn::io::write_attention_dump(
        options.writeDump, shared->attention, shared->on_demand, source, {}, [&](double fraction, const std::string&) {
          if (int(fraction * count) != shownLayer)
            std::fprintf(stderr, "  overviews: %d of %d layers\n", shownLayer = int(fraction * count), count);
          return true;
        });
    if (!written) {
      std::fprintf(stderr, "bench_long_map_frames: %s\n", written.error().message().c_str());
      return 1;
    }
    std::printf("  dump written in %.1f s: %s, %.2f GB\n", double(write.nsecsElapsed()) / 1e9,
                options.writeDump.c_str(), double(QFileInfo(QString::fromStdString(options.writeDump)).size()) / 1e9);
  }
  options.tokens = int(shared->attention.tokens.size());
  const int layers = int(shared->on_demand.size());
  const int layer = options.layer < 0 ? layers - 1 : std::min(options.layer, layers - 1);
  const attn::OnDemandLayer& kept = shared->on_demand[std::size_t(layer)];
  const int head = std::min(options.head, int(kept.heads()) - 1);
  QStringList tokens;
  for (int i = 0; i < options.tokens; ++i) tokens.append(QStringLiteral("t%1").arg(i));

  LongMapView view;
  view.resize(1000, 860);
  view.show();
  QElapsedTimer first;
  first.start();
  view.setMap(std::make_shared<const attn::OnDemandHead>(shared, kept, head), tokens,
              QStringLiteral("layer %1, head %2").arg(layer).arg(head));
  double firstPictureMs = -1.0, exactWholeMs = -1.0;
  while (first.elapsed() < 120000 && exactWholeMs < 0) {
    idle(2.0);
    if (firstPictureMs < 0 && view.tilesComputed() > 0) firstPictureMs = double(first.nsecsElapsed()) / 1e6;
    if (!view.isBusy() && view.isExactInView()) exactWholeMs = double(first.nsecsElapsed()) / 1e6;
  }

  std::vector<Frame> frames;
  const auto frame = [&](const char* phase, auto&& send) {
    QElapsedTimer t;
    t.start();
    send();
    view.repaint();
    const double ms = double(t.nsecsElapsed()) / 1e6;
    const double busy = idle(std::max(0.0, kPeriodMs - ms));
    frames.push_back({phase, ms, busy, view.factor(), view.isExactInView()});
  };
  const QRectF area(92, 64, view.width() - 100, view.height() - 86);  // LongMapView's map area (its margins)
  const auto wheel = [&](QPointF at, int delta) {
    QWheelEvent e(at, view.mapToGlobal(at), {}, {0, delta}, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &e);
  };
  const auto mouse = [&](QEvent::Type type, QPointF at, Qt::MouseButtons buttons) {
    QMouseEvent e(type, at, view.mapToGlobal(at), Qt::LeftButton, buttons, Qt::NoModifier);
    QApplication::sendEvent(&view, &e);
  };
  const auto key = [&](int k) {
    QKeyEvent e(QEvent::KeyPress, k, Qt::NoModifier);
    QApplication::sendEvent(&view, &e);
  };

  const QPointF in = area.topLeft() + QPointF(area.width() * 0.45, area.height() * 0.55);
  for (int i = 0; i < 36; ++i) frame("zoom in", [&] { wheel(in, 120); });
  QPointF at = area.center();
  frame("drag", [&] { mouse(QEvent::MouseButtonPress, at, Qt::LeftButton); });
  for (int i = 0; i < 200; ++i) {
    at -= QPointF(3, 3);
    if (!area.contains(at)) at = area.center();
    frame("drag", [&] { mouse(QEvent::MouseMove, at, Qt::LeftButton); });
  }
  frame("drag", [&] { mouse(QEvent::MouseButtonRelease, at, Qt::NoButton); });
  for (int i = 0; i < 60; ++i) frame("keys", [&] { key(i % 20 < 10 ? Qt::Key_Right : Qt::Key_Down); });
  const QPointF out = area.topLeft() + QPointF(area.width() * 0.7, area.height() * 0.8);
  for (int i = 0; i < 36; ++i) frame("zoom out", [&] { wheel(out, -120); });
  frame("home", [&] { key(Qt::Key_Home); });

  std::vector<double> all, busy;
  int over = 0, standIns = 0;
  for (const auto& f : frames) {
    all.push_back(f.ms);
    busy.push_back(f.idleBusyMs);
    over += f.ms > kFrameBudgetMs;
    standIns += !f.exact;
  }
  std::printf(
      "bench_long_map_frames: %d tokens, %s, layer %d head %d (%d layers x %lld heads, head size %lld), forward "
      "%.1f s on %d thread(s) (%s); view %d x %d, offscreen\n",
      options.tokens, source.c_str(), layer, head, layers, static_cast<long long>(kept.heads()),
      static_cast<long long>(kept.head_dim()), forwardS, threads->count, threads->source.c_str(), view.width(),
      view.height());
  std::printf("  whole map: first picture after %.0f ms, exact (every tile in view) after %.0f ms\n", firstPictureMs,
              exactWholeMs);
  std::printf("Frame time, input event -> view repainted (%zu frames, one every 16.7 ms at most):\n", frames.size());
  std::printf("  min %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f ms;  over %.0f ms: %d\n", percentile(all, 0),
              percentile(all, 50), percentile(all, 90), percentile(all, 99), percentile(all, 100), kFrameBudgetMs,
              over);
  for (const char* phase : {"zoom in", "drag", "keys", "zoom out"}) {
    std::vector<double> v;
    for (const auto& f : frames) {
      if (std::string(f.phase) == phase) v.push_back(f.ms);
    }
    std::printf("  %-8s (%3zu frames): p50 %.2f  p99 %.2f  max %.2f ms\n", phase, v.size(), percentile(v, 50),
                percentile(v, 99), percentile(v, 100));
  }
  std::printf("  GUI thread between frames (tile deliveries): p50 %.2f  p99 %.2f  max %.2f ms\n", percentile(busy, 50),
              percentile(busy, 99), percentile(busy, 100));
  std::printf("  frames drawn with a preview or a coarser tile standing in: %d of %zu; tiles computed: %d\n", standIns,
              frames.size(), view.tilesComputed());
  std::printf("Budget: p99 < %.0f ms: %s\n", kFrameBudgetMs, percentile(all, 99) < kFrameBudgetMs ? "yes" : "NO");
  std::printf("Load average before %s, after %s\n", loadBefore.c_str(), attn::bench::load_average().c_str());
  if (!options.csv.empty()) {
    if (FILE* f = std::fopen(options.csv.c_str(), "w")) {
      std::fputs("phase,ms,between_frames_ms,factor,exact\n", f);
      for (const auto& fr : frames) {
        std::fprintf(f, "%s,%.3f,%.3f,%lld,%d\n", fr.phase, fr.ms, fr.idleBusyMs, static_cast<long long>(fr.factor),
                     int(fr.exact));
      }
      std::fclose(f);
    }
  }
  return 0;
}
