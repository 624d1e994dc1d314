#include "attn/io/safetensors.h"

#include "attn/io/ggml_types.h"

#include "../core/atomic_write.h"
#include "../core/file_read.h"
#include "../core/file_read_mapped.h"
#include "../core/json_config.h"
#include "../core/json_keys.h"
#include "half.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace attn::io {

namespace {

using json = nlohmann::json;
using detail::json_reason;
using detail::quote;

constexpr std::uint64_t kMaxHeader = 100'000'000;  // the reference's MAX_HEADER_SIZE
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

// In the order of the reference's Dtype enum, which "MUST be in increasing alignment order": its
// serialize sorts by that order, largest first.
constexpr std::array<DTypeInfo, 15> kDTypes{{
    {DType::BOOL, "BOOL", 1},
    {DType::U8, "U8", 1},
    {DType::I8, "I8", 1},
    {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},
    {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},
    {DType::I32, "I32", 4},
    {DType::U32, "U32", 4},
    {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},
    {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},
}};

std::size_t alignment_rank(DType dtype) {
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    if (kDTypes[i].dtype == dtype) return i;
  }
  return 0;
}

std::optional<DType> dtype_named(std::string_view name) {
  for (const auto& d : kDTypes) {
    if (d.name == name) return d.dtype;
  }
  return std::nullopt;
}

std::string known_dtypes() {
  std::string out;
  for (const auto& d : kDTypes) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

bool is_float(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64;
}

std::string offsets_string(std::int64_t begin, std::int64_t end) {
  return "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// Product of the shape, or nullopt when it does not fit in 63 bits.
std::optional<std::int64_t> element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

std::optional<std::int64_t> byte_count(const std::vector<std::int64_t>& shape, DType dtype) {
  const auto n = element_count(shape);
  std::int64_t bytes = 0;
  if (!n || __builtin_mul_overflow(*n, static_cast<std::int64_t>(dtype_size(dtype)), &bytes)) return std::nullopt;
  return bytes;
}

// data_start + relative, saturating: offsets from a hostile header may be near 2^63.
std::int64_t file_offset(std::int64_t data_start, std::int64_t relative) {
  return relative > kMaxInt64 - data_start ? kMaxInt64 : data_start + relative;
}

// Index of the first byte that is not well-formed UTF-8 as Rust's str::from_utf8 (the reference's check)
// judges it: no overlong forms, no surrogates, nothing above U+10FFFF; npos when all are.
std::size_t invalid_utf8_at(std::string_view text) {
  const auto* b = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned c = b[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + length > n || b[i + 1] < lo || b[i + 1] > hi) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if ((b[i + k] & 0xC0) != 0x80) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

struct Why {
  ErrorKind kind;
  std::string text;
};

// A whole number in [0, 2^63) from a JSON value, or why not.
std::optional<Why> non_negative(const json& v, std::int64_t& out) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(kMaxInt64)) return Why{ErrorKind::TooLarge, std::to_string(u) + " is too large"};
    out = static_cast<std::int64_t>(u);
    return std::nullopt;
  }
  if (v.is_number_integer()) return Why{ErrorKind::OutOfRange, std::to_string(v.get<std::int64_t>()) + " is negative"};
  return Why{ErrorKind::Malformed, v.dump() + " is not a whole number"};
}

struct Layout {
  std::vector<TensorInfo> tensors;  // in data order
  std::map<std::string, std::string> metadata;
  std::int64_t data_start = 0;
};

