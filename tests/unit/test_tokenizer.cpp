// Tokenizers: BERT's WordPiece and GPT-2's byte-level BPE, checked against published ids, the expected
// outputs of pytorch/text's tests for the same vocabularies, and hand-built vocabularies whose every id
// and span is worked out by hand.
#include "attn/text/tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

namespace attn::text {
namespace {

namespace fs = std::filesystem;

std::vector<int> ids_of(const std::vector<Token>& tokens) {
  std::vector<int> ids;
  for (const Token& t : tokens) ids.push_back(t.id);
  return ids;
}

std::vector<std::string> texts_of(const std::vector<Token>& tokens) {
  std::vector<std::string> texts;
  for (const Token& t : tokens) texts.push_back(t.text);
  return texts;
}

std::vector<Span> spans_of(const std::vector<Token>& tokens) {
  std::vector<Span> spans;
  for (const Token& t : tokens) spans.push_back(t.span);
  return spans;
}

std::vector<int> encode_ids(const Tokenizer& tokenizer, std::string_view text) {
  auto tokens = tokenizer.encode(text);
  EXPECT_TRUE(tokens.has_value()) << (tokens ? "" : tokens.error().message());
  return tokens ? ids_of(*tokens) : std::vector<int>{};
}

std::vector<Token> encode_ok(const Tokenizer& tokenizer, std::string_view text) {
  auto tokens = tokenizer.encode(text);
  EXPECT_TRUE(tokens.has_value()) << (tokens ? "" : tokens.error().message());
  return tokens ? *tokens : std::vector<Token>{};
}

// The real vocabularies, committed under tests/data/tokenizers (SOURCES.md there says where they come from).
fs::path reference_dir() { return fs::path(ATTN_TEST_DATA_DIR) / "tokenizers"; }

// They are part of the repository, so a missing one fails the test instead of skipping it.
#define REQUIRE_REFERENCE_FILES()                                                                         \
  for (const char* name : {"bert_base_uncased_vocab.txt", "gpt2_bpe_encoder.json", "gpt2_bpe_vocab.bpe"}) \
  ASSERT_TRUE(fs::exists(reference_dir() / name)) << (reference_dir() / name).string() << " is missing"

const Tokenizer& bert_uncased() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    auto t = load_wordpiece(reference_dir() / "bert_base_uncased_vocab.txt");
    EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message());
    return t ? std::move(*t) : nullptr;
  }();
  return *tokenizer;
}

const Tokenizer& gpt2() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    auto t = load_byte_level_bpe(reference_dir() / "gpt2_bpe_encoder.json", reference_dir() / "gpt2_bpe_vocab.bpe");
    EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message());
    return t ? std::move(*t) : nullptr;
  }();
  return *tokenizer;
}

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("attn-tokenizer-" + std::string(info->test_suite_name()) + "-" + info->name() +
                                         "-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path write(const std::string& name, std::string_view content) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// GPT-2's bytes_to_unicode, written out again so the tests do not lean on the code they test.
std::string byte_level(std::string_view bytes) {
  std::string out;
  for (const char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    unsigned c = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE))) {
      unsigned n = 0;
      for (unsigned k = 0; k < b; ++k) {
        if (!((k >= 0x21 && k <= 0x7E) || (k >= 0xA1 && k <= 0xAC) || (k >= 0xAE))) ++n;
      }
      c = 256 + n;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// =========================================================================================================
// UTF-8 in and out

TEST(Unicode, InvalidUtf8IsAnErrorAtTheOffendingSequence) {
  const auto tokenizer = wordpiece_from_vocab({"[UNK]", "a"});
  ASSERT_TRUE(tokenizer.has_value());
  struct Case {
    std::string text;
    std::int64_t offset;
  };
  const std::vector<Case> cases = {
      {"ab\xFF"
       "cd",
       2},                          // a byte that never starts a character
      {"a\x80", 1},                 // a continuation byte without a lead
      {"h\xC3\x28", 1},             // a lead byte followed by ASCII
      {"abc\xE2\x82", 3},           // cut off by the end
      {"\xC0\xAF", 0},              // overlong '/'
      {"x\xED\xA0\x80", 1},         // a UTF-16 surrogate
      {"\xF4\x90\x80\x80", 0},      // above U+10FFFF
      {"\xC3\xA9\xE0\x80\xAF", 2},  // "é" then an overlong three-byte form
  };
  for (const Case& c : cases) {
    const auto result = (*tokenizer)->encode(c.text);
    ASSERT_FALSE(result.has_value()) << "offset " << c.offset;
    EXPECT_EQ(result.error().file, "text");
    EXPECT_EQ(result.error().offset, c.offset);
    EXPECT_NE(result.error().reason.find("UTF-8"), std::string::npos) << result.error().reason;
  }
}

TEST(Unicode, ByteLevelBpeRefusesInvalidUtf8Too) {
  std::vector<std::pair<std::string, int>> vocab;
  for (int b = 0; b < 256; ++b) vocab.emplace_back(byte_level(std::string(1, static_cast<char>(b))), b);
  const auto tokenizer = byte_level_bpe_from_parts(vocab, {});
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error().message();
  const auto result = (*tokenizer)->encode("ok \xF0\x9F\x98");  // an emoji cut short
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().offset, 3);
  EXPECT_EQ(result.error().message().substr(0, 12), "text: byte 3");
}

