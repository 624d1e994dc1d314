// attnscope's command line, checked, as each tab's part of it (main.cpp parses it into Options), and what is done
// with it once the window exists: each part handed to its tab, and the scripted screenshots (--screenshot,
// --screenshot-zoomed, --screenshot-session) taken once the tab in view shows its result.
#pragma once

#include "window/main_window.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace attn::app {

using attn::ui::SessionTab;

// Each tab's part of the command line, checked.
struct AlignmentOptions {
  std::optional<QString> text;
  std::optional<QString> pair;
  std::optional<int> beam;
  std::optional<int> step;  // 0 = the first
  std::optional<QString> model;
};
struct CaptionOptions {
  bool lightMask = false;
  std::optional<int> beam;
  std::optional<std::uint64_t> scene;
  std::optional<QString> sample;  // a bundled photo's key
  std::optional<QString> file;
  std::optional<int> word;  // 0 = the first
  std::optional<QString> model;
};
struct TransformerOptions {
  std::optional<QString> text;
  std::optional<attn::ui::TransformerWorkbench::View> view;
  std::optional<QString> sample;
  std::optional<QString> image;
  std::optional<std::pair<int, int>> head;  // layer, head (0-based)
  std::optional<QString> model;
  std::optional<int> generate;  // new tokens
  std::optional<int> scrub;     // the generated token in view
};
struct CorpusOptions {
  std::optional<QString> database;
  std::optional<QString> model;  // instead of the database's
  std::optional<QString> statistic;
  std::optional<std::pair<int, int>> head;  // layer, head (0-based)
  std::optional<QString> token;
  std::optional<int> embed;  // inputs of the embedding's sample
};
struct GlimpseOptions {
  QString image;  // a file or a ":/" resource; empty: the one open
  QString gaussian;
  QString stn;
  bool sameWindow = false;
  bool editStn = false;
  bool write = false;
  bool forms = false;
  bool hasSettings() const { return !gaussian.isEmpty() || !stn.isEmpty() || sameWindow; }
};

struct Options {
  std::optional<QString> session;
  std::optional<SessionTab> tab;  // the tab the options are for; none: the one the session left in view
  std::optional<std::string> mechanism;
  QStringList files;  // paths to open as a drop opens them (the first is opened)
  AlignmentOptions alignment;
  CaptionOptions caption;
  TransformerOptions transformer;
  CorpusOptions corpus;
  GlimpseOptions glimpse;
  std::optional<QString> screenshot;
  int screenshotTimeout = 60;
  std::optional<QString> screenshotZoomed;
  std::optional<QString> screenshotSession;
};

// Every part of `options` to its tab; false (and a message) when the lab's mechanism is unknown. `glimpseReady`
// turns false while the Glimpse tab's settings wait for their image (and stays false when they are refused).
bool applyOptions(attn::ui::MainWindow& window, const Options& options, const std::shared_ptr<bool>& glimpseReady);

// --screenshot (and --screenshot-zoomed, --screenshot-session): armed on the tab in view, which saves the window
// once its newest result (and the options' waits) are in, then quits the application (0 saved, 1 not).
void armScreenshots(attn::ui::MainWindow& window, const Options& options, const std::shared_ptr<bool>& glimpseReady);

}  // namespace attn::app
