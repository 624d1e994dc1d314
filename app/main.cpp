// attnscope: the desktop application. Parses the command line and shows the main window.
#include "app/main_window.h"
#include "app/versions.h"
#include "attn/lab/lab.h"
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
  window.show();
  const QStringList files = parser.positionalArguments();
  if (!files.isEmpty()) window.openFile(files.front());

  if (parser.isSet(screenshotOption)) {
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
