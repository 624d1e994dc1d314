// Tokenizer files as Hugging Face ships them: vocab.txt (+ tokenizer_config.json), vocab.json + merges.txt,
// or a tokenizer.json of either model. Every error names the file and, where there is one, the line,
// byte offset or JSON path.
#include "attn/text/tokenizer.h"

#include "../core/file_read.h"
#include "../core/json_config.h"
#include "../core/json_keys.h"
#include "../core/try.h"
#include "pipeline.h"
#include "unicode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <cstdint>
#include <fstream>
#include <optional>
#include <system_error>

namespace attn::text {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Far above any published tokenizer (a 250k-entry tokenizer.json is about 20 MB); refused before reading.
constexpr std::int64_t kMaxTokenizerFile = 512 << 20;

Result<std::string> read_file(const fs::path& path) {
  return detail::read_regular_file(path, kMaxTokenizerFile, "a tokenizer file");
}

// The text after nlohmann's "[json.exception.parse_error.101] " tag.
std::string json_reason(const std::exception& e) {
  std::string_view what = e.what();
  if (what.starts_with('[')) {
    const auto close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  return std::string(what);
}

// vocab.json, read as a stream of events: 50k entries without building a JSON tree.
class VocabReader : public nlohmann::json_sax<json> {
 public:
  bool null() override { return value_is("null"); }
  bool boolean(bool) override { return value_is("true or false"); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return add(v > static_cast<number_unsigned_t>(INT32_MAX) ? -1 : static_cast<number_integer_t>(v));
  }
  bool number_float(number_float_t, const string_t&) override { return value_is("not a whole number"); }
  bool string(string_t&) override { return value_is("a string"); }
  bool binary(binary_t&) override { return value_is("binary"); }
  bool start_object(std::size_t) override {
    if (depth_ > 0) return value_is("an object");
    ++depth_;
    return true;
  }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return value_is("an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    if (reason.empty()) {
      offset = static_cast<std::int64_t>(position);
      reason = "is not valid JSON: " + json_reason(e);
      kind = detail::json_error_kind(e);
    }
    return false;
  }

  std::vector<std::pair<std::string, int>> entries;
  std::string reason;
  std::int64_t offset = -1;
  ErrorKind kind = ErrorKind::Malformed;

 private:
  bool add(number_integer_t v) {
    if (depth_ != 1) return value_is("a number");
    if (v < 0 || v > INT32_MAX) {
      reason = "the id of \"" + key_ + "\" is out of range";
      kind = ErrorKind::OutOfRange;
      return false;
    }
    entries.emplace_back(std::move(key_), static_cast<int>(v));
    return true;
  }
  bool value_is(const char* what) {
    reason = depth_ == 0 ? std::string("is not a JSON object of token: id")
                         : "the id of \"" + key_ + "\" is " + what + ", not a whole number";
    return false;
  }
  int depth_ = 0;
  std::string key_;
};

// tokenizer.json as a stream of events: model.vocab and model.merges (tens of thousands of entries) go
// straight into vectors, everything else into a small JSON tree. Several times faster than a full tree.
class TokenizerJsonReader : public nlohmann::json_sax<json> {
 public:
  json root;
  std::optional<std::vector<std::pair<std::string, int>>> vocab;
  std::optional<std::vector<std::pair<std::string, std::string>>> merges;
  std::string reason;  // what is wrong, when parsing stopped
  std::int64_t offset = -1;
  ErrorKind kind = ErrorKind::Malformed;

