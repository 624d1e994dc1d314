// attnscope: the desktop application. Parses the command line and shows the main window.
#include "app/main_window.h"
#include "app/versions.h"
#include "attn/lab/lab.h"
#include "workbenches/alignment_models.h"
#include "workbenches/alignment_workbench.h"
#include "workbenches/caption_models.h"
#include "workbenches/caption_workbench.h"
#include "workbenches/glimpse_workbench.h"
#include "workbenches/lab_workbench.h"
#include "workbenches/sample_images.h"
#include "workbenches/transformer_workbench.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QComboBox>
#include <QFileInfo>
#include <QStatusBar>
#include <QTimer>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

using namespace Qt::StringLiterals;

namespace {

// Qt aborts with a message about its "xcb" plugin when there is no display; say what to do instead.
bool noDisplay() {
  const auto unset = [](const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr || *v == '\0';
  };
  return unset("DISPLAY") && unset("WAYLAND_DISPLAY") && unset("QT_QPA_PLATFORM");
}

// --screenshot: once `workbench` shows the result `ready` accepts, wait `settleMs` for queued replots and
// the layout, grab the window and quit (0 saved, 1 not). A failure signal, or nothing within `timeoutMs`,
// quits with 1 and a message.
template <typename Workbench, typename Failed, typename Shown, typename Ready>
void armScreenshot(QWidget& window, const QString& path, Workbench* workbench, Failed failed, Shown shown, Ready ready,
                   int settleMs, int timeoutMs, const char* nothing) {
  if (failed != nullptr) {
    QObject::connect(workbench, failed, &window, [](const QString& message) {
      std::fprintf(stderr, "attnscope: %s\n", message.toLocal8Bit().constData());
      QApplication::exit(1);
    });
  }
  QObject::connect(workbench, shown, &window, [&window, path, ready, settleMs](quint64 generation) {
    if (!ready(generation)) return;
    QTimer::singleShot(settleMs, &window, [&window, path] {
      const bool saved = window.grab().save(path);
      std::fprintf(saved ? stdout : stderr, "%s %s\n", saved ? "saved" : "could not save",
                   path.toLocal8Bit().constData());
      QApplication::exit(saved ? 0 : 1);
    });
  });
  QTimer::singleShot(timeoutMs, &window, [nothing, timeoutMs] {
    std::fprintf(stderr, "attnscope: %s within %d s, no screenshot\n", nothing, timeoutMs / 1000);
    QApplication::exit(1);
  });
}

}  // namespace