TEST(Unicode, ValidUtf8OfEveryLengthIsAccepted) {
  const auto tokenizer = wordpiece_from_vocab({"[UNK]"});
  ASSERT_TRUE(tokenizer.has_value());
  // 1, 2, 3 and 4 byte characters, the largest code point, and the edges around the surrogates.
  const auto tokens =
      (*tokenizer)->encode("a \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \xED\x9F\xBF \xEE\x80\x80");
  ASSERT_TRUE(tokens.has_value()) << tokens.error().message();
  // U+10FFFF and U+D7FF (unassigned, Cn) and U+E000 (private use, Co) are dropped by BERT's clean-up.
  EXPECT_EQ(ids_of(*tokens), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(spans_of(*tokens), (std::vector<Span>{{0, 1}, {2, 4}, {5, 8}, {9, 13}}));
}

// =========================================================================================================
// WordPiece on a vocabulary small enough to check by hand

std::vector<std::string> small_vocab() {
  return {"[PAD]", "[UNK]",  "[CLS]", "[SEP]", "[MASK]",     // 0-4
          "hello", "world",  ",",     "!",     "un",         // 5-9
          "##aff", "##able", "don",   "'",     "t",          // 10-14
          "cafe",  "##s",    "中",    "国",    "a",          // 15-19
          "##b",   "##c",    "##a",   "i",     "##stanbul",  // 20-24
          "¿",     "café",   "Hello", "##llo", "he",         // 25-29
          "é",     "##é"};                                   // 30-31
}

TEST(WordPiece, SplitsOnWhitespaceAndPunctuationWithSpans) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const auto tokens = encode_ok(**t, "Hello, world!");
  EXPECT_EQ(ids_of(tokens), (std::vector<int>{5, 7, 6, 8}));
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"hello", ",", "world", "!"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 5}, {5, 6}, {7, 12}, {12, 13}}));
}

TEST(WordPiece, GreedyLongestMatchFirstWithContinuationSpans) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "unaffable");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"un", "##aff", "##able"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 2}, {2, 5}, {5, 9}}));
  EXPECT_EQ((*t)->display(10), "aff");
  EXPECT_EQ((*t)->display(2), "[CLS]");
}

TEST(WordPiece, AccentsStrippedButSpansStayOnTheOriginalBytes) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  // "Café" is C a f C3 A9; "CAFÉS" is C A F C3 89 S.
  const auto tokens = encode_ok(**t, "Caf\xC3\xA9 CAF\xC3\x89S");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"cafe", "cafe", "##s"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 5}, {6, 11}, {11, 12}}));
  // A decomposed accent (e + U+0301) is dropped the same way; the mark was a character of its own in the
  // input and no token keeps it, so the span ends before it (as Hugging Face's offsets do).
  const auto decomposed = encode_ok(**t, "cafe\xCC\x81");
  EXPECT_EQ(ids_of(decomposed), (std::vector<int>{15}));
  EXPECT_EQ(spans_of(decomposed), (std::vector<Span>{{0, 4}}));
}

TEST(WordPiece, DottedCapitalILowersToIAndLosesTheDot) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "\xC4\xB0stanbul");  // İstanbul
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"i", "##stanbul"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 2}, {2, 9}}));
}

TEST(WordPiece, StripAccentsCanBeTurnedOffAndCaseKept) {
  WordPieceOptions keep_accents;
  keep_accents.strip_accents = false;
  const auto t = wordpiece_from_vocab(small_vocab(), keep_accents);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(encode_ids(**t, "CAF\xC3\x89"), (std::vector<int>{26}));  // "café"

  WordPieceOptions cased;
  cased.lower_case = false;  // strip_accents follows: off
  const auto c = wordpiece_from_vocab(small_vocab(), cased);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(encode_ids(**c, "Hello hello HELLO"), (std::vector<int>{27, 5, 1}));
  EXPECT_EQ(encode_ids(**c, "caf\xC3\xA9"), (std::vector<int>{26}));
}

TEST(WordPiece, ContractionsSplitAtTheApostrophe) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "Don't");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"don", "'", "t"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 3}, {3, 4}, {4, 5}}));
}

TEST(WordPiece, CjkIdeographsStandAloneAndUnicodePunctuationSplits) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t,
                                "\xE4\xB8\xAD\xE5\x9B\xBD"
                                "abc\xC2\xBF"
                                "a");  // 中国abc¿a
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"中", "国", "a", "##b", "##c", "¿", "a"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 3}, {3, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 11}, {11, 12}}));

  WordPieceOptions no_cjk;
  no_cjk.tokenize_chinese_chars = false;
  const auto n = wordpiece_from_vocab(small_vocab(), no_cjk);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(encode_ids(**n, "\xE4\xB8\xAD\xE5\x9B\xBD"), (std::vector<int>{1}));  // one word, no "##国"
}

TEST(WordPiece, UnmatchedRemainderMakesTheWholeWordUnknown) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "hi abz ab");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"[UNK]", "[UNK]", "a", "##b"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 2}, {3, 6}, {7, 8}, {8, 9}}));
}

TEST(WordPiece, WordsLongerThanTheLimitAreUnknown) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  const auto at_limit = encode_ok(**t, std::string(100, 'a'));
  ASSERT_EQ(at_limit.size(), 100u);
  EXPECT_EQ(at_limit.front().text, "a");
  EXPECT_EQ(at_limit.back().text, "##a");
  EXPECT_EQ(at_limit.back().span, (Span{99, 100}));
  const auto over = encode_ok(**t, std::string(101, 'a') + " a");
  EXPECT_EQ(ids_of(over), (std::vector<int>{1, 19}));
  EXPECT_EQ(spans_of(over), (std::vector<Span>{{0, 101}, {102, 103}}));
  // The limit counts characters, not bytes: "ééé" is 6 bytes but 3 characters.
  WordPieceOptions short_words;
  short_words.max_input_chars_per_word = 3;
  short_words.strip_accents = false;
  const auto s = wordpiece_from_vocab(small_vocab(), short_words);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(encode_ids(**s, "abc abca"), (std::vector<int>{19, 20, 21, 1}));
  const auto accented = encode_ok(**s, "\xC3\xA9\xC3\xA9\xC3\xA9 \xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9");
  EXPECT_EQ(ids_of(accented), (std::vector<int>{30, 31, 31, 1}));
  EXPECT_EQ(spans_of(accented), (std::vector<Span>{{0, 2}, {2, 4}, {4, 6}, {7, 15}}));
}

TEST(WordPiece, CleansControlCharactersAndReplacementCharacter) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  // NUL, U+FFFD and U+0001 vanish inside the word; tab, newline and U+3000 separate words.
  const auto tokens = encode_ok(**t, std::string("he\0l\xEF\xBF\xBDlo\x01\tworld\n\xE3\x80\x80!", 21));
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"hello", "world", "!"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 9}, {11, 16}, {20, 21}}));
}

