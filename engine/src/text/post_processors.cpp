// tokenizer.json post-processors: the special tokens a model expects around its text(s), and their type ids.
// TemplateProcessing ("<s> $A" for Llama, "[CLS] $A [SEP] $B:1 [SEP]:1" for BERT), BertProcessing,
// RobertaProcessing, ByteLevel (offsets without their leading and trailing spaces) and Sequence.
#include "pipeline.h"

#include <nlohmann/json.hpp>

#include <map>

namespace attn::text::pipeline {

Encoded merge_encodings(std::vector<Encoded>& encodings) {
  if (encodings.size() == 1) return std::move(encodings.front());
  Encoded out;
  for (Encoded& e : encodings) {
    out.tokens.insert(out.tokens.end(), std::make_move_iterator(e.tokens.begin()),
                      std::make_move_iterator(e.tokens.end()));
    out.type_ids.insert(out.type_ids.end(), e.type_ids.begin(), e.type_ids.end());
    out.special.insert(out.special.end(), e.special.begin(), e.special.end());
  }
  return out;
}

namespace {

struct SpecialPiece {
  std::vector<int> ids;
  std::vector<std::string> tokens;
};

void add_special(Encoded& out, const SpecialPiece& piece, int type_id) {
  for (std::size_t k = 0; k < piece.ids.size(); ++k) {
    out.tokens.push_back({piece.ids[k], piece.tokens[k], Span{0, 0}});
    out.type_ids.push_back(type_id);
    out.special.push_back(true);
  }
}

void add_sequence(Encoded& out, Encoded& e, int type_id) {
  for (std::size_t k = 0; k < e.tokens.size(); ++k) {
    out.tokens.push_back(std::move(e.tokens[k]));
    out.type_ids.push_back(type_id);
    out.special.push_back(e.special[k]);
  }
}

struct TemplateItem {
  bool special = false;
  std::string name;  // "A" / "B" for a sequence, the special token's key otherwise
  int type_id = 0;
};

class Template final : public PostProcessor {
 public:
  Template(std::vector<TemplateItem> single, std::vector<TemplateItem> pair,
           std::map<std::string, SpecialPiece> specials)
      : single_(std::move(single)), pair_(std::move(pair)), specials_(std::move(specials)) {}
  void process(std::vector<Encoded>& encodings, bool add_special_tokens) const override {
    const auto& items = encodings.size() > 1 ? pair_ : single_;
    Encoded out;
    for (const TemplateItem& item : items) {
      if (item.special) {
        if (add_special_tokens) add_special(out, specials_.at(item.name), item.type_id);
        continue;
      }
      const std::size_t which = item.name == "B" ? 1 : 0;
      if (which < encodings.size()) add_sequence(out, encodings[which], item.type_id);
    }
    encodings.assign(1, std::move(out));
  }

 private:
  std::vector<TemplateItem> single_, pair_;
  std::map<std::string, SpecialPiece> specials_;
};

// Leading and trailing spaces (byte-level 'Ġ' or white space) leave the offsets, as the library's
// process_offsets does; with add_prefix_space the first token keeps the one space that was added.
void trim_offsets(Encoded& e, bool add_prefix_space) {
  const auto is_space = [](char32_t c) { return c == byte_to_char(' ') || unicode::is_white_space(c); };
  for (std::size_t k = 0; k < e.tokens.size(); ++k) {
    Token& t = e.tokens[k];
    std::vector<char32_t> chars;
    for (std::size_t i = 0; i < t.text.size();) chars.push_back(unicode::next_code_point(t.text, i));
    std::int32_t leading = 0, trailing = 0;
    while (leading < static_cast<std::int32_t>(chars.size()) && is_space(chars[static_cast<std::size_t>(leading)]))
      ++leading;
    while (trailing < static_cast<std::int32_t>(chars.size()) &&
           is_space(chars[chars.size() - 1 - static_cast<std::size_t>(trailing)])) {
      ++trailing;
    }
    if (leading > 0) {
      const bool first = k == 0 || t.span.begin == 0;
      if (first && add_prefix_space && leading == 1) leading = 0;
      t.span.begin = std::min(t.span.begin + leading, t.span.end);
    }
    if (trailing > 0 && t.span.end >= trailing) t.span.end = std::max(t.span.end - trailing, t.span.begin);
  }
}

class ByteLevelPost final : public PostProcessor {
 public:
  ByteLevelPost(bool trim, bool prefix_space) : trim_(trim), prefix_space_(prefix_space) {}
  void process(std::vector<Encoded>& encodings, bool) const override {
    if (!trim_) return;
    for (Encoded& e : encodings) trim_offsets(e, prefix_space_);
  }

