// attnscope: the desktop application. Parses the command line into an Options struct (every value checked
// before a window exists), then hands each tab its part and shows the main window.
#include "window/about_dialog.h"
#include "window/main_window.h"
#include "app/command_line.h"
#include "app/window_options.h"
#include "app/platform.h"
#include "app/versions.h"
#include "attn/io/corpus_db.h"
#include "attn/io/read_file.h"
#include "render/strings.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/caption/caption_models.h"
#include "workbenches/caption/caption_workbench.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QStatusBar>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace Qt::StringLiterals;
using attn::ui::SessionTab;
using namespace attn::app;

namespace {

// Qt aborts with a message about its "xcb" plugin when there is no display; say what to do instead.
bool noDisplay() {
  const auto unset = [](const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr || *v == '\0';
  };
  return unset("DISPLAY") && unset("WAYLAND_DISPLAY") && unset("QT_QPA_PLATFORM");
}

// ---- the command line ----

struct Flags {
  QCommandLineOption version{u"version"_s, u"Print the versions of AttnScope and its libraries."_s};
  QCommandLineOption mechanism{u"mechanism"_s, u"Start the lab with this mechanism (see attnscope-cli lab --list)."_s,
                               u"key"_s};
  QCommandLineOption session{
      u"session"_s,
      u"Open this session file (*.attnscope.json): every tab as it was saved. The other options apply on top of it."_s,
      u"file"_s};
  QCommandLineOption tab{u"tab"_s,
                         u"Start on this tab: alignment (the default), caption, lab, glimpse, transformer or corpus."_s,
                         u"name"_s};
  QCommandLineOption image{
      u"image"_s,
      u"Open this image in the Glimpse tab, or with --tab transformer as the ViT's input, or with --tab caption as "
      "the captioner's (a file, or sample:astronaut|chelsea|coffee|rocket)."_s,
      u"path"_s};
  QCommandLineOption gaussian{
      u"gaussian"_s, u"Gaussian glimpse as k=v,... (attnscope-cli's --gaussian keys), from the paper's default."_s,
      u"spec"_s};
  QCommandLineOption stn{u"stn"_s, u"STN glimpse as k=v,... (attnscope-cli's --stn keys)."_s, u"spec"_s};
  QCommandLineOption sameWindow{u"same-window"_s, u"Compare the Gaussian and the STN glimpse of one window."_s};
  QCommandLineOption editStn{u"edit-stn"_s, u"The canvas handles edit the STN glimpse."_s};
  QCommandLineOption write{u"write"_s, u"Turn on the Glimpse tab's write mode."_s};
  QCommandLineOption forms{u"window-forms"_s,
                           u"The Glimpse tab's window three ways: soft mask a \u2299 I, crop, matrix form, timed."_s};
  QCommandLineOption model{
      u"model"_s,
      u"Open a model: a bundled one by name (date-bahdanau, ..., sentiment-hierarchical) or a seq2seq or classifier "
      "folder in the Alignment tab; caption-soft, caption-hard or a captioner folder in the Captioning tab; "
      "induction-gpt2 (the bundled demo), a transformer folder or *.attn.safetensors dump in the Transformer tab."_s,
      u"name|dir"_s};
  QCommandLineOption scene{u"scene"_s, u"The Captioning tab's input: the generated scene of this seed."_s, u"seed"_s};
  QCommandLineOption word{u"word"_s, u"The Captioning tab's word in view (0 = the first)."_s, u"N"_s};
  QCommandLineOption lightMask{
      u"light-mask"_s, u"The Captioning tab's overlays dim the image where attention is low (the paper's figures)."_s};
  QCommandLineOption text{u"text"_s, u"The input of the Alignment or the Transformer tab."_s, u"text"_s};
  QCommandLineOption textFile{
      u"text-file"_s, u"The Transformer tab's input read from a UTF-8 text file (a long document)."_s, u"file"_s};
  QCommandLineOption pair{u"pair"_s, u"The Alignment tab's second input: an entailment model's hypothesis."_s,
                          u"text"_s};
  QCommandLineOption beam{u"beam"_s, u"The Alignment or the Captioning tab's beam width (1 = greedy)."_s, u"K"_s};
  QCommandLineOption step{u"step"_s, u"The Alignment tab's output step in view (0 = the first)."_s, u"N"_s};
  QCommandLineOption view{u"view"_s, u"The Transformer tab's view: head, model, matrix, overlay, stats or lens."_s,
                          u"name"_s};
  QCommandLineOption head{u"head"_s, u"The Transformer tab's selected head as layer,head (0-based)."_s, u"L,H"_s};
  QCommandLineOption corpus{u"corpus"_s,
                            u"Open this corpus database (attnscope-cli corpus --db) in the Corpus tab; --model then "
                            "chooses the model of its re-runs and embedding instead of the one it names."_s,
                            u"file"_s};
  QCommandLineOption statistic{
      u"statistic"_s,
      u"The Corpus tab's heads map: entropy, mean_distance, first_token_mass, max_weight, previous_token, "
      "duplicate_token or induction."_s,
      u"name"_s};
  QCommandLineOption token{u"token"_s, u"The Corpus tab's token search: where the head attends from this token."_s,
                           u"text"_s};
  QCommandLineOption embed{u"embed"_s, u"The Corpus tab: the query/key embedding of the head over N inputs."_s, u"N"_s};
  QCommandLineOption generate{u"generate"_s, u"The Transformer tab: generate N tokens after the text (decoders)."_s,
                              u"N"_s};
  QCommandLineOption scrub{u"scrub"_s, u"With --generate: the generated token in view (0 = the first)."_s, u"S"_s};
  // For the README and the visual checks: grab the window once the first result is drawn, then quit.
  QCommandLineOption screenshot{u"screenshot"_s, u"Save a screenshot of the window and quit."_s, u"file"_s};
  // How long --screenshot waits for the result (default 60 s; a 32,768-token forward takes minutes).
  QCommandLineOption screenshotTimeout{u"screenshot-timeout"_s, u"Seconds --screenshot waits."_s, u"s"_s};
  // A second screenshot of a long run's map zoomed in (the Transformer tab, a run kept on demand).
  QCommandLineOption screenshotZoomed{u"screenshot-zoomed"_s, u"Then zoom the long map and save again."_s, u"file"_s};
  // With --screenshot: every tab's state as it was grabbed, as File > Save Session writes it (a script, or a test,
  // reads what the window had open).
  QCommandLineOption screenshotSession{u"screenshot-session"_s, u"Also save the session then."_s, u"file"_s};
  // --session as it reaches the parser (attn::app::keepSessionOption).
  QCommandLineOption sessionAlias{QString::fromLatin1(attn::app::kSessionAlias), QString(), u"file"_s};