int main(int argc, char* argv[]) {
  if (noDisplay()) {
    std::fputs(
        "attnscope: no display (DISPLAY and WAYLAND_DISPLAY are unset).\n"
        "Render views without one with attnscope-cli (attnscope-cli --help), run under xvfb-run,\n"
        "or set QT_QPA_PLATFORM=offscreen.\n",
        stderr);
    return 1;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(u"AttnScope"_s);
  QApplication::setApplicationName(u"AttnScope"_s);
  QApplication::setApplicationVersion(attn::ui::appVersion());

  QCommandLineParser parser;
  parser.setApplicationDescription(u"AttnScope: look inside attention mechanisms and models."_s);
  parser.addHelpOption();
  const QCommandLineOption versionOption(u"version"_s, u"Print the versions of AttnScope and its libraries."_s);
  parser.addOption(versionOption);
  const QCommandLineOption mechanismOption(
      u"mechanism"_s, u"Start the lab with this mechanism (see attnscope-cli lab --list)."_s, u"key"_s);
  parser.addOption(mechanismOption);
  const QCommandLineOption sessionOption(
      u"session"_s,
      u"Open this session file (*.attnscope.json): every tab as it was saved. The other options apply on top of it."_s,
      u"file"_s);
  parser.addOption(sessionOption);
  const QCommandLineOption tabOption(
      u"tab"_s, u"Start on this tab: alignment (the default), caption, lab, glimpse or transformer."_s, u"name"_s);
  parser.addOption(tabOption);
  const QCommandLineOption imageOption(
      u"image"_s,
      u"Open this image in the Glimpse tab, or with --tab transformer as the ViT's input, or with --tab caption as "
      "the captioner's (a file, or sample:astronaut|chelsea|coffee|rocket)."_s,
      u"path"_s);
  parser.addOption(imageOption);
  const QCommandLineOption gaussianOption(
      u"gaussian"_s, u"Gaussian glimpse as k=v,... (attnscope-cli's --gaussian keys), from the paper's default."_s,
      u"spec"_s);
  parser.addOption(gaussianOption);
  const QCommandLineOption stnOption(u"stn"_s, u"STN glimpse as k=v,... (attnscope-cli's --stn keys)."_s, u"spec"_s);
  parser.addOption(stnOption);
  const QCommandLineOption sameWindowOption(u"same-window"_s,
                                            u"Compare the Gaussian and the STN glimpse of one window."_s);
  parser.addOption(sameWindowOption);
  const QCommandLineOption editStnOption(u"edit-stn"_s, u"The canvas handles edit the STN glimpse."_s);
  parser.addOption(editStnOption);
  const QCommandLineOption writeOption(u"write"_s, u"Turn on the Glimpse tab's write mode."_s);
  parser.addOption(writeOption);
  const QCommandLineOption modelOption(
      u"model"_s,
      u"Open a model: a bundled one by name (date-bahdanau, ..., sentiment-hierarchical) or a seq2seq or classifier "
      "folder in the Alignment tab; caption-soft, caption-hard or a captioner folder in the Captioning tab; "
      "induction-gpt2 (the bundled demo), a transformer folder or *.attn.safetensors dump in the Transformer tab."_s,
      u"name|dir"_s);
  parser.addOption(modelOption);
  const QCommandLineOption sceneOption(u"scene"_s, u"The Captioning tab's input: the generated scene of this seed."_s,
                                       u"seed"_s);
  parser.addOption(sceneOption);
  const QCommandLineOption wordOption(u"word"_s, u"The Captioning tab's word in view (1 = the first)."_s, u"N"_s);
  parser.addOption(wordOption);
  const QCommandLineOption lightMaskOption(
      u"light-mask"_s, u"The Captioning tab's overlays dim the image where attention is low (the paper's figures)."_s);
  parser.addOption(lightMaskOption);
  const QCommandLineOption textOption(u"text"_s, u"The input of the Alignment or the Transformer tab."_s, u"text"_s);
  parser.addOption(textOption);
  const QCommandLineOption beamOption(u"beam"_s, u"The Alignment or the Captioning tab's beam width (1 = greedy)."_s,
                                      u"K"_s);
  parser.addOption(beamOption);
  const QCommandLineOption stepOption(u"step"_s, u"The Alignment tab's output step in view (1 = the first)."_s, u"N"_s);
  parser.addOption(stepOption);
  const QCommandLineOption viewOption(
      u"view"_s, u"The Transformer tab's view: head, model, matrix, overlay or stats."_s, u"name"_s);
  parser.addOption(viewOption);
  const QCommandLineOption headOption(u"head"_s, u"The Transformer tab's selected head as layer,head (0-based)."_s,
                                      u"L,H"_s);
  parser.addOption(headOption);
  // For the README and the visual checks: grab the window once the first result is drawn, then quit.
  QCommandLineOption screenshotOption(u"screenshot"_s, u"Save a screenshot of the window and quit."_s, u"file"_s);
  screenshotOption.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOption(screenshotOption);
  parser.addPositionalArgument(u"file"_s,
                               u"A text file to open in the lab (first non-empty line = query, rest = source), or a "
                               "session (*.attnscope.json)."_s,
                               u"[file]"_s);
  parser.process(app);
  if (parser.isSet(versionOption)) {
    std::fputs(attn::ui::versionReport(u"attnscope"_s).toLocal8Bit().constData(), stdout);
    return 0;
  }

  attn::ui::MainWindow window;
  // The session first: the options below change what it opened.
  if (parser.isSet(sessionOption) && !window.openSession(parser.value(sessionOption))) {
    std::fprintf(stderr, "attnscope: %s\n", window.statusBar()->currentMessage().toLocal8Bit().constData());
    return 2;
  }
  auto* lab = window.lab();
  if (parser.isSet(mechanismOption)) {
    const std::string key = parser.value(mechanismOption).toStdString();
    auto request = lab->request();
    if (!attn::lab::select_mechanism(request.params, key)) {
      std::fprintf(stderr, "attnscope: unknown mechanism '%s' (attnscope-cli lab --list shows them)\n", key.c_str());
      return 2;
    }
    lab->setRequest(request);
  }
  auto* glimpse = window.glimpse();
  auto* transformer = window.transformer();
  auto* alignment = window.alignment();
  auto* caption = window.caption();
  const QString tabName = parser.value(tabOption);
  if (parser.isSet(tabOption) && tabName != u"alignment"_s && tabName != u"caption"_s && tabName != u"glimpse"_s &&
      tabName != u"lab"_s && tabName != u"transformer"_s) {
    std::fprintf(stderr, "attnscope: unknown tab '%s' (alignment, caption, lab, glimpse or transformer)\n",
                 tabName.toLocal8Bit().constData());
    return 2;
  }
  // --model without --tab: a bundled name or an AttnScope seq2seq/classifier folder is for the Alignment tab,
  // anything else for the Transformer tab.
  const QString modelArg = parser.value(modelOption);
  const bool alignmentModel =
      parser.isSet(modelOption) && ((!modelArg.contains(u'/') && attn::ui::findBundledModel(modelArg)) ||
                                    attn::ui::isAlignmentArchitecture(attn::ui::folderArchitecture(modelArg)));
  const bool captionModel = parser.isSet(modelOption) &&
                            ((!modelArg.contains(u'/') && attn::ui::bundledCaptionModelKeys().contains(modelArg)) ||
                             attn::ui::isCaptionArchitecture(attn::ui::folderArchitecture(modelArg)));
  const bool captionTab = tabName == u"caption"_s ||
                          (!parser.isSet(tabOption) && (captionModel || parser.isSet(sceneOption) ||
                                                        parser.isSet(wordOption) || parser.isSet(lightMaskOption)));
  const bool alignmentTab =
      !captionTab &&
      (tabName == u"alignment"_s ||
       (!parser.isSet(tabOption) && (alignmentModel || parser.isSet(beamOption) || parser.isSet(stepOption))));
  const bool transformerTab =
      !alignmentTab && !captionTab && (tabName == u"transformer"_s || parser.isSet(modelOption));
  const bool glimpseTab = !alignmentTab && !captionTab && !transformerTab &&
                          (tabName == u"glimpse"_s || parser.isSet(imageOption) || parser.isSet(gaussianOption) ||
                           parser.isSet(stnOption) || parser.isSet(sameWindowOption));
  // A mechanism or a text file to open means the lab.
  const QStringList files = parser.positionalArguments();
  const bool labTab = !alignmentTab && !captionTab && !transformerTab && !glimpseTab &&
                      (tabName == u"lab"_s || parser.isSet(mechanismOption) || !files.isEmpty());
  if (alignmentTab) {
    window.showAlignment();
    if (parser.isSet(textOption)) alignment->setText(parser.value(textOption));
    if (parser.isSet(beamOption)) {
      bool ok = false;
      const int beam = parser.value(beamOption).toInt(&ok);
      if (!ok || beam < 1 || beam > attn::ui::AlignmentWorkbench::kMaxBeam) {
        std::fprintf(stderr, "attnscope: --beam expects a width from 1 (greedy) to %d\n",
                     attn::ui::AlignmentWorkbench::kMaxBeam);
        return 2;
      }
      alignment->setBeam(beam);
    }
    if (parser.isSet(stepOption)) {
      bool ok = false;
      const int step = parser.value(stepOption).toInt(&ok);
      if (!ok || step < 1) {
        std::fprintf(stderr, "attnscope: --step expects an output step, 1 = the first\n");
        return 2;
      }
      // Applied once a result has that many steps (the model's output is known then); later the slider is
      // the user's.
      auto applied = std::make_shared<bool>(false);
      QObject::connect(alignment, &attn::ui::AlignmentWorkbench::resultShown, alignment, [alignment, step, applied] {
        if (*applied || alignment->stepCount() < step) return;
        *applied = true;
        alignment->setStep(step - 1);
      });
    }
    if (parser.isSet(modelOption)) {
      // A bundled name first; a name that is neither a bundled model nor a folder gets the engine's answer,
      // which lists the bundled models.
      const bool bundled = !modelArg.contains(u'/') && attn::ui::findBundledModel(modelArg);
      alignment->openModel(bundled || !QFileInfo::exists(modelArg) ? modelArg : QFileInfo(modelArg).absoluteFilePath());
    }
  }
  if (captionTab) {
    window.showCaption();
    if (parser.isSet(lightMaskOption)) caption->setOverlayMode(attn::ui::render::CaptionOverlayMode::LightMask);
    if (parser.isSet(beamOption)) {
      bool ok = false;
      const int beam = parser.value(beamOption).toInt(&ok);
      if (!ok || beam < 1 || beam > attn::ui::CaptionWorkbench::kMaxBeam) {
        std::fprintf(stderr, "attnscope: --beam expects a width from 1 (greedy) to %d\n",
                     attn::ui::CaptionWorkbench::kMaxBeam);
        return 2;
      }
      caption->setBeam(beam);
    }
    if (parser.isSet(sceneOption) && parser.isSet(imageOption)) {
      std::fprintf(stderr, "attnscope: give --scene or --image, not both\n");
      return 2;
    }
    if (parser.isSet(sceneOption)) {
      bool ok = false;
      const std::uint64_t seed = parser.value(sceneOption).toULongLong(&ok);
      if (!ok) {
        std::fprintf(stderr, "attnscope: --scene expects a seed (a whole number from 0)\n");
        return 2;
      }
      caption->openScene(seed);
    }
    if (parser.isSet(imageOption)) {
      const QString path = parser.value(imageOption);
      if (path.startsWith(u"sample:"_s)) {
        if (!caption->openSample(path.mid(7))) {
          std::fprintf(stderr, "attnscope: unknown sample (astronaut, chelsea, coffee, rocket)\n");
          return 2;
        }
      } else {
        caption->openFile(QFileInfo(path).absoluteFilePath());
      }
    }
    if (parser.isSet(wordOption)) {
      bool ok = false;
      const int word = parser.value(wordOption).toInt(&ok);
      if (!ok || word < 1) {
        std::fprintf(stderr, "attnscope: --word expects a word of the caption, 1 = the first\n");
        return 2;
      }
      // Applied to the first caption with that many words; later the strip is the user's.
      auto applied = std::make_shared<bool>(false);
      QObject::connect(caption, &attn::ui::CaptionWorkbench::resultShown, caption, [caption, word, applied] {
        if (*applied || caption->wordCount() < word) return;
        *applied = true;
        caption->setWord(word - 1);
      });
    }
    if (parser.isSet(modelOption)) {
      const bool bundled = !modelArg.contains(u'/') && attn::ui::bundledCaptionModelKeys().contains(modelArg);
      caption->openModel(bundled || !QFileInfo::exists(modelArg) ? modelArg : QFileInfo(modelArg).absoluteFilePath());
    }
  }
  if (transformerTab) {
    window.showTransformer();
    if (parser.isSet(textOption)) transformer->setText(parser.value(textOption));
    if (parser.isSet(viewOption)) {
      using View = attn::ui::TransformerWorkbench::View;
      const QString name = parser.value(viewOption);
      const std::optional<View> view = name == u"head"_s      ? std::optional(View::Head)
                                       : name == u"model"_s   ? std::optional(View::Model)
                                       : name == u"matrix"_s  ? std::optional(View::Matrix)
                                       : name == u"overlay"_s ? std::optional(View::Overlay)
                                       : name == u"stats"_s   ? std::optional(View::Statistics)
                                                              : std::nullopt;
      if (!view) {
        std::fprintf(stderr, "attnscope: unknown view '%s' (head, model, matrix, overlay or stats)\n",
                     name.toLocal8Bit().constData());
        return 2;
      }
      transformer->setView(*view);
    }
    if (parser.isSet(imageOption)) {
      const QString path = parser.value(imageOption);
      if (path.startsWith(u"sample:"_s)) {
        if (!transformer->openSample(path.mid(7))) {
          std::fprintf(stderr, "attnscope: unknown sample (astronaut, chelsea, coffee, rocket)\n");
          return 2;
        }
      } else {
        transformer->openImage(path);
      }
    }
    if (parser.isSet(headOption)) {
      const QStringList parts = parser.value(headOption).split(u',');
      bool okLayer = false, okHead = false;
      const int layer = parts.value(0).toInt(&okLayer);
      const int head = parts.value(1).toInt(&okHead);
      if (parts.size() != 2 || !okLayer || !okHead) {
        std::fprintf(stderr, "attnscope: --head expects layer,head (0-based numbers)\n");
        return 2;
      }
      // Applied with the first result (the model's shape is known then).
      auto applied = std::make_shared<bool>(false);
      QObject::connect(transformer, &attn::ui::TransformerWorkbench::resultShown, transformer,
                       [transformer, layer, head, applied] {
                         if (*applied) return;
                         *applied = true;
                         transformer->openHead(layer, head);
                       });
    }
    if (parser.isSet(modelOption)) window.openModel(parser.value(modelOption));
  } else if (glimpseTab) {
    window.showGlimpse();
  } else if (labTab) {
    window.showLab();
  }
  // Glimpse settings from the command line apply once the image they refer to is open.
  const bool glimpseSettings =
      parser.isSet(gaussianOption) || parser.isSet(stnOption) || parser.isSet(sameWindowOption);
  bool glimpseReady = !glimpseSettings && !parser.isSet(imageOption);
  QString wantedImage;
  if (parser.isSet(imageOption) && !transformerTab && !captionTab) {
    QString path = parser.value(imageOption);
    if (path.startsWith(u"sample:"_s)) {
      path = attn::ui::sampleImageResource(path.mid(7));
      if (path.isEmpty()) {
        std::fprintf(stderr, "attnscope: unknown sample (astronaut, chelsea, coffee, rocket)\n");
        return 2;
      }
    }
    wantedImage = path;
  }
  const QString gaussianSpec = parser.value(gaussianOption);
  const QString stnSpec = parser.value(stnOption);
  const bool sameWindow = parser.isSet(sameWindowOption);
  QObject::connect(
      glimpse, &attn::ui::GlimpseWorkbench::imageLoaded, glimpse,
      [glimpse, wantedImage, gaussianSpec, stnSpec, sameWindow, glimpseSettings, &glimpseReady](const QString& path) {
        if (glimpseReady || (!wantedImage.isEmpty() && path != wantedImage)) return;
        glimpseReady = true;
        if (!glimpseSettings) return;
        auto settings = glimpse->settingsFromSpecs(gaussianSpec, stnSpec, sameWindow);
        if (!settings) {
          std::fprintf(stderr, "attnscope: %s\n", settings.error().message().c_str());
          QApplication::exit(2);
          return;
        }
        glimpse->setSettings(*settings);
      });
  if (parser.isSet(editStnOption)) glimpse->setEditStn(true);
  if (parser.isSet(writeOption)) glimpse->setWriteMode(true);
  window.show();
  if (!wantedImage.isEmpty() && !transformerTab && !captionTab) glimpse->openFile(wantedImage);
  if (!files.isEmpty()) window.openFile(files.front());

  // Without a tab chosen the screenshot is of the tab in view (the Alignment tab, or the one left open last
  // time).
  const bool alignmentShot = alignmentTab || (!transformerTab && !glimpseTab && !labTab && !captionTab &&
                                              window.tabs()->currentWidget() == alignment);
  const bool captionShot = captionTab || (!transformerTab && !glimpseTab && !labTab && !alignmentTab &&
                                          window.tabs()->currentWidget() == caption);
  if (parser.isSet(screenshotOption)) {
    const QString path = parser.value(screenshotOption);
    if (captionShot) {
      // The whole caption at once: a screenshot does not wait for the word-by-word reveal.
      caption->setRevealInterval(0);
      armScreenshot(
          window, path, caption, &attn::ui::CaptionWorkbench::sourceFailed, &attn::ui::CaptionWorkbench::resultShown,
          [caption](quint64 g) { return !caption->isLoading() && g == caption->submitted(); }, 800, 60000,
          "no caption");
      QObject::connect(caption, &attn::ui::CaptionWorkbench::imageFailed, &window, [](const QString& message) {
        std::fprintf(stderr, "attnscope: %s\n", message.toLocal8Bit().constData());
        QApplication::exit(1);
      });
    } else if (alignmentShot) {
      armScreenshot(
          window, path, alignment, &attn::ui::AlignmentWorkbench::sourceFailed,
          &attn::ui::AlignmentWorkbench::resultShown,
          [alignment](quint64 g) { return !alignment->isLoading() && g == alignment->submitted(); }, 800, 60000,
          "no alignment");
    } else if (transformerTab) {
      armScreenshot(
          window, path, transformer, &attn::ui::TransformerWorkbench::sourceFailed,
          &attn::ui::TransformerWorkbench::resultShown,
          [transformer](quint64 g) { return !transformer->isLoading() && g == transformer->submitted(); }, 800, 60000,
          "no transformer run");
    } else if (glimpseTab) {
      armScreenshot(
          window, path, glimpse, &attn::ui::GlimpseWorkbench::imageFailed, &attn::ui::GlimpseWorkbench::resultShown,
          [glimpse, &glimpseReady](quint64 g) {
            return glimpseReady && !glimpse->isLoading() && g == glimpse->submitted();
          },
          600, 30000, "no glimpse");
    } else {
      // The lab has no failure signal: bad input shows in its own message line.
      armScreenshot(
          window, path, lab, static_cast<void (attn::ui::LabWorkbench::*)(const QString&)>(nullptr),
          &attn::ui::LabWorkbench::resultShown, [lab](quint64 g) { return g == lab->submitted(); }, 400, 30000,
          "no result");
    }
  }
  return app.exec();
}
