// Opening a corpus database in the Corpus tab (issue 46: "opening the merged database in the GUI to the first picture
// under 2 s"), timed inside the program: from CorpusWorkbench::openDatabase to the heads map painted (the first
// picture: the database opened, its counts and every statistic's layers x heads means read), then to the tab idle
// (the first head's distribution of the statistic and its strongest inputs shown as well). The process's start
// (Qt, the fonts, the window) is not in these figures; run_corpus_vs_torch.sh times the whole `attnscope
// --screenshot` process beside them.
//
// Usage: bench_corpus_open DATABASE [--rounds N] — each round a new workbench (a new SQLite connection; the page
// cache as the runner left it: the script drops it before the first round where it may).
#include "app/platform.h"
#include "views/figure_map_view.h"
#include "workbenches/corpus/corpus_workbench.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Runs the event loop until `done` or `limitMs`; false on the limit.
template <typename Done>
bool waitFor(Done done, int limitMs) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > limitMs) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 5);
    QThread::usleep(200);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  attn::ui::useOffscreenPlatformWithoutDisplay();
  QApplication app(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_corpus_open DATABASE [--rounds N]\n");
    return 2;
  }
  const QString database = QString::fromLocal8Bit(argv[1]);
  int rounds = 3;
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  for (int round = 1; round <= rounds; ++round) {
    attn::ui::CorpusWorkbench workbench;
    workbench.resize(1400, 900);
    workbench.show();
    QApplication::processEvents();
    QElapsedTimer clock;
    clock.start();
    workbench.openDatabase(database);
    const bool opened = waitFor([&] { return workbench.overview() != nullptr || workbench.isIdle(); }, 120000);
    if (!opened || !workbench.overview()) {
      std::fprintf(stderr, "bench_corpus_open: %s did not open: %s\n", argv[1], qPrintable(workbench.note()->text()));
      return 1;
    }
    workbench.headsMap()->repaint();  // synchronous: the first picture on the widget
    const double firstMs = clock.nsecsElapsed() / 1e6;
    if (!waitFor([&] { return workbench.isIdle(); }, 600000)) {
      std::fprintf(stderr, "bench_corpus_open: the first head did not arrive in 10 minutes\n");
      return 1;
    }
    workbench.repaint();
    const double idleMs = clock.nsecsElapsed() / 1e6;
    const auto& counts = workbench.overview()->counts;
    std::printf(
        "  round %d: %lld inputs, %d layers x %d heads: first picture (the heads map) %.0f ms; "
        "L0.H0's distribution and strongest inputs shown %.0f ms\n",
        round, static_cast<long long>(counts.inputs), workbench.overview()->layers, workbench.overview()->heads,
        firstMs, idleMs);
    std::fflush(stdout);
  }
  return 0;
}