TEST(WordPiece, SpecialTokensInTheTextAreKeptWhole) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "[CLS] hello[SEP][MASK]");
  EXPECT_EQ(ids_of(tokens), (std::vector<int>{2, 5, 3, 4}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 5}, {6, 11}, {11, 16}, {16, 22}}));
  const auto& s = (*t)->specials();
  EXPECT_EQ(s.unk, 1);
  EXPECT_EQ(s.cls, 2);
  EXPECT_EQ(s.sep, 3);
  EXPECT_EQ(s.pad, 0);
  EXPECT_EQ(s.mask, 4);
  EXPECT_FALSE(s.bos.has_value());
}

TEST(WordPiece, AddedTokensWithStripAndSingleWord) {
  WordPieceOptions options;
  options.added_tokens = std::vector<AddedToken>{{"[MASK]", 4, true, false, true, false},  // lstrip
                                                 {"he", 29, false, true, false, false}};   // single word
  const auto t = wordpiece_from_vocab(small_vocab(), options);
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "hello  [MASK] he");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"hello", "[MASK]", "he"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 5}, {5, 13}, {14, 16}}));
  // [CLS] is not among these added tokens: it is plain text now.
  EXPECT_EQ(encode_ids(**t, "[CLS]"), (std::vector<int>{1, 1, 1}));
}

TEST(WordPiece, EmptyAndBlankTextGiveNoTokens) {
  const auto t = wordpiece_from_vocab(small_vocab());
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(encode_ok(**t, "").empty());
  EXPECT_TRUE(encode_ok(**t, " \t\r\n ").empty());
}

TEST(WordPiece, VocabularyWithoutTheUnknownTokenIsRefused) {
  const auto t = wordpiece_from_vocab({"a", "b"});
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().reason, "the vocabulary has no [UNK] token");

  TempDir dir;
  const auto loaded = load_wordpiece(dir.write("vocab.txt", "[PAD]\nhello\n"));
  ASSERT_FALSE(loaded.has_value());
  const std::string message = loaded.error().message();
  EXPECT_NE(message.find("vocab.txt: the vocabulary has no [UNK] token"), std::string::npos) << message;
}

TEST(WordPiece, DuplicateEntriesAreRefusedWithTheirLine) {
  TempDir dir;
  const auto loaded = load_wordpiece(dir.write("vocab.txt", "[UNK]\nhello\nworld\nhello\n"));
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().line, 4);
  EXPECT_EQ(fs::path(loaded.error().file).filename(), "vocab.txt");
  EXPECT_NE(loaded.error().reason.find("\"hello\""), std::string::npos) << loaded.error().reason;
}

TEST(WordPiece, VocabTxtWithWindowsLineEndings) {
  TempDir dir;
  const auto t = load_wordpiece(dir.write("vocab.txt", "[UNK]\r\nhello\r\n##s\r\n"));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ((*t)->vocab_size(), 3);
  EXPECT_EQ(encode_ids(**t, "hellos"), (std::vector<int>{1, 2}));
  EXPECT_EQ((*t)->id("##s"), 2);
  EXPECT_EQ((*t)->token(1), "hello");
  EXPECT_EQ((*t)->token(3), "");
  EXPECT_EQ((*t)->display(2), "s");
}

// =========================================================================================================
// BERT with the real bert-base-uncased vocabulary

TEST(WordPieceBert, PublishedReference) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = bert_uncased();
  EXPECT_EQ(t.vocab_size(), 30522);
  EXPECT_EQ(encode_ids(t, "Hello World!, how are you?"),
            (std::vector<int>{7592, 2088, 999, 1010, 2129, 2024, 2017, 1029}));
  EXPECT_EQ(t.specials().cls, 101);
  EXPECT_EQ(t.specials().sep, 102);
  EXPECT_EQ(t.specials().unk, 100);
  EXPECT_EQ(t.specials().pad, 0);
  EXPECT_EQ(t.specials().mask, 103);
}

// pytorch/text, test/torchtext_unittest/test_transforms.py, TestBERTTokenizer._bert_tokenizer with
// do_lower_case=True (same vocabulary file). Its never_split=["[UNK]", "[CLS]"] rows match Hugging Face's
// handling of special tokens; its rows without never_split spell them out as plain text.
TEST(WordPieceBert, TorchtextReferenceCases) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = bert_uncased();
  EXPECT_EQ(encode_ids(t, "H\xC3\xA9ll\xC3\xB3  Wo\xC5\x95l\xE1\xB8\x8A\xC2\xBF"),
            (std::vector<int>{7592, 2088, 1094}));
  EXPECT_EQ(encode_ids(t, "Respublica superiorem"), (std::vector<int>{24501, 14289, 16558, 5555, 6020, 6633}));
  EXPECT_EQ(encode_ids(t,
                       "Avdija Vr\xC5\xA1"
                       "aj"
                       "evi\xC4\x87 \xC3\xAEn"),
            (std::vector<int>{20704, 4305, 3900, 27830, 3736, 26782, 1999}));

  WordPieceOptions never_split;  // never_split=["[UNK]", "[CLS]"]
  never_split.added_tokens = std::vector<AddedToken>{{"[UNK]", 100}, {"[CLS]", 101}};
  const auto ns = load_wordpiece(reference_dir() / "bert_base_uncased_vocab.txt", never_split);
  ASSERT_TRUE(ns.has_value());
  EXPECT_EQ(encode_ids(**ns, " \tHeLLo!how  \n Are yoU? [UNK]"),
            (std::vector<int>{7592, 999, 2129, 2024, 2017, 1029, 100}));
  EXPECT_EQ(encode_ids(**ns, "hi world [UNK] [CLS]"), (std::vector<int>{7632, 2088, 100, 101}));
  EXPECT_EQ(encode_ids(**ns, "testing, [UNK] words! [SEP]"),
            (std::vector<int>{5604, 1010, 100, 2616, 999, 1031, 19802, 1033}));

  WordPieceOptions plain;  // never_split=None
  plain.added_tokens = std::vector<AddedToken>{};
  const auto p = load_wordpiece(reference_dir() / "bert_base_uncased_vocab.txt", plain);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(encode_ids(**p, " \tHeLLo!how  \n Are yoU? [UNK]"),
            (std::vector<int>{7592, 999, 2129, 2024, 2017, 1029, 1031, 4895, 2243, 1033}));
  EXPECT_EQ(encode_ids(**p, "hi world [UNK] [CLS]"),
            (std::vector<int>{7632, 2088, 1031, 4895, 2243, 1033, 1031, 18856, 2015, 1033}));
  EXPECT_EQ(encode_ids(**p, "testing, [UNK] words! [SEP]"),
            (std::vector<int>{5604, 1010, 1031, 4895, 2243, 1033, 2616, 999, 1031, 19802, 1033}));

  // With Hugging Face's default (all five special tokens matched), [SEP] is one token.
  EXPECT_EQ(encode_ids(t, "testing, [UNK] words! [SEP]"), (std::vector<int>{5604, 1010, 100, 2616, 999, 102}));
}

