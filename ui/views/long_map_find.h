// Find in a long run's text: the tokens' pieces joined into the text they spell, each character knowing the
// token(s) it comes from, so that "attention" is found where the tokenizer split it (" att" + "ention"). Pure
// (QtCore only, no widget): LongMapPanel's find box calls it, tests/ui/test_long_map_find.cpp checks it.
//
// How a piece becomes text (the markers a tokenizer writes into its pieces):
// - A piece already decoded (what the engine labels byte-level BPE and SentencePiece tokens with: " att",
//   "ention") is its text as it is.
// - SentencePiece's word marker "\u2581" (U+2581) is a space, wherever it is.
// - Raw byte-level BPE pieces (a run in which no piece holds a space and some piece holds "\u0120"): "\u0120"
//   (U+0120) is a space, "\u010a" (U+010A) a line feed, "\u0109" (U+0109) a tab.
// - WordPiece (a run in which no piece holds a space and some piece is "##" and more): "##" joins the piece to the
//   one before and is not text; any other piece after the first begins a word, so a *soft* space stands before it.
//   The tokenizer dropped the spaces and split off the punctuation, so a soft space is matched by a space of the
//   query and stepped over by any other character: "attention, please" ("attention" "," "please") is found by
//   "attention, please", "attention , please" and "attention,".
// - Byte-fallback pieces ("<0xE6>" "<0x97>" "<0xA5>"): consecutive ones that spell whole UTF-8 characters are those
//   characters (U+65E5), each spanning its pieces; a byte that spells no whole character stays its piece's text.
// A match is case-insensitive (each UTF-16 unit case-folded, so offsets stay the text's), starts on a character
// that is not a soft space, and covers the tokens of its first and last characters and those between; matches do
// not overlap, and come in the order of the text.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace attn::ui {

struct TokenText {
  QString text;                     // what the pieces spell (soft spaces as ' ')
  QString folded;                   // the same, case-folded unit by unit
  std::vector<qint64> first, last;  // per unit of `text`: the first and last token it comes from
  std::vector<unsigned char> soft;  // per unit: 1 for a soft space (a WordPiece word boundary)
};

struct TextMatch {
  qint64 first = 0, last = 0;  // the tokens it covers, first..last
  bool operator==(const TextMatch&) const = default;
};

TokenText tokenText(const QStringList& pieces);
std::vector<TextMatch> findInTokens(const TokenText& text, const QString& query);

}  // namespace attn::ui
