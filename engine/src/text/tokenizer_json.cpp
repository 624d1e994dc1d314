// A tokenizer.json tokenizer: the components of pipeline.h put together as the library runs them. Added tokens
// that are not normalized are cut out of the raw text; each segment between them is normalized, searched for
// the normalized added tokens, pre-tokenized and tokenized by the model; the post-processor adds the specials.
#include "pipeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace attn::text::pipeline {

namespace {

struct JsonAddedToken {
  AddedToken token;
  bool normalized = false;
};

Result<std::vector<JsonAddedToken>> read_added_tokens(const Json& root) {
  std::vector<JsonAddedToken> out;
  const auto list = root.find("added_tokens");
  if (list == root.end() || list->is_null()) return out;
  if (!list->is_array()) return bad_field("added_tokens", "must be an array");
  for (std::size_t k = 0; k < list->size(); ++k) {
    const Json& entry = (*list)[k];
    const std::string where = "added_tokens[" + std::to_string(k) + "]";
    if (!entry.is_object()) return bad_field(where, "must be an object");
    JsonAddedToken t;
    std::int64_t id = -1;
    ATTN_ASSIGN(id, int_field(entry, "id", where, -1));
    if (!entry.contains("id")) return bad_field(where, "has no id");
    if (id < 0 || id > INT32_MAX) return bad_field(where + ".id", "is out of range", ErrorKind::OutOfRange);
    t.token.id = static_cast<int>(id);
    ATTN_ASSIGN(t.token.content, string_field(entry, "content", where, ""));
    if (t.token.content.empty()) return bad_field(where + ".content", "must be a non-empty string");
    ATTN_ASSIGN(t.token.special, bool_field(entry, "special", where, false));
    ATTN_ASSIGN(t.token.single_word, bool_field(entry, "single_word", where, false));
    ATTN_ASSIGN(t.token.lstrip, bool_field(entry, "lstrip", where, false));
    ATTN_ASSIGN(t.token.rstrip, bool_field(entry, "rstrip", where, false));
    ATTN_ASSIGN(t.normalized, bool_field(entry, "normalized", where, !t.token.special));
    out.push_back(std::move(t));
  }
  return out;
}

bool has_byte_level(const Json& j) {
  if (type_of(j) == "ByteLevel") return true;
  if (const auto list = j.find("pretokenizers"); j.is_object() && list != j.end() && list->is_array()) {
    return std::any_of(list->begin(), list->end(), [](const Json& part) { return has_byte_level(part); });
  }
  return false;
}

class JsonTokenizer final : public Tokenizer {
 public:
  TokenizerKind kind() const override { return kind_; }
  int vocab_size() const override { return static_cast<int>(vocab_.size()); }
  const SpecialTokens& specials() const override { return specials_; }
  std::string_view token(int id) const override {
    if (id < 0 || id >= vocab_size()) return {};
    return vocab_[static_cast<std::size_t>(id)];
  }
  std::optional<int> id(std::string_view token) const override {
    const int i = index_.find(token);
    if (i < 0) return std::nullopt;
    return i;
  }

  std::string display(int id) const override {
    const std::string_view entry = token(id);
    if (is_added(id) || !decoder_) return std::string(entry);
    std::vector<std::string> tokens{std::string(entry)};
    decoder_->decode(tokens, true);
    std::string out;
    for (const std::string& t : tokens) out += t;
    return out;
  }

  std::string decode(std::span<const int> ids, bool skip_special) const override {
    std::vector<std::string> tokens;
    for (const int id : ids) {
      if (id < 0 || id >= vocab_size() || vocab_[static_cast<std::size_t>(id)].empty()) continue;
      if (skip_special && special_[static_cast<std::size_t>(id)]) continue;
      // A normalized added token goes through the decoder as the normalizer wrote it, as in the library.
      const auto as =
          std::find_if(decoded_as_.begin(), decoded_as_.end(), [&](const auto& d) { return d.first == id; });
      tokens.push_back(as != decoded_as_.end() ? as->second : vocab_[static_cast<std::size_t>(id)]);
    }
    if (decoder_) decoder_->decode(tokens, false);
    std::string out;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      if (k > 0 && !decoder_) out += ' ';  // no decoder: the library joins with spaces
      out += tokens[k];
    }
    return out;
  }