TEST(WordPieceBert, SpansCoverTheOriginalAccentedCharacters) {
  REQUIRE_REFERENCE_FILES();
  // H é(2) l l ó(2) sp sp W o ŕ(2) l Ḋ(3) ¿(2)
  const auto tokens = encode_ok(bert_uncased(), "H\xC3\xA9ll\xC3\xB3  Wo\xC5\x95l\xE1\xB8\x8A\xC2\xBF");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"hello", "world", "¿"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 7}, {9, 17}, {17, 19}}));
}

// Cases checked with an independent Python transcription of transformers' BasicTokenizer and
// WordpieceTokenizer (unicodedata), on the same vocabulary.
TEST(WordPieceBert, MoreCases) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = bert_uncased();
  EXPECT_EQ(encode_ids(t, "don't"), (std::vector<int>{2123, 1005, 1056}));
  EXPECT_EQ(encode_ids(t, "Caf\xC3\xA9 CAF\xC3\x89S na\xC3\xAFve"), (std::vector<int>{7668, 23812, 15743}));
  EXPECT_EQ(encode_ids(t,
                       "\xE4\xB8\xAD\xE5\x9B\xBD"
                       "abc"),
            (std::vector<int>{1746, 1799, 5925}));
  // 日本語のテキスト: the three kanji stand alone, the kana run is one word.
  EXPECT_EQ(
      encode_ids(t, "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88"),
      (std::vector<int>{1864, 1876, 1950, 1671, 30239, 30227, 30233, 30240}));
  EXPECT_EQ(encode_ids(t, "\xC4\xB0stanbul"), (std::vector<int>{9960}));
  EXPECT_EQ(encode_ids(t, std::string("a\0b\xEF\xBF\xBD"
                                      "c\x01"
                                      "d",
                                      9)),
            (std::vector<int>{5925, 2094}));
  EXPECT_EQ(encode_ids(t, "x\xE2\x80\xA8y"), (std::vector<int>{1060, 1061}));  // U+2028 separates
  const auto emoji = encode_ok(t, "\xF0\x9F\x98\x80 emoji");
  EXPECT_EQ(ids_of(emoji), (std::vector<int>{100, 7861, 29147, 2072}));
  EXPECT_EQ(spans_of(emoji), (std::vector<Span>{{0, 4}, {5, 7}, {7, 9}, {9, 10}}));
  EXPECT_EQ(encode_ids(t, "unaffable"), (std::vector<int>{14477, 20961, 3468}));
  EXPECT_EQ(encode_ids(t, "[CLS] hello [SEP]"), (std::vector<int>{101, 7592, 102}));
}

// =========================================================================================================
// Byte-level BPE on a hand-built vocabulary: the 256 byte symbols (id = byte) and a few merges.

struct SmallBpe {
  std::vector<std::pair<std::string, int>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
};

SmallBpe small_bpe() {
  SmallBpe b;
  for (int i = 0; i < 256; ++i) b.vocab.emplace_back(byte_level(std::string(1, static_cast<char>(i))), i);
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"b", "c"},    // 256 "bc"   rank 0
      {"a", "b"},    // 257 "ab"   rank 1
      {"a", "a"},    // 258 "aa"   rank 2
      {"Ġ", "t"},    // 259 "Ġt"
      {"h", "e"},    // 260 "he"
      {"Ġt", "he"},  // 261 "Ġthe"
      {"Ġ", "Ġ"},    // 262 "ĠĠ"
      {"a", "bc"},   // 263 "abc"
      {"n", "'"},    // 264 "n'"   only made if "don't" were one piece
      {"'", "t"},    // 265 "'t"
      {"'", "l"},    // 266 "'l"
      {"'l", "l"},   // 267 "'ll"
      {"Ġ", "'"},    // 268 "Ġ'"
      {"?", "!"},    // 269 "?!"
      {"Ċ", "Ċ"},    // 270 "ĊĊ"
  };
  int id = 256;
  for (const auto& [l, r] : merges) {
    b.vocab.emplace_back(l + r, id++);
    b.merges.push_back({l, r});
  }
  b.vocab.emplace_back("<|endoftext|>", 300);  // ids 271-299 left unused
  return b;
}

TEST(Bpe, LowestRankMergesFirst) {
  const SmallBpe b = small_bpe();
  const auto t = byte_level_bpe_from_parts(b.vocab, b.merges);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  // "abc": "b c" (rank 0) beats "a b" (rank 1), then "a bc" makes "abc".
  EXPECT_EQ(encode_ids(**t, "abc"), (std::vector<int>{263}));
  // "aaa": the leftmost "a a" merges first, the last "a" is left over.
  const auto tokens = encode_ok(**t, "aaa");
  EXPECT_EQ(ids_of(tokens), (std::vector<int>{258, 'a'}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 2}, {2, 3}}));
  // " the": the space joins the word; "Ġt" + "he".
  const auto the = encode_ok(**t, "a the");
  EXPECT_EQ(texts_of(the), (std::vector<std::string>{"a", "Ġthe"}));
  EXPECT_EQ(spans_of(the), (std::vector<Span>{{0, 1}, {1, 5}}));
  EXPECT_EQ((*t)->display(261), " the");
}