 private:
  bool trim_, prefix_space_;
};

// BertProcessing: [CLS] A [SEP] B [SEP]; RobertaProcessing: <s> A </s> </s> B </s>.
class Surround final : public PostProcessor {
 public:
  Surround(SpecialPiece cls, SpecialPiece sep, bool roberta, bool trim, bool prefix_space)
      : cls_(std::move(cls)), sep_(std::move(sep)), roberta_(roberta), trim_(trim), prefix_space_(prefix_space) {}
  void process(std::vector<Encoded>& encodings, bool add_special_tokens) const override {
    if (roberta_ && trim_) {
      for (Encoded& e : encodings) trim_offsets(e, prefix_space_);
    }
    if (!add_special_tokens) return;
    Encoded out;
    add_special(out, cls_, 0);
    add_sequence(out, encodings[0], 0);
    add_special(out, sep_, 0);
    if (encodings.size() > 1) {
      const int type_id = roberta_ ? 0 : 1;
      if (roberta_) add_special(out, sep_, type_id);
      add_sequence(out, encodings[1], type_id);
      add_special(out, sep_, type_id);
    }
    encodings.assign(1, std::move(out));
  }

 private:
  SpecialPiece cls_, sep_;
  bool roberta_, trim_, prefix_space_;
};

class SequencePost final : public PostProcessor {
 public:
  explicit SequencePost(std::vector<std::unique_ptr<PostProcessor>> parts) : parts_(std::move(parts)) {}
  void process(std::vector<Encoded>& encodings, bool add_special_tokens) const override {
    for (const auto& part : parts_) part->process(encodings, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

Result<std::vector<TemplateItem>> template_items(const Json& j, const char* key, const std::string& where,
                                                 const std::map<std::string, SpecialPiece>& specials) {
  std::vector<TemplateItem> items;
  const auto list = j.find(key);
  if (list == j.end() || list->is_null()) return items;
  if (!list->is_array()) return bad_field(field(where, key), "must be an array");
  for (std::size_t k = 0; k < list->size(); ++k) {
    const Json& entry = (*list)[k];
    const std::string at = field(where, key) + "[" + std::to_string(k) + "]";
    if (!entry.is_object() || entry.size() != 1)
      return bad_field(at, "must be {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    const std::string kind = entry.begin().key();
    const Json& body = entry.begin().value();
    TemplateItem item;
    item.special = kind == "SpecialToken";
    if (!item.special && kind != "Sequence")
      return bad_field(at, "must be {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    if (!body.is_object()) return bad_field(at + "." + kind, "must be an object");
    ATTN_ASSIGN(item.name, string_field(body, "id", at + "." + kind, ""));
    std::int64_t type_id = 0;
    ATTN_ASSIGN(type_id, int_field(body, "type_id", at + "." + kind, 0));
    if (type_id < 0 || type_id > 255)
      return bad_field(at + "." + kind + ".type_id", "is out of range", ErrorKind::OutOfRange);
    item.type_id = static_cast<int>(type_id);
    if (item.special && !specials.contains(item.name)) {
      return bad_field(at, "names the special token \"" + item.name + "\", which special_tokens does not define",
                       ErrorKind::Mismatch);
    }
    if (!item.special && item.name != "A" && item.name != "B") return bad_field(at, "must name the sequence A or B");
    items.push_back(std::move(item));
  }
  return items;
}

// BertProcessing's "sep": ["[SEP]", 102].
Result<SpecialPiece> named_pair(const Json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_string() || !(*it)[1].is_number_integer()) {
    return bad_field(field(where, key), "must be [token, id]");
  }
  const auto id = (*it)[1].get<std::int64_t>();
  if (id < 0 || id > INT32_MAX) return bad_field(field(where, key), "has an id out of range", ErrorKind::OutOfRange);
  return SpecialPiece{{static_cast<int>(id)}, {(*it)[0].get<std::string>()}};
}

}  // namespace

Result<std::unique_ptr<PostProcessor>> make_post_processor(const Json& j, const std::string& where) {
  if (!j.is_object()) return bad_field(where, "must be an object or null");
  const std::string type = type_of(j);
  if (type == "TemplateProcessing") {
    std::map<std::string, SpecialPiece> specials;
    if (const auto map = j.find("special_tokens"); map != j.end() && !map->is_null()) {
      if (!map->is_object()) return bad_field(field(where, "special_tokens"), "must be an object");
      for (const auto& [name, body] : map->items()) {
        const std::string at = field(where, "special_tokens") + "[\"" + name + "\"]";
        const auto ids = body.find("ids");
        const auto tokens = body.find("tokens");
        if (!body.is_object() || ids == body.end() || tokens == body.end() || !ids->is_array() || !tokens->is_array() ||
            ids->size() != tokens->size()) {
          return bad_field(at, "must have ids and tokens of the same length");
        }
        SpecialPiece piece;
        for (std::size_t k = 0; k < ids->size(); ++k) {
          if (!(*ids)[k].is_number_integer() || !(*tokens)[k].is_string())
            return bad_field(at, "has a bad id or token");
          const auto id = (*ids)[k].get<std::int64_t>();
          if (id < 0 || id > INT32_MAX) return bad_field(at, "has an id out of range", ErrorKind::OutOfRange);
          piece.ids.push_back(static_cast<int>(id));
          piece.tokens.push_back((*tokens)[k].get<std::string>());
        }
        specials.emplace(name, std::move(piece));
      }
    }
    std::vector<TemplateItem> single, pair;
    ATTN_ASSIGN(single, template_items(j, "single", where, specials));
    ATTN_ASSIGN(pair, template_items(j, "pair", where, specials));
    return std::make_unique<Template>(std::move(single), std::move(pair), std::move(specials));
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    const bool roberta = type == "RobertaProcessing";
    SpecialPiece sep, cls;
    ATTN_ASSIGN(sep, named_pair(j, "sep", where));
    ATTN_ASSIGN(cls, named_pair(j, "cls", where));
    bool trim = true, prefix_space = true;
    ATTN_ASSIGN(trim, bool_field(j, "trim_offsets", where, true));
    ATTN_ASSIGN(prefix_space, bool_field(j, "add_prefix_space", where, true));
    return std::make_unique<Surround>(std::move(cls), std::move(sep), roberta, trim, prefix_space);
  }
  if (type == "ByteLevel") {
    bool trim = true, prefix_space = true;
    ATTN_ASSIGN(trim, bool_field(j, "trim_offsets", where, true));
    ATTN_ASSIGN(prefix_space, bool_field(j, "add_prefix_space", where, true));
    return std::make_unique<ByteLevelPost>(trim, prefix_space);
  }
  if (type == "Sequence") {
    const auto list = j.find("processors");
    if (list == j.end() || !list->is_array()) return bad_field(field(where, "processors"), "must be an array");
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (std::size_t k = 0; k < list->size(); ++k) {
      auto part = make_post_processor((*list)[k], where + ".processors[" + std::to_string(k) + "]");
      if (!part) return std::unexpected(std::move(part.error()));
      parts.push_back(std::move(*part));
    }
    return std::make_unique<SequencePost>(std::move(parts));
  }
  return unsupported_type(where, type);
}

std::unique_ptr<PostProcessor> bos_eos_template(std::optional<std::pair<std::string, int>> bos,
                                                std::optional<std::pair<std::string, int>> eos) {
  std::map<std::string, SpecialPiece> specials;
  std::vector<TemplateItem> single, pair;
  for (int type_id = 0; type_id < 2; ++type_id) {
    auto& items = type_id == 0 ? single : pair;
    // pair = single for A, then the same around B with type id 1 (LlamaTokenizerFast.update_post_processor).
    for (int part = 0; part <= type_id; ++part) {
      if (bos) items.push_back({true, bos->first, part});
      items.push_back({false, part == 0 ? "A" : "B", part});
      if (eos) items.push_back({true, eos->first, part});
    }
  }
  if (bos) specials[bos->first] = {{bos->second}, {bos->first}};
  if (eos) specials[eos->first] = {{eos->second}, {eos->first}};
  return std::make_unique<Template>(std::move(single), std::move(pair), std::move(specials));
}

}  // namespace attn::text::pipeline
