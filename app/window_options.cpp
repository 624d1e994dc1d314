// Handing each tab its part of attnscope's command line, and the scripted screenshots (window_options.h).
#include "app/window_options.h"

#include "window/main_window.h"
#include "views/export.h"
#include "views/long_map_panel.h"
#include "views/long_map_view.h"
#include "render/strings.h"
#include "attn/lab/lab.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/caption/caption_workbench.h"
#include "workbenches/corpus/corpus_workbench.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QApplication>
#include <QPushButton>
#include <QSlider>
#include <QStatusBar>
#include <QTimer>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace Qt::StringLiterals;

namespace attn::app {

namespace {

// Runs `apply` with the first result of `workbench` that `ready` accepts; later the view is the user's.
template <typename Workbench, typename Ready, typename Apply>
void onFirstResult(Workbench* workbench, Ready ready, Apply apply) {
  auto applied = std::make_shared<bool>(false);
  QObject::connect(workbench, &Workbench::resultShown, workbench, [workbench, ready, apply, applied] {
    if (*applied || !ready(workbench)) return;
    *applied = true;
    apply(workbench);
  });
}

void applyAlignment(attn::ui::AlignmentWorkbench* tab, const AlignmentOptions& o) {
  if (o.text) tab->setText(*o.text);
  if (o.pair) tab->setPairText(*o.pair);
  if (o.beam) tab->setBeam(*o.beam);
  // Applied once a result has that many steps (the model's output is known then).
  if (const auto step = o.step) {
    onFirstResult(
        tab, [step](auto* t) { return t->stepCount() > *step; }, [step](auto* t) { t->setStep(*step); });
  }
  if (o.model) tab->openModel(*o.model);
}

void applyCaption(attn::ui::CaptionWorkbench* tab, const CaptionOptions& o) {
  if (o.lightMask) tab->setOverlayMode(attn::ui::render::CaptionOverlayMode::LightMask);
  if (o.beam) tab->setBeam(*o.beam);
  if (o.scene) tab->openScene(*o.scene);
  if (o.sample) tab->openSample(*o.sample);
  if (o.file) tab->openFile(*o.file);
  // Applied to the first caption with that many words.
  if (const auto word = o.word) {
    onFirstResult(
        tab, [word](auto* t) { return t->wordCount() > *word; }, [word](auto* t) { t->setWord(*word); });
  }
  if (o.model) tab->openModel(*o.model);
}

void applyTransformer(attn::ui::MainWindow& window, const TransformerOptions& o) {
  attn::ui::TransformerWorkbench* tab = window.transformer();
  if (o.text) tab->setText(*o.text);
  if (o.view) tab->setView(*o.view);
  if (o.sample) tab->openSample(*o.sample);
  if (o.image) tab->openImage(*o.image);
  // Applied with the first result (the model's shape is known then).
  if (const auto head = o.head) {
    onFirstResult(
        tab, [](auto*) { return true; }, [head](auto* t) { t->openHead(head->first, head->second); });
  }
  if (const auto n = o.generate) {
    onFirstResult(
        tab, [](auto* t) { return t->generateButton()->isEnabled(); },
        [n](auto* t) {
          auto g = t->generation();
          g.max_new_tokens = *n;
          t->setGeneration(g);
          t->generate();
        });
  }
  if (const auto step = o.scrub) {
    onFirstResult(
        tab, [](auto* t) { return t->outcome() && t->outcome()->run->prompt_tokens > 0; },
        [step](auto* t) { t->scrubber()->setValue(*step); });
  }
  if (o.model) window.openModel(*o.model);
}

// The head, the token search and the embedding are asked for before the database is open: the tab keeps them until
// it is (and the screenshot waits for every answer: CorpusWorkbench::showsNewest).
void applyCorpus(attn::ui::CorpusWorkbench* tab, const CorpusOptions& o) {
  if (o.model) tab->setModel(*o.model);
  if (o.statistic) tab->setStatistic(*o.statistic);
  if (o.head) tab->selectHead(o.head->first, o.head->second);
  if (o.token) tab->searchToken(*o.token);
  if (o.embed) tab->embed(*o.embed);
  if (o.database) tab->openDatabase(*o.database);
}

// --generate: the screenshot waits for the generated run (and, in the lens view, its lens).
bool transformerReady(attn::ui::TransformerWorkbench* tab, const TransformerOptions& o) {
  // A run kept on demand: its matrix's tiles are computed after the run; wait for the exact ones in view.
  if (tab->isOnDemand() && tab->currentView() == attn::ui::TransformerWorkbench::View::Matrix) {
    const auto* map = tab->longMap()->map();
    if (map->isBusy() || !map->isExactInView()) return false;
  }
  if (!o.generate) return true;
  const auto* outcome = tab->outcome();
  if (!outcome || tab->isGenerating() || outcome->run->prompt_tokens == 0) return false;
  return tab->currentView() != attn::ui::TransformerWorkbench::View::Lens || outcome->lens != nullptr;
}

// --screenshot-zoomed: a run kept on demand, its long map zoomed in to 14 pixels a token around the middle query
// (selected: the row strip shows it) and the key it gives most weight; the path of that second screenshot.
std::optional<QString> zoomLongMap(attn::ui::TransformerWorkbench* tab, std::optional<QString> path) {
  if (!path || !tab->isOnDemand()) return std::nullopt;
  auto* map = tab->longMap()->map();
  const qint64 n = map->reader()->tokens(), query = n / 2;
  std::vector<float> row(static_cast<std::size_t>(n));
  map->reader()->row(query, row.data());
  const auto key = qint64(std::max_element(row.begin(), row.end()) - row.begin());
  tab->longMap()->selectQuery(query);
  map->setView(QPointF(0, 0), 14.0);
  map->centreOn(query, key);
  return path;
}

// Glimpse settings apply once the image they refer to is open; `ready` turns true then (it stays false when
// the settings are refused, and the app exits with 2).
void applyGlimpse(attn::ui::GlimpseWorkbench* tab, const GlimpseOptions& o, const std::shared_ptr<bool>& ready) {
  *ready = !o.hasSettings() && o.image.isEmpty();
  QObject::connect(tab, &attn::ui::GlimpseWorkbench::imageLoaded, tab, [tab, o, ready](const QString& path) {
    if (*ready || (!o.image.isEmpty() && path != o.image)) return;
    *ready = true;
    if (!o.hasSettings()) return;
    auto settings = tab->settingsFromSpecs(o.gaussian, o.stn, o.sameWindow);
    if (!settings) {
      *ready = false;
      std::fprintf(stderr, "attnscope: %s\n", settings.error().message().c_str());
      QApplication::exit(2);
      return;
    }
    tab->setSettings(*settings);
  });
  if (o.editStn) tab->setEditStn(true);
  if (o.write) tab->setWriteMode(true);
  if (o.forms) tab->setWindowForms(true);
}

// --screenshot: once `workbench` shows its newest result (and `ready`), wait for queued replots and the
// layout, grab the window and quit (0 saved, 1 not). A failure of the tab, or nothing within a minute, quits
// with 1 and a message.
// `again`, after a screenshot is saved: the path of another one to take once `ready` again (having changed the view),
// or none to quit. `session`: where to save the session (every tab's state, once every tab is idle) when the first
// screenshot is saved.
void armScreenshot(attn::ui::MainWindow& window, const QString& first, attn::ui::Workbench* workbench,
                   std::function<bool()> ready, int timeoutS, std::function<std::optional<QString>()> again,
                   std::optional<QString> session) {
  constexpr int kSettleMs = 800;
  const int timeoutMs = timeoutS * 1000;
  QObject::connect(workbench, &attn::ui::Workbench::failed, &window, [](const QString& message) {
    std::fprintf(stderr, "attnscope: %s\n", message.toLocal8Bit().constData());
    QApplication::exit(1);
  });
  // The newest result shown; then `ready` is asked every 100 ms (what it waits for may come after the result:
  // a long map's tiles).
  // Whether the newest result shown was the tab's newest request when it was shown (later requests that show
  // nothing new, a view's resize say, do not hold the screenshot back).
  auto shown = std::make_shared<bool>(false);
  QObject::connect(workbench, &attn::ui::Workbench::resultShown, &window,
                   [shown, workbench](quint64 generation) { *shown = workbench->showsNewest(generation); });
  auto* poll = new QTimer(&window);
  poll->setInterval(100);
  poll->start();
  auto path = std::make_shared<QString>(first);
  auto sessionPath = std::make_shared<std::optional<QString>>(std::move(session));
  QObject::connect(poll, &QTimer::timeout, &window, [&window, path, workbench, ready, shown, poll, again, sessionPath] {
    if (!*shown || !ready()) return;
    // The session is every tab's state: each tab has shown its newest request first (the Glimpse tab records its
    // photo once read, which a screenshot of another tab would otherwise catch half-way).
    const auto& tabs = window.workbenches();
    if (*sessionPath && !std::ranges::all_of(tabs, [](const attn::ui::Workbench* tab) { return tab->isIdle(); }))
      return;
    poll->stop();
    QTimer::singleShot(kSettleMs, &window, [&window, path, poll, again, sessionPath] {
      // As every export is written: atomically, under the name's own bytes.
      auto saved = attn::ui::exportWidget(window, *path);
      if (saved) {
        std::fprintf(stdout, "saved %s\n", attn::ui::pathBytes(*path).constData());
      } else {
        std::fprintf(stderr, "attnscope: could not save the screenshot: %s\n", saved.error().message().c_str());
      }
      if (const auto out = std::exchange(*sessionPath, std::nullopt); saved && out) {
        saved = attn::ui::save_session(attn::ui::toPath(*out), window.session());
        if (!saved)
          std::fprintf(stderr, "attnscope: could not save the session: %s\n", saved.error().message().c_str());
      }
      if (saved && again) {
        if (auto next = again()) {
          *path = *next;
          poll->start();
          return;
        }
      }
      QApplication::exit(saved ? 0 : 1);
    });
  });
  const QString name = workbench->key();
  QTimer::singleShot(timeoutMs, &window, [name, timeoutS] {
    std::fprintf(stderr, "attnscope: no result in the %s tab within %d s, no screenshot\n",
                 name.toLocal8Bit().constData(), timeoutS);
    QApplication::exit(1);
  });
}

}  // namespace

bool applyOptions(attn::ui::MainWindow& window, const Options& options, const std::shared_ptr<bool>& glimpseReady) {
  if (options.mechanism) {
    auto request = window.lab()->request();
    if (!attn::lab::select_mechanism(request.params, *options.mechanism)) {
      std::fprintf(stderr, "attnscope: unknown mechanism '%s' (attnscope-cli lab --list shows them)\n",
                   options.mechanism->c_str());
      return false;
    }
    window.lab()->setRequest(request);
  }
  if (options.tab) window.showTab(*options.tab);
  switch (options.tab.value_or(SessionTab::Lab)) {
    case SessionTab::Alignment: applyAlignment(window.alignment(), options.alignment); break;
    case SessionTab::Caption: applyCaption(window.caption(), options.caption); break;
    case SessionTab::Transformer: applyTransformer(window, options.transformer); break;
    case SessionTab::Corpus: applyCorpus(window.corpus(), options.corpus); break;
    case SessionTab::Glimpse:
    case SessionTab::Lab: break;
  }
  applyGlimpse(window.glimpse(), options.glimpse, glimpseReady);
  return true;
}

void armScreenshots(attn::ui::MainWindow& window, const Options& options, const std::shared_ptr<bool>& glimpseReady) {
  // Without a tab chosen the screenshot is of the tab in view (the Alignment tab, or the one left open last
  // time). The whole caption at once: a screenshot does not wait for the word-by-word reveal.
  if (options.screenshot) {
    attn::ui::Workbench* shot = window.currentWorkbench();
    if (shot == window.caption()) window.caption()->setRevealInterval(0);
    armScreenshot(
        window, *options.screenshot, shot,
        [glimpseReady, shot, &window, &options] {
          if (shot == window.transformer()) return transformerReady(window.transformer(), options.transformer);
          return shot != window.glimpse() || *glimpseReady;
        },
        options.screenshotTimeout,
        [&window, zoomed = std::make_shared<std::optional<QString>>(options.screenshotZoomed)] {
          return zoomLongMap(window.transformer(), std::exchange(*zoomed, std::nullopt));  // once
        },
        options.screenshotSession);
  }
}

}  // namespace attn::app