TEST(Bpe, WhitespaceRunsLeaveTheirLastSpaceToTheNextWord) {
  const SmallBpe b = small_bpe();
  const auto t = byte_level_bpe_from_parts(b.vocab, b.merges);
  ASSERT_TRUE(t.has_value());
  // "a   the": \s+(?!\S) takes two spaces ("ĠĠ"), " the" keeps the third.
  auto tokens = encode_ok(**t, "a   the");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"a", "ĠĠ", "Ġthe"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 1}, {1, 3}, {3, 7}}));
  // Before a word, "\n\n" is cut into "\n" (\s+(?!\S)) and "\n" (\s+), so "ĊĊ" cannot form; at the end
  // of the text the run stays whole. Trailing spaces are one piece.
  tokens = encode_ok(**t, "a\n\nb  \n\n");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"a", "Ċ", "Ċ", "b", "ĠĠ", "ĊĊ"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 6}, {6, 8}}));
  EXPECT_EQ((*t)->display(270), "\n\n");
}

TEST(Bpe, ContractionsAndPunctuationRuns) {
  const SmallBpe b = small_bpe();
  const auto t = byte_level_bpe_from_parts(b.vocab, b.merges);
  ASSERT_TRUE(t.has_value());
  // Pieces: "don" "'t" " we" "'ll" " '" "S" "?!" ("'S" is no contraction: the pattern is case-sensitive).
  const auto tokens = encode_ok(**t, "don't we'll 'S?!");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"d", "o", "n", "'t", "Ġ", "w", "e", "'ll", "Ġ'", "S", "?!"}));
  EXPECT_EQ(spans_of(tokens),
            (std::vector<Span>{
                {0, 1}, {1, 2}, {2, 3}, {3, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 11}, {11, 13}, {13, 14}, {14, 16}}));
}

TEST(Bpe, EndOfTextIsMatchedWhole) {
  const SmallBpe b = small_bpe();
  const auto t = byte_level_bpe_from_parts(b.vocab, b.merges);
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "a<|endoftext|> the");
  EXPECT_EQ(ids_of(tokens), (std::vector<int>{'a', 300, 261}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 1}, {1, 14}, {14, 18}}));
  EXPECT_EQ((*t)->specials().eos, 300);
  EXPECT_EQ((*t)->specials().bos, 300);
  EXPECT_EQ((*t)->display(300), "<|endoftext|>");
  EXPECT_EQ((*t)->vocab_size(), 301);
  EXPECT_EQ((*t)->token(280), "");  // an unused id
  EXPECT_EQ((*t)->display(280), "");
}

TEST(Bpe, AddPrefixSpace) {
  const SmallBpe b = small_bpe();
  ByteLevelBpeOptions options;
  options.add_prefix_space = true;
  const auto t = byte_level_bpe_from_parts(b.vocab, b.merges, options);
  ASSERT_TRUE(t.has_value());
  const auto tokens = encode_ok(**t, "the");
  EXPECT_EQ(texts_of(tokens), (std::vector<std::string>{"Ġthe"}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 3}}));
  EXPECT_EQ(encode_ids(**t, " the"), (std::vector<int>{261}));  // already has its space
}

TEST(Bpe, MergesMustBeInTheVocabulary) {
  SmallBpe b = small_bpe();
  b.merges.push_back({"x", "yz"});
  const auto t = byte_level_bpe_from_parts(b.vocab, b.merges);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().line, 16);
  EXPECT_NE(t.error().reason.find("\"yz\""), std::string::npos) << t.error().reason;

  SmallBpe c = small_bpe();
  c.vocab.emplace_back("Ġthe", 300);  // the same entry twice
  EXPECT_FALSE(byte_level_bpe_from_parts(c.vocab, c.merges).has_value());
  SmallBpe d = small_bpe();
  d.vocab.emplace_back("zzz", 3);  // an id taken twice
  EXPECT_FALSE(byte_level_bpe_from_parts(d.vocab, d.merges).has_value());
}

// =========================================================================================================
// GPT-2 with the real vocabulary and merges

TEST(BpeGpt2, PublishedReference) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = gpt2();
  EXPECT_EQ(t.vocab_size(), 50257);
  const auto hello = encode_ok(t, "Hello world");
  EXPECT_EQ(ids_of(hello), (std::vector<int>{15496, 995}));
  EXPECT_EQ(texts_of(hello), (std::vector<std::string>{"Hello", "Ġworld"}));
  EXPECT_EQ(spans_of(hello), (std::vector<Span>{{0, 5}, {5, 11}}));
  EXPECT_EQ(encode_ids(t, "Hello World!, how are you?"), (std::vector<int>{15496, 2159, 28265, 703, 389, 345, 30}));
  EXPECT_EQ(t.display(995), " world");
  EXPECT_EQ(t.specials().eos, 50256);
  EXPECT_EQ(t.specials().bos, 50256);
  EXPECT_EQ(t.specials().unk, 50256);
}

// pytorch/text, test/torchtext_unittest/test_transforms.py, TestGPT2BPETokenizer._gpt2_bpe_tokenizer and
// _gpt2_bpe_tokenizer_with_added_vocab (the row without added tokens), same vocabulary and merges.
TEST(BpeGpt2, TorchtextReferenceCases) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = gpt2();
  const auto accents = encode_ok(t, "H\xC3\xA9ll\xC3\xB3  Wo\xC5\x95l\xE1\xB8\x8A\xC2\xBF");
  EXPECT_EQ(ids_of(accents), (std::vector<int>{39, 2634, 297, 10205, 220, 22173, 129, 243, 75, 41585, 232, 126, 123}));
  EXPECT_EQ(texts_of(accents),
            (std::vector<std::string>{"H", "Ã©", "ll", "Ã³", "Ġ", "ĠWo", "Å", "ķ", "l", "á¸", "Ĭ", "Â", "¿"}));
  EXPECT_EQ(encode_ids(t, "Respublica superiorem"), (std::vector<int>{4965, 11377, 64, 2208, 72, 29625}));
  EXPECT_EQ(encode_ids(t,
                       "Avdija Vr\xC5\xA1"
                       "aj"
                       "evi\xC4\x87 \xC3\xAEn"),
            (std::vector<int>{7355, 67, 34655, 569, 81, 32790, 1228, 1990, 72, 38325, 6184, 106, 77}));
  EXPECT_EQ(encode_ids(t, "multi      space"), (std::vector<int>{41684, 220, 220, 220, 220, 220, 2272}));
  EXPECT_EQ(encode_ids(t,
                       "Respublica Vr\xC5\xA1"
                       "aj"
                       "evi\xC4\x87 \xC3\xAEn"),
            (std::vector<int>{4965, 11377, 64, 569, 81, 32790, 1228, 1990, 72, 38325, 6184, 106, 77}));
  // _gpt2_bpe_decoder, per token: whole characters read back; a token holding part of one ("Å" is the
  // first byte of "ŕ") shows U+FFFD.
  EXPECT_EQ(t.display(2634), "\xC3\xA9");  // "Ã©" -> "é"
  EXPECT_EQ(t.display(22173), " Wo");
  EXPECT_EQ(t.display(129), "\xEF\xBF\xBD");
}

