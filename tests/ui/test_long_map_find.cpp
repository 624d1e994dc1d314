// Find in the long map's text (issue 41, GUI finding 12): the pure matcher of views/long_map_find.h on byte-level,
// WordPiece and SentencePiece pieces, and LongMapPanel's find box driven as a user would (typing, Enter,
// Shift+Enter, F3, Shift+F3, the buttons).
#include "qt_test_registry.h"
#include "ui_test_support.h"
#include "views/long_map_find.h"
#include "views/long_map_panel.h"
#include "views/long_map_view.h"
#include "views/token_strip_view.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <algorithm>
#include <cmath>

using namespace attn::ui;
using namespace Qt::StringLiterals;

Q_DECLARE_METATYPE(std::vector<attn::ui::TextMatch>)

namespace test_long_map_find {

namespace {

// A causal head made up on the spot: each query's weight falls with the distance, with a sink on token 0.
class SyntheticHead final : public attn::HeadMapReader {
 public:
  explicit SyntheticHead(attn::Index n) : n_(n) {}
  attn::Index tokens() const override { return n_; }
  void row(attn::Index r, float* out) const override {
    double sum = 0;
    for (attn::Index c = 0; c < n_; ++c) sum += raw(r, c);
    for (attn::Index c = 0; c < n_; ++c) out[c] = float(raw(r, c) / sum);
  }
  float weight(attn::Index r, attn::Index c) const override {
    std::vector<float> w(static_cast<std::size_t>(n_));
    row(r, w.data());
    return w[std::size_t(c)];
  }
  float max_weight() const override { return weight(0, 0); }
  void pooled(attn::Index f, Pooling p, attn::Index r0, attn::Index rows, attn::Index c0, attn::Index cols, float* out,
              attn::Index ld) const override {
    std::vector<float> w(static_cast<std::size_t>(n_));
    for (attn::Index i = 0; i < rows; ++i) {
      for (attn::Index j = 0; j < cols; ++j) out[i * ld + j] = 0.0f;
      for (attn::Index r = r0 + i * f; r < std::min(n_, r0 + (i + 1) * f); ++r) {
        row(r, w.data());
        for (attn::Index j = 0; j < cols; ++j) {
          for (attn::Index c = c0 + j * f; c < std::min(n_, c0 + (j + 1) * f); ++c) {
            float& cell = out[i * ld + j];
            cell = p == Pooling::Max ? std::max(cell, w[std::size_t(c)]) : cell + w[std::size_t(c)] / float(f * f);
          }
        }
      }
    }
  }
  void preview(attn::Index f, Pooling p, attn::Index r0, attn::Index rows, attn::Index c0, attn::Index cols, float* out,
               attn::Index ld) const override {
    pooled(f, p, r0, rows, c0, cols, out, ld);
  }

 private:
  double raw(attn::Index r, attn::Index c) const {
    if (c > r) return 0.0;
    return c == 0 ? 2.0 : 1.0 / double(1 + r - c);
  }
  attn::Index n_;
};

// What the engine gives the panel for a GPT-2 run (byte-level pieces, decoded): "attention" is never one token.
QStringList gpt2Pieces() {
  const QStringList sentence{u"The"_s,    u" att"_s,   u"ention"_s, u" of"_s,    u" a"_s,    u" head"_s,
                             u" is"_s,    u" where"_s, u" it"_s,    u" looks"_s, u"."_s,     u" Att"_s,
                             u"ention"_s, u" is"_s,    u" all"_s,   u" you"_s,   u" need"_s, u"."_s};
  QStringList out;
  for (int k = 0; k < 4; ++k) out += sentence;
  return out;
}

// Waits for the tab's run to be shown.
bool settle(TransformerWorkbench& wb, int ms = 30000) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (wb.isIdle() && wb.submitted() > 0 && wb.outcome()) return true;
    QTest::qWait(10);
  }
  return false;
}

std::vector<TextMatch> matches(std::initializer_list<std::pair<qint64, qint64>> tokens) {
  std::vector<TextMatch> out;
  for (const auto& [first, last] : tokens) out.push_back({first, last});
  return out;
}

}  // namespace