Result<TensorInfo> read_entry(const std::string& key, const json& v, const std::string& file, std::int64_t at) {
  const auto bad = [&](ErrorKind kind, const std::string& why) {
    return fail(kind, "tensor " + quote(key) + ": " + why, file, at);
  };
  if (!v.is_object()) {
    return bad(ErrorKind::Malformed,
               "the entry is " + std::string(v.type_name()) + ", not an object with dtype, shape and data_offsets");
  }
  TensorInfo info;
  info.name = key;

  const auto dtype = v.find("dtype");
  if (dtype == v.end()) return bad(ErrorKind::Malformed, "no \"dtype\"");
  if (!dtype->is_string()) {
    return bad(ErrorKind::Malformed, "\"dtype\" is " + std::string(dtype->type_name()) + ", not a string");
  }
  const auto known = dtype_named(dtype->get_ref<const std::string&>());
  if (!known) return bad(ErrorKind::Unsupported, "unknown dtype " + dtype->dump() + " (known: " + known_dtypes() + ")");
  info.dtype = *known;

  const auto shape = v.find("shape");
  if (shape == v.end()) return bad(ErrorKind::Malformed, "no \"shape\"");
  if (!shape->is_array()) {
    return bad(ErrorKind::Malformed, "\"shape\" is " + std::string(shape->type_name()) + ", not an array");
  }
  for (const json& d : *shape) {
    std::int64_t n = 0;
    if (auto why = non_negative(d, n)) return bad(why->kind, "\"shape\" " + shape->dump() + ": dimension " + why->text);
    info.shape.push_back(n);
  }

  const auto offsets = v.find("data_offsets");
  if (offsets == v.end()) return bad(ErrorKind::Malformed, "no \"data_offsets\"");
  if (!offsets->is_array() || offsets->size() != 2) {
    return bad(ErrorKind::Malformed, "\"data_offsets\" is " + offsets->dump() + ", not an array [begin, end]");
  }
  if (auto why = non_negative((*offsets)[0], info.begin)) return bad(why->kind, "\"data_offsets\" begin " + why->text);
  if (auto why = non_negative((*offsets)[1], info.end)) return bad(why->kind, "\"data_offsets\" end " + why->text);
  if (info.end < info.begin) {
    return bad(ErrorKind::Malformed, offsets_string(info.begin, info.end) + " end before they begin");
  }

  const auto needed = byte_count(info.shape, info.dtype);
  if (!needed) {
    return bad(ErrorKind::TooLarge, "shape " + shape_text(info.shape) + " of " + std::string(to_string(info.dtype)) +
                                        " holds more bytes than fit in 63 bits");
  }
  if (info.end - info.begin != *needed) {
    return bad(ErrorKind::Mismatch, offsets_string(info.begin, info.end) + " hold " +
                                        std::to_string(info.end - info.begin) + " bytes but shape " +
                                        shape_text(info.shape) + " of " + std::string(to_string(info.dtype)) +
                                        " needs " + std::to_string(*needed));
  }
  return info;
}

