// The parts of a Hugging Face tokenizer.json, as the library runs them: added tokens are cut out of the raw
// text, each remaining segment goes through the normalizer, the pre-tokenizer cuts it into pieces, the model
// turns each piece into vocabulary ids, and the post-processor adds the special tokens a model expects.
// The decoder turns tokens back into text. Every byte of text on its way keeps the input bytes it came from,
// so tokens get byte spans of the input however the text was rewritten (the library's NormalizedString).
#pragma once

#include "../core/try.h"
#include "attn/text/tokenizer.h"
#include "unicode.h"

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text::pipeline {

class Regex;

// The budget of what a normalizer or a decoder writes (and of SentencePiece's normalized text, estimated
// before libsentencepiece runs): at most kOutputFactor times its input plus kOutputExtra, for one text or
// token label, and kMaxOutputBytes in all. Real normalizers and decoders write about their input (NFKC's
// largest expansion is 11 times one character; a Replace or Prepend adds a few bytes), so the factor leaves
// room for every published tokenizer while a chain of Replace steps, each multiplying the text, is refused
// at the step that passes it; 64 MiB is about 20 million tokens, far past what a view can show.
inline constexpr std::int64_t kOutputFactor = 16;
inline constexpr std::int64_t kOutputExtra = 1024;
inline constexpr std::int64_t kMaxOutputBytes = std::int64_t{64} << 20;

// Text with, for each of its bytes, the bytes of the input it came from.
struct Piece {
  std::string text;
  std::vector<Span> from;  // one per byte of text

  void append(std::string_view bytes, Span source);  // every byte from `source`
  void append(char32_t c, Span source);
  // The input bytes of text[begin, end): from the first byte's start to the last byte's end, as the library's
  // offsets are; {0, 0} for an empty range.
  Span source(std::size_t begin, std::size_t end) const;
  Piece sub(std::size_t begin, std::size_t end) const;
  // Where the piece starts in the input (the library's offsets_original().0); -1 when empty.
  std::int32_t start() const { return from.empty() ? -1 : from.front().begin; }
};

// `text` (valid UTF-8) starting at byte `base` of the input: each code point's bytes map to themselves.
Piece piece_of(std::string_view text, std::int32_t base);

// What one text (a segment between added tokens, an added token's content) may become through the normalizer,
// or one token label through the decoder: at most `limit` bytes (see kOutputFactor).
struct OutputBudget {
  std::int64_t input = 0;  // the bytes the chain started from
  std::int64_t limit = 0;
  // kOutputFactor * input + kOutputExtra, and no more than what `spent` left of kMaxOutputBytes.
  static OutputBudget for_input(std::int64_t input, std::int64_t spent = 0);
  // ": its output would be 1,234 bytes, over the budget of 1,088 bytes (16 times its 4 input bytes plus 1,024, at
  // most 67,108,864 in all)"; `at_least`: the rewrite stopped there, so the figure is where it stopped.
  std::string over(std::int64_t reached, bool at_least = false) const;
};

// Rewrites every code point with `map`, which appends what it becomes (nothing: removed). The new code points
// take the old one's input bytes. Stops, leaving `p` as it was, once the output passes `limit` bytes: answers
// the bytes written by then, or -1 when done.
template <class Map>
std::int64_t map_code_points(Piece& p, Map&& map, std::int64_t limit) {
  Piece out;
  out.text.reserve(p.text.size());
  out.from.reserve(p.from.size());
  std::vector<char32_t> produced;
  for (std::size_t i = 0; i < p.text.size();) {
    const std::size_t at = i;
    const char32_t c = unicode::next_code_point(p.text, i);
    produced.clear();
    map(c, produced);
    const Span src = p.source(at, i);
    for (const char32_t d : produced) out.append(d, src);
    if (static_cast<std::int64_t>(out.text.size()) > limit) return static_cast<std::int64_t>(out.text.size());
  }
  p = std::move(out);
  return -1;
}

// ---------------------------------------------------------------------------------------------------------
// Components. Each is built once from its JSON at load and is immutable afterwards: encode() is const and may
// run on several threads.

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Rewrites `p`, or refuses (TooLarge, naming `where`) before its output would pass `budget.limit`.
  virtual Result<void> normalize(Piece& p, const OutputBudget& budget) const = 0;
  std::string where;  // the JSON path ("normalizer.normalizers[3]"), set by make_normalizer

 protected:
  std::unexpected<Error> over_budget(const OutputBudget& budget, std::int64_t reached, bool at_least) const {
    return fail(ErrorKind::TooLarge, where + budget.over(reached, at_least));
  }
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces each piece by the pieces it splits into (empty pieces are dropped). Fails only when a pattern passes
  // PCRE2's limits.
  virtual Result<void> split(std::vector<Piece>& pieces) const = 0;
};