  Result<std::vector<Token>> encode(std::string_view text) const override {
    auto encoded = encode_plain(text);
    if (!encoded) return std::unexpected(std::move(encoded.error()));
    if (!post_) return std::move(encoded->tokens);
    std::vector<Encoded> encodings{std::move(*encoded)};
    post_->process(encodings, false);
    return std::move(merge_encodings(encodings).tokens);
  }

  Result<Encoding> encode_for_model(std::string_view text, std::optional<std::string_view> pair) const override {
    std::vector<Encoded> encodings;
    auto a = encode_plain(text);
    if (!a) return std::unexpected(std::move(a.error()));
    encodings.push_back(std::move(*a));
    if (pair) {
      auto b = encode_plain(*pair);
      if (!b) return std::unexpected(std::move(b.error()));
      std::fill(b->type_ids.begin(), b->type_ids.end(), 1);
      encodings.push_back(std::move(*b));
    }
    if (post_) post_->process(encodings, true);
    Encoded merged = merge_encodings(encodings);
    return Encoding{std::move(merged.tokens), std::move(merged.type_ids), std::move(merged.special)};
  }

  // A normalized added token is looked for as the normalizer writes it ("xx" behind Prepend("▁") is "▁xx"); the
  // normalizer runs on it here, when the file opens, within its budget.
  Result<void> add_normalized(const AddedToken& token, std::vector<AddedToken>& normalized) {
    AddedToken as_normalized = token;
    Piece content = piece_of(token.content, 0);
    const auto budget = OutputBudget::for_input(static_cast<std::int64_t>(token.content.size()));
    if (auto done = normalizer_->normalize(content, budget); !done) {
      Error e = std::move(done.error());
      e.reason += " (added token " + std::to_string(token.id) + ", which is normalized)";
      return std::unexpected(std::move(e));
    }
    if (content.text.empty()) return {};
    as_normalized.content = content.text;
    normalized.push_back(std::move(as_normalized));
    decoded_as_.emplace_back(token.id, std::move(content.text));
    return {};
  }

  // Hugging Face's WordLevel fails the whole encoding here (its error: "WordLevel error: Missing [UNK] token from
  // the vocabulary"), so AttnScope refuses too rather than drop the word, and says which word.
  // Unigram without unk_id fails the same way ("Encountered an unknown token but `unk_id` is missing"), at the
  // first character no piece starts with.
  std::unexpected<Error> missing_unknown(Span word) const {
    if (kind_ == TokenizerKind::Unigram) {
      return in_file({{},
                      -1,
                      -1,
                      "model: the character at byte " + with_commas(word.begin) +
                          " of the text is not in model.vocab, and the model has no unk_id to stand for it (Hugging "
                          "Face's tokenizers fail the same way: \"Encountered an unknown token but `unk_id` is "
                          "missing\")",
                      ErrorKind::Mismatch});
    }
    return in_file({{},
                    -1,
                    -1,
                    "model: the word at bytes " + with_commas(word.begin) + " to " + with_commas(word.end) +
                        " of the text is not in model.vocab, and neither is its unk_token \"" + unk_token_ +
                        "\" (Hugging Face's tokenizers fail the same way: \"WordLevel error: Missing [UNK] token "
                        "from the vocabulary\")",
                    ErrorKind::Mismatch});
  }

  // An error of encode(): about the text, and the file whose component refused it.
  std::unexpected<Error> in_file(Error e) const {
    e.file = name_;
    return std::unexpected(std::move(e));
  }

