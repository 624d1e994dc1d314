// The shared busy row (workbenches/common/busy_row.h): the delay, the busy bar with the time so far, steps with the
// time left, Cancel and Esc, and "Cancelling...".
#include "qt_test_registry.h"
#include "ui_test_support.h"
#include "workbenches/common/busy_row.h"

#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;
using attn::ui::BusyRow;
using attn::ui::testing::saveShot;

namespace test_busy_row {

class TestBusyRow : public QObject {
  Q_OBJECT

 private slots:
  void showsOnlyAfterTheDelay() {
    QWidget tab;
    auto* layout = new QVBoxLayout(&tab);
    auto* row = new BusyRow(&tab);
    layout->addWidget(row);
    tab.show();
    row->setDelay(150);
    row->start(u"Running\u2026"_s);
    QVERIFY(row->isRunning());
    QVERIFY(!row->isShown());  // short work never flashes it
    row->stop();
    QTest::qWait(250);
    QVERIFY(!row->isShown());

    QSignalSpy shown(row, &BusyRow::shown);
    row->start(u"Running\u2026"_s);
    QVERIFY(shown.wait(2000));
    QVERIFY(row->isShown());
    QCOMPARE(row->bar()->maximum(), 0);  // busy: no steps reported
    QVERIFY(row->cancelButton()->isEnabled());
    row->stop();
    QVERIFY(!row->isShown());
    QVERIFY(!row->isRunning());
  }

  void busyWorkSaysTheTimeSoFar() {
    QWidget tab;
    auto* layout = new QVBoxLayout(&tab);
    auto* row = new BusyRow(&tab);
    layout->addWidget(row);
    tab.resize(700, 40);
    tab.show();
    row->setDelay(0);
    row->start(u"Reading the glimpse\u2026"_s);
    QVERIFY(row->isShown());
    QCOMPARE(row->label()->text(), u"Reading the glimpse\u2026"_s);
    QTRY_VERIFY_WITH_TIMEOUT(row->label()->text().contains(u"so far"_s), 3000);
    QVERIFY2(row->label()->text().startsWith(u"Reading the glimpse\u2026 \u00b7 "_s), qPrintable(row->label()->text()));
    saveShot(tab.grab().toImage(), u"busy-row-busy"_s);
  }

  void stepsSayTheTimeLeft() {
    QWidget tab;
    auto* layout = new QVBoxLayout(&tab);
    auto* row = new BusyRow(&tab);
    layout->addWidget(row);
    tab.resize(700, 40);
    tab.show();
    row->setDelay(0);
    const int maximum = row->bar()->maximum();
    row->setProgress(1, 4, u"ignored"_s);  // nothing is out: no effect
    QCOMPARE(row->bar()->maximum(), maximum);
    QVERIFY(row->label()->text().isEmpty());
    row->start(u"Running\u2026"_s);
    QTest::qWait(300);
    row->setProgress(1, 4, u"1 of 4 segments"_s);
    QCOMPARE(row->bar()->maximum(), 4);
    QCOMPARE(row->bar()->value(), 1);
    QVERIFY2(row->label()->text().startsWith(u"1 of 4 segments \u00b7 about "_s) &&
                 row->label()->text().endsWith(u" s left"_s),
             qPrintable(row->label()->text()));
    saveShot(tab.grab().toImage(), u"busy-row-steps"_s);
    row->setProgress(4, 4, u"4 of 4 segments"_s);
    QCOMPARE(row->label()->text(), u"4 of 4 segments"_s);  // done: nothing left to estimate
    // A second start while work is out keeps the progress.
    row->start(u"Running\u2026"_s);
    QCOMPARE(row->bar()->maximum(), 4);
    QCOMPARE(row->label()->text(), u"4 of 4 segments"_s);
  }

  void cancelAndEscapeAskToCancel() {
    QWidget tab;
    auto* layout = new QVBoxLayout(&tab);
    auto* edit = new QLineEdit(&tab);
    layout->addWidget(edit);
    auto* row = new BusyRow(&tab, &tab);
    layout->addWidget(row);
    tab.show();
    QVERIFY(QTest::qWaitForWindowActive(&tab));
    edit->setFocus();
    QSignalSpy cancel(row, &BusyRow::cancelRequested);
    QTest::keyClick(edit, Qt::Key_Escape);  // nothing is out: Esc is left alone
    QCOMPARE(cancel.count(), 0);

    row->setDelay(0);
    row->start(u"Running\u2026"_s);
    row->cancelButton()->click();
    QCOMPARE(cancel.count(), 1);
    QTest::keyClick(edit, Qt::Key_Escape);  // Esc anywhere in the tab
    QCOMPARE(cancel.count(), 2);
    row->markCancelling();
    QCOMPARE(row->label()->text(), u"Cancelling\u2026"_s);
    QVERIFY(!row->cancelButton()->isEnabled());
    QTest::keyClick(edit, Qt::Key_Escape);  // once is enough
    QCOMPARE(cancel.count(), 2);
    row->setProgress(2, 3, u"2 of 3"_s);  // a late report does not hide that it is cancelling
    QCOMPARE(row->label()->text(), u"Cancelling\u2026"_s);
    row->stop();
    QVERIFY(!row->isShown());
  }

  void durations() {
    QCOMPARE(BusyRow::durationText(0.2), u"1 s"_s);
    QCOMPARE(BusyRow::durationText(45), u"45 s"_s);
    QCOMPARE(BusyRow::durationText(200), u"3 min 20 s"_s);
  }
};

ATTN_QT_TEST(TestBusyRow, Widgets);

}  // namespace test_busy_row
#include "test_busy_row.moc"