// Ids checked with an independent Python transcription of OpenAI's encoder.py (the `regex` module and
// the same files); spans worked out by hand.
TEST(BpeGpt2, SpacesNewlinesAndContractions) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = gpt2();
  EXPECT_EQ(encode_ids(t, "don't"), (std::vector<int>{9099, 470}));
  EXPECT_EQ(encode_ids(t, "I'll we've they're she'd 's"),
            (std::vector<int>{40, 1183, 356, 1053, 484, 821, 673, 1549, 705, 82}));
  EXPECT_EQ(encode_ids(t, "Don'T 'S"), (std::vector<int>{3987, 6, 51, 705, 50}));
  const auto spaced = encode_ok(t, "a  b\n\n c");
  EXPECT_EQ(ids_of(spaced), (std::vector<int>{64, 220, 275, 628, 269}));
  EXPECT_EQ(spans_of(spaced), (std::vector<Span>{{0, 1}, {1, 2}, {2, 4}, {4, 6}, {6, 8}}));
  EXPECT_EQ(encode_ids(t, "x   \n\n   y"), (std::vector<int>{87, 220, 220, 220, 628, 220, 220, 331}));
  EXPECT_EQ(encode_ids(t, "\n\nHello"), (std::vector<int>{198, 198, 15496}));
  EXPECT_EQ(encode_ids(t, "tabs\tand\xC2\xA0nbsp"), (std::vector<int>{8658, 82, 197, 392, 1849, 77, 24145}));
  EXPECT_EQ(encode_ids(t, "123 4567.89"), (std::vector<int>{10163, 4153, 3134, 13, 4531}));
  EXPECT_EQ(encode_ids(t, "  leading"), (std::vector<int>{220, 3756}));
  EXPECT_EQ(encode_ids(t, "trailing  "), (std::vector<int>{9535, 4386, 220, 220}));
  EXPECT_EQ(encode_ids(t, "   "), (std::vector<int>{220, 220, 220}));
  EXPECT_TRUE(encode_ok(t, "").empty());
  EXPECT_EQ(encode_ids(t, "e\xCC\x81 combining"), (std::vector<int>{68, 136, 223, 19771}));
  EXPECT_EQ(encode_ids(t, "The quick brown fox jumps over the lazy dog. "),
            (std::vector<int>{464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13, 220}));
}

TEST(BpeGpt2, EmojiSplitInsideACharacterSpanTheWholeCharacter) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = gpt2();
  // 😀 = F0 9F 98 80, then " emoji", then " " + 👍 (F0 9F 91 8D) + 🏽 (F0 9F 8F BD).
  const auto tokens = encode_ok(t, "\xF0\x9F\x98\x80 emoji \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD");
  EXPECT_EQ(ids_of(tokens), (std::vector<int>{47249, 222, 44805, 50169, 235, 8582, 237, 121}));
  EXPECT_EQ(spans_of(tokens),
            (std::vector<Span>{{0, 4}, {0, 4}, {4, 10}, {10, 15}, {11, 15}, {15, 19}, {15, 19}, {15, 19}}));
  EXPECT_EQ(t.display(47249), "\xEF\xBF\xBD");  // three bytes of a four-byte character
  EXPECT_EQ(t.display(44805), " emoji");
  // Japanese text falls apart into bytes the same way and still decodes back.
  const std::string japanese =
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88";
  EXPECT_EQ(encode_ids(t, japanese), (std::vector<int>{33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302}));
}

TEST(BpeGpt2, EndOfTextInTheTextIsOneToken) {
  REQUIRE_REFERENCE_FILES();
  const auto tokens = encode_ok(gpt2(), "a<|endoftext|>b");
  EXPECT_EQ(ids_of(tokens), (std::vector<int>{64, 50256, 65}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 1}, {1, 14}, {14, 15}}));
}

TEST(BpeGpt2, TokensDecodeBackToTheInput) {
  REQUIRE_REFERENCE_FILES();
  const Tokenizer& t = gpt2();
  const std::string text =
      "It's 3.14\xE2\x80\xA6 \xE2\x80\x94 na\xC3\xAFve caf\xC3\xA9s, \xE4\xB8\xAD\xE6\x96\x87 & "
      "\xF0\x9F\x98\x80!\n\n\tEnd  ";
  const auto tokens = encode_ok(t, text);
  std::string bytes;
  for (const Token& tok : tokens) bytes += tok.text;
  // Each token's text is the byte-level spelling of the bytes it covers, so the spelled input matches.
  EXPECT_EQ(bytes, byte_level(text));
  // Spans are in order, within the text, and on character boundaries.
  std::int32_t last = 0;
  for (const Token& tok : tokens) {
    EXPECT_GE(tok.span.begin, 0);
    EXPECT_LE(tok.span.end, static_cast<std::int32_t>(text.size()));
    EXPECT_LE(tok.span.begin, tok.span.end);
    EXPECT_GE(tok.span.end, last);
    last = tok.span.end;
    EXPECT_NE(static_cast<unsigned char>(text[static_cast<std::size_t>(tok.span.begin)]) & 0xC0, 0x80);
  }
  EXPECT_EQ(last, static_cast<std::int32_t>(text.size()));
}