  bool null() override { return value(json(nullptr), "null"); }
  bool boolean(bool v) override { return value(json(v), "true or false"); }
  bool number_integer(number_integer_t v) override {
    if (mode_ == Mode::Vocab) return id(v);
    return value(json(v), "a number");
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (mode_ == Mode::Vocab)
      return id(v > static_cast<number_unsigned_t>(INT32_MAX) ? -1 : static_cast<number_integer_t>(v));
    return value(json(v), "a number");
  }
  bool number_float(number_float_t v, const string_t&) override { return value(json(v), "a number"); }
  bool binary(binary_t&) override { return refuse("binary data is not JSON"); }
  bool string(string_t& v) override {
    if (mode_ == Mode::Merges) {  // "a b"
      const auto space = v.find(' ');
      if (space == std::string::npos || v.find(' ', space + 1) != std::string::npos) {
        return refuse(merge_name() + " must be two symbols separated by one space, got \"" + v + "\"");
      }
      merges->emplace_back(v.substr(0, space), v.substr(space + 1));
      return true;
    }
    if (mode_ == Mode::MergePair) {  // ["a", "b"]
      pair_.push_back(std::move(v));
      return true;
    }
    return value(json(std::move(v)), "a string");
  }
  bool start_object(std::size_t) override {
    if (mode_ != Mode::Tree) return value(json(), "an object");
    if (stack_.empty()) {
      root = json::object();
      stack_.push_back(&root);
      return true;
    }
    if (in_model() && key_ == "vocab") {
      mode_ = Mode::Vocab;
      vocab.emplace();
      return true;
    }
    stack_.push_back(insert(json::object()));
    path_.push_back(key_);
    return true;
  }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    if (mode_ == Mode::Vocab) {
      mode_ = Mode::Tree;
      return true;
    }
    pop();
    return true;
  }
  bool start_array(std::size_t) override {
    if (mode_ == Mode::Merges) {
      mode_ = Mode::MergePair;
      pair_.clear();
      return true;
    }
    if (mode_ != Mode::Tree) return value(json(), "an array");
    if (stack_.empty()) return refuse("is not a JSON object");
    if (in_model() && key_ == "merges") {
      mode_ = Mode::Merges;
      merges.emplace();
      return true;
    }
    stack_.push_back(insert(json::array()));
    path_.push_back(key_);
    return true;
  }
  bool end_array() override {
    if (mode_ == Mode::MergePair) {
      if (pair_.size() != 2) return refuse(merge_name() + " must be \"a b\" or [\"a\", \"b\"]");
      merges->emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      mode_ = Mode::Merges;
      return true;
    }
    if (mode_ == Mode::Merges) {
      mode_ = Mode::Tree;
      return true;
    }
    pop();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    if (reason.empty()) {
      offset = static_cast<std::int64_t>(position);
      reason = "is not valid JSON: " + json_reason(e);
      kind = detail::json_error_kind(e);
    }
    return false;
  }

 private:
  enum class Mode { Tree, Vocab, Merges, MergePair };

  bool in_model() const { return stack_.size() == 2 && path_.size() == 1 && path_[0] == "model"; }
  std::string merge_name() const { return "model.merges[" + std::to_string(merges->size()) + "]"; }

  bool refuse(std::string why) {
    if (reason.empty()) reason = std::move(why);
    return false;
  }
  bool id(number_integer_t v) {
    if (v < 0 || v > INT32_MAX) {
      kind = ErrorKind::OutOfRange;
      return refuse("model.vocab[\"" + key_ + "\"] is out of range");
    }
    vocab->emplace_back(std::move(key_), static_cast<int>(v));
    return true;
  }
  bool value(json v, const char* what) {
    switch (mode_) {
      case Mode::Vocab: return refuse("model.vocab[\"" + key_ + "\"] is " + what + ", not a whole number");
      case Mode::Merges:
      case Mode::MergePair: return refuse(merge_name() + " must be \"a b\" or [\"a\", \"b\"]");
      case Mode::Tree: break;
    }
    if (stack_.empty()) return refuse("is not a JSON object");
    insert(std::move(v));
    return true;
  }
  // Adds `v` to the innermost open object (under the last key) or array. The open containers stay put:
  // a parent gets no new element while a child is open.
  json* insert(json v) {
    json& parent = *stack_.back();
    if (parent.is_object()) {
      json& slot = parent[key_];
      slot = std::move(v);
      return &slot;
    }
    parent.push_back(std::move(v));
    return &parent.back();
  }
  void pop() {
    if (!stack_.empty()) stack_.pop_back();
    if (!path_.empty()) path_.pop_back();
  }

  Mode mode_ = Mode::Tree;
  std::vector<json*> stack_;
  std::vector<std::string> path_;  // keys of the open containers below the root
  std::string key_;
  std::vector<std::string> pair_;
};

