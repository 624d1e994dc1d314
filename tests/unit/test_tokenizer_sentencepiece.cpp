// SentencePiece tokenizer.model files (llama2.c's tok512.model) through libsentencepiece, and the tokenizer.json
// loader's refusals, tokenizer_config.json's add_bos_token / add_eos_token, decode and display.
#include "attn/text/tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <tuple>

// A namespace of its own: the unity build compiles this file with the other tokenizer tests.
namespace attn::text::sentencepiece_tests {
namespace {

namespace fs = std::filesystem;

fs::path data_dir() { return fs::path(ATTN_TEST_DATA_DIR) / "tokenizers"; }

std::vector<int> ids_of(const std::vector<Token>& tokens) {
  std::vector<int> ids;
  for (const Token& t : tokens) ids.push_back(t.id);
  return ids;
}

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("attn_tok_sp_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return path_ / name;
  }

 private:
  fs::path path_;
};

const Tokenizer& tok512() {
  static const std::unique_ptr<Tokenizer> t = [] {
    auto loaded = load_sentencepiece(data_dir() / "tok512.model");
    return loaded ? std::move(*loaded) : nullptr;
  }();
  return *t;
}

// llama2.c's export of the same vocabulary (tok512.bin): "▁" written as a space, <s> and </s> as "\n<s>\n".
std::vector<std::string> tok512_bin() {
  std::ifstream in(data_dir() / "tok512.bin", std::ios::binary);
  std::vector<std::string> pieces;
  std::int32_t longest = 0;
  in.read(reinterpret_cast<char*>(&longest), 4);
  float score = 0;
  std::int32_t length = 0;
  while (in.read(reinterpret_cast<char*>(&score), 4) && in.read(reinterpret_cast<char*>(&length), 4)) {
    std::string piece(static_cast<std::size_t>(length), '\0');
    in.read(piece.data(), length);
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

TEST(SentencePiece, Tok512LoadsWithItsSpecialIds) {
  auto loaded = load_sentencepiece(data_dir() / "tok512.model");
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  const Tokenizer& t = **loaded;
  EXPECT_EQ(t.kind(), TokenizerKind::SentencePiece);
  EXPECT_EQ(t.vocab_size(), 512);
  EXPECT_EQ(t.specials().unk, 0);
  EXPECT_EQ(t.specials().bos, 1);
  EXPECT_EQ(t.specials().eos, 2);
  EXPECT_EQ(t.id("\xE2\x96\x81Once"), 403);
  EXPECT_EQ(t.id("<unk>"), 0);
  EXPECT_FALSE(t.id("no such piece").has_value());  // libsentencepiece would answer the unknown id
  EXPECT_EQ(t.token(512), "");
}

TEST(SentencePiece, EveryPieceIsTheOneLlama2cExported) {
  const std::vector<std::string> exported = tok512_bin();
  ASSERT_EQ(exported.size(), 512U);
  for (int id = 0; id < 512; ++id) {
    std::string piece(tok512().token(id));
    for (auto at = piece.find("\xE2\x96\x81"); at != std::string::npos; at = piece.find("\xE2\x96\x81")) {
      piece.replace(at, 3, " ");
    }
    if (id == 1 || id == 2) piece = "\n" + piece + "\n";
    EXPECT_EQ(piece, exported[static_cast<std::size_t>(id)]) << "id " << id;
  }
}

// Ids checked by hand: each piece spells its part of the text ("▁Once" is id 403 in tok512.bin too).
TEST(SentencePiece, OnceUponATimeWithSpansAndBos) {
  const auto tokens = tok512().encode("Once upon a time");
  ASSERT_TRUE(tokens.has_value()) << tokens.error().message();
  EXPECT_EQ(ids_of(*tokens), (std::vector<int>{403, 407, 261, 378}));
  EXPECT_EQ((*tokens)[1].text, "\xE2\x96\x81upon");
  EXPECT_EQ((*tokens)[0].span, (Span{0, 4}));
  EXPECT_EQ((*tokens)[1].span, (Span{4, 9}));  // " upon": the space belongs to the piece after it
  EXPECT_EQ((*tokens)[3].span, (Span{11, 16}));
  EXPECT_EQ(tok512().decode(ids_of(*tokens)), "Once upon a time");
  std::string shown;
  for (const Token& t : *tokens) shown += tok512().display(t.id);
  EXPECT_EQ(shown, " Once upon a time");

  const auto model = tok512().encode_for_model("Once upon a time");
  ASSERT_TRUE(model.has_value());
  EXPECT_EQ(ids_of(model->tokens), (std::vector<int>{1, 403, 407, 261, 378}));
  EXPECT_EQ(model->special, (std::vector<bool>{true, false, false, false, false}));
  EXPECT_EQ(tok512().decode(ids_of(model->tokens)), "Once upon a time");
  EXPECT_EQ(tok512().decode(ids_of(model->tokens), false), "<s>Once upon a time");
}

TEST(SentencePiece, ByteFallbackPiecesSpanTheirCharacterAndDecodeBack) {
  const std::string text = "Lily!\n\xE6\x97\xA5";  // "日" is not a piece: its three bytes are
  const auto tokens = tok512().encode(text);
  ASSERT_TRUE(tokens.has_value());
  EXPECT_EQ(ids_of(*tokens), (std::vector<int>{317, 443, 13, 233, 154, 168}));
  for (std::size_t k = 3; k < 6; ++k) EXPECT_EQ((*tokens)[k].span, (Span{6, 9})) << k;
  EXPECT_EQ((*tokens)[2].span, (Span{5, 6}));
  EXPECT_EQ(tok512().decode(ids_of(*tokens)), text);
  EXPECT_EQ(tok512().display(13), "\n");
  EXPECT_EQ(tok512().display(233), "<0xE6>");  // one byte of a longer character stays readable
  EXPECT_EQ(tok512().display(317), " Lily");
}

TEST(SentencePiece, FolderWithTokenizerModelAndItsConfig) {
  TempDir dir;
  fs::copy_file(data_dir() / "tok512.model", dir.path() / "tokenizer.model");
  auto t = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ((*t)->kind(), TokenizerKind::SentencePiece);
  EXPECT_EQ(ids_of((*t)->encode_for_model("a time")->tokens), (std::vector<int>{1, 261, 378}));
  dir.write("tokenizer_config.json", R"({"add_bos_token": false, "add_eos_token": true})");
  t = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(ids_of((*t)->encode_for_model("a time")->tokens), (std::vector<int>{261, 378, 2}));
}

TEST(SentencePiece, NotAModelIsRefusedWithTheFile) {
  TempDir dir;
  const auto t = load_sentencepiece(dir.write("tokenizer.model", "not a protobuf at all, just text"));
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().kind, ErrorKind::Malformed);
  EXPECT_NE(t.error().message().find("tokenizer.model"), std::string::npos) << t.error().message();
  EXPECT_FALSE(load_sentencepiece(dir.path() / "absent.model").has_value());
}

// tokenizer.model files written by tools/bad/make_bad_corpus.py (tokenizer_model_cases): a valid map of three
// keys, and maps that drove libsentencepiece 0.1.97 out of bounds, each refused with its figure and limit.
fs::path crafted(const std::string& name) { return fs::path(ATTN_TEST_DATA_DIR) / "bad" / "tokenizer-models" / name; }

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(SentencePieceCharsmap, ACheckedMapNormalizesAsLibsentencepieceReadsIt) {
  const auto t = load_sentencepiece(crafted("charsmap-small.model"));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const std::string text = "\uff21 \ufb01\u2460";  // fullwidth A, the fi ligature, circled 1
  const auto tokens = (*t)->encode(text);
  ASSERT_TRUE(tokens.has_value()) << tokens.error().message();
  std::string normalized;
  for (const Token& token : *tokens) normalized += token.text;
  EXPECT_EQ(normalized,
            "\xE2\x96\x81"
            "A\xE2\x96\x81"
            "fi1");
  EXPECT_EQ((*t)->decode(ids_of(*tokens)), "A fi1");
  EXPECT_EQ(tokens->back().text, "1");
  EXPECT_EQ(tokens->back().span, (Span{7, 10}));  // the three bytes of U+2460
}

TEST(SentencePieceCharsmap, CraftedMapsAreRefusedWithTheFieldTheFigureAndTheLimit) {
  struct Case {
    const char* file;
    ErrorKind kind;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"charsmap-children-past-trie.model", ErrorKind::Malformed,
       "normalizer_spec.precompiled_charsmap: unit 0 of the trie puts its children at units 1,073,741,568 to "
       "1,073,741,823, past the trie's 2,560 units"},
      {"charsmap-value-past-table.model", ErrorKind::Malformed,
       "points to byte 2,147,483,632 of the 7-byte string table after the trie, past its end"},
      {"charsmap-no-nul.model", ErrorKind::Malformed, "has no NUL before the table ends"},
      {"charsmap-cycle.model", ErrorKind::Malformed, "is reached again from its own key (a cycle)"},
      {"charsmap-33-matches.model", ErrorKind::TooLarge,
       "33 prefix matches or more, over libsentencepiece's limit of 32"},
      {"charsmap-trie-size-past-blob.model", ErrorKind::Truncated,
       "normalizer_spec.precompiled_charsmap: its trie is 10,250 bytes but only 10,247 bytes follow its size"},
      {"charsmap-expansion.model", ErrorKind::TooLarge,
       "is 4,000 bytes for a key of 1 byte, over the limit of 16 times its key"},
      {"charsmap-not-utf8.model", ErrorKind::Encoding, "is not UTF-8"},
      {"denormalizer-children-past-trie.model", ErrorKind::Malformed,
       "denormalizer_spec.precompiled_charsmap: unit 0 of the trie puts its children"},
      {"self-test-bad-map.model", ErrorKind::Malformed, "normalizer_spec.precompiled_charsmap: unit 0 of the trie"},
      {"protobuf-cut.model", ErrorKind::Malformed, "is not a SentencePiece model: its protobuf encoding breaks"},
  };
  for (const Case& c : cases) {
    const auto t = load_sentencepiece(crafted(c.file));
    ASSERT_FALSE(t.has_value()) << c.file;
    EXPECT_EQ(t.error().kind, c.kind) << t.error().message();
    EXPECT_NE(t.error().reason.find(c.says), std::string::npos) << t.error().message();
    EXPECT_EQ(t.error().file, crafted(c.file).string());
    EXPECT_GE(t.error().offset, 0) << t.error().message();
  }
  // The byte is that of the unit: the root's, whose offset sends its children 2^30 units out.
  const auto root = load_sentencepiece(crafted("charsmap-children-past-trie.model"));
  ASSERT_FALSE(root.has_value());
  const std::string bytes = slurp(crafted("charsmap-children-past-trie.model"));
  ASSERT_LT(root.error().offset + 4, static_cast<std::int64_t>(bytes.size()));
  EXPECT_EQ(bytes.substr(static_cast<std::size_t>(root.error().offset), 4), std::string("\x00\xFE\xFF\xFF", 4));
}

// Found by fuzz_tokenizer_model: a piece holding a NUL loads, but libsentencepiece cannot look it up again
// (PieceToId answers the unknown token's id). Pieces are checked like a tokenizer.json vocabulary.
TEST(SentencePieceCharsmap, APieceThatIsNotUtf8OrHoldsANulIsRefused) {
  std::string bytes = slurp(crafted("charsmap-small.model"));
  // The first piece, "<unk>": field 1 (a piece) of ModelProto, then its field 1 (the text), 5 bytes.
  const std::size_t at = bytes.find("<unk>");
  ASSERT_NE(at, std::string::npos);
  for (const auto& [replacement, kind, says] :
       {std::tuple{std::string("<u\0k>", 5), ErrorKind::Malformed, "pieces[0] holds a NUL byte"},
        std::tuple{std::string("<u\xFFk>"), ErrorKind::Encoding, "pieces[0] is not UTF-8"}}) {
    std::string changed = bytes;
    changed.replace(at, 5, replacement);
    const auto t = parse_sentencepiece(changed, "tokenizer.model");
    ASSERT_FALSE(t.has_value()) << says;
    EXPECT_EQ(t.error().kind, kind);
    EXPECT_EQ(t.error().reason, says);
    EXPECT_EQ(t.error().offset, static_cast<std::int64_t>(at));
  }
}

// libsentencepiece normalizes a whole text at once, about 20 bytes per normalized byte: refused before that
// passes the budget (3 normalized bytes per input byte without a map: a space becomes "▁").
TEST(SentencePieceCharsmap, ATextWhoseNormalizedFormPassesTheBudgetIsRefused) {
  const std::string text(22'369'621, 'a');
  const auto tokens = tok512().encode(text);
  ASSERT_FALSE(tokens.has_value());
  EXPECT_EQ(tokens.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(tokens.error().reason,
            "normalizer_spec: the text's 22,369,621 bytes could become 67,108,866 normalized bytes (up to 3 per "
            "byte under this model), over the limit of 67,108,864");
  EXPECT_NE(tokens.error().file.find("tok512.model"), std::string::npos);
  EXPECT_TRUE(tok512().encode(std::string(4096, 'a')).has_value());
}

// =========================================================================================================
// tokenizer.json: refusals by name, with the JSON path and the byte

std::string minimal_json(const std::string& extra) {
  return R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "<unk>": 1}, "unk_token": "<unk>"})" + extra + "}";
}