// The header's length from the first 8 bytes (little-endian), checked against the limit and the file's size.
// `quote_text`: a text file's first bytes are shown in the error. Only for bytes the caller gave (parse()): a path
// opened may be a link to any other file (a symlinked shard of a model folder someone sent), and no byte of it is
// echoed.
Result<std::uint64_t> read_header_length(const std::uint8_t* data, std::size_t size, const std::string& file,
                                         bool quote_text) {
  const auto total = static_cast<std::int64_t>(size);
  if (size == 0) {
    return fail(ErrorKind::Truncated, "the file is empty; a safetensors file begins with an 8-byte header length", file,
                0);
  }
  if (size < 8) {
    return fail(ErrorKind::Truncated,
                "the file ends at byte " + std::to_string(size) + ", inside the 8-byte header length", file, total);
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | data[i];
  // Eight bytes of text can never be a header length under the limit (its high bytes would be zero), so a
  // file that begins with text is most likely not a safetensors file at all: say that, not the number.
  const auto is_text = [](std::uint8_t c) { return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r'; };
  if (std::all_of(data, data + 8, is_text)) {
    if (!quote_text) {
      return fail(ErrorKind::Malformed,
                  "not a safetensors file: it begins with text, where a safetensors file begins with an 8-byte header "
                  "length and a JSON header",
                  file, 0);
    }
    std::string start;
    for (std::size_t i = 0; i < std::min<std::size_t>(size, 16) && is_text(data[i]); ++i) {
      start += data[i] == '\n'   ? std::string("\\n")
               : data[i] == '\r' ? std::string("\\r")
               : data[i] == '\t' ? std::string("\\t")
                                 : std::string(1, char(data[i]));
    }
    return fail(ErrorKind::Malformed,
                "not a safetensors file: it begins with text (\"" + start +
                    "\"), where a safetensors file begins with an 8-byte header length and a JSON header",
                file, 0);
  }
  if (n > kMaxHeader) {
    return fail(ErrorKind::TooLarge,
                "header length " + std::to_string(n) + " is over the limit of " + std::to_string(kMaxHeader) + " bytes",
                file, 0);
  }
  if (8 + n > size) {
    return fail(
        ErrorKind::Truncated,
        "header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(size) + " bytes)",
        file, 0);
  }
  return n;
}

// The header's text (the bytes after the length) parsed: UTF-8 as the reference judges it, no byte-order mark,
// a JSON object.
Result<json> parse_header(std::string_view text, const std::string& file) {
  if (const auto bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    return fail(
        ErrorKind::Encoding,
        "the header is not valid UTF-8 (byte value " + std::to_string(static_cast<unsigned char>(text[bad])) + ")",
        file, 8 + static_cast<std::int64_t>(bad));
  }
  // nlohmann skips a byte-order mark; the reference reader (serde_json) refuses one, and so does this.
  if (text.starts_with("\xEF\xBB\xBF")) {
    return fail(ErrorKind::Malformed,
                "the header starts with a UTF-8 byte-order mark (EF BB BF); a safetensors header is JSON without one",
                file, 8);
  }
  auto parsed = detail::parse_json(text, file, 8);
  if (!parsed) {
    Error e = std::move(parsed.error());
    // Any syntax error of the header is Malformed (its bytes are UTF-8, checked above), at its byte.
    if (e.kind != ErrorKind::TooLarge) e.kind = ErrorKind::Malformed;
    if (e.offset < 0) e.offset = 8;
    e.reason = "the header is " + e.reason;
    return std::unexpected(std::move(e));
  }
  if (!parsed->is_object()) {
    return fail(ErrorKind::Malformed, "the header is " + std::string(parsed->type_name()) + ", not a JSON object", file,
                8);
  }
  return std::move(*parsed);
}

// nlohmann keeps the last of two equal keys; the reference's map would too, silently. Refused here, at the
// top level and inside each entry ("dtype" given twice: the last would win), as the reference refuses them.
Result<void> refuse_duplicate_keys(std::string_view text, const std::vector<detail::JsonKey>& keys,
                                   const std::string& file) {
  std::unordered_map<std::string_view, std::int64_t> first_at;
  for (const auto& key : keys) {
    const std::int64_t at = 8 + key.offset;
    const auto [seen, inserted] = first_at.emplace(key.name, at);
    if (!inserted) {
      const std::string what = key.name == "__metadata__" ? quote(key.name) : "tensor " + quote(key.name);
      return fail(ErrorKind::Malformed,
                  what + " appears twice in the header (first at byte " + std::to_string(seen->second) + ")", file, at);
    }
  }
  std::map<std::pair<std::int64_t, std::string_view>, std::int64_t> entry_first_at;
  for (const auto& key : detail::object_keys(text, 2)) {
    const auto [seen, inserted] = entry_first_at.emplace(std::pair{key.object, std::string_view(key.name)}, key.offset);
    if (inserted) continue;
    // The entry is the value of the last top-level key before its opening brace.
    std::string entry;
    for (const auto& top : keys) {
      if (top.offset < key.object) entry = top.name;
    }
    const std::string what = entry == "__metadata__" ? quote(entry) : "tensor " + quote(entry);
    return fail(ErrorKind::Malformed,
                what + " gives " + quote(key.name) + " twice (first at byte " + std::to_string(8 + seen->second) + ")",
                file, 8 + key.offset);
  }
  return {};
}

// "__metadata__", an object of strings (or null, as the reference's Option), into the layout.
Result<void> read_metadata(const json& value, const std::string& file, std::int64_t at, Layout& layout) {
  if (value.is_null()) return {};
  if (!value.is_object()) {
    return fail(ErrorKind::Malformed,
                "\"__metadata__\" is " + std::string(value.type_name()) + ", not an object of strings", file, at);
  }
  for (const auto& [k, v] : value.items()) {
    if (!v.is_string()) {
      return fail(ErrorKind::Malformed,
                  "\"__metadata__\" entry " + quote(k) + " is " + std::string(v.type_name()) + ", not a string", file,
                  at);
    }
    layout.metadata[k] = v.get<std::string>();
  }
  return {};
}

// Every key of the header, in text order: the metadata and one TensorInfo per tensor.
Result<void> read_entries(const json& header, const std::vector<detail::JsonKey>& keys, const std::string& file,
                          Layout& layout) {
  bool has_metadata = false;
  for (const auto& key : keys) {
    const std::int64_t at = 8 + key.offset;
    has_metadata = has_metadata || key.name == "__metadata__";
    const auto found = header.find(key.name);
    if (found == header.end()) continue;  // cannot happen: the scan and the parser agree on valid JSON
    if (key.name == "__metadata__") {
      if (auto ok = read_metadata(*found, file, at, layout); !ok) return ok;
      continue;
    }
    auto info = read_entry(key.name, *found, file, at);
    if (!info) return std::unexpected(info.error());
    layout.tensors.push_back(std::move(*info));
  }
  if (layout.tensors.size() + (has_metadata ? 1 : 0) != header.size()) {
    return fail(ErrorKind::Malformed, "the header's keys could not all be located", file,
                8);  // defensive: scanner and parser disagree
  }
  return {};
}

// Sorted by offsets (as the reference sorts), the tensors must tile the data section from 0 to the file's end.
Result<void> check_tiling(Layout& layout, std::int64_t total, const std::string& file) {
  auto& tensors = layout.tensors;
  std::stable_sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::int64_t expected = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo& t : tensors) {
    if (t.begin != expected) {
      std::string why;
      if (!previous) {
        why = " leave bytes 0 to " + std::to_string(t.begin) +
              " of the data section to no tensor: the first tensor's data must begin at 0";
      } else if (t.begin > expected) {
        why = " leave a gap: bytes " + std::to_string(expected) + " to " + std::to_string(t.begin) +
              " of the data section belong to no tensor (the previous tensor, " + quote(previous->name) + ", ends at " +
              std::to_string(expected) + ")";
      } else {
        why = " overlap tensor " + quote(previous->name) + " (" + offsets_string(previous->begin, previous->end) + ")";
      }
      return fail(ErrorKind::Malformed, "tensor " + quote(t.name) + ": " + offsets_string(t.begin, t.end) + why, file,
                  file_offset(layout.data_start, t.begin));
    }
    expected = t.end;
    previous = &t;
  }
  const std::int64_t data_size = total - layout.data_start;
  if (expected > data_size) {
    for (const TensorInfo& t : tensors) {
      if (t.end > data_size) {
        return fail(ErrorKind::Truncated,
                    "tensor " + quote(t.name) + ": " + offsets_string(t.begin, t.end) +
                        " run past the end of the file: its data section holds " + std::to_string(data_size) +
                        " bytes (the file is " + std::to_string(total) + " bytes)",
                    file, file_offset(layout.data_start, t.begin));
      }
    }
  }
  if (expected < data_size) {
    const std::string extra = std::to_string(data_size - expected) + " bytes";
    if (!previous) {
      return fail(ErrorKind::Malformed,
                  extra + " follow a header that describes no tensors; the file must end with the header", file,
                  layout.data_start);
    }
    return fail(ErrorKind::Malformed,
                "tensor " + quote(previous->name) + ": its data is the last and ends at byte " +
                    std::to_string(layout.data_start + expected) + ", but " + extra + " follow it",
                file, layout.data_start + expected);
  }
  return {};
}