  Result<void> build(const Json& root, ModelParts parts, const TokenizerConfig* config, const std::string& name) {
    name_ = name;
    const auto component = [&](const char* key) -> const Json* {
      const auto it = root.find(key);
      return it == root.end() || it->is_null() ? nullptr : &*it;
    };
    const Json* model = component("model");
    if (!model || !model->is_object()) return fail(ErrorKind::Malformed, "has no \"model\" object");
    const Json* pre = component("pre_tokenizer");
    BuiltModel built;
    ATTN_ASSIGN(built, make_model(*model, parts, pre && has_byte_level(*pre)));
    model_ = std::move(built.model);
    kind_ = built.kind;
    unk_token_ = built.unk_token;
    if (const Json* j = component("normalizer")) ATTN_ASSIGN(normalizer_, make_normalizer(*j, "normalizer"));
    if (pre) ATTN_ASSIGN(pre_, make_pre_tokenizer(*pre, "pre_tokenizer"));
    if (const Json* j = component("decoder")) ATTN_ASSIGN(decoder_, make_decoder(*j, "decoder"));

    // The whole vocabulary: the model's entries, then the added tokens (which may extend it).
    std::vector<JsonAddedToken> added;
    ATTN_ASSIGN(added, read_added_tokens(root));
    vocab_ = built.vocab->entries;
    for (const JsonAddedToken& t : added) {
      const auto at = static_cast<std::size_t>(t.token.id);
      if (at < vocab_.size() && !vocab_[at].empty()) {
        if (vocab_[at] != t.token.content) {
          return fail(ErrorKind::Mismatch, "added token \"" + t.token.content + "\" has id " +
                                               std::to_string(t.token.id) + ", which model.vocab gives to \"" +
                                               vocab_[at] + "\"");
        }
        continue;
      }
      if (at >= vocab_.size()) {
        if (at > vocab_.size() + added.size() + (1 << 16)) {
          return fail(ErrorKind::OutOfRange, "added token \"" + t.token.content + "\" has id " +
                                                 std::to_string(t.token.id) + ", far past the vocabulary");
        }
        vocab_.resize(at + 1);
      }
      vocab_[at] = t.token.content;
    }
    special_.assign(vocab_.size(), 0);
    added_.assign(vocab_.size(), 0);
    index_.reserve(vocab_.size());
    for (std::size_t i = 0; i < vocab_.size(); ++i) {
      if (!vocab_[i].empty()) index_.insert(vocab_[i], static_cast<int>(i));
    }
    std::vector<AddedToken> raw, normalized;
    for (const JsonAddedToken& t : added) {
      special_[static_cast<std::size_t>(t.token.id)] = t.token.special ? 1 : 0;
      added_[static_cast<std::size_t>(t.token.id)] = 1;
      if (!t.normalized || !normalizer_) {
        raw.push_back(t.token);
        continue;
      }
      ATTN_TRY(add_normalized(t.token, normalized));
    }
    raw_added_ = unicode::AddedTokenMatcher(std::move(raw));
    normalized_added_ = unicode::AddedTokenMatcher(std::move(normalized));

    const Json* post = component("post_processor");
    if (post) ATTN_ASSIGN(post_, make_post_processor(*post, "post_processor"));

    // Which ids the models code treats as special.
    const auto first_of = [&](std::initializer_list<const char*> names) -> std::optional<int> {
      for (const char* name : names) {
        if (const auto i = id(name)) return i;
      }
      return std::nullopt;
    };
    specials_.unk = built.unk;
    specials_.bos = first_of({"<s>", "<|begin_of_text|>", "<bos>", "<|endoftext|>"});
    specials_.eos = first_of({"</s>", "<|end_of_text|>", "<eos>", "<|endoftext|>"});
    specials_.cls = first_of({"[CLS]", "<s>"});
    specials_.sep = first_of({"[SEP]", "</s>"});
    specials_.pad = first_of({"[PAD]", "<pad>"});
    specials_.mask = first_of({"[MASK]", "<mask>"});
    if (config) {
      if (config->bos_token) specials_.bos = id(*config->bos_token);
      if (config->eos_token) specials_.eos = id(*config->eos_token);
      // add_bos_token / add_eos_token rewrite a template (or its absence), as LlamaTokenizerFast does.
      const bool templated = !post || type_of(*post) == "TemplateProcessing";
      if ((config->add_bos || config->add_eos) && templated) {
        const auto named = [&](bool add, std::optional<int> id) -> std::optional<std::pair<std::string, int>> {
          if (!add || !id) return std::nullopt;
          return std::pair{vocab_[static_cast<std::size_t>(*id)], *id};
        };
        const bool bos = config->add_bos.value_or(post != nullptr);
        const bool eos = config->add_eos.value_or(false);
        post_ = bos_eos_template(named(bos, specials_.bos), named(eos, specials_.eos));
      }
    }
    return {};
  }

 private:
  bool is_added(int id) const { return id >= 0 && id < vocab_size() && added_[static_cast<std::size_t>(id)]; }

