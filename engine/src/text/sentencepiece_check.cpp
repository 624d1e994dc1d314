// tokenizer.model before libsentencepiece: the protobuf fields that reach its normalizer, and each
// precompiled_charsmap walked from every state darts-clone's commonPrefixSearch can reach (see the header).
#include "sentencepiece_check.h"

#include "../core/try.h"
#include "unicode.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace attn::text::spm {

namespace {

std::optional<std::uint64_t> read_varint(std::string_view bytes, std::size_t& pos) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes[pos++]);
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

struct WireField {
  std::uint64_t number = 0;
  unsigned wire = 0;
  std::string_view payload;  // wire type 2 only
  std::size_t at = 0;        // the payload's first byte in the message
};

// Calls visit(field) for every field of one protobuf message; answers the byte where the encoding breaks,
// or nullopt. Groups (wire types 3 and 4, never written by sentencepiece) count as broken.
template <class Visit>
std::optional<std::size_t> each_field(std::string_view message, Visit&& visit) {
  std::size_t pos = 0;
  while (pos < message.size()) {
    const std::size_t start = pos;
    const auto tag = read_varint(message, pos);
    if (!tag || (*tag >> 3) == 0) return start;
    WireField field{*tag >> 3, static_cast<unsigned>(*tag & 7), {}, pos};
    const std::size_t left = message.size() - pos;
    switch (field.wire) {
      case 0:
        if (!read_varint(message, pos)) return start;
        break;
      case 1:
        if (left < 8) return start;
        pos += 8;
        break;
      case 5:
        if (left < 4) return start;
        pos += 4;
        break;
      case 2: {
        const auto length = read_varint(message, pos);
        if (!length || *length > message.size() - pos) return start;
        field.at = pos;
        field.payload = message.substr(pos, static_cast<std::size_t>(*length));
        pos += static_cast<std::size_t>(*length);
        break;
      }
      default: return start;
    }
    visit(field);
  }
  return std::nullopt;
}

// darts-clone's DoubleArrayUnit.
std::uint64_t unit_offset(std::uint32_t unit) {
  return static_cast<std::uint64_t>(unit >> 10) << ((unit & (1U << 9)) >> 6);
}
std::uint32_t unit_label(std::uint32_t unit) { return unit & ((1U << 31) | 0xFF); }
bool unit_has_leaf(std::uint32_t unit) { return ((unit >> 8) & 1) == 1; }

class CharsmapWalk {
 public:
  CharsmapWalk(std::vector<std::uint32_t> units, std::string_view strings, const std::string& name,
               const std::string& field, std::int64_t field_offset)
      : units_(std::move(units)), strings_(strings), name_(name), field_(field), at_(field_offset) {
    // Each byte's next NUL, and whether the string each NUL ends is UTF-8: every leaf is then checked at once,
    // however many leaves point into one long string.
    next_nul_.assign(strings_.size(), kNoNul);
    string_ok_.assign(strings_.size(), false);
    std::size_t start = 0;
    for (std::size_t i = 0; i < strings_.size(); ++i) {
      if (strings_[i] != '\0') continue;
      string_ok_[i] = !unicode::check_utf8(strings_.substr(start, i - start));
      for (std::size_t k = start; k <= i; ++k) next_nul_[k] = static_cast<std::uint32_t>(i);
      start = i + 1;
    }
  }

  // Every state reachable on some input, breadth first (so each unit's depth is the shortest key reaching it):
  // its children's block lies inside the trie, its leaf's string inside the string table, NUL-terminated,
  // UTF-8, and at most kMaxMapExpansion times its key.
  Result<std::int64_t> check_reachable() {
    const std::uint64_t n = units_.size();
    depth_.assign(n, kUnseen);
    depth_[0] = 0;
    ATTN_TRY(check_block(0));
    std::vector<std::uint32_t> queue{0};
    std::int64_t largest = 1;
    for (std::size_t next = 0; next < queue.size(); ++next) {
      const std::uint32_t u = queue[next];
      const std::uint64_t base = u ^ unit_offset(units_[u]);
      if (u != 0 && unit_has_leaf(units_[u])) {
        std::int64_t ratio = 1;
        ATTN_ASSIGN(ratio, check_leaf(u, base));
        largest = std::max(largest, ratio);
      }
      for (std::uint32_t c = 0; c < 256; ++c) {
        const std::uint64_t v = base ^ c;
        if (unit_label(units_[v]) != c || depth_[v] != kUnseen) continue;
        depth_[v] = depth_[u] + 1;
        ATTN_TRY(check_block(static_cast<std::uint32_t>(v)));
        queue.push_back(static_cast<std::uint32_t>(v));
      }
    }
    return largest;
  }