// =========================================================================================================
// Files: tokenizer.json, folders, errors

TEST(TokenizerLoad, WordPieceTokenizerJson) {
  TempDir dir;
  nlohmann::json j;
  j["version"] = "1.0";
  j["added_tokens"] = nlohmann::json::array({{{"id", 0},
                                              {"content", "[PAD]"},
                                              {"single_word", false},
                                              {"lstrip", false},
                                              {"rstrip", false},
                                              {"normalized", false},
                                              {"special", true}},
                                             {{"id", 1},
                                              {"content", "[UNK]"},
                                              {"single_word", false},
                                              {"lstrip", false},
                                              {"rstrip", false},
                                              {"normalized", false},
                                              {"special", true}},
                                             {{"id", 2},
                                              {"content", "[CLS]"},
                                              {"single_word", false},
                                              {"lstrip", false},
                                              {"rstrip", false},
                                              {"normalized", false},
                                              {"special", true}},
                                             {{"id", 3},
                                              {"content", "[SEP]"},
                                              {"single_word", false},
                                              {"lstrip", false},
                                              {"rstrip", false},
                                              {"normalized", false},
                                              {"special", true}},
                                             {{"id", 7},
                                              {"content", "<new>"},
                                              {"single_word", false},
                                              {"lstrip", true},
                                              {"rstrip", false},
                                              {"normalized", false},
                                              {"special", false}}});
  j["normalizer"] = {{"type", "BertNormalizer"},
                     {"clean_text", true},
                     {"handle_chinese_chars", true},
                     {"strip_accents", nullptr},
                     {"lowercase", false}};
  j["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  j["post_processor"] = nullptr;
  j["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
  j["model"] = {{"type", "WordPiece"},
                {"unk_token", "[UNK]"},
                {"continuing_subword_prefix", "##"},
                {"max_input_chars_per_word", 100},
                {"vocab", {{"[PAD]", 0}, {"[UNK]", 1}, {"[CLS]", 2}, {"[SEP]", 3}, {"Caf", 4}, {"##é", 5}, {"!", 6}}}};
  const auto t = load_tokenizer_json(dir.write("tokenizer.json", j.dump()));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ((*t)->kind(), TokenizerKind::WordPiece);
  EXPECT_EQ((*t)->vocab_size(), 8);
  // Cased, and strip_accents follows lowercase (false): "Café" keeps its accent.
  const auto tokens = encode_ok(**t, "[CLS] Caf\xC3\xA9! <new>caf");
  EXPECT_EQ(ids_of(tokens), (std::vector<int>{2, 4, 5, 6, 7, 1}));
  EXPECT_EQ(spans_of(tokens), (std::vector<Span>{{0, 5}, {6, 9}, {9, 11}, {11, 12}, {12, 18}, {18, 21}}));

  // The same through the folder loader.
  const auto d = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(d.has_value()) << d.error().message();
  EXPECT_EQ(encode_ids(**d, "Caf\xC3\xA9"), (std::vector<int>{4, 5}));
}

TEST(TokenizerLoad, ByteLevelBpeTokenizerJsonWithBothMergeSpellings) {
  TempDir dir;
  const SmallBpe b = small_bpe();
  nlohmann::json vocab = nlohmann::json::object();
  for (const auto& [token, id] : b.vocab) vocab[token] = id;
  nlohmann::json merges = nlohmann::json::array();
  for (std::size_t k = 0; k < b.merges.size(); ++k) {
    if (k % 2 == 0) {
      merges.push_back(b.merges[k].first + " " + b.merges[k].second);
    } else {
      merges.push_back({b.merges[k].first, b.merges[k].second});
    }
  }
  nlohmann::json j;
  j["added_tokens"] = nlohmann::json::array({{{"id", 300},
                                              {"content", "<|endoftext|>"},
                                              {"single_word", false},
                                              {"lstrip", false},
                                              {"rstrip", false},
                                              {"normalized", true},
                                              {"special", true}}});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", ""},
                {"end_of_word_suffix", ""},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"vocab", vocab},
                {"merges", merges}};
  const auto t = load_tokenizer_json(dir.write("tokenizer.json", j.dump()));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ((*t)->kind(), TokenizerKind::ByteLevelBpe);
  EXPECT_EQ(encode_ids(**t, "abc the<|endoftext|>aaa"), (std::vector<int>{263, 261, 300, 258, 'a'}));

  j["pre_tokenizer"]["add_prefix_space"] = true;
  const auto p = load_tokenizer_json(dir.write("prefixed.json", j.dump()));
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(encode_ids(**p, "the"), (std::vector<int>{261}));
}

TEST(TokenizerLoad, Gpt2AsTokenizerJsonMatchesVocabAndMerges) {
  REQUIRE_REFERENCE_FILES();
  TempDir dir;
  std::ifstream vocab_in(reference_dir() / "gpt2_bpe_encoder.json");
  nlohmann::json vocab = nlohmann::json::parse(vocab_in);
  std::ifstream merges_in(reference_dir() / "gpt2_bpe_vocab.bpe");
  nlohmann::json merges = nlohmann::json::array();
  std::string line;
  while (std::getline(merges_in, line)) {
    if (!line.empty() && !line.starts_with("#version")) merges.push_back(line);
  }
  nlohmann::json j;
  j["added_tokens"] = nlohmann::json::array({{{"id", 50256},
                                              {"content", "<|endoftext|>"},
                                              {"single_word", false},
                                              {"lstrip", false},
                                              {"rstrip", false},
                                              {"normalized", true},
                                              {"special", true}}});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}};
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
  const auto t = load_tokenizer_json(dir.write("tokenizer.json", j.dump()));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const std::string text = "Hello World!, how are you? It's 2024\xE2\x80\x94na\xC3\xAFve   spaces\n\n<|endoftext|>";
  EXPECT_EQ(encode_ids(**t, text), encode_ids(gpt2(), text));
  EXPECT_EQ(encode_ids(**t, "Hello world"), (std::vector<int>{15496, 995}));
}