// Lines of a text file without their "\n" or "\r\n"; a final newline ends the last line.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// The 1-based line of byte `offset`.
std::int64_t line_at(std::string_view text, std::int64_t offset) {
  const auto end = text.begin() + std::min<std::int64_t>(offset, static_cast<std::int64_t>(text.size()));
  return 1 + std::count(text.begin(), end, '\n');
}

// Where a vocabulary's repeated entry is: the byte of the first key, among the objects `depth` levels deep, that
// repeats an earlier key of its object or its whole-number value. The tokenizers' build() knows ids, not bytes;
// this scan runs only once such a build has failed, so the message can say where.
std::optional<std::int64_t> repeated_vocab_entry(std::string_view text, int depth) {
  std::map<std::int64_t, std::pair<std::map<std::string, int>, std::map<std::int64_t, int>>> seen;  // by object
  for (const detail::JsonKey& key : detail::object_keys(text, depth)) {
    auto& [names, ids] = seen[key.object];
    if (!names.emplace(key.name, 0).second) return key.offset;
    // The value: past the key's closing quote, the colon and white space.
    auto i = static_cast<std::size_t>(key.offset) + 1;
    while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
    i = text.find(':', i);
    if (i == std::string_view::npos) continue;
    i = text.find_first_not_of(" \t\r\n", i + 1);
    if (i == std::string_view::npos) continue;
    std::int64_t id = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), id);
    if (ec != std::errc() || (end < text.data() + text.size() && (*end == '.' || *end == 'e' || *end == 'E'))) continue;
    if (!ids.emplace(id, 0).second) return key.offset;
  }
  return std::nullopt;
}

// A vocabulary error without a place gets the byte of the repeated entry, when the text has one.
Error locate_vocab_error(Error e, std::string_view text, int depth) {
  if (e.kind == ErrorKind::Malformed && e.offset < 0 && e.line < 0) {
    if (const auto at = repeated_vocab_entry(text, depth)) e.offset = *at;
  }
  return e;
}

Error in_file(Error e, const fs::path& path) {
  e.file = path.string();
  return e;
}

// ---------------------------------------------------------------------------------------------------------
// tokenizer_config.json fields, checked before they are read (nlohmann's get<> throws on a wrong type).

struct JsonReader {
  const fs::path& path;

  std::unexpected<Error> bad(ErrorKind kind, const std::string& where, const std::string& what) const {
    return fail(kind, where + " " + what, path.string());
  }
  static std::string name(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }
  Result<bool> flag(const json& parent, const char* key, const std::string& where, bool fallback) const {
    const auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) return bad(ErrorKind::Malformed, name(where, key), "must be true or false");
    return it->get<bool>();
  }
  Result<std::optional<bool>> optional_flag(const json& parent, const char* key, const std::string& where) const {
    const auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return std::optional<bool>();
    if (!it->is_boolean()) return bad(ErrorKind::Malformed, name(where, key), "must be true, false or null");
    return std::optional<bool>(it->get<bool>());
  }
};

// Where an error about a component is in the file: the byte of its top-level key, or of its type's name
// ("Foo" in "pre_tokenizer type Foo is not supported") when that follows.
std::int64_t locate_component(std::string_view text, const std::string& reason) {
  std::size_t key_end = 0;
  while (key_end < reason.size() &&
         (std::isalnum(static_cast<unsigned char>(reason[key_end])) || reason[key_end] == '_')) {
    ++key_end;
  }
  const std::string key = reason.substr(0, key_end);
  std::int64_t at = -1;
  for (const detail::JsonKey& k : detail::top_level_keys(text)) {
    if (k.name == key) at = k.offset;
  }
  if (at < 0) return -1;
  // A refused regex: the byte of its string in the file (written as nlohmann writes it, which is how the
  // library's files write it).
  const std::string regex_marker = "the regex \"";
  const auto regex_at = reason.find(regex_marker);
  const auto regex_end = reason.find("\" is refused by PCRE2");
  if (regex_at != std::string::npos && regex_end != std::string::npos && regex_end > regex_at) {
    const std::string pattern =
        reason.substr(regex_at + regex_marker.size(), regex_end - regex_at - regex_marker.size());
    const std::string quoted = json(pattern).dump();
    if (const auto found = text.find(quoted, static_cast<std::size_t>(at)); found != std::string_view::npos) {
      return static_cast<std::int64_t>(found);
    }
  }
  const std::string marker = " type ";
  const auto type_at = reason.find(marker);
  const auto end = reason.find(" is not supported");
  if (type_at != std::string::npos && end != std::string::npos && end > type_at + marker.size()) {
    const std::string quoted = "\"" + reason.substr(type_at + marker.size(), end - type_at - marker.size()) + "\"";
    if (const auto found = text.find(quoted, static_cast<std::size_t>(at)); found != std::string_view::npos) {
      return static_cast<std::int64_t>(found);
    }
  }
  return at;
}

