// SentencePiece models (Kudo & Richardson 2018) as tokenizer.model files, for models that ship no
// tokenizer.json (llama2.c's tok512.model, Llama 1/2 checkpoints): read and run by libsentencepiece itself, so
// its normalization, BPE or Unigram, and byte fallback are the reference's. Offsets come from the pieces' byte
// spans (ImmutableSentencePieceText). The library trusts the file, so sentencepiece_check.cpp reads it first.
#include "attn/text/tokenizer.h"

#include "../core/file_read.h"
#include "pipeline.h"
#include "sentencepiece_check.h"

#include <sentencepiece_processor.h>

namespace attn::text {

namespace {

// A tokenizer.model is a few hundred kilobytes to a few megabytes; refused past this before reading.
constexpr std::int64_t kMaxModelFile = 256 << 20;

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(bool add_bos, bool add_eos) : add_bos_(add_bos), add_eos_(add_eos) {}

  Result<void> load(std::string_view bytes, const std::string& name) {
    ATTN_ASSIGN(facts_, spm::check_model(bytes, name));
    name_ = name;
    const auto status = processor_.LoadFromSerializedProto(bytes);
    if (!status.ok()) {
      return fail(ErrorKind::Malformed, std::string("is not a SentencePiece model: ") + status.message(), name);
    }
    const auto as_id = [](int id) { return id >= 0 ? std::optional<int>(id) : std::nullopt; };
    specials_.unk = as_id(processor_.unk_id());
    specials_.bos = as_id(processor_.bos_id());
    specials_.eos = as_id(processor_.eos_id());
    specials_.pad = as_id(processor_.pad_id());
    return {};
  }

  TokenizerKind kind() const override { return TokenizerKind::SentencePiece; }
  int vocab_size() const override { return processor_.GetPieceSize(); }
  const SpecialTokens& specials() const override { return specials_; }

  std::string_view token(int id) const override {
    if (id < 0 || id >= vocab_size()) return {};
    return processor_.IdToPiece(id);
  }

  std::optional<int> id(std::string_view token) const override {
    const int i = processor_.PieceToId(token);
    // PieceToId answers the unknown token's id for a piece it does not have.
    if (i < 0 || (i == processor_.unk_id() && processor_.IdToPiece(i) != token)) return std::nullopt;
    return i;
  }

  std::string display(int id) const override {
    const std::string_view piece = token(id);
    if (processor_.IsByte(id)) {
      const int b = pipeline::byte_fallback_value(piece);
      if (b >= 0 && b < 0x80) return std::string(1, static_cast<char>(b));
      return std::string(piece);  // part of a longer character: "<0xE6>"
    }
    if (processor_.IsControl(id) || processor_.IsUnknown(id)) return std::string(piece);
    std::string out(piece);
    for (auto at = out.find("\xE2\x96\x81"); at != std::string::npos; at = out.find("\xE2\x96\x81", at + 1)) {
      out.replace(at, 3, " ");
    }
    return out;
  }

  std::string decode(std::span<const int> ids, bool skip_special) const override {
    // libsentencepiece drops control pieces (<s>, </s>); kept ones are written between the decoded runs.
    std::string out;
    std::vector<int> run;
    const auto flush = [&] {
      if (!run.empty()) out += processor_.DecodeIds(run);
      run.clear();
    };
    for (const int id : ids) {
      if (id < 0 || id >= vocab_size()) continue;
      if (processor_.IsControl(id)) {
        if (skip_special) continue;
        flush();
        out += processor_.IdToPiece(id);
        continue;
      }
      run.push_back(id);
    }
    flush();
    return out;
  }

  Result<std::vector<Token>> encode(std::string_view text) const override {
    if (text.size() > static_cast<std::size_t>(INT32_MAX) - 1) {
      return fail(ErrorKind::TooLarge, "the text is larger than 2 GiB", "text");
    }
    if (auto error = unicode::check_utf8(text)) return std::unexpected(std::move(*error));
    // libsentencepiece normalizes the whole text at once, with 20 bytes of bookkeeping per normalized byte.
    const auto size = static_cast<std::int64_t>(text.size());
    if (size > (pipeline::kMaxOutputBytes - spm::ModelFacts::kNormalizedExtra) / facts_.expansion) {
      return fail(ErrorKind::TooLarge,
                  "normalizer_spec: the text's " + with_commas(size) + " bytes could become " +
                      with_commas(size * facts_.expansion + spm::ModelFacts::kNormalizedExtra) +
                      " normalized bytes (up to " + std::to_string(facts_.expansion) +
                      " per byte under this model), over the limit of " + with_commas(pipeline::kMaxOutputBytes),
                  name_);
    }
    const auto encoded = processor_.EncodeAsImmutableProto(text);
    std::vector<Token> out;
    out.reserve(encoded.pieces_size());
    for (std::size_t k = 0; k < encoded.pieces_size(); ++k) {
      const auto piece = encoded.pieces(static_cast<int>(k));
      out.push_back({static_cast<int>(piece.id()), piece.piece(),
                     Span{static_cast<std::int32_t>(piece.begin()), static_cast<std::int32_t>(piece.end())}});
    }
    // The byte pieces of one character: libsentencepiece gives all but the last an empty span at the
    // character's start; each gets the character's span, as tokenizer.json's byte fallback gives them.
    for (std::size_t k = out.size(); k-- > 1;) {
      Span& before = out[k - 1].span;
      if (before.begin == before.end && out[k].span.begin == before.begin) before = out[k].span;
    }
    return out;
  }

  Result<Encoding> encode_for_model(std::string_view text, std::optional<std::string_view> pair) const override {
    Encoding out;
    for (int part = 0; part < (pair ? 2 : 1); ++part) {
      auto tokens = encode(part == 0 ? text : *pair);
      if (!tokens) return std::unexpected(std::move(tokens.error()));
      const auto special = [&](std::optional<int> id) {
        if (!id) return;
        out.tokens.push_back({*id, std::string(token(*id)), Span{0, 0}});
        out.type_ids.push_back(part);
        out.special.push_back(true);
      };
      if (add_bos_) special(specials_.bos);
      for (Token& t : *tokens) {
        out.tokens.push_back(std::move(t));
        out.type_ids.push_back(part);
        out.special.push_back(false);
      }
      if (add_eos_) special(specials_.eos);
    }
    return out;
  }

 private:
  sentencepiece::SentencePieceProcessor processor_;
  bool add_bos_, add_eos_;
  SpecialTokens specials_;
  spm::ModelFacts facts_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> parse_sentencepiece(std::string_view model_bytes, const std::string& name,
                                                       bool add_bos, bool add_eos) {
  auto tokenizer = std::make_unique<SentencePieceTokenizer>(add_bos, add_eos);
  ATTN_TRY(tokenizer->load(model_bytes, name));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

Result<std::unique_ptr<Tokenizer>> load_sentencepiece(const std::filesystem::path& model, bool add_bos, bool add_eos) {
  auto bytes = detail::read_regular_file(model, kMaxModelFile, "a tokenizer file");
  if (!bytes) return std::unexpected(std::move(bytes.error()));
  return parse_sentencepiece(*bytes, model.string(), add_bos, add_eos);
}

}  // namespace attn::text