TEST(TokenizerLoad, FolderWithVocabTxtHonoursDoLowerCase) {
  TempDir dir;
  dir.write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nHello\nhello\n");
  dir.write("tokenizer_config.json", R"({"do_lower_case": false, "model_max_length": 512})");
  const auto cased = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(cased.has_value()) << cased.error().message();
  EXPECT_EQ(encode_ids(**cased, "Hello hello"), (std::vector<int>{4, 5}));
  dir.write("tokenizer_config.json", R"({"do_lower_case": true})");
  const auto lower = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(lower.has_value());
  EXPECT_EQ(encode_ids(**lower, "Hello hello"), (std::vector<int>{5, 5}));
  fs::remove(dir.path() / "tokenizer_config.json");  // BertTokenizer's default: lower case
  const auto fallback = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(fallback.has_value());
  EXPECT_EQ(encode_ids(**fallback, "HELLO"), (std::vector<int>{5}));
}

TEST(TokenizerLoad, FolderWithVocabJsonAndMerges) {
  REQUIRE_REFERENCE_FILES();
  TempDir dir;
  fs::copy_file(reference_dir() / "gpt2_bpe_encoder.json", dir.path() / "vocab.json");
  const auto missing = load_tokenizer_dir(dir.path());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(fs::path(missing.error().file).filename(), "merges.txt");
  fs::copy_file(reference_dir() / "gpt2_bpe_vocab.bpe", dir.path() / "merges.txt");
  const auto t = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(encode_ids(**t, "Hello world"), (std::vector<int>{15496, 995}));
}

TEST(TokenizerLoad, ErrorsNameTheFileAndWhere) {
  TempDir dir;
  const fs::path vocab = dir.write("vocab.json", R"({"a": 0, "b": 1, "ab": 2, "c": 3})");
  // A malformed merges line: its line number.
  const fs::path bad_line = dir.write("merges.txt", "#version: 0.2\na b\nab  c\n");
  auto t = load_byte_level_bpe(vocab, bad_line);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().line, 3);
  EXPECT_EQ(fs::path(t.error().file).filename(), "merges.txt");
  EXPECT_NE(t.error().message().find("merges.txt:3: "), std::string::npos) << t.error().message();
  // A merge whose result is not in the vocabulary: its line too.
  t = load_byte_level_bpe(vocab, dir.write("merges2.txt", "#version: 0.2\na b\nb c\n"));
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().line, 3);
  EXPECT_EQ(fs::path(t.error().file).filename(), "merges2.txt");
  // Missing files are named.
  t = load_byte_level_bpe(dir.path() / "nope.json", bad_line);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(fs::path(t.error().file).filename(), "nope.json");
  // vocab.json that is not JSON, or not an object of ids.
  t = load_byte_level_bpe(dir.write("broken.json", R"({"a": 0, "b" 1})"), dir.write("m.txt", ""));
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(fs::path(t.error().file).filename(), "broken.json");
  EXPECT_GT(t.error().offset, 0);
  t = load_byte_level_bpe(dir.write("list.json", R"(["a", "b"])"), dir.write("m.txt", ""));
  ASSERT_FALSE(t.has_value());
  t = load_byte_level_bpe(dir.write("str.json", R"({"a": "0"})"), dir.write("m.txt", ""));
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().reason.find("\"a\""), std::string::npos) << t.error().reason;
  // tokenizer.json: bad JSON (with an offset), unknown model, unsupported pieces.
  auto j = load_tokenizer_json(dir.write("tokenizer.json", R"({"model": {"type": "WordPiece",)"));
  ASSERT_FALSE(j.has_value());
  EXPECT_GT(j.error().offset, 0);
  j = load_tokenizer_json(dir.write("tokenizer.json", R"({"model": {"type": "Unigram", "vocab": []}})"));
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().reason.find("Unigram"), std::string::npos);
  j = load_tokenizer_json(dir.write("tokenizer.json",
                                    R"({"normalizer": null, "pre_tokenizer": {"type": "ByteLevel"},
                                        "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}})"));
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().reason.find("model.merges[0]"), std::string::npos) << j.error().reason;
  j = load_tokenizer_json(dir.write("tokenizer.json",
                                    R"({"normalizer": null, "pre_tokenizer": {"type": "BertPreTokenizer"},
                                        "model": {"type": "WordPiece", "vocab": {"a": 0, "b": 0, "[UNK]": 2}}})"));
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().reason.find("both have id 0"), std::string::npos) << j.error().reason;
  // An empty folder.
  const fs::path empty = dir.path() / "empty";
  fs::create_directories(empty);
  const auto none = load_tokenizer_dir(empty);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().file, empty.string());
  EXPECT_FALSE(load_tokenizer_dir(dir.path() / "absent").has_value());
}

// =========================================================================================================
// Threads: encode is const and may run concurrently (the BPE cache is shared).

TEST(TokenizerThreads, ConcurrentEncodeGivesTheSameTokens) {
  REQUIRE_REFERENCE_FILES();
  std::string text;
  for (int i = 0; i < 40; ++i) {
    text += "Sentence number " + std::to_string(i) + " says: the quick brown fox jumps over the lazy dog's back, " +
            "na\xC3\xAFvely caf\xC3\xA9-hopping \xF0\x9F\x98\x80 #" + std::to_string(i * 7919) + "!\n";
  }
  for (const Tokenizer* t : {&gpt2(), &bert_uncased()}) {
    const auto expected = encode_ok(*t, text);
    ASSERT_FALSE(expected.empty());
    std::vector<int> same(2, 1);  // not vector<bool>: its bits share words
    std::vector<std::thread> threads;
    for (int k = 0; k < 2; ++k) {
      threads.emplace_back([&, k] {
        for (int round = 0; round < 30; ++round) {
          // Different prefixes give different words, so both threads keep filling the cache.
          const auto tokens = t->encode(text);
          if (!tokens || *tokens != expected) same[static_cast<std::size_t>(k)] = 0;
          const auto other = t->encode("word" + std::to_string(k * 1000 + round) + " " + std::to_string(round));
          if (!other) same[static_cast<std::size_t>(k)] = 0;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(same[0], 1);
    EXPECT_EQ(same[1], 1);
  }
}

}  // namespace
}  // namespace attn::text