// One token of a piece: its id and the bytes of the piece it covers.
struct PieceToken {
  // kMissingUnknown: a word (WordLevel) or a character (Unigram) the vocabulary lacks, and no unknown token.
  int id = 0;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  bool surface = false;  // the token's text is the piece's bytes, not the entry (Unigram's unknown runs)
};

inline constexpr int kMissingUnknown = -1;

class Model {
 public:
  virtual ~Model() = default;
  virtual void tokenize(std::string_view piece, std::vector<PieceToken>& out) const = 0;
};

// An encoding on its way through the post-processor.
struct Encoded {
  std::vector<Token> tokens;
  std::vector<int> type_ids;
  std::vector<bool> special;
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // One encoding per text (one or two) in; the processor may merge them (a template does). Without
  // `add_special`, no token is added but type ids and offset trimming still apply, as in the library.
  virtual void process(std::vector<Encoded>& encodings, bool add_special) const = 0;
};
// Several encodings made one, in order.
Encoded merge_encodings(std::vector<Encoded>& encodings);

class Decoder {
 public:
  virtual ~Decoder() = default;
  // The library's decode_chain: tokens in, tokens out (joined by the caller). `display` asks for the
  // readable form of one token, without the changes that depend on its place in a text (Strip, the
  // Metaspace decoder's first-token space).
  virtual void decode(std::vector<std::string>& tokens, bool display) const = 0;
  // How long the output can be: at most factor * the input's bytes + extra per token. make_decoder refuses a
  // chain whose product passes kOutputFactor or kOutputExtra, so every token label, and every decoded text (at
  // most factor * its tokens' bytes + extra per token), stays within the budget without a check per call.
  struct Growth {
    std::int64_t factor = 1;
    std::int64_t extra = 0;
  };
  virtual Growth growth() const { return {}; }
};

// The ids of the model's vocabulary: by id, and by entry. Shared by the model and the tokenizer.
struct Vocabulary {
  std::vector<std::string> entries;  // by id; "" where no entry has that id
  unicode::VocabIndex index;         // entries' bytes, so `entries` must not change once indexed
  int find(std::string_view s) const { return index.find(s); }
};

// A vocabulary from {entry, id} pairs: ids may leave gaps (then "" stands there), but no id may repeat, no
// entry may repeat, and ids stay below a bound far past any published vocabulary.
Result<std::shared_ptr<const Vocabulary>> build_vocabulary(std::vector<std::pair<std::string, int>> pairs,
                                                           const std::string& where);
// The BPE model's options (bpe_model.cpp); make_model reads them from tokenizer.json.
struct BpeOptions {
  std::optional<int> unk;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  std::string prefix;  // continuing_subword_prefix
  std::string suffix;  // end_of_word_suffix
};
// Merges refer to entries; one that names an entry missing from the vocabulary is an error naming its index.
Result<std::unique_ptr<Model>> make_bpe(std::shared_ptr<const Vocabulary> vocab,
                                        std::vector<std::pair<std::string, std::string>> merges, BpeOptions options);

// Each match of `pattern` in `p` becomes `content` (Replace normalizer and decoder). The output's size is counted
// before it is written: over `limit`, `p` stays as it was and the answer is that size; else -1. A search over
// PCRE2's limits is an error, `p` unchanged.
Result<std::int64_t> replace_matches(Piece& p, const Regex& pattern, std::string_view content, std::int64_t limit);

// "<0x0A>" -> 0x0A; -1 for anything else.
int byte_fallback_value(std::string_view token);

// Match of PCRE2 patterns (UTF + UCP, JIT-compiled when the library has the JIT), compiled once at load.
class Regex {
 public:
  // A pattern PCRE2 refuses: the error gives PCRE2's message and the byte offset in the pattern.
  // `literal`: the pattern is a plain string (tokenizer.json's {"String": ...}). `where` names it in the errors
  // of find_all ("pre_tokenizer.pattern").
  static Result<std::shared_ptr<const Regex>> compile(std::string_view pattern, bool literal = false,
                                                      std::string where = "pattern");
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // The non-overlapping matches in `text` (valid UTF-8), left to right, as byte ranges (empty matches included;
  // the search goes on one code point later). Every search runs under kMatchLimit and kDepthLimit: a pattern
  // that passes them (catastrophic backtracking) is an error naming `where`, the limit and the byte where the
  // search stood, not a search cut short in silence. (A lookaround that repeats without bound, which no limit
  // stops, is refused by compile().)
  [[nodiscard]] std::optional<Error> find_all(std::string_view text,
                                              std::vector<std::pair<std::size_t, std::size_t>>& out) const;
  // PCRE2's match limit (its backtracking steps from one start position) and depth limit (its nested
  // backtracking frames, for the interpreter), set rather than left to how the library was built. The match
  // limit is PCRE2's usual 10,000,000: Llama 3's \s*[\r\n]+ takes one step per space of a run of spaces, so
  // 1,000,000 refused a text of a million spaces; catastrophic backtracking reaches it in about 50 ms.
  static constexpr std::uint32_t kMatchLimit = 10'000'000;
  static constexpr std::uint32_t kDepthLimit = 100'000;
  // The fewest characters (so at least as many bytes) a match can take: 0 when the pattern matches the empty string.
  std::int64_t min_length() const;