  // No cycle (commonPrefixSearch would match without end) and at most kMaxPrefixMatches leaves on any path
  // (it writes only that many results but counts, and the normalizer reads, all of them). Depth first,
  // after check_reachable() has bounded every block.
  Result<void> check_paths() {
    std::vector<std::uint8_t> state(units_.size(), 0);  // 0 unseen, 1 on the path, 2 done
    std::vector<int> most(units_.size(), 0);            // leaves on the longest path from the unit on
    struct Frame {
      std::uint32_t unit;
      std::uint32_t next_label;
    };
    std::vector<Frame> path{{0, 0}};
    state[0] = 1;
    while (!path.empty()) {
      const std::uint32_t u = path.back().unit;
      const std::uint64_t base = u ^ unit_offset(units_[u]);
      bool deeper = false;
      while (path.back().next_label < 256) {
        const std::uint32_t c = path.back().next_label++;
        const std::uint64_t v = base ^ c;
        if (unit_label(units_[v]) != c) continue;
        if (state[v] == 1) {
          return refuse(ErrorKind::Malformed,
                        "unit " + with_commas(static_cast<long long>(v)) +
                            " of the trie is reached again from its own key (a cycle): libsentencepiece would match "
                            "it without end",
                        v);
        }
        if (state[v] == 0) {
          state[v] = 1;
          path.push_back({static_cast<std::uint32_t>(v), 0});
          deeper = true;
          break;
        }
        most[u] = std::max(most[u], most[v]);
      }
      if (deeper) continue;
      path.pop_back();
      if (u != 0 && unit_has_leaf(units_[u])) ++most[u];
      if (most[u] > kMaxPrefixMatches) {
        return refuse(ErrorKind::TooLarge,
                      "a key through unit " + with_commas(u) + " of the trie has " + std::to_string(most[u]) +
                          " prefix matches or more, over libsentencepiece's limit of " +
                          std::to_string(kMaxPrefixMatches),
                      u);
      }
      state[u] = 2;
      if (!path.empty()) most[path.back().unit] = std::max(most[path.back().unit], most[u]);
    }
    return {};
  }

 private:
  static constexpr std::uint32_t kUnseen = UINT32_MAX;
  static constexpr std::uint32_t kNoNul = UINT32_MAX;

  std::unexpected<Error> refuse(ErrorKind kind, std::string why, std::uint64_t unit) const {
    const std::int64_t byte = at_ < 0 ? -1 : at_ + 4 + 4 * static_cast<std::int64_t>(unit);
    return fail(kind, field_ + ": " + why, name_, byte);
  }

  // Every byte can follow the unit's key, so its whole 256-unit block must lie inside the trie.
  Result<void> check_block(std::uint32_t u) const {
    const std::uint64_t base = u ^ unit_offset(units_[u]);
    if ((base | 0xFF) >= units_.size()) {
      return refuse(ErrorKind::Malformed,
                    "unit " + with_commas(u) + " of the trie puts its children at units " +
                        with_commas(static_cast<long long>(base & ~std::uint64_t{0xFF})) + " to " +
                        with_commas(static_cast<long long>(base | 0xFF)) + ", past the trie's " +
                        with_commas(static_cast<long long>(units_.size())) + " units",
                    u);
    }
    return {};
  }

