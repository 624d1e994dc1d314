#include "views/long_map_find.h"

#include <algorithm>
#include <optional>
#include <utility>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

enum class Style { Decoded, RawByteLevel, WordPiece };

// What kind of pieces the run has (see the header): only a run without a single space can be raw pieces.
Style styleOf(const QStringList& pieces) {
  bool rawByteLevel = false, wordPiece = false;
  for (const QString& p : pieces) {
    if (p.contains(u' ')) return Style::Decoded;
    if (p.size() > 2 && p.startsWith(u"##"_s)) wordPiece = true;
    if (p.contains(QChar(0x0120))) rawByteLevel = true;
  }
  if (wordPiece) return Style::WordPiece;
  return rawByteLevel ? Style::RawByteLevel : Style::Decoded;
}

// The byte of a byte-fallback piece "<0xHH>".
std::optional<unsigned char> fallbackByte(const QString& piece) {
  if (piece.size() != 6 || !piece.startsWith(u"<0x"_s) || piece.back() != u'>') return std::nullopt;
  bool ok = false;
  const uint value = piece.mid(3, 2).toUInt(&ok, 16);
  if (!ok) return std::nullopt;
  return static_cast<unsigned char>(value);
}

// The code point of the whole UTF-8 character at bytes[i], and its length; nothing when none starts there.
std::optional<std::pair<char32_t, std::size_t>> utf8At(const std::vector<unsigned char>& bytes, std::size_t i) {
  const unsigned char lead = bytes[i];
  std::size_t length = 0;
  char32_t cp = 0, least = 0;
  if (lead < 0x80) return std::pair{char32_t(lead), std::size_t(1)};
  if ((lead & 0xE0) == 0xC0) {
    length = 2, cp = lead & 0x1F, least = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, cp = lead & 0x0F, least = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, cp = lead & 0x07, least = 0x10000;
  } else {
    return std::nullopt;
  }
  if (i + length > bytes.size()) return std::nullopt;
  for (std::size_t k = 1; k < length; ++k) {
    if ((bytes[i + k] & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (bytes[i + k] & 0x3F);
  }
  if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  return std::pair{cp, length};
}

class Builder {
 public:
  explicit Builder(TokenText& out) : out_(out) {}
  void add(QStringView units, qint64 first, qint64 last, bool soft = false) {
    out_.text.append(units);
    for (qsizetype k = 0; k < units.size(); ++k) {
      out_.first.push_back(first);
      out_.last.push_back(last);
      out_.soft.push_back(soft ? 1 : 0);
    }
  }
  // One piece's own characters, its markers read as `style` says.
  void addPiece(const QString& piece, qint64 token, Style style) {
    for (const QChar c : piece) {
      QChar t = c;
      if (c.unicode() == 0x2581) {
        t = u' ';
      } else if (style == Style::RawByteLevel && c.unicode() == 0x0120) {
        t = u' ';
      } else if (style == Style::RawByteLevel && c.unicode() == 0x010A) {
        t = u'\n';
      } else if (style == Style::RawByteLevel && c.unicode() == 0x0109) {
        t = u'\t';
      }
      add(QStringView(&t, 1), token, token);
    }
  }
  // Byte-fallback pieces from token `from` on: whole characters span their pieces, the other bytes stay pieces.
  void addBytes(const QStringList& pieces, qint64 from, const std::vector<unsigned char>& bytes) {
    for (std::size_t i = 0; i < bytes.size();) {
      const auto ch = utf8At(bytes, i);
      const qint64 token = from + qint64(i);
      if (!ch) {
        add(pieces[token], token, token);
        ++i;
        continue;
      }
      const char32_t cp = ch->first;
      add(QStringView(QString::fromUcs4(&cp, 1)), token, token + qint64(ch->second) - 1);
      i += ch->second;
    }
  }

 private:
  TokenText& out_;
};

}  // namespace

TokenText tokenText(const QStringList& pieces) {
  TokenText out;
  Builder builder(out);
  const Style style = styleOf(pieces);
  const qint64 n = pieces.size();
  for (qint64 k = 0; k < n;) {
    if (fallbackByte(pieces[k])) {
      std::vector<unsigned char> bytes;
      const qint64 from = k;
      while (k < n) {
        const auto b = fallbackByte(pieces[k]);
        if (!b) break;
        bytes.push_back(*b);
        ++k;
      }
      builder.addBytes(pieces, from, bytes);
      continue;
    }
    QString piece = pieces[k];
    if (style == Style::WordPiece) {
      if (piece.size() > 2 && piece.startsWith(u"##"_s)) {
        piece.remove(0, 2);
      } else if (!out.text.isEmpty()) {
        builder.add(u" ", k, k, true);  // a word boundary: its space belongs to the word after it
      }
    }
    builder.addPiece(piece, k, style);
    ++k;
  }
  out.folded.reserve(out.text.size());
  for (const QChar c : std::as_const(out.text)) out.folded.append(c.toCaseFolded());
  return out;
}

std::vector<TextMatch> findInTokens(const TokenText& text, const QString& query) {
  std::vector<TextMatch> out;
  QString q;
  q.reserve(query.size());
  for (const QChar c : query) q.append(c.toCaseFolded());
  const qsizetype n = text.folded.size(), m = q.size();
  if (m == 0) return out;
  const QChar* t = text.folded.constData();
  for (qsizetype s = 0; s < n;) {
    if (text.soft[std::size_t(s)] || t[s] != q[0]) {
      ++s;
      continue;
    }
    qsizetype i = s, j = 0;
    while (j < m && i < n) {
      if (t[i] == q[j]) {
        ++i, ++j;
      } else if (text.soft[std::size_t(i)]) {
        ++i;  // a word boundary the tokenizer dropped: stepped over
      } else {
        break;
      }
    }
    if (j < m) {
      ++s;
      continue;
    }
    out.push_back({text.first[std::size_t(s)], text.last[std::size_t(i - 1)]});
    s = i;
  }
  return out;
}

}  // namespace attn::ui
