// Subword tokenizers with byte offsets, as Hugging Face's tokenizers produce them:
//   - BERT: the basic tokenizer (clean text: drop NUL, U+FFFD and control characters, whitespace to
//     space; put spaces around CJK ideographs; optional lower case + accent strip (NFD, drop Mn); split
//     on whitespace and on punctuation, where punctuation is ASCII 33-47, 58-64, 91-96, 123-126 or any
//     Unicode P* category) followed by WordPiece (greedy longest match first, continuation pieces prefixed
//     "##", words longer than 100 characters become [UNK], a word with any unmatched remainder becomes
//     [UNK] as a whole);
//   - GPT-2: byte-level BPE (the bytes-to-unicode map, the pre-tokenisation pattern
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ , ranked merges);
//   - tokenizer.json in full (Llama 2/3, Qwen, SmolLM, Mistral; not the Precompiled normalizer): models BPE
//   (byte_fallback,
//     ignore_merges, continuing_subword_prefix, end_of_word_suffix, fuse_unk; dropout ignored), WordPiece,
//     WordLevel, Unigram (Viterbi over the pieces' scores); normalizers NFC, NFD, NFKC, NFKD, Lowercase,
//     StripAccents, Strip, Replace (string or regex), Prepend, BertNormalizer, Sequence; pre-tokenizers
//     ByteLevel, Split (PCRE2 patterns, every behaviour, invert), Metaspace, Whitespace, WhitespaceSplit,
//     Punctuation, Digits, BertPreTokenizer, Sequence; post-processors TemplateProcessing, BertProcessing,
//     RobertaProcessing, ByteLevel, Sequence; decoders ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace,
//     WordPiece, Sequence; added tokens with lstrip/rstrip/normalized/single_word. Checked token for token
//     (ids, offsets, decode) against the library itself (tests/data/tokenizers/golden);
//   - SentencePiece tokenizer.model files, run by libsentencepiece.
// Loaded from vocab.txt (WordPiece), vocab.json + merges.txt (BPE), tokenizer.json, or tokenizer.model.
// Offsets are byte spans into the UTF-8 input; special tokens added by `encode_for_model` get an empty
// span {0, 0}. Invalid UTF-8 input is an error naming the byte offset.
#pragma once

#include "attn/error.h"
#include "attn/trace.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::text {

struct Token {
  int id = 0;
  std::string text;  // the vocabulary entry ("##ing"; GPT-2's byte-level form "Ġworld")
  Span span;         // bytes of the input it came from
  friend bool operator==(const Token&, const Token&) = default;
};

// WordPiece: vocab.txt or a tokenizer.json WordPiece model; ByteLevelBpe: vocab.json + merges.txt or a
// tokenizer.json BPE model behind a ByteLevel pre-tokenizer (GPT-2, Qwen, SmolLM); Bpe: another tokenizer.json
// BPE (Llama-2's SentencePiece-style BPE with byte fallback); Unigram and WordLevel: tokenizer.json models of
// those names; SentencePiece: a tokenizer.model read by libsentencepiece.
enum class TokenizerKind { WordPiece, ByteLevelBpe, Bpe, Unigram, WordLevel, SentencePiece };

struct SpecialTokens {
  std::optional<int> unk, cls, sep, pad, mask, bos, eos;
};

// A vocabulary entry matched as a whole string in the input before the model runs (Hugging Face's
// added_tokens: [CLS], <|endoftext|>). lstrip/rstrip let the match take the white space on that side into
// its span; single_word refuses a match with a letter, digit or '_' right beside it.
struct AddedToken {
  std::string content;
  int id = 0;
  bool special = true;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  friend bool operator==(const AddedToken&, const AddedToken&) = default;
};

// The most characters WordPiece splits into pieces, whatever a file's max_input_chars_per_word says (BERT's is
// 100): a longer word is [UNK], as one past the file's own bound is. Greedy longest-match-first tries every
// split of a word, so a file's 10^9 would let one 20 kB word run for hours.
inline constexpr int kMaxWordChars = 1000;