  void addTo(QCommandLineParser& parser) {
    screenshot.setFlags(QCommandLineOption::HiddenFromHelp);
    screenshotTimeout.setFlags(QCommandLineOption::HiddenFromHelp);
    screenshotZoomed.setFlags(QCommandLineOption::HiddenFromHelp);
    screenshotSession.setFlags(QCommandLineOption::HiddenFromHelp);
    sessionAlias.setFlags(QCommandLineOption::HiddenFromHelp);
    for (QCommandLineOption* option : {&version,
                                       &mechanism,
                                       &session,
                                       &tab,
                                       &image,
                                       &gaussian,
                                       &stn,
                                       &sameWindow,
                                       &editStn,
                                       &write,
                                       &forms,
                                       &model,
                                       &scene,
                                       &word,
                                       &lightMask,
                                       &text,
                                       &pair,
                                       &beam,
                                       &step,
                                       &view,
                                       &head,
                                       &screenshot,
                                       &sessionAlias,
                                       &generate,
                                       &scrub,
                                       &corpus,
                                       &statistic,
                                       &token,
                                       &embed,
                                       &textFile,
                                       &screenshotTimeout,
                                       &screenshotZoomed,
                                       &screenshotSession}) {
      parser.addOption(*option);
    }
    parser.addPositionalArgument(
        u"path"_s,
        u"A file or folder to open as a drop on the window opens it: a session (*.attnscope.json); a model folder, "
        "*.safetensors, a llama.cpp *.gguf model or an *.attn.safetensors dump (the tab its config.json names); an "
        "image (the Glimpse tab); any other file as text into the lab (first non-empty line = query, rest = "
        "source)."_s,
        u"[path]"_s);
  }
};

using Parsed = std::expected<Options, std::string>;

std::unexpected<std::string> bad(const QString& message) { return std::unexpected(message.toStdString()); }

std::optional<int> parseInt(const QString& text, int low, int high) {
  bool ok = false;
  const int value = text.toInt(&ok);
  if (!ok || value < low || value > high) return std::nullopt;
  return value;
}

// Which tab the options are for: --tab, else what the other options only make sense in.
std::optional<SessionTab> chooseTab(const QCommandLineParser& parser, const Flags& f) {
  const QString modelArg = attn::app::pathValue(parser, f.model);
  const bool named = !modelArg.contains(u'/');
  const QString architecture = parser.isSet(f.model) ? attn::ui::folderArchitecture(modelArg) : QString();
  const bool captionModel =
      parser.isSet(f.model) && ((named && attn::ui::bundledCaptionModelKeys().contains(modelArg)) ||
                                attn::ui::isCaptionArchitecture(architecture));
  const bool alignmentModel = parser.isSet(f.model) && ((named && attn::ui::findBundledModel(modelArg)) ||
                                                        attn::ui::isAlignmentArchitecture(architecture));
  if (parser.isSet(f.corpus) || parser.isSet(f.statistic) || parser.isSet(f.token) || parser.isSet(f.embed)) {
    return SessionTab::Corpus;
  }
  if (captionModel || parser.isSet(f.scene) || parser.isSet(f.word) || parser.isSet(f.lightMask)) {
    return SessionTab::Caption;
  }
  if (alignmentModel || parser.isSet(f.beam) || parser.isSet(f.step) || parser.isSet(f.pair)) {
    return SessionTab::Alignment;
  }
  if (parser.isSet(f.model)) return SessionTab::Transformer;
  if (parser.isSet(f.image) || parser.isSet(f.gaussian) || parser.isSet(f.stn) || parser.isSet(f.sameWindow) ||
      parser.isSet(f.forms)) {
    return SessionTab::Glimpse;
  }
  // A path given alone chooses its tab when it is opened (MainWindow::openPath), as a drop does.
  if (parser.isSet(f.mechanism)) return SessionTab::Lab;
  return std::nullopt;
}

// A bundled model's name stays a name; a folder becomes absolute; anything else goes to the tab as given,
// whose error lists the bundled models.
QString modelPath(const QString& arg, bool bundled) {
  return bundled || !attn::ui::pathExists(arg) ? arg : attn::ui::absolutePath(arg);
}

Parsed parseCaption(const QCommandLineParser& parser, const Flags& f, Options options) {
  CaptionOptions& o = options.caption;
  o.lightMask = parser.isSet(f.lightMask);
  if (parser.isSet(f.beam)) {
    o.beam = parseInt(parser.value(f.beam), 1, attn::ui::CaptionWorkbench::kMaxBeam);
    if (!o.beam)
      return bad(u"--beam expects a width from 1 (greedy) to %1"_s.arg(attn::ui::CaptionWorkbench::kMaxBeam));
  }
  if (parser.isSet(f.scene) && parser.isSet(f.image)) return bad(u"give --scene or --image, not both"_s);
  if (parser.isSet(f.scene)) {
    bool ok = false;
    o.scene = parser.value(f.scene).toULongLong(&ok);
    if (!ok) return bad(u"--scene expects a seed (a whole number from 0)"_s);
  }
  if (const QString image = attn::app::pathValue(parser, f.image); image.startsWith(u"sample:"_s)) {
    o.sample = image.mid(7);
  } else if (!image.isEmpty()) {
    o.file = attn::ui::absolutePath(image);
  }
  if (parser.isSet(f.word)) {
    o.word = parseInt(parser.value(f.word), 0, INT32_MAX);
    if (!o.word) return bad(u"--word expects a word of the caption, 0 = the first"_s);
  }
  if (const QString model = attn::app::pathValue(parser, f.model); parser.isSet(f.model)) {
    o.model = modelPath(model, !model.contains(u'/') && attn::ui::bundledCaptionModelKeys().contains(model));
  }
  return options;
}

Parsed parseAlignment(const QCommandLineParser& parser, const Flags& f, Options options) {
  AlignmentOptions& o = options.alignment;
  if (parser.isSet(f.text)) o.text = parser.value(f.text);
  if (parser.isSet(f.pair)) o.pair = parser.value(f.pair);
  if (parser.isSet(f.beam)) {
    o.beam = parseInt(parser.value(f.beam), 1, attn::ui::AlignmentWorkbench::kMaxBeam);
    if (!o.beam) {
      return bad(u"--beam expects a width from 1 (greedy) to %1"_s.arg(attn::ui::AlignmentWorkbench::kMaxBeam));
    }
  }
  if (parser.isSet(f.step)) {
    o.step = parseInt(parser.value(f.step), 0, INT32_MAX);
    if (!o.step) return bad(u"--step expects an output step, 0 = the first"_s);
  }
  if (const QString model = attn::app::pathValue(parser, f.model); parser.isSet(f.model)) {
    o.model = modelPath(model, !model.contains(u'/') && attn::ui::findBundledModel(model));
  }
  return options;
}

Parsed parseTransformer(const QCommandLineParser& parser, const Flags& f, Options options) {
  using View = attn::ui::TransformerWorkbench::View;
  TransformerOptions& o = options.transformer;
  if (parser.isSet(f.text)) o.text = parser.value(f.text);
  if (parser.isSet(f.textFile)) {
    if (parser.isSet(f.text)) return bad(u"give --text or --text-file, not both"_s);
    const QString path = attn::app::pathValue(parser, f.textFile);
    const auto bytes = attn::io::read_file(attn::ui::toPath(path), attn::io::kMaxTextFileBytes);
    if (!bytes) return bad(u"--text-file: %1"_s.arg(attn::ui::fromStd(bytes.error().message())));
    o.text = QString::fromUtf8(bytes->data(), qsizetype(bytes->size()));
  }
  if (const QString name = parser.value(f.view); parser.isSet(f.view)) {
    o.view = name == u"head"_s      ? std::optional(View::Head)
             : name == u"model"_s   ? std::optional(View::Model)
             : name == u"matrix"_s  ? std::optional(View::Matrix)
             : name == u"overlay"_s ? std::optional(View::Overlay)
             : name == u"stats"_s   ? std::optional(View::Statistics)
             : name == u"lens"_s    ? std::optional(View::Lens)
                                    : std::nullopt;
    if (!o.view) return bad(u"unknown view '%1' (head, model, matrix, overlay, stats or lens)"_s.arg(name));
  }
  if (const QString image = attn::app::pathValue(parser, f.image); image.startsWith(u"sample:"_s)) {
    o.sample = image.mid(7);
  } else if (!image.isEmpty()) {
    o.image = image;
  }
  if (parser.isSet(f.head)) {
    const QStringList parts = parser.value(f.head).split(u',');
    const auto layer = parseInt(parts.value(0), INT32_MIN, INT32_MAX);
    const auto head = parseInt(parts.value(1), INT32_MIN, INT32_MAX);
    if (parts.size() != 2 || !layer || !head) return bad(u"--head expects layer,head (0-based numbers)"_s);
    o.head = std::pair(*layer, *head);
  }
  if (parser.isSet(f.model)) o.model = attn::app::pathValue(parser, f.model);
  if (parser.isSet(f.generate)) {
    o.generate = parseInt(parser.value(f.generate), 1, 4096);
    if (!o.generate) return bad(u"--generate expects a number of tokens from 1 to 4096"_s);
  }
  if (parser.isSet(f.scrub)) {
    o.scrub = parseInt(parser.value(f.scrub), 0, 4095);
    if (!o.scrub || !o.generate) return bad(u"--scrub expects a generated token (0 = the first) and --generate N"_s);
  }
  return options;
}

std::optional<std::pair<int, int>> parseHead(const QString& value) {
  const QStringList parts = value.split(u',');
  const auto layer = parseInt(parts.value(0), 0, INT32_MAX);
  const auto head = parseInt(parts.value(1), 0, INT32_MAX);
  if (parts.size() != 2 || !layer || !head) return std::nullopt;
  return std::pair(*layer, *head);
}

Parsed parseCorpus(const QCommandLineParser& parser, const Flags& f, Options options) {
  CorpusOptions& o = options.corpus;
  if (parser.isSet(f.corpus)) o.database = attn::ui::absolutePath(attn::app::pathValue(parser, f.corpus));
  if (parser.isSet(f.model)) o.model = modelPath(attn::app::pathValue(parser, f.model), false);
  if (parser.isSet(f.statistic)) {
    o.statistic = parser.value(f.statistic);
    const auto names = attn::io::corpus_statistics();
    if (std::ranges::find(names, o.statistic->toStdString()) == names.end()) {
      return bad(
          u"unknown statistic '%1' (entropy, mean_distance, first_token_mass, max_weight, previous_token, "
          "duplicate_token or induction)"_s.arg(*o.statistic));
    }
  }
  if (parser.isSet(f.head)) {
    o.head = parseHead(parser.value(f.head));
    if (!o.head) return bad(u"--head expects layer,head (0-based numbers)"_s);
  }
  if (parser.isSet(f.token)) o.token = parser.value(f.token);
  if (parser.isSet(f.embed)) {
    o.embed = parseInt(parser.value(f.embed), 1, attn::ui::CorpusSection::kMaxSample);
    if (!o.embed)
      return bad(u"--embed expects a number of inputs from 1 to %1"_s.arg(attn::ui::CorpusSection::kMaxSample));
  }
  return options;
}

Parsed parseGlimpse(const QCommandLineParser& parser, const Flags& f, Options options) {
  GlimpseOptions& o = options.glimpse;
  o.image = attn::app::pathValue(parser, f.image);
  if (o.image.startsWith(u"sample:"_s)) o.image = attn::ui::sampleImageResource(o.image.mid(7));
  o.gaussian = parser.value(f.gaussian);
  o.stn = parser.value(f.stn);
  o.sameWindow = parser.isSet(f.sameWindow);
  o.editStn = parser.isSet(f.editStn);
  o.write = parser.isSet(f.write);
  o.forms = parser.isSet(f.forms);
  return options;
}

Parsed parseOptions(const QCommandLineParser& parser, const Flags& f) {
  Options options;
  if (parser.isSet(f.sessionAlias)) options.session = attn::app::pathValue(parser, f.sessionAlias);
  if (parser.isSet(f.screenshot)) options.screenshot = attn::app::pathValue(parser, f.screenshot);
  if (parser.isSet(f.screenshotZoomed)) options.screenshotZoomed = attn::app::pathValue(parser, f.screenshotZoomed);
  if (parser.isSet(f.screenshotSession)) {
    if (!options.screenshot) return bad(u"--screenshot-session goes with --screenshot"_s);
    options.screenshotSession = attn::app::pathValue(parser, f.screenshotSession);
  }
  if (parser.isSet(f.screenshotTimeout)) {
    const auto seconds = parseInt(parser.value(f.screenshotTimeout), 1, 24 * 3600);
    if (!seconds) return bad(u"--screenshot-timeout expects seconds, 1 or more"_s);
    options.screenshotTimeout = *seconds;
  }
  if (parser.isSet(f.mechanism)) options.mechanism = parser.value(f.mechanism).toStdString();
  options.files = attn::app::pathPositionals(parser);
  if (parser.isSet(f.tab)) {
    options.tab = attn::ui::session_tab_named(parser.value(f.tab).toStdString());
    if (!options.tab) {
      return bad(
          u"unknown tab '%1' (alignment, caption, lab, glimpse, transformer or corpus)"_s.arg(parser.value(f.tab)));
    }
  } else {
    options.tab = chooseTab(parser, f);
  }
  const QString image = parser.value(f.image);
  if (image.startsWith(u"sample:"_s) && attn::ui::sampleImageResource(image.mid(7)).isEmpty()) {
    return bad(u"unknown sample (astronaut, chelsea, coffee, rocket)"_s);
  }
  // --image is the Captioning or the Transformer tab's input when the options are for one of those, and the
  // Glimpse tab's otherwise.
  switch (options.tab.value_or(SessionTab::Lab)) {
    case SessionTab::Caption: return parseCaption(parser, f, std::move(options));
    case SessionTab::Transformer: return parseTransformer(parser, f, std::move(options));
    case SessionTab::Corpus: return parseCorpus(parser, f, std::move(options));
    case SessionTab::Alignment: {
      Parsed parsed = parseAlignment(parser, f, std::move(options));
      return parsed ? parseGlimpse(parser, f, std::move(*parsed)) : parsed;
    }
    case SessionTab::Glimpse:
    case SessionTab::Lab: break;
  }
  return parseGlimpse(parser, f, std::move(options));
}

void setUpApplication() {
  QCoreApplication::setOrganizationName(u"AttnScope"_s);
  QCoreApplication::setApplicationName(u"AttnScope"_s);
  QCoreApplication::setApplicationVersion(attn::ui::appVersion());
}

void setUpParser(QCommandLineParser& parser, Flags& flags) {
  parser.setApplicationDescription(u"AttnScope: look inside attention mechanisms and models."_s);
  parser.addHelpOption();
  flags.addTo(parser);
}

// --help and --version print and quit through a QCoreApplication: no platform plugin is loaded, so they print
// whatever the display (none, or a QT_QPA_PLATFORM that cannot start). An error in the options is said as in a
// window's start (QCommandLineParser::process).
int printOnly(int argc, char* argv[]) {
  attn::app::keepSessionOption(argc, argv);
  QCoreApplication app(argc, argv);
  setUpApplication();
  QCommandLineParser parser;
  Flags flags;
  setUpParser(parser, flags);
  parser.process(app);  // --help and --help-all print and exit here
  std::fputs(attn::ui::versionReport(u"attnscope"_s, attn::ui::windowLibraryVersions()).toLocal8Bit().constData(),
             stdout);
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  const bool printsOnly = std::any_of(argv + 1, argv + argc, [](const char* arg) {
    const std::string_view a(arg);
    return a == "--help" || a == "-h" || a == "-?" || a == "--help-all" || a == "--version";
  });
  if (printsOnly) return printOnly(argc, argv);
  if (noDisplay()) {
    std::fputs(
        "attnscope: no display (DISPLAY and WAYLAND_DISPLAY are unset).\n"
        "Render views without one with attnscope-cli (attnscope-cli --help), run under xvfb-run,\n"
        "or set QT_QPA_PLATFORM=offscreen.\n",
        stderr);
    return 1;
  }
  attn::app::keepSessionOption(argc, argv);  // before Qt takes --session for itself
  QApplication app(argc, argv);
  attn::app::setRawArguments(argc, argv);  // after Qt took its own options (-platform ...) out of argv
  setUpApplication();
  // The installed desktop entry (packaging/attnscope.desktop): a Wayland compositor finds its name and icon by it.
  QGuiApplication::setDesktopFileName(u"attnscope"_s);

  QCommandLineParser parser;
  Flags flags;
  setUpParser(parser, flags);
  parser.process(app);
  const Parsed options = parseOptions(parser, flags);
  if (!options) {
    std::fprintf(stderr, "attnscope: %s\n", options.error().c_str());
    return 2;
  }

  attn::ui::MainWindow window;
  // The session first: the options below change what it opened.
  if (options->session && !window.openSession(*options->session)) {
    std::fprintf(stderr, "attnscope: %s\n", window.statusBar()->currentMessage().toLocal8Bit().constData());
    return 2;
  }
  auto glimpseReady = std::make_shared<bool>(true);
  if (!applyOptions(window, *options, glimpseReady)) return 2;
  window.show();
  if (!options->glimpse.image.isEmpty()) window.glimpse()->openFile(options->glimpse.image);
  // As a drop: the path made absolute as a drop's is (the recent lists and the session keep it so). A failure known
  // at once (no such file, not readable) is said on the status bar, as for a drop, and here; a scripted run
  // (--screenshot) then exits with 2, as for a session that cannot be read. A model or an image that fails later
  // says so in its tab (and a scripted run exits with 1, as armScreenshot says).
  if (!options->files.isEmpty() && !window.openPath(attn::ui::absolutePath(options->files.front()))) {
    std::fprintf(stderr, "attnscope: %s\n", window.statusBar()->currentMessage().toLocal8Bit().constData());
    if (options->screenshot) return 2;
  }

  // Without a tab chosen the screenshot is of the tab in view (the Alignment tab, or the one left open last
  // time).
  if (options->screenshot) armScreenshots(window, *options, glimpseReady);
  return app.exec();
}