class TestLongMapFind : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { attn::ui::testing::isolateSettings(settingsDir_.path()); }
  // What the pieces spell, the markers read as the header says.
  void piecesSpellTheText_data() {
    QTest::addColumn<QStringList>("pieces");
    QTest::addColumn<QString>("text");
    QTest::newRow("byte-level, decoded") << QStringList{u"The"_s, u" att"_s, u"ention"_s} << u"The attention"_s;
    QTest::newRow("byte-level, raw") << QStringList{u"The"_s, u"\u0120att"_s, u"ention"_s, u"\u010a"_s, u"\u0109x"_s}
                                     << u"The attention\n\tx"_s;
    QTest::newRow("wordpiece") << QStringList{u"[CLS]"_s, u"the"_s, u"att"_s, u"##ention"_s, u","_s, u"please"_s}
                               << u"[CLS] the attention , please"_s;
    QTest::newRow("sentencepiece") << QStringList{u"<s>"_s, u"\u2581The"_s, u"\u2581att"_s, u"ention"_s}
                                   << u"<s> The attention"_s;
    // U+65E5 is E6 97 A5; a lone E6 spells no character and stays its piece.
    QTest::newRow("byte fallback") << QStringList{u"\u2581a"_s, u"<0xE6>"_s, u"<0x97>"_s,
                                                  u"<0xA5>"_s,  u"<0xE6>"_s, u"<0x41>"_s}
                                   << u" a\u65e5<0xE6>A"_s;
    // "##" alone, or a run with spaces, is text: a Markdown heading in GPT-2 stays "###".
    QTest::newRow("hashes in a decoded run") << QStringList{u"###"_s, u" Head"_s} << u"### Head"_s;
  }
  void piecesSpellTheText() {
    QFETCH(QStringList, pieces);
    QFETCH(QString, text);
    const TokenText t = tokenText(pieces);
    QCOMPARE(t.text, text);
    QCOMPARE(t.first.size(), std::size_t(text.size()));
    QCOMPARE(t.folded, text.toCaseFolded());
  }

  // Which tokens each match covers.
  void matchesCoverTokens_data() {
    QTest::addColumn<QStringList>("pieces");
    QTest::addColumn<QString>("query");
    QTest::addColumn<std::vector<TextMatch>>("want");
    const QStringList gpt2{u"The"_s, u" att"_s, u"ention"_s, u" is"_s, u" all"_s, u" Att"_s, u"ENTION"_s};
    QTest::newRow("across two pieces, any case") << gpt2 << u"attention"_s << matches({{1, 2}, {5, 6}});
    QTest::newRow("with the space") << gpt2 << u" ATTENTION is"_s << matches({{1, 3}});
    QTest::newRow("inside one piece") << gpt2 << u"tio"_s << matches({{2, 2}, {6, 6}});
    QTest::newRow("the end of one, the start of the next") << gpt2 << u"ten"_s << matches({{1, 2}, {5, 6}});
    QTest::newRow("not there") << gpt2 << u"attentions"_s << matches({});
    QTest::newRow("empty query") << gpt2 << QString() << matches({});
    QTest::newRow("raw byte-level") << QStringList{u"The"_s, u"\u0120att"_s, u"ention"_s} << u"the att"_s
                                    << matches({{0, 1}});
    const QStringList bert{u"[CLS]"_s, u"att"_s, u"##ention"_s, u","_s, u"please"_s, u"don"_s, u"'"_s, u"t"_s};
    QTest::newRow("wordpiece word") << bert << u"attention"_s << matches({{1, 2}});
    QTest::newRow("wordpiece punctuation") << bert << u"attention, please"_s << matches({{1, 4}});
    QTest::newRow("wordpiece as split") << bert << u"attention , please"_s << matches({{1, 4}});
    QTest::newRow("wordpiece contraction") << bert << u"don't"_s << matches({{5, 7}});
    // A query's space never steps over a character: "att ention" is not in the text.
    QTest::newRow("wordpiece space inside a word") << bert << u"att ention"_s << matches({});
    const QStringList llama{u"<s>"_s, u"\u2581The"_s, u"\u2581att"_s, u"ention"_s, u"\u2581is"_s};
    QTest::newRow("sentencepiece") << llama << u"the attention is"_s << matches({{1, 4}});
    QTest::newRow("byte fallback") << QStringList{u"\u2581a"_s, u"<0xE6>"_s, u"<0x97>"_s, u"<0xA5>"_s, u"b"_s}
                                   << u"\u65e5b"_s << matches({{1, 4}});
    QTest::newRow("no overlap") << QStringList{u"aa"_s, u"a"_s, u"a"_s} << u"aa"_s << matches({{0, 0}, {1, 2}});
  }
  void matchesCoverTokens() {
    QFETCH(QStringList, pieces);
    QFETCH(QString, query);
    QFETCH(std::vector<TextMatch>, want);
    const auto got = findInTokens(tokenText(pieces), query);
    QCOMPARE(got.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      QCOMPARE(got[k].first, want[k].first);
      QCOMPARE(got[k].last, want[k].last);
    }
  }

  // The find box as a user drives it: "attention" (never one token of the run) is found, counted, stepped through.
  void findBoxFindsAcrossTokens() {
    const QStringList pieces = gpt2Pieces();
    LongMapPanel panel;
    panel.resize(820, 640);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setTokens(pieces);
    LongMapHead head;
    head.reader = std::make_shared<SyntheticHead>(pieces.size());
    head.title = u"layer 0 \u00b7 head 0"_s;
    panel.setHead(head);
    panel.map()->setView(QPointF(0, 0), 14.0);  // labels on both axes

    QLineEdit* box = panel.findEdit();
    box->setFocus();
    QTest::keyClicks(box, u"attention"_s);
    QTest::keyClick(box, Qt::Key_Return);
    // Found where the tokenizer split it: " att" (1) + "ention" (2) is the first match, and its first token the
    // selected query (before, every token was searched alone and none holds "attention").
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(1));
    QCOMPARE(panel.matches().size(), std::size_t(8));  // two a sentence ("att"+"ention", "Att"+"ention"), 4 times
    QCOMPARE(panel.currentMatch(), 0);
    QCOMPARE(panel.map()->highlight(), (std::optional<std::pair<qint64, qint64>>{{1, 2}}));
    QCOMPARE(panel.findNote()->text(), u"8 matches: 0 (0\u20137) \u00b7 tokens 1\u20132"_s);
    QCOMPARE(panel.rowStrip()->values().size(), std::size_t(pieces.size()));  // the query's row on the strip
    QTRY_VERIFY_WITH_TIMEOUT(!panel.map()->isBusy(), 20000);
    attn::ui::testing::saveShot(panel.grab().toImage(), u"long-map-find"_s);

    QTest::keyClick(box, Qt::Key_Return);  // Enter: the next match, "Att" + "ention"
    QCOMPARE(panel.currentMatch(), 1);
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(11));
    QCOMPARE(panel.map()->highlight(), (std::optional<std::pair<qint64, qint64>>{{11, 12}}));
    QTest::keyClick(box, Qt::Key_F3);  // the platform's Find Next
    QCOMPARE(panel.currentMatch(), 2);
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(19));
    QTest::keyClick(box, Qt::Key_F3, Qt::ShiftModifier);  // Find Previous
    QCOMPARE(panel.currentMatch(), 1);
    QTest::keyClick(box, Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(panel.currentMatch(), 0);
    QTest::keyClick(box, Qt::Key_Return, Qt::ShiftModifier);  // wraps to the last
    QCOMPARE(panel.currentMatch(), 7);
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(3 * 18 + 11));
    QTest::mouseClick(panel.findNextButton(), Qt::LeftButton);  // wraps to the first
    QCOMPARE(panel.currentMatch(), 0);
    QTest::mouseClick(panel.findPreviousButton(), Qt::LeftButton);
    QCOMPARE(panel.currentMatch(), 7);
    // F3 with the focus on the map: the panel's keys, wherever its focus is.
    panel.map()->setFocus();
    QTest::keyClick(panel.map(), Qt::Key_F3);
    QCOMPARE(panel.currentMatch(), 0);

    // A query picked elsewhere: the next match is the first that starts after it.
    panel.selectQuery(30);
    QTest::keyClick(box, Qt::Key_Return);
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(36 + 1));
    QCOMPARE(panel.currentMatch(), 4);
    panel.selectQuery(30);
    QTest::keyClick(box, Qt::Key_Return, Qt::ShiftModifier);  // the last that starts before it
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(18 + 11));
    QCOMPARE(panel.currentMatch(), 3);

    // Typing counts without moving; text that is nowhere says so, and the buttons wait for a match.
    box->clear();
    QVERIFY(!panel.map()->highlight());
    QTest::keyClicks(box, u"is all"_s);
    QCOMPARE(panel.findNote()->text(), u"4 matches"_s);
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(18 + 11));
    box->clear();
    QTest::keyClicks(box, u"nowhere"_s);
    QCOMPARE(panel.findNote()->text(), u"not found"_s);
    QVERIFY(!panel.findNextButton()->isEnabled());
    QTest::keyClick(box, Qt::Key_Return);
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(18 + 11));

    // Another head of the same run keeps the match marked.
    box->clear();
    QTest::keyClicks(box, u"you need"_s);
    QTest::keyClick(box, Qt::Key_Return);
    QCOMPARE(panel.selectedQuery(), std::optional<qint64>(18 + 15));  // the first after query 29
    head.title = u"layer 0 \u00b7 head 1"_s;
    panel.setHead(head);
    QCOMPARE(panel.map()->highlight(), (std::optional<std::pair<qint64, qint64>>{{18 + 15, 18 + 16}}));
  }

  // The Transformer tab on a real run kept on demand (the bundled story model, its own tokenizer): a word the
  // tokenizer split is found whole, every time it occurs. The tab hands the panel the tokens' text, not their
  // labels (where " att" reads "\u2423att" and the text would be "Once\u2423upon...").
  void transformerTabFindsSplitWords() {
    TransformerWorkbench wb;
    wb.resize(1400, 900);
    wb.show();
    wb.setOnDemandAbove(std::size_t(1) << 20);  // 1 MiB of maps: about 80 tokens of this model
    wb.findChild<QPushButton*>(u"openStoryDemo"_s)->click();
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QString text;
    for (int i = 0; i < 12; ++i) text += TransformerWorkbench::storyText() + u" "_s;
    wb.setText(text);
    QVERIFY2(settle(wb), qPrintable(wb.lastError()));
    QTRY_VERIFY(wb.outcome()->request.text == text.toStdString());
    QVERIFY(wb.isOnDemand() && wb.longMap()->isVisible());
    // A word in two pieces: one that begins it (" " and a letter), then one that goes on with letters.
    const auto& tokens = wb.outcome()->run->attention.tokens;
    const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    std::size_t at = 0;
    for (std::size_t k = 1; k + 1 < tokens.size() && at == 0; ++k) {
      if (tokens[k].size() >= 2 && tokens[k][0] == ' ' && letter(tokens[k][1]) && !tokens[k + 1].empty() &&
          letter(tokens[k + 1][0])) {
        at = k;
      }
    }
    QVERIFY2(at > 0, "the story has no word the tokenizer splits");
    const QString word = QString::fromStdString(tokens[at] + tokens[at + 1]);  // " Li" + "ly", say
    LongMapPanel* panel = wb.longMap();
    QTest::keyClicks(panel->findEdit(), word);
    QTest::keyClick(panel->findEdit(), Qt::Key_Return);
    QVERIFY2(panel->currentMatch() == 0, qPrintable(word + u": "_s + panel->findNote()->text()));
    QVERIFY(panel->matches().size() >= 12);  // at least once a sentence
    for (const TextMatch& m : panel->matches()) QCOMPARE(m.last, m.first + 1);
    QCOMPARE(panel->selectedQuery(), std::optional<qint64>(qint64(at)));
    QCOMPARE(panel->map()->highlight(), (std::optional<std::pair<qint64, qint64>>{{qint64(at), qint64(at) + 1}}));
    QTRY_VERIFY_WITH_TIMEOUT(!panel->map()->isBusy(), 20000);
    attn::ui::testing::saveShot(wb.grab().toImage(), u"long-map-find-tab"_s);
  }

 private:
  QTemporaryDir settingsDir_;
};

ATTN_QT_TEST(TestLongMapFind, Widgets);

}  // namespace test_long_map_find
#include "test_long_map_find.moc"