 private:
  Regex() = default;
  void* code_ = nullptr;  // pcre2_code_8*
  std::string pattern_, where_;
};

// ---------------------------------------------------------------------------------------------------------
// Building the components from tokenizer.json. `where` is the JSON path of the component ("pre_tokenizer",
// "normalizer.normalizers[1]"); errors name it, and the caller adds the file and the byte. A type the engine
// does not read is refused by name: "pre_tokenizer type Foo is not supported".

using Json = nlohmann::json;

std::unexpected<Error> bad_field(const std::string& where, const std::string& what,
                                 ErrorKind kind = ErrorKind::Malformed);
std::unexpected<Error> unsupported_type(const std::string& where, const std::string& type);
std::string type_of(const Json& j);
std::string field(const std::string& where, const char* key);
// A field that may be missing or null (then `fallback`); of another type, an error.
Result<std::string> string_field(const Json& j, const char* key, const std::string& where, std::string fallback);
Result<bool> bool_field(const Json& j, const char* key, const std::string& where, bool fallback);
Result<std::int64_t> int_field(const Json& j, const char* key, const std::string& where, std::int64_t fallback);
// A pattern {"String": s} or {"Regex": r}: the regex (a string is matched literally, as an escaped regex).
Result<std::shared_ptr<const Regex>> pattern_field(const Json& j, const char* key, const std::string& where);

// A chain (a Sequence, with the Sequences inside it) holds at most this many normalizers, pre-tokenizers or
// decoders: published files have up to 6; each link costs a pass over the text.
inline constexpr std::size_t kMaxChainLinks = 64;
// The links of a component: 1, or the links of every part of a Sequence (`list`: "normalizers", ...); an error
// naming `where` past kMaxChainLinks.
Result<void> check_chain_length(const Json& j, const char* list, const std::string& where);

Result<std::unique_ptr<Normalizer>> make_normalizer(const Json& j, const std::string& where);
Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const Json& j, const std::string& where);
// `vocab` is filled by the caller for BPE, WordPiece and WordLevel (model.vocab read as a stream); Unigram's
// vocabulary comes from the tree. The model's vocabulary is handed back in `out` for the tokenizer's lookups.
struct ModelParts {
  std::vector<std::pair<std::string, int>>* vocab = nullptr;
  std::vector<std::pair<std::string, std::string>>* merges = nullptr;
};
struct BuiltModel {
  std::unique_ptr<Model> model;
  std::shared_ptr<const Vocabulary> vocab;  // the model's own entries, by id
  std::optional<int> unk;
  std::string unk_token;  // as the file names it (WordLevel's, for the refusal when it is missing)
  TokenizerKind kind = TokenizerKind::Bpe;
};
Result<BuiltModel> make_model(const Json& j, ModelParts parts, bool byte_level);
// The special tokens' ids come from the file (TemplateProcessing's special_tokens, BertProcessing's [token, id]).
Result<std::unique_ptr<PostProcessor>> make_post_processor(const Json& j, const std::string& where);
Result<std::unique_ptr<Decoder>> make_decoder(const Json& j, const std::string& where);

// The tokenizer of a parsed tokenizer.json (the model's vocabulary and merges read as a stream into `parts`).
// `config`: tokenizer_config.json's fields, when the folder has one. Errors carry no file: the caller adds it.
// `name` is the file, for the errors of encode() (a normalizer over its budget).
Result<std::unique_ptr<Tokenizer>> build_tokenizer(const Json& root, ModelParts parts, const TokenizerConfig* config,
                                                   const std::string& name);

// The byte-level alphabet (GPT-2's bytes_to_unicode): byte -> code point, and code point -> byte (-1: none).
char32_t byte_to_char(unsigned char b);
int char_to_byte(char32_t c);

// Post-processor parts tokenizer_config.json can change (add_bos_token / add_eos_token rewrite the template, as
// transformers' LlamaTokenizerFast does).
std::unique_ptr<PostProcessor> bos_eos_template(std::optional<std::pair<std::string, int>> bos,
                                                std::optional<std::pair<std::string, int>> eos);

}  // namespace attn::text::pipeline