// The reference's read_metadata and Metadata::validate, with every refusal naming its byte.
Result<Layout> read_layout(const std::uint8_t* data, std::size_t size, const std::string& file, bool quote_text) {
  const auto n = read_header_length(data, size, file, quote_text);
  if (!n) return std::unexpected(n.error());
  Layout layout;
  layout.data_start = 8 + static_cast<std::int64_t>(*n);
  const std::string_view text(reinterpret_cast<const char*>(data + 8), static_cast<std::size_t>(*n));
  const auto header = parse_header(text, file);
  if (!header) return std::unexpected(header.error());
  const auto keys = detail::top_level_keys(text);
  if (auto ok = refuse_duplicate_keys(text, keys, file); !ok) return std::unexpected(ok.error());
  if (auto ok = read_entries(*header, keys, file, layout); !ok) return std::unexpected(ok.error());
  if (auto ok = check_tiling(layout, static_cast<std::int64_t>(size), file); !ok) return std::unexpected(ok.error());
  return layout;
}

std::uint16_t u16_at(const std::byte* p) {
  return static_cast<std::uint16_t>(static_cast<unsigned>(p[0]) | static_cast<unsigned>(p[1]) << 8);
}

}  // namespace

std::string_view to_string(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  return dtype == DType::GGML ? "GGML" : "unknown";
}

std::size_t dtype_size(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.size;
  }
  return 1;
}

std::int64_t TensorInfo::elements() const { return element_count(shape).value_or(kMaxInt64); }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