Result<std::unique_ptr<Tokenizer>> parse_json_tokenizer(std::string_view text, const std::string& name,
                                                        const TokenizerConfig* config) {
  ATTN_TRY(detail::check_json_depth(text, name));
  TokenizerJsonReader file;
  if (!json::sax_parse(text, &file) || !file.reason.empty()) {
    return fail(file.kind, file.reason.empty() ? "is not valid JSON" : file.reason, name, file.offset);
  }
  pipeline::ModelParts parts;
  if (file.vocab) parts.vocab = &*file.vocab;
  if (file.merges) parts.merges = &*file.merges;
  auto tokenizer = pipeline::build_tokenizer(file.root, parts, config, name);
  if (tokenizer) return tokenizer;
  Error e = std::move(tokenizer.error());
  e.file = name;
  if (e.offset < 0 && e.line < 0) e.offset = locate_component(text, e.reason);
  // model.vocab is an object 3 levels deep: {"model": {"vocab": {...}}}; a repeated entry is found there.
  if (e.reason.find("both have id") != std::string::npos || e.reason.find("twice") != std::string::npos) {
    if (const auto at = repeated_vocab_entry(text, 3)) e.offset = *at;
  }
  return std::unexpected(std::move(e));
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> load_wordpiece(const fs::path& vocab_txt, const WordPieceOptions& options) {
  auto text = read_file(vocab_txt);
  if (!text) return std::unexpected(std::move(text.error()));
  return parse_wordpiece(*text, vocab_txt.string(), options);
}

Result<std::unique_ptr<Tokenizer>> parse_wordpiece(std::string_view vocab_txt, const std::string& name,
                                                   const WordPieceOptions& options) {
  // A vocabulary entry that is not UTF-8 could never match text (which is checked) and would be drawn as
  // garbage: the file is refused, naming the line and byte.
  if (auto bad = unicode::check_utf8(vocab_txt, name)) {
    bad->line = line_at(vocab_txt, bad->offset);
    return std::unexpected(std::move(*bad));
  }
  std::vector<std::string> vocab;
  for (const std::string_view line : lines_of(vocab_txt)) vocab.emplace_back(line);
  auto tokenizer = wordpiece_from_vocab(std::move(vocab), options);
  if (!tokenizer) return std::unexpected(in_file(std::move(tokenizer.error()), name));
  return tokenizer;
}

Result<std::unique_ptr<Tokenizer>> load_byte_level_bpe(const fs::path& vocab_json, const fs::path& merges_txt) {
  return load_byte_level_bpe(vocab_json, merges_txt, ByteLevelBpeOptions{});
}

Result<std::unique_ptr<Tokenizer>> load_byte_level_bpe(const fs::path& vocab_json, const fs::path& merges_txt,
                                                       const ByteLevelBpeOptions& options) {
  auto vocab_text = read_file(vocab_json);
  if (!vocab_text) return std::unexpected(std::move(vocab_text.error()));
  auto merges_text = read_file(merges_txt);
  if (!merges_text) return std::unexpected(std::move(merges_text.error()));
  return parse_byte_level_bpe(*vocab_text, *merges_text, vocab_json.string(), merges_txt.string(), options);
}

Result<std::unique_ptr<Tokenizer>> parse_byte_level_bpe(std::string_view vocab_text, std::string_view merges_text,
                                                        const std::string& vocab_name, const std::string& merges_name,
                                                        const ByteLevelBpeOptions& options) {
  const fs::path vocab_json(vocab_name), merges_txt(merges_name);  // what the errors below name
  ATTN_TRY(detail::check_json_depth(vocab_text, vocab_json.string()));
  VocabReader reader;
  if (!json::sax_parse(vocab_text, &reader) || !reader.reason.empty()) {
    return fail(reader.kind, reader.reason.empty() ? "is not valid JSON" : reader.reason, vocab_json.string(),
                reader.offset);
  }
  // Every merge names vocabulary entries, so text that is not UTF-8 cannot be one of them: refused with its line.
  if (auto bad = unicode::check_utf8(merges_text, merges_txt.string())) {
    bad->line = line_at(merges_text, bad->offset);
    return std::unexpected(std::move(*bad));
  }

  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<std::int64_t> line_of;  // line in merges.txt of each merge
  const std::vector<std::string_view> lines = lines_of(merges_text);
  merges.reserve(lines.size());
  line_of.reserve(lines.size());
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string_view line = lines[k];
    const auto number = static_cast<std::int64_t>(k) + 1;
    if (line.empty() || line.starts_with("#version")) continue;
    const auto space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      return fail(ErrorKind::Malformed,
                  "expected two symbols separated by one space, got \"" + std::string(line) + "\"", merges_txt.string(),
                  -1, number);
    }
    merges.emplace_back(std::string(line.substr(0, space)), std::string(line.substr(space + 1)));
    line_of.push_back(number);
  }

  auto tokenizer = byte_level_bpe_from_parts(std::move(reader.entries), std::move(merges), options);
  if (!tokenizer) {
    Error e = std::move(tokenizer.error());
    if (e.line > 0) {
      e.line = line_of[static_cast<std::size_t>(e.line - 1)];
      return std::unexpected(in_file(std::move(e), merges_txt));
    }
    return std::unexpected(in_file(locate_vocab_error(std::move(e), vocab_text, 1), vocab_json));
  }
  return tokenizer;
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer_json(const fs::path& tokenizer_json) {
  auto text = read_file(tokenizer_json);
  if (!text) return std::unexpected(std::move(text.error()));
  return parse_json_tokenizer(*text, tokenizer_json.string(), nullptr);
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer_json(const fs::path& tokenizer_json, const TokenizerConfig& config) {
  auto text = read_file(tokenizer_json);
  if (!text) return std::unexpected(std::move(text.error()));
  return parse_json_tokenizer(*text, tokenizer_json.string(), &config);
}

Result<std::unique_ptr<Tokenizer>> parse_tokenizer_json(std::string_view text, const std::string& name) {
  return parse_json_tokenizer(text, name, nullptr);
}

Result<TokenizerConfig> parse_tokenizer_config(std::string_view text, const std::string& name) {
  const fs::path path(name);  // what the readers below name in their errors
  auto parsed = detail::parse_json(text, name);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  if (!parsed->is_object()) return fail(ErrorKind::Malformed, "is not a JSON object", name);
  const json& config = *parsed;
  const JsonReader read{path};
  // A field of the wrong type is named with its byte (nlohmann keeps no positions: the top-level keys' do).
  const auto at_key = [&](Error e, const char* key) {
    for (const detail::JsonKey& k : detail::top_level_keys(text)) {
      if (k.name == key) {
        e.offset = k.offset;
        e.line = detail::line_of(text, k.offset);
      }
    }
    return std::unexpected(std::move(e));
  };
  TokenizerConfig out;
  auto lower = read.flag(config, "do_lower_case", "", true);
  if (!lower) return at_key(std::move(lower.error()), "do_lower_case");
  auto chinese = read.flag(config, "tokenize_chinese_chars", "", true);
  if (!chinese) return at_key(std::move(chinese.error()), "tokenize_chinese_chars");
  auto strip = read.optional_flag(config, "strip_accents", "");
  if (!strip) return at_key(std::move(strip.error()), "strip_accents");
  auto prefix_space = read.flag(config, "add_prefix_space", "", false);
  if (!prefix_space) return at_key(std::move(prefix_space.error()), "add_prefix_space");
  for (auto [key, slot] : {std::pair{"add_bos_token", &out.add_bos}, std::pair{"add_eos_token", &out.add_eos}}) {
    auto add = read.optional_flag(config, key, "");
    if (!add) return at_key(std::move(add.error()), key);
    *slot = *add;
  }
  // bos_token / eos_token: a string, or an AddedToken written as {"content": ...}; anything else is ignored.
  for (auto [key, slot] : {std::pair{"bos_token", &out.bos_token}, std::pair{"eos_token", &out.eos_token}}) {
    const auto it = config.find(key);
    if (it == config.end()) continue;
    if (it->is_string()) {
      *slot = it->get<std::string>();
    } else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
      *slot = (*it)["content"].get<std::string>();
    }
  }
  out.wordpiece.lower_case = *lower;
  out.wordpiece.tokenize_chinese_chars = *chinese;
  out.wordpiece.strip_accents = *strip;
  out.bpe.add_prefix_space = *prefix_space;
  return out;
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer_dir(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return fail(ErrorKind::Io, "no such folder", folder.string());
  const auto has = [&](const char* name) { return fs::exists(folder / name, ec); };

  // tokenizer_config.json, when present, says how the slow tokenizer was configured and whether BOS/EOS are added.
  TokenizerConfig config;
  if (has("tokenizer_config.json")) {
    const fs::path path = folder / "tokenizer_config.json";
    auto text = read_file(path);
    if (!text) return std::unexpected(std::move(text.error()));
    ATTN_ASSIGN(config, parse_tokenizer_config(*text, path.string()));
  }
  if (has("tokenizer.json")) return load_tokenizer_json(folder / "tokenizer.json", config);
  if (has("tokenizer.model")) {
    return load_sentencepiece(folder / "tokenizer.model", config.add_bos.value_or(true),
                              config.add_eos.value_or(false));
  }
  if (has("vocab.txt")) return load_wordpiece(folder / "vocab.txt", config.wordpiece);
  if (has("vocab.json") || has("merges.txt")) {
    if (!has("vocab.json")) {
      return fail(ErrorKind::Io, "no such file (merges.txt is there)", (folder / "vocab.json").string());
    }
    if (!has("merges.txt")) {
      return fail(ErrorKind::Io, "no such file (vocab.json is there)", (folder / "merges.txt").string());
    }
    return load_byte_level_bpe(folder / "vocab.json", folder / "merges.txt", config.bpe);
  }
  return fail(ErrorKind::Io, "has no tokenizer.json, tokenizer.model, vocab.txt, or vocab.json + merges.txt",
              folder.string());
}

// vocab.txt tokenizers add [CLS] text [SEP] (pair [SEP] with type id 1), as BERT's; the others add nothing.
Result<Encoding> Tokenizer::encode_for_model(std::string_view text, std::optional<std::string_view> pair) const {
  Encoding out;
  const auto add = [&](std::vector<Token> tokens, int type_id) {
    for (Token& t : tokens) {
      out.tokens.push_back(std::move(t));
      out.type_ids.push_back(type_id);
      out.special.push_back(false);
    }
  };
  const auto special = [&](std::optional<int> id, int type_id) {
    if (!id) return;
    out.tokens.push_back({*id, std::string(token(*id)), Span{0, 0}});
    out.type_ids.push_back(type_id);
    out.special.push_back(true);
  };
  auto a = encode(text);
  if (!a) return std::unexpected(std::move(a.error()));
  std::optional<std::vector<Token>> b;
  if (pair) {
    auto eb = encode(*pair);
    if (!eb) return std::unexpected(std::move(eb.error()));
    b = std::move(*eb);
  }
  const bool bert = kind() == TokenizerKind::WordPiece && specials().cls && specials().sep;
  if (bert) special(specials().cls, 0);
  add(std::move(*a), 0);
  if (bert) special(specials().sep, 0);
  if (b) {
    add(std::move(*b), bert ? 1 : 0);
    if (bert) special(specials().sep, 1);
  }
  return out;
}

}  // namespace attn::text
