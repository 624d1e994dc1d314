// main() of a program of Qt Test classes (qt_test_registry.h): runs the class named by the first argument with the
// application and attributes QTEST_MAIN gives, passing the other arguments to QTest::qExec.
#include "qt_test_registry.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <QtTest>
#ifdef ATTN_QT_TEST_WIDGETS
#include <QApplication>
#endif

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::testing {

namespace {

std::map<std::string, std::pair<QtTestApplication, QtTestFactory>>& registry() {
  static std::map<std::string, std::pair<QtTestApplication, QtTestFactory>> classes;
  return classes;
}

}  // namespace

bool register_qt_test(const char* name, QtTestApplication application, QtTestFactory make) {
  return registry().emplace(name, std::make_pair(application, make)).second;
}

}  // namespace attn::testing

int main(int argc, char** argv) {
  using attn::testing::QtTestApplication;
  const auto& classes = attn::testing::registry();
  if (argc < 2 || std::strcmp(argv[1], "--list") == 0) {
    for (const auto& [name, entry] : classes) std::printf("%s\n", name.c_str());
    if (argc < 2) std::fprintf(stderr, "usage: %s CLASS [Qt Test options] (--list: the classes)\n", argv[0]);
    return argc < 2 ? 2 : 0;
  }
  const auto it = classes.find(argv[1]);
  if (it == classes.end()) {
    std::fprintf(stderr, "%s: no test class %s here (--list names them)\n", argv[0], argv[1]);
    return 2;
  }
  // argv without the class: what QTest::qExec and the application read.
  std::vector<char*> args{argv[0]};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  std::unique_ptr<QCoreApplication> app;
  switch (it->second.first) {
    case QtTestApplication::Core: app = std::make_unique<QCoreApplication>(count, args.data()); break;
    case QtTestApplication::Gui: app = std::make_unique<QGuiApplication>(count, args.data()); break;
    case QtTestApplication::Widgets:
#ifdef ATTN_QT_TEST_WIDGETS
      app = std::make_unique<QApplication>(count, args.data());
      break;
#else
      std::fprintf(stderr, "%s: %s needs Qt Widgets, which this program does not link\n", argv[0], argv[1]);
      return 2;
#endif
  }
  app->setAttribute(Qt::AA_Use96Dpi, true);
  const std::unique_ptr<QObject> test = it->second.second();
  return QTest::qExec(test.get(), count, args.data());
}