bool convert_to_float(DType dtype, std::span<const std::byte> bytes, std::span<float> out) {
  if (!is_float(dtype) || bytes.size() != out.size() * dtype_size(dtype)) return false;
  const std::byte* p = bytes.data();
  float* o = out.data();
  const std::size_t n = out.size();
  static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
  switch (dtype) {
    case DType::F32:
      if (n) std::memcpy(o, p, n * sizeof(float));  // the data may sit at any alignment
      break;
    case DType::F16:
      for (std::size_t i = 0; i < n; ++i) o[i] = half_to_float(u16_at(p + 2 * i));
      break;
    case DType::BF16:
      for (std::size_t i = 0; i < n; ++i)
        o[i] = std::bit_cast<float>(static_cast<std::uint32_t>(u16_at(p + 2 * i)) << 16);
      break;
    case DType::F64:
      for (std::size_t i = 0; i < n; ++i) {
        double d = 0.0;
        std::memcpy(&d, p + 8 * i, sizeof d);
        o[i] = static_cast<float>(d);
      }
      break;
    default: return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// Reading

struct SafeTensors::Storage {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::vector<std::uint8_t> owned;                     // parse()
  std::shared_ptr<const detail::MappedFile> mapping;   // open(): survives the file's truncation (file_read_mapped.h)
  std::unordered_map<std::string, std::size_t> index;  // name -> position in tensors_
  // from_views(): each tensor's bytes (by position), what keeps them alive, and what says whether they still are.
  std::vector<std::span<const std::byte>> views;
  std::shared_ptr<const void> keeper;
  std::function<Result<void>()> check;
};

Result<SafeTensors> SafeTensors::open(const std::filesystem::path& path) {
  std::string name = path.string();
  auto storage = std::make_shared<Storage>();
  auto mapping = detail::MappedFile::open(path, "a safetensors file");
  if (!mapping) return std::unexpected(std::move(mapping.error()));
  storage->mapping = std::move(*mapping);
  storage->size = storage->mapping->size();
  storage->data = storage->mapping->data();
  auto layout = read_layout(storage->data, storage->size, name, /*quote_text=*/false);
  // A header read while another process cut the file short reads zeros: that is the error, not what they parse to.
  if (auto ok = storage->mapping->intact(); !ok) return std::unexpected(ok.error());
  if (!layout) return std::unexpected(layout.error());

  SafeTensors st_out;
  st_out.name_ = std::move(name);
  st_out.tensors_ = std::move(layout->tensors);
  st_out.metadata_ = std::move(layout->metadata);
  st_out.data_start_ = layout->data_start;
  for (std::size_t i = 0; i < st_out.tensors_.size(); ++i) storage->index.emplace(st_out.tensors_[i].name, i);
  st_out.storage_ = std::move(storage);
  return st_out;
}

Result<SafeTensors> SafeTensors::parse(std::vector<std::uint8_t> bytes, std::string name) {
  auto storage = std::make_shared<Storage>();
  storage->owned = std::move(bytes);
  storage->data = storage->owned.data();
  storage->size = storage->owned.size();
  auto layout = read_layout(storage->data, storage->size, name, /*quote_text=*/true);
  if (!layout) return std::unexpected(layout.error());

  SafeTensors out;
  out.name_ = std::move(name);
  out.tensors_ = std::move(layout->tensors);
  out.metadata_ = std::move(layout->metadata);
  out.data_start_ = layout->data_start;
  for (std::size_t i = 0; i < out.tensors_.size(); ++i) storage->index.emplace(out.tensors_[i].name, i);
  out.storage_ = std::move(storage);
  return out;
}

Result<SafeTensors> SafeTensors::from_views(std::string name, std::vector<View> views,
                                            std::shared_ptr<const void> keeper, std::function<Result<void>()> intact) {
  auto storage = std::make_shared<Storage>();
  SafeTensors out;
  for (View& v : views) {
    const std::int64_t elements = v.info.elements();
    const std::optional<std::int64_t> size =
        v.info.dtype == DType::GGML ? ggml_bytes(v.info.ggml_type, elements) : byte_count(v.info.shape, v.info.dtype);
    if (elements < 0 || !size || static_cast<std::uint64_t>(v.bytes.size()) != static_cast<std::uint64_t>(*size)) {
      return fail(ErrorKind::Mismatch,
                  "tensor " + quote(v.info.name) + " of shape " + shape_text(v.info.shape) + " has " +
                      with_commas(static_cast<long long>(v.bytes.size())) + " bytes",
                  name, v.info.begin);
    }
    if (!storage->index.emplace(v.info.name, out.tensors_.size()).second) {
      return fail(ErrorKind::Malformed, "tensor " + quote(v.info.name) + " appears twice", name, v.info.begin);
    }
    v.info.end = v.info.begin + static_cast<std::int64_t>(v.bytes.size());
    out.tensors_.push_back(std::move(v.info));
    storage->views.push_back(v.bytes);
  }
  storage->keeper = std::move(keeper);
  storage->check = std::move(intact);
  out.name_ = std::move(name);
  out.storage_ = std::move(storage);
  return out;
}

const TensorInfo* SafeTensors::find(std::string_view tensor) const {
  if (!storage_) return nullptr;
  const auto it = storage_->index.find(std::string(tensor));
  return it == storage_->index.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::byte> SafeTensors::bytes(const TensorInfo& tensor) const {
  if (storage_ && !storage_->views.empty()) {
    // A view's bytes, by its position (this object's own TensorInfo) or its name (a copy's).
    std::size_t i = static_cast<std::size_t>(&tensor - tensors_.data());
    if (&tensor < tensors_.data() || i >= tensors_.size()) {
      const auto it = storage_->index.find(tensor.name);
      if (it == storage_->index.end()) return {};
      i = it->second;
    }
    return storage_->views[i];
  }
  if (!storage_ || tensor.begin < 0 || tensor.end < tensor.begin) return {};
  const auto data_size = static_cast<std::int64_t>(storage_->size) - data_start_;
  if (tensor.end > data_size) return {};  // not a tensor of this file
  const auto* p = reinterpret_cast<const std::byte*>(storage_->data) + data_start_ + tensor.begin;
  return {p, static_cast<std::size_t>(tensor.end - tensor.begin)};
}

Result<void> SafeTensors::intact() const {
  if (storage_ && storage_->check) return storage_->check();
  if (!storage_ || !storage_->mapping) return {};
  return storage_->mapping->intact();
}

Error SafeTensors::error(const TensorInfo& tensor, ErrorKind kind, std::string reason) const {
  return Error{name_, file_offset(data_start_, tensor.begin), -1, std::move(reason), kind};
}

Result<void> SafeTensors::require_float(const TensorInfo& tensor) const {
  if (is_float(tensor.dtype)) return {};
  if (tensor.dtype == DType::GGML) {
    const auto info = ggml_type_info(tensor.ggml_type);
    if (info && info->readable) return {};
    return std::unexpected(error(tensor, ErrorKind::Unsupported,
                                 "tensor " + quote(tensor.name) + " is " + ggml_type_name(tensor.ggml_type) +
                                     ", which AttnScope does not dequantise"));
  }
  return std::unexpected(error(tensor, ErrorKind::Unsupported,
                               "tensor " + quote(tensor.name) + " is " + std::string(io::to_string(tensor.dtype)) +
                                   "; only F32, F16, BF16 and F64 convert to float32"));
}

bool SafeTensors::widen(const TensorInfo& tensor, std::span<float> out) const {
  if (tensor.dtype == DType::GGML) return ggml_dequantize(static_cast<GgmlType>(tensor.ggml_type), bytes(tensor), out);
  return convert_to_float(tensor.dtype, bytes(tensor), out);
}

Result<std::vector<float>> SafeTensors::to_float(const TensorInfo& tensor) const {
  if (auto ok = require_float(tensor); !ok) return std::unexpected(ok.error());
  std::vector<float> out;
  try {
    out.resize(static_cast<std::size_t>(tensor.elements()));
  } catch (const std::exception&) {
    return std::unexpected(error(
        tensor, ErrorKind::TooLarge,
        "not enough memory for the " + std::to_string(tensor.elements()) + " values of tensor " + quote(tensor.name)));
  }
  if (!widen(tensor, out)) {
    return std::unexpected(
        error(tensor, ErrorKind::Mismatch, "tensor " + quote(tensor.name) + " is not a tensor of this file"));
  }
  if (auto ok = intact(); !ok) return std::unexpected(ok.error());
  return out;
}

Result<Matrix> SafeTensors::matrix(std::string_view name, Index rows, Index cols) const {
  const TensorInfo* t = find(name);
  if (!t) return fail(ErrorKind::Mismatch, "no tensor " + quote(name) + " in the file", name_);
  const auto& s = t->shape;
  const bool fits = (s.size() == 2 && s[0] == rows && s[1] == cols) || (s.size() == 1 && rows == 1 && s[0] == cols);
  if (!fits) {
    return std::unexpected(error(*t, ErrorKind::Mismatch,
                                 "tensor " + quote(name) + " has shape " + shape_text(s) + " but [" +
                                     std::to_string(rows) + ", " + std::to_string(cols) + "] is expected"));
  }
  if (auto ok = require_float(*t); !ok) return std::unexpected(ok.error());
  Matrix m;
  try {
    m.resize(rows, cols);
  } catch (const std::bad_alloc&) {
    return std::unexpected(error(*t, ErrorKind::TooLarge, "not enough memory for tensor " + quote(name)));
  }
  if (!widen(*t, std::span<float>(m.data(), static_cast<std::size_t>(m.size())))) {
    return std::unexpected(error(*t, ErrorKind::Mismatch, "tensor " + quote(name) + " is not a tensor of this file"));
  }
  if (auto ok = intact(); !ok) return std::unexpected(ok.error());
  return m;
}

Result<Vector> SafeTensors::vector(std::string_view name, Index n) const {
  const TensorInfo* t = find(name);
  if (!t) return fail(ErrorKind::Mismatch, "no tensor " + quote(name) + " in the file", name_);
  if (t->shape.size() != 1 || t->shape[0] != n) {
    return std::unexpected(error(*t, ErrorKind::Mismatch,
                                 "tensor " + quote(name) + " has shape " + shape_text(t->shape) + " but [" +
                                     std::to_string(n) + "] is expected"));
  }
  if (auto ok = require_float(*t); !ok) return std::unexpected(ok.error());
  Vector v;
  try {
    v.resize(n);
  } catch (const std::bad_alloc&) {
    return std::unexpected(error(*t, ErrorKind::TooLarge, "not enough memory for tensor " + quote(name)));
  }
  if (!widen(*t, std::span<float>(v.data(), static_cast<std::size_t>(v.size())))) {
    return std::unexpected(error(*t, ErrorKind::Mismatch, "tensor " + quote(name) + " is not a tensor of this file"));
  }
  if (auto ok = intact(); !ok) return std::unexpected(ok.error());
  return v;
}

std::optional<std::string> nonfinite_warning(const SafeTensors& file, const TensorInfo& tensor,
                                             std::span<const float> values) {
  std::int64_t nan = 0, inf = 0;
  for (const float v : values) {
    nan += std::isnan(v) ? 1 : 0;
    inf += std::isinf(v) ? 1 : 0;
  }
  return nonfinite_warning(file, tensor, nan, inf, static_cast<std::int64_t>(values.size()));
}

std::optional<std::string> nonfinite_warning(const SafeTensors& file, const TensorInfo& tensor, std::int64_t nan,
                                             std::int64_t inf, std::int64_t total) {
  if (nan + inf == 0) return std::nullopt;
  std::string what;
  if (nan) what += std::to_string(nan) + " NaN";
  if (inf) what += std::string(nan ? ", " : "") + std::to_string(inf) + " infinite";
  return file.name() + ": tensor " + quote(tensor.name) + " holds " + std::to_string(nan + inf) + " non-finite value" +
         (nan + inf == 1 ? "" : "s") + " (" + what + ") of " + std::to_string(total) +
         "; attention and outputs computed from it are not meaningful";
}

// ---------------------------------------------------------------------------------------------------------
// Writing

TensorData f32_tensor(std::string name, std::vector<std::int64_t> shape, std::span<const float> values) {
  return TensorData{std::move(name), DType::F32, std::move(shape), std::as_bytes(values)};
}

namespace {

struct Prepared {
  std::string header;                    // the JSON, padded
  std::vector<const TensorData*> order;  // data order
  std::uint64_t data_size = 0;
};

// The reference's prepare(): sort, lay out the offsets, write the header JSON compactly with
// "__metadata__" first and the tensors in data order, pad with spaces to a multiple of 8.
Result<Prepared> prepare(const std::vector<TensorData>& tensors, const std::map<std::string, std::string>& metadata,
                         const std::string& file) {
  Prepared out;
  std::unordered_set<std::string_view> names;
  for (const TensorData& t : tensors) {
    if (t.name == "__metadata__") return fail(ErrorKind::Malformed, "a tensor cannot be called \"__metadata__\"", file);
    if (!names.insert(t.name).second) {
      return fail(ErrorKind::Malformed, "tensor " + quote(t.name) + " is given twice", file);
    }
    const auto needed = byte_count(t.shape, t.dtype);
    if (!needed) {
      return fail(ErrorKind::OutOfRange,
                  "tensor " + quote(t.name) + ": shape " + shape_text(t.shape) + " of " +
                      std::string(to_string(t.dtype)) + " has a negative dimension or too many bytes",
                  file);
    }
    if (static_cast<std::uint64_t>(*needed) != t.data.size()) {
      return fail(ErrorKind::Mismatch,
                  "tensor " + quote(t.name) + ": " + std::to_string(t.data.size()) + " bytes of data but shape " +
                      shape_text(t.shape) + " of " + std::string(to_string(t.dtype)) + " needs " +
                      std::to_string(*needed),
                  file);
    }
    out.order.push_back(&t);
  }
  // As the reference: largest dtype alignment first (its Dtype enum order, reversed), then by name, so
  // every tensor's data is aligned to its element size when the data section is.
  std::stable_sort(out.order.begin(), out.order.end(), [](const TensorData* a, const TensorData* b) {
    const auto ra = alignment_rank(a->dtype), rb = alignment_rank(b->dtype);
    return ra != rb ? ra > rb : a->name < b->name;
  });

  std::string& h = out.header;
  try {
    h = "{";
    if (!metadata.empty()) {
      h += "\"__metadata__\":{";
      bool first = true;
      for (const auto& [k, v] : metadata) {
        if (!first) h += ',';
        first = false;
        h += json(k).dump() + ":" + json(v).dump();
      }
      h += '}';
    }
    std::uint64_t offset = 0;
    for (const TensorData* t : out.order) {
      if (h.size() > 1) h += ',';
      h += json(t->name).dump() + ":{\"dtype\":\"" + std::string(to_string(t->dtype)) + "\",\"shape\":[";
      for (std::size_t i = 0; i < t->shape.size(); ++i) h += (i ? "," : "") + std::to_string(t->shape[i]);
      h += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t->data.size()) + "]}";
      offset += t->data.size();
    }
    h += '}';
    out.data_size = offset;
  } catch (const json::exception& e) {
    return fail(ErrorKind::Encoding, "a tensor name or metadata entry is not valid UTF-8: " + json_reason(e), file);
  }
  h.append((8 - h.size() % 8) % 8, ' ');
  if (h.size() > kMaxHeader) {
    return fail(
        ErrorKind::TooLarge,
        "the header would be " + std::to_string(h.size()) + " bytes, over the limit of " + std::to_string(kMaxHeader),
        file);
  }
  return out;
}

std::array<std::uint8_t, 8> le64(std::uint64_t v) {
  std::array<std::uint8_t, 8> b{};
  for (std::size_t i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return b;
}

}  // namespace

Result<std::vector<std::uint8_t>> serialize_safetensors(const std::vector<TensorData>& tensors,
                                                        const std::map<std::string, std::string>& metadata) {
  auto prepared = prepare(tensors, metadata, {});
  if (!prepared) return std::unexpected(prepared.error());
  std::vector<std::uint8_t> out;
  try {
    out.reserve(8 + prepared->header.size() + prepared->data_size);
  } catch (const std::exception&) {
    return fail(ErrorKind::TooLarge,
                "not enough memory to serialise " + std::to_string(prepared->data_size) + " bytes of tensors");
  }
  const auto length = le64(prepared->header.size());
  out.insert(out.end(), length.begin(), length.end());
  out.insert(out.end(), prepared->header.begin(), prepared->header.end());
  for (const TensorData* t : prepared->order) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(t->data.data());
    out.insert(out.end(), p, p + t->data.size());
  }
  return out;
}

Result<void> write_safetensors(const std::filesystem::path& path, const std::vector<TensorData>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  const std::string name = path.string();
  auto prepared = prepare(tensors, metadata, name);
  if (!prepared) return std::unexpected(prepared.error());
  // Streamed, so a large dump is never held twice in memory.
  return detail::write_file_atomically(path, name, [&](std::FILE* file) {
    const auto length = le64(prepared->header.size());
    if (std::fwrite(length.data(), 1, 8, file) != 8) return false;
    if (std::fwrite(prepared->header.data(), 1, prepared->header.size(), file) != prepared->header.size()) return false;
    for (const TensorData* t : prepared->order) {
      if (t->data.empty()) continue;
      if (std::fwrite(t->data.data(), 1, t->data.size(), file) != t->data.size()) return false;
    }
    return true;
  });
}

}  // namespace attn::io