  // The replacement string of a key ending at unit u: the largest whole number of its bytes per key byte.
  Result<std::int64_t> check_leaf(std::uint32_t u, std::uint64_t base) const {
    const std::uint32_t value = units_[base] & ((1U << 31) - 1);
    const std::string table =
        " of the " + with_commas(static_cast<long long>(strings_.size())) + "-byte string table after the trie";
    if (value >= strings_.size()) {
      return refuse(
          ErrorKind::Malformed,
          "unit " + with_commas(u) + " of the trie points to byte " + with_commas(value) + table + ", past its end", u);
    }
    const std::uint32_t end = next_nul_[value];
    if (end == kNoNul) {
      return refuse(ErrorKind::Malformed,
                    "the replacement at byte " + with_commas(value) + table + " (unit " + with_commas(u) +
                        ") has no NUL before the table ends",
                    u);
    }
    const std::string_view replacement = strings_.substr(value, end - value);
    // A string that is UTF-8 from its NUL-delimited start is UTF-8 from any character boundary in it.
    const bool inside_a_character = !replacement.empty() && (static_cast<unsigned char>(replacement[0]) & 0xC0) == 0x80;
    if (!string_ok_[end] || inside_a_character) {
      return refuse(
          ErrorKind::Encoding,
          "the replacement at byte " + with_commas(value) + table + " (unit " + with_commas(u) + ") is not UTF-8", u);
    }
    const std::int64_t key = depth_[u];
    if (static_cast<std::int64_t>(replacement.size()) > kMaxMapExpansion * key) {
      return refuse(ErrorKind::TooLarge,
                    "the replacement at byte " + with_commas(value) + table + " is " +
                        with_commas(static_cast<long long>(replacement.size())) + " bytes for a key of " +
                        with_commas(key) + (key == 1 ? " byte" : " bytes") + ", over the limit of " +
                        std::to_string(kMaxMapExpansion) + " times its key",
                    u);
    }
    return std::max<std::int64_t>(1, (static_cast<std::int64_t>(replacement.size()) + key - 1) / key);
  }

  std::vector<std::uint32_t> units_;
  std::string_view strings_;
  const std::string& name_;
  const std::string& field_;
  std::int64_t at_;
  std::vector<std::uint32_t> depth_;
  std::vector<std::uint32_t> next_nul_;  // per byte of the string table
  std::vector<bool> string_ok_;          // per NUL: the string it ends is UTF-8
};

}  // namespace

Result<std::int64_t> check_charsmap(std::string_view blob, const std::string& name, const std::string& field,
                                    std::int64_t field_offset) {
  const auto refuse = [&](ErrorKind kind, const std::string& why, std::int64_t byte) {
    return fail(kind, field + ": " + why, name, field_offset < 0 ? -1 : field_offset + byte);
  };
  const auto bytes = [](std::size_t n) { return with_commas(static_cast<long long>(n)) + " bytes"; };
  if (blob.size() > kMaxCharsmapBytes) {
    return refuse(ErrorKind::TooLarge, "is " + bytes(blob.size()) + ", over the limit of " + bytes(kMaxCharsmapBytes),
                  0);
  }
  if (blob.size() < 4)
    return refuse(ErrorKind::Truncated, "is " + bytes(blob.size()) + ", less than its 4-byte trie size", 0);
  const auto byte_at = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(blob[i])); };
  const auto word_at = [&](std::size_t i) {
    return byte_at(i) | (byte_at(i + 1) << 8) | (byte_at(i + 2) << 16) | (byte_at(i + 3) << 24);
  };
  const std::uint32_t trie_bytes = word_at(0);
  // libsentencepiece compares the trie's size with the whole blob, its own 4 bytes included.
  if (trie_bytes > blob.size() - 4) {
    return refuse(ErrorKind::Truncated,
                  "its trie is " + bytes(trie_bytes) + " but only " + bytes(blob.size() - 4) + " follow its size", 0);
  }
  if (trie_bytes < 4 * 256 || trie_bytes % 4 != 0) {
    return refuse(
        ErrorKind::Malformed,
        "its trie is " + bytes(trie_bytes) + ", not a whole number of 4-byte units and at least one block of 256", 0);
  }
  std::vector<std::uint32_t> units(trie_bytes / 4);
  for (std::size_t i = 0; i < units.size(); ++i) units[i] = word_at(4 + 4 * i);
  CharsmapWalk walk(std::move(units), blob.substr(4 + trie_bytes), name, field, field_offset);
  std::int64_t largest = 1;
  ATTN_ASSIGN(largest, walk.check_reachable());
  ATTN_TRY(walk.check_paths());
  return largest;
}