struct WordPieceOptions {
  bool lower_case = true;
  std::optional<bool> strip_accents;  // unset: follows lower_case, as BERT's tokenizer does
  bool tokenize_chinese_chars = true;
  bool clean_text = true;  // drop NUL, U+FFFD and control characters (BertNormalizer's clean_text)
  std::string unk_token = "[UNK]";
  std::string continuation_prefix = "##";
  int max_input_chars_per_word = 100;
  // Unset: whichever of [UNK] [CLS] [SEP] [PAD] [MASK] the vocabulary has are matched in the text, as
  // Hugging Face's BertTokenizer does. Set: exactly these (empty: none, like torchtext's BERTTokenizer).
  std::optional<std::vector<AddedToken>> added_tokens;
};

struct ByteLevelBpeOptions {
  bool add_prefix_space = false;         // a space before text that does not start with one (RoBERTa-style)
  std::optional<std::string> unk_token;  // for bytes missing from the vocabulary (dropped when unset)
  // Unset: "<|endoftext|>" when the vocabulary has it, as GPT-2's tokenizer does. Set: exactly these.
  std::optional<std::vector<AddedToken>> added_tokens;
};

// What a model is given: the text's tokens with the special tokens its tokenizer adds around them.
struct Encoding {
  std::vector<Token> tokens;  // an added special token has the span {0, 0}; the pair's spans are into the pair
  std::vector<int> type_ids;  // segment of each token: 0 for the text, 1 for the pair (BERT-style templates)
  std::vector<bool> special;  // true for a token the post-processor added
  friend bool operator==(const Encoding&, const Encoding&) = default;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual TokenizerKind kind() const = 0;
  // The tokens of `text`, no special tokens added.
  virtual Result<std::vector<Token>> encode(std::string_view text) const = 0;
  // The tokens of `text` (and of `pair`, when given) with the special tokens the model expects, as Hugging
  // Face's encode(text, pair, add_special_tokens=True): tokenizer.json's post-processor (Llama: "<s> $A";
  // BERT: "[CLS] $A [SEP] $B [SEP]"; Qwen, GPT-2: none), changed by tokenizer_config.json's add_bos_token and
  // add_eos_token when the folder has them; a SentencePiece .model adds BOS. vocab.txt tokenizers add
  // [CLS]/[SEP], vocab.json + merges.txt ones nothing.
  virtual Result<Encoding> encode_for_model(std::string_view text,
                                            std::optional<std::string_view> pair = std::nullopt) const;
  // Ids back to text, as Hugging Face's decode(ids, skip_special_tokens): tokenizer.json's decoder (byte-level
  // bytes, "▁" to spaces, "<0x0A>" byte tokens assembled into UTF-8, "##" joined). Ids out of range are left
  // out; special tokens too when `skip_special`.
  virtual std::string decode(std::span<const int> ids, bool skip_special = true) const = 0;
  virtual int vocab_size() const = 0;
  // The vocabulary entry of `id` ("" when out of range) and the id of an entry.
  virtual std::string_view token(int id) const = 0;
  virtual std::optional<int> id(std::string_view token) const = 0;
  // Readable text of one token: "##ing" -> "ing", "Ġworld" -> " world" (bytes decoded), SentencePiece's
  // "▁the" -> " the", "<0x0A>" -> "\n" (a byte that is part of a longer character stays "<0xE6>").
  virtual std::string display(int id) const = 0;
  virtual const SpecialTokens& specials() const = 0;
};

// vocab.txt: one token per line, line i (0-based) is id i. The vocabulary must contain the unknown token.
Result<std::unique_ptr<Tokenizer>> load_wordpiece(const std::filesystem::path& vocab_txt,
                                                  const WordPieceOptions& options = {});
Result<std::unique_ptr<Tokenizer>> wordpiece_from_vocab(std::vector<std::string> vocab,
                                                        const WordPieceOptions& options = {});
