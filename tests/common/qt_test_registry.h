// The Qt Test classes of one test program (tests/ui's attn_ui_tests, tests/cli's attn_cli_tests): each file keeps its
// class and helpers in a namespace of its own (the program compiles its files in unity batches, where two files'
// helpers of one name would collide) and registers the class with ATTN_QT_TEST; qt_test_main.cpp runs the class the
// command line names, as QTEST_MAIN would have run it in a program of its own:
//
//   PROGRAM CLASS [Qt Test options and test functions]      PROGRAM --list: every class, one a line
//
// Each class is one ctest test (its file's name), so the suite runs them in parallel as before.
#pragma once

#include <QObject>

#include <memory>

namespace attn::testing {

// The application QTEST_MAIN would make: QCoreApplication (QTEST_GUILESS_MAIN), QGuiApplication, QApplication.
enum class QtTestApplication { Core, Gui, Widgets };
using QtTestFactory = std::unique_ptr<QObject> (*)();

bool register_qt_test(const char* name, QtTestApplication application, QtTestFactory make);

}  // namespace attn::testing

// At namespace scope, after the class: ATTN_QT_TEST(TestExport, Widgets).
#define ATTN_QT_TEST(Class, Application)                                                           \
  [[maybe_unused]] const bool attn_qt_test_registered_##Class = ::attn::testing::register_qt_test( \
      #Class, ::attn::testing::QtTestApplication::Application, [] { return std::unique_ptr<QObject>(new Class); })