TEST(TokenizerJson, UnsupportedComponentsAreRefusedByName) {
  struct Case {
    std::string extra, reason;
  };
  const std::vector<Case> cases = {
      {R"(, "pre_tokenizer": {"type": "UnicodeScripts"})", "pre_tokenizer type UnicodeScripts is not supported"},
      {R"(, "normalizer": {"type": "Precompiled", "precompiled_charsmap": ""})",
       "normalizer type Precompiled is not supported"},
      {R"(, "post_processor": {"type": "Fancy"})", "post_processor type Fancy is not supported"},
      {R"(, "decoder": {"type": "CTC"})", "decoder type CTC is not supported"},
      {R"(, "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Nmt"}]})",
       "normalizer.normalizers[1] type Nmt is not supported"},
      {R"(, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "CharDelimiterSplit"}]})",
       "pre_tokenizer.pretokenizers[0] type CharDelimiterSplit is not supported"},
  };
  for (const Case& c : cases) {
    const std::string text = minimal_json(c.extra);
    const auto t = parse_tokenizer_json(text, "tokenizer.json");
    ASSERT_FALSE(t.has_value()) << c.extra;
    EXPECT_EQ(t.error().kind, ErrorKind::Unsupported);
    EXPECT_EQ(t.error().reason, c.reason);
    EXPECT_EQ(t.error().file, "tokenizer.json");
    // The byte is that of the type's name.
    const std::string type =
        c.reason.substr(c.reason.find(" type ") + 6, c.reason.find(" is not") - c.reason.find(" type ") - 6);
    EXPECT_EQ(t.error().offset, static_cast<std::int64_t>(text.find("\"" + type + "\""))) << t.error().message();
  }
  const auto model = parse_tokenizer_json(R"({"model": {"type": "Fsa", "vocab": {}}})", "tokenizer.json");
  ASSERT_FALSE(model.has_value());
  EXPECT_EQ(model.error().reason, "model type Fsa is not supported");
  EXPECT_EQ(model.error().offset, 19);  // the byte of "Fsa"
}

