// Find in the long map's text (issue 41, GUI finding 12): the pure matcher of views/long_map_find.h on byte-level,
// WordPiece and SentencePiece pieces.
#include "views/long_map_find.h"

#include <QTest>

using namespace attn::ui;
using namespace Qt::StringLiterals;

Q_DECLARE_METATYPE(std::vector<attn::ui::TextMatch>)

namespace {

std::vector<TextMatch> matches(std::initializer_list<std::pair<qint64, qint64>> tokens) {
  std::vector<TextMatch> out;
  for (const auto& [first, last] : tokens) out.push_back({first, last});
  return out;
}

}  // namespace

class TestLongMapFind : public QObject {
  Q_OBJECT

 private slots:
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
};

QTEST_MAIN(TestLongMapFind)
#include "test_long_map_find.moc"