// vocab.txt's text already in memory (tests, fuzzing); `name` stands for the file in errors.
Result<std::unique_ptr<Tokenizer>> parse_wordpiece(std::string_view vocab_txt, const std::string& name,
                                                   const WordPieceOptions& options = {});
// vocab.json ({token: id}) + merges.txt (optional "#version" line, then "a b" per line, rank = order).
Result<std::unique_ptr<Tokenizer>> load_byte_level_bpe(const std::filesystem::path& vocab_json,
                                                       const std::filesystem::path& merges_txt);
Result<std::unique_ptr<Tokenizer>> load_byte_level_bpe(const std::filesystem::path& vocab_json,
                                                       const std::filesystem::path& merges_txt,
                                                       const ByteLevelBpeOptions& options);
// The two files' text already in memory, through the same checks; the names stand for the files in errors.
Result<std::unique_ptr<Tokenizer>> parse_byte_level_bpe(std::string_view vocab_json, std::string_view merges_txt,
                                                        const std::string& vocab_name, const std::string& merges_name,
                                                        const ByteLevelBpeOptions& options = {});
// From parts already in memory: {token, id} pairs and merges in rank order. Both halves of every merge
// and their concatenation must be in the vocabulary; an error's `line` is the 1-based merge number.
Result<std::unique_ptr<Tokenizer>> byte_level_bpe_from_parts(std::vector<std::pair<std::string, int>> vocab,
                                                             std::vector<std::pair<std::string, std::string>> merges,
                                                             const ByteLevelBpeOptions& options = {});
// tokenizer.json in full (see the file's header); a component of a type the engine does not read is refused by
// name and JSON path ("pre_tokenizer type Foo is not supported"), with the byte of its type in the file.
Result<std::unique_ptr<Tokenizer>> load_tokenizer_json(const std::filesystem::path& tokenizer_json);
Result<std::unique_ptr<Tokenizer>> parse_tokenizer_json(std::string_view text, const std::string& name);
// tokenizer_config.json: how the slow tokenizers were configured (do_lower_case, tokenize_chinese_chars,
// strip_accents for vocab.txt; add_prefix_space for vocab.json + merges.txt). Other fields are ignored; one of
// these of the wrong type is an error naming its byte. `name` stands for the file in errors.
struct TokenizerConfig {
  WordPieceOptions wordpiece;
  ByteLevelBpeOptions bpe;
  // add_bos_token / add_eos_token, unset when the file does not say; bos_token / eos_token as strings or
  // {"content": ...} objects.
  std::optional<bool> add_bos, add_eos;
  std::optional<std::string> bos_token, eos_token;
};
Result<TokenizerConfig> parse_tokenizer_config(std::string_view text, const std::string& name);
// tokenizer.json with tokenizer_config.json's add_bos_token / add_eos_token applied (when set, they rewrite the
// post-processor as "BOS? $A EOS?", as transformers' LlamaTokenizerFast does).
Result<std::unique_ptr<Tokenizer>> load_tokenizer_json(const std::filesystem::path& tokenizer_json,
                                                       const TokenizerConfig& config);
// A SentencePiece model (tokenizer.model), read by libsentencepiece; offsets from its pieces' byte spans.
// `add_bos` / `add_eos`: what encode_for_model adds (Llama's tokenizers add BOS only).
Result<std::unique_ptr<Tokenizer>> load_sentencepiece(const std::filesystem::path& model, bool add_bos = true,
                                                      bool add_eos = false);
Result<std::unique_ptr<Tokenizer>> parse_sentencepiece(std::string_view model_bytes, const std::string& name,
                                                       bool add_bos = true, bool add_eos = false);
// A model folder: tokenizer.json if present, else tokenizer.model (SentencePiece), else vocab.txt, else
// vocab.json + merges.txt. tokenizer_config.json's do_lower_case is honoured for vocab.txt, and its
// add_bos_token / add_eos_token (when present) for tokenizer.json and tokenizer.model.
Result<std::unique_ptr<Tokenizer>> load_tokenizer_dir(const std::filesystem::path& folder);

}  // namespace attn::text