TEST(TokenizerJson, BadSplitRegexIsRefusedWithPcre2sMessageAndOffset) {
  const std::string text = minimal_json(
      R"(, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\p{L}+|(?<bad"}, "behavior": "Isolated", "invert": false})");
  const auto t = parse_tokenizer_json(text, "tokenizer.json");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().kind, ErrorKind::Malformed);
  EXPECT_NE(t.error().reason.find("pre_tokenizer.pattern: the regex \"\\p{L}+|(?<bad\" is refused by PCRE2 at byte"),
            std::string::npos)
      << t.error().reason;
  EXPECT_NE(t.error().reason.find("syntax error"), std::string::npos) << t.error().reason;   // PCRE2's own words
  EXPECT_EQ(t.error().offset, static_cast<std::int64_t>(text.find(R"("\\p{L}+|(?<bad")")));  // the pattern's string
  const auto behaviour = parse_tokenizer_json(
      minimal_json(R"(, "pre_tokenizer": {"type": "Split", "pattern": {"String": "x"}, "behavior": "Sideways"})"),
      "t.json");
  ASSERT_FALSE(behaviour.has_value());
  EXPECT_NE(behaviour.error().reason.find("Sideways"), std::string::npos);
}

TEST(TokenizerJson, WordLevelWithoutAWordIsUnknownAndDecodesWithSpaces) {
  const auto t = parse_tokenizer_json(minimal_json(R"(, "pre_tokenizer": {"type": "WhitespaceSplit"})"), "t.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ((*t)->kind(), TokenizerKind::WordLevel);
  const auto tokens = (*t)->encode("a  b a");
  ASSERT_TRUE(tokens.has_value());
  EXPECT_EQ(ids_of(*tokens), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ((*tokens)[1].span, (Span{3, 4}));
  EXPECT_EQ((*t)->decode(std::vector<int>{0, 1, 0, 7}), "a <unk> a");  // no decoder: joined by spaces; 7 left out
}

// tokenizer_config.json's add_bos_token / add_eos_token rewrite Llama's template, as LlamaTokenizerFast does.
TEST(TokenizerJson, AddBosAndEosTokenFromTheConfig) {
  TempDir dir;
  fs::copy_file(data_dir() / "golden" / "llama2_spm.json", dir.path() / "tokenizer.json");
  auto t = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ((*t)->kind(), TokenizerKind::Bpe);
  EXPECT_EQ(ids_of(*(*t)->encode("Hello")), (std::vector<int>{15043}));
  EXPECT_EQ(ids_of((*t)->encode_for_model("Hello")->tokens), (std::vector<int>{1, 15043}));
  dir.write("tokenizer_config.json", R"({"add_bos_token": true, "add_eos_token": true, "eos_token": "</s>"})");
  t = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const auto both = (*t)->encode_for_model("Hello", std::string_view("world"));
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(ids_of(both->tokens), (std::vector<int>{1, 15043, 2, 1, 3186, 2}));
  EXPECT_EQ(both->type_ids, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  dir.write("tokenizer_config.json", R"({"add_bos_token": false, "add_eos_token": false})");
  t = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(ids_of((*t)->encode_for_model("Hello")->tokens), (std::vector<int>{15043}));
  dir.write("tokenizer_config.json", R"({"add_bos_token": "yes"})");
  t = load_tokenizer_dir(dir.path());
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().reason.find("add_bos_token"), std::string::npos) << t.error().message();
}

// display() gives one token readably; decode() the whole text (Llama's decoder drops the first space).
TEST(TokenizerJson, Llama2DisplayAndDecode) {
  const auto t = load_tokenizer_json(data_dir() / "golden" / "llama2_spm.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  const auto tokens = (*t)->encode("Hello world\n\xE6\x97\xA5");
  ASSERT_TRUE(tokens.has_value());
  std::vector<std::string> shown;
  for (const Token& token : *tokens) shown.push_back((*t)->display(token.id));
  ASSERT_GE(shown.size(), 3U);
  EXPECT_EQ(shown[0], " Hello");
  EXPECT_EQ(shown[1], " world");
  EXPECT_EQ(shown[2], "\n");
  EXPECT_EQ((*t)->decode(ids_of(*tokens)), "Hello world\n\xE6\x97\xA5");
  EXPECT_EQ((*t)->display(1), "<s>");
}

// The existing tokenizers decode too: BERT joins "##" pieces, GPT-2 turns bytes back into text.
TEST(TokenizerDecode, WordPieceAndByteLevelBpe) {
  auto bert = load_wordpiece(data_dir() / "bert_base_uncased_vocab.txt");
  ASSERT_TRUE(bert.has_value());
  const auto b = (*bert)->encode_for_model("Hello, unaffable world!");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->tokens.front().id, 101);
  EXPECT_EQ(b->tokens.back().id, 102);
  EXPECT_EQ((*bert)->decode(ids_of(b->tokens)), "hello, unaffable world!");
  EXPECT_EQ((*bert)->decode(ids_of(b->tokens), false), "[CLS] hello, unaffable world! [SEP]");
  auto gpt2 = load_byte_level_bpe(data_dir() / "gpt2_bpe_encoder.json", data_dir() / "gpt2_bpe_vocab.bpe");
  ASSERT_TRUE(gpt2.has_value());
  const std::string text = "Caf\xC3\xA9  \xF0\x9F\x99\x82 <|endoftext|> x";
  const auto g = (*gpt2)->encode(text);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ((*gpt2)->decode(ids_of(*g), false), text);
  EXPECT_EQ((*gpt2)->decode(ids_of(*g)), "Caf\xC3\xA9  \xF0\x9F\x99\x82  x");
  EXPECT_EQ(ids_of((*gpt2)->encode_for_model("x")->tokens), ids_of(*(*gpt2)->encode("x")));  // GPT-2 adds nothing
}

// encode() is const and runs on several threads at once: the BPE cache is shared, PCRE2's match data is per thread.
TEST(TokenizerThreads, TokenizerJsonAndSentencePieceEncodeConcurrently) {
  auto qwen = load_tokenizer_json(data_dir() / "golden" / "qwen3.json");
  auto llama = load_tokenizer_json(data_dir() / "golden" / "llama2_spm.json");
  ASSERT_TRUE(qwen.has_value() && llama.has_value());
  std::string text;
  for (int i = 0; i < 30; ++i) {
    text += "Line " + std::to_string(i) +
            ": Hello world! I'm sure you'll see na\xC3\xAFve caf\xC3\xA9 \xF0\x9F\x99\x82 " + std::to_string(i * 7919) +
            "\n";
  }
  for (const Tokenizer* t : std::vector<const Tokenizer*>{qwen->get(), llama->get(), &tok512()}) {
    const auto expected = t->encode(text);
    ASSERT_TRUE(expected.has_value());
    std::vector<int> same(2, 1);
    std::vector<std::thread> threads;
    for (int k = 0; k < 2; ++k) {
      threads.emplace_back([&, k] {
        for (int round = 0; round < 20; ++round) {
          const auto tokens = t->encode(text);
          if (!tokens || *tokens != *expected) same[static_cast<std::size_t>(k)] = 0;
          if (!t->encode("word" + std::to_string(k * 1000 + round))) same[static_cast<std::size_t>(k)] = 0;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(same, (std::vector<int>{1, 1}));
  }
}

}  // namespace
}  // namespace attn::text::sentencepiece_tests
