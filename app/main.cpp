// attnscope: the desktop application. Parses the command line and shows the main window.
#include "app/main_window.h"
#include "app/versions.h"
#include "attn/lab/lab.h"
#include "workbenches/glimpse_workbench.h"
#include "workbenches/lab_workbench.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QComboBox>
#include <QTimer>

#include <cstdio>
#include <cstdlib>

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

}  // namespace

int main(int argc, char* argv[]) {
  if (noDisplay()) {
    std::fputs("attnscope: no display (DISPLAY and WAYLAND_DISPLAY are unset).\n"
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
  const QCommandLineOption mechanismOption(u"mechanism"_s, u"Start the lab with this mechanism (see attnscope-cli lab --list)."_s,
                                           u"key"_s);
  parser.addOption(mechanismOption);
  const QCommandLineOption tabOption(u"tab"_s, u"Start on this tab: lab or glimpse."_s, u"name"_s);
  parser.addOption(tabOption);
  const QCommandLineOption imageOption(u"image"_s,
                                       u"Open this image in the Glimpse tab (a file, or sample:astronaut|chelsea|coffee|rocket)."_s,
                                       u"path"_s);
  parser.addOption(imageOption);
  const QCommandLineOption gaussianOption(
      u"gaussian"_s, u"Gaussian glimpse as k=v,... (attnscope-cli's --gaussian keys), from the paper's default."_s,
      u"spec"_s);
  parser.addOption(gaussianOption);
  const QCommandLineOption stnOption(u"stn"_s, u"STN glimpse as k=v,... (attnscope-cli's --stn keys)."_s, u"spec"_s);
  parser.addOption(stnOption);
  const QCommandLineOption sameWindowOption(u"same-window"_s, u"Compare the Gaussian and the STN glimpse of one window."_s);
  parser.addOption(sameWindowOption);
  const QCommandLineOption editStnOption(u"edit-stn"_s, u"The canvas handles edit the STN glimpse."_s);
  parser.addOption(editStnOption);
  const QCommandLineOption writeOption(u"write"_s, u"Turn on the Glimpse tab's write mode."_s);
  parser.addOption(writeOption);
  // For the README and the visual checks: grab the window once the first result is drawn, then quit.
  QCommandLineOption screenshotOption(u"screenshot"_s, u"Save a screenshot of the window and quit."_s, u"file"_s);
  screenshotOption.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOption(screenshotOption);
  parser.addPositionalArgument(u"file"_s, u"A text file to open in the lab: first non-empty line = query, rest = source."_s,
                               u"[file]"_s);
  parser.process(app);
  if (parser.isSet(versionOption)) {
    std::fputs(attn::ui::versionReport(u"attnscope"_s).toLocal8Bit().constData(), stdout);
    return 0;
  }

  attn::ui::MainWindow window;
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
  const bool glimpseTab = parser.value(tabOption) == u"glimpse"_s || parser.isSet(imageOption) ||
                          parser.isSet(gaussianOption) || parser.isSet(stnOption) || parser.isSet(sameWindowOption);
  if (parser.isSet(tabOption) && parser.value(tabOption) != u"glimpse"_s && parser.value(tabOption) != u"lab"_s) {
    std::fprintf(stderr, "attnscope: unknown tab '%s' (lab or glimpse)\n", parser.value(tabOption).toLocal8Bit().constData());
    return 2;
  }
  if (glimpseTab) {
    window.showGlimpse();
  } else if (parser.value(tabOption) == u"lab"_s) {
    window.showLab();
  }
  // Glimpse settings from the command line apply once the image they refer to is open.
  const bool glimpseSettings = parser.isSet(gaussianOption) || parser.isSet(stnOption) || parser.isSet(sameWindowOption);
  bool glimpseReady = !glimpseSettings && !parser.isSet(imageOption);
  QString wantedImage;
  if (parser.isSet(imageOption)) {
    QString path = parser.value(imageOption);
    if (path.startsWith(u"sample:"_s)) {
      path = attn::ui::GlimpseWorkbench::sampleResource(path.mid(7));
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
  QObject::connect(glimpse, &attn::ui::GlimpseWorkbench::imageLoaded, glimpse,
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
  if (!wantedImage.isEmpty()) glimpse->openFile(wantedImage);
  const QStringList files = parser.positionalArguments();
  if (!files.isEmpty()) window.openFile(files.front());

  if (parser.isSet(screenshotOption) && glimpseTab) {
    const QString path = parser.value(screenshotOption);
    QObject::connect(glimpse, &attn::ui::GlimpseWorkbench::imageFailed, &window, [](const QString& message) {
      std::fprintf(stderr, "attnscope: %s\n", message.toLocal8Bit().constData());
      QApplication::exit(1);
    });
    QObject::connect(glimpse, &attn::ui::GlimpseWorkbench::resultShown, &window,
                     [&window, path, glimpse, &glimpseReady](quint64 generation) {
      if (!glimpseReady || glimpse->isLoading() || generation != glimpse->submitted()) return;
      QTimer::singleShot(600, &window, [&window, path] {
        const bool saved = window.grab().save(path);
        std::fprintf(saved ? stdout : stderr, "%s %s\n", saved ? "saved" : "could not save",
                     path.toLocal8Bit().constData());
        QApplication::exit(saved ? 0 : 1);
      });
    });
    QTimer::singleShot(30000, &window, [] {
      std::fputs("attnscope: no glimpse within 30 s, no screenshot\n", stderr);
      QApplication::exit(1);
    });
  } else if (parser.isSet(screenshotOption)) {
    const QString path = parser.value(screenshotOption);
    QObject::connect(lab, &attn::ui::LabWorkbench::resultShown, &window, [&window, path, lab](quint64 generation) {
      if (generation != lab->submitted()) return;  // wait for the newest request
      // Let the queued replots and the layout settle before grabbing.
      QTimer::singleShot(400, &window, [&window, path] {
        const bool saved = window.grab().save(path);
        std::fprintf(saved ? stdout : stderr, "%s %s\n", saved ? "saved" : "could not save",
                     path.toLocal8Bit().constData());
        QApplication::exit(saved ? 0 : 1);
      });
    });
    QTimer::singleShot(30000, &window, [] {
      std::fputs("attnscope: no result within 30 s, no screenshot\n", stderr);
      QApplication::exit(1);
    });
  }
  return app.exec();
}