  // An added token's text is what it matched, white space taken by lstrip/rstrip included (as the library's).
  void push_added(const AddedToken& t, std::string matched, Span span, Encoded& out) const {
    out.tokens.push_back({t.id, std::move(matched), span});
    out.type_ids.push_back(0);
    out.special.push_back(false);
  }

  Result<Encoded> encode_plain(std::string_view text) const {
    if (text.size() > static_cast<std::size_t>(INT32_MAX) - 1) {
      return fail(ErrorKind::TooLarge, "the text is larger than 2 GiB", "text");
    }
    if (auto error = unicode::check_utf8(text)) return std::unexpected(std::move(*error));
    Encoded out;
    std::vector<unicode::Segment> segments;
    if (raw_added_.empty()) {
      if (!text.empty()) segments.push_back({0, static_cast<std::int32_t>(text.size()), -1});
    } else {
      raw_added_.split(text, segments);
    }
    std::vector<Piece> pieces;
    std::vector<unicode::Segment> inner;
    std::vector<PieceToken> found;
    std::int64_t normalized_bytes = 0;  // what the normalizer wrote for the segments so far
    for (const unicode::Segment& s : segments) {
      if (s.added >= 0) {
        push_added(
            raw_added_.tokens()[static_cast<std::size_t>(s.added)],
            std::string(text.substr(static_cast<std::size_t>(s.begin), static_cast<std::size_t>(s.end - s.begin))),
            {s.begin, s.end}, out);
        continue;
      }
      Piece p =
          piece_of(text.substr(static_cast<std::size_t>(s.begin), static_cast<std::size_t>(s.end - s.begin)), s.begin);
      if (normalizer_) {
        const auto budget = OutputBudget::for_input(s.end - s.begin, normalized_bytes);
        if (auto done = normalizer_->normalize(p, budget); !done) return in_file(std::move(done.error()));
        normalized_bytes += static_cast<std::int64_t>(p.text.size());
      }
      inner.clear();
      if (normalized_added_.empty()) {
        if (!p.text.empty()) inner.push_back({0, static_cast<std::int32_t>(p.text.size()), -1});
      } else {
        normalized_added_.split(p.text, inner);
      }
      for (const unicode::Segment& n : inner) {
        if (n.added >= 0) {
          push_added(normalized_added_.tokens()[static_cast<std::size_t>(n.added)],
                     p.text.substr(static_cast<std::size_t>(n.begin), static_cast<std::size_t>(n.end - n.begin)),
                     p.source(static_cast<std::size_t>(n.begin), static_cast<std::size_t>(n.end)), out);
          continue;
        }
        pieces.clear();
        pieces.push_back(p.sub(static_cast<std::size_t>(n.begin), static_cast<std::size_t>(n.end)));
        if (pre_) {
          if (auto split = pre_->split(pieces); !split) return in_file(std::move(split.error()));
        }
        for (const Piece& piece : pieces) {
          found.clear();
          model_->tokenize(piece.text, found);
          for (const PieceToken& t : found) {
            if (t.id == kMissingUnknown) return missing_unknown(piece.source(t.begin, t.end));
            std::string entry =
                t.surface ? piece.text.substr(t.begin, t.end - t.begin) : vocab_[static_cast<std::size_t>(t.id)];
            out.tokens.push_back({t.id, std::move(entry), piece.source(t.begin, t.end)});
            out.type_ids.push_back(0);
            out.special.push_back(false);
          }
        }
      }
    }
    return out;
  }

  TokenizerKind kind_ = TokenizerKind::Bpe;
  std::string name_;
  std::string unk_token_;
  std::vector<std::string> vocab_;
  unicode::VocabIndex index_;
  std::vector<char> special_;                            // by id: an added token marked special (left out by decode)
  std::vector<char> added_;                              // by id: an added token (shown as it is written)
  std::vector<std::pair<int, std::string>> decoded_as_;  // normalized added tokens: id, normalized content
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_;
  std::unique_ptr<Decoder> decoder_;
  unicode::AddedTokenMatcher raw_added_, normalized_added_;
  SpecialTokens specials_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> build_tokenizer(const Json& root, ModelParts parts, const TokenizerConfig* config,
                                                   const std::string& name) {
  auto tokenizer = std::make_unique<JsonTokenizer>();
  ATTN_TRY(tokenizer->build(root, parts, config, name));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

}  // namespace attn::text::pipeline