Result<ModelFacts> check_model(std::string_view bytes, const std::string& name) {
  struct Charsmap {
    std::string_view blob;
    std::int64_t at = -1;
  };
  Charsmap normalizer, denormalizer;
  std::size_t self_test = 0;
  std::optional<std::size_t> broken_at;
  // NormalizerSpec's precompiled_charsmap is its field 2; protobuf merges a message field written twice, and
  // the last precompiled_charsmap of all wins.
  const auto read_spec = [&](const WireField& spec, Charsmap& map) {
    const auto broken = each_field(spec.payload, [&](const WireField& f) {
      if (f.number == 2 && f.wire == 2) map = {f.payload, static_cast<std::int64_t>(spec.at + f.at)};
    });
    if (broken && !broken_at) broken_at = spec.at + *broken;
  };
  // A piece (its field 1) that is not UTF-8 or holds a NUL: libsentencepiece cannot look it up again (its id
  // comes back as the unknown token's), and no text could spell it.
  std::optional<Error> bad_piece;
  std::size_t pieces = 0;
  const auto read_piece = [&](const WireField& entry) {
    const std::size_t index = pieces++;
    const auto broken = each_field(entry.payload, [&](const WireField& f) {
      if (f.number != 1 || f.wire != 2 || bad_piece) return;
      const bool nul = f.payload.find('\0') != std::string_view::npos;
      if (!nul && !unicode::check_utf8(f.payload)) return;
      bad_piece = Error{name, static_cast<std::int64_t>(entry.at + f.at), -1,
                        "pieces[" + std::to_string(index) + "] " + (nul ? "holds a NUL byte" : "is not UTF-8"),
                        nul ? ErrorKind::Malformed : ErrorKind::Encoding};
    });
    if (broken && !broken_at) broken_at = entry.at + *broken;
  };
  // ModelProto: pieces 1, normalizer_spec 3, self_test_data 4, denormalizer_spec 5.
  const auto broken = each_field(bytes, [&](const WireField& f) {
    if (f.wire != 2) return;
    if (f.number == 1) read_piece(f);
    if (f.number == 3) read_spec(f, normalizer);
    if (f.number == 5) read_spec(f, denormalizer);
    if (f.number == 4) self_test += f.payload.size();
  });
  if (broken) broken_at = broken;
  if (broken_at) {
    return fail(ErrorKind::Malformed, "is not a SentencePiece model: its protobuf encoding breaks", name,
                static_cast<std::int64_t>(*broken_at));
  }
  if (bad_piece) return std::unexpected(std::move(*bad_piece));
  if (self_test > kMaxSelfTestBytes) {
    return fail(ErrorKind::TooLarge,
                "self_test_data is " + with_commas(static_cast<long long>(self_test)) + " bytes, over the limit of " +
                    with_commas(static_cast<long long>(kMaxSelfTestBytes)) +
                    " bytes (libsentencepiece encodes every sample while loading)",
                name);
  }
  ModelFacts facts;
  if (!normalizer.blob.empty()) {
    std::int64_t ratio = 1;
    ATTN_ASSIGN(ratio, check_charsmap(normalizer.blob, name, "normalizer_spec.precompiled_charsmap", normalizer.at));
    facts.expansion = 3 * ratio;
  }
  if (!denormalizer.blob.empty()) {
    ATTN_TRY(check_charsmap(denormalizer.blob, name, "denormalizer_spec.precompiled_charsmap", denormalizer.at));
  }
  return facts;
}

}  // namespace attn::text::spm
