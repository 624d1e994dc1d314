#include "attn/io/gguf.h"

#include "../core/file_read.h"
#include "../core/file_read_mapped.h"
#include "../core/json_config.h"
#include "../core/try.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <limits>
#include <new>

namespace attn::io {

namespace {

using detail::quote;

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
// ggml's limits: GGML_MAX_DIMS, and GGML_MAX_NAME counts the terminating zero.
constexpr std::uint32_t kMaxDims = 4;
constexpr std::size_t kMaxTensorName = 63;
// GGUF's key length (the specification: at most 2^16 - 1 bytes), and generous caps on the counts that a real file
// never approaches (a large mixture of experts has some tens of thousands of tensors and a hundred keys): past them
// a count is refused before anything is allocated for it, even in a sparse file of gigabytes.
constexpr std::uint64_t kMaxKey = 65535;
constexpr std::uint64_t kMaxTensors = 1u << 20;
constexpr std::uint64_t kMaxKeys = 1u << 16;
// What the key/values may take in memory once read: every integer and float 8 bytes, every string its length and the
// string object. The largest real vocabularies (Gemma 3: 262,144 tokens with scores and types, and their merges) take
// some tens of MiB; a file whose metadata would take more (a sparse file of gigabytes claiming an array of billions
// of bytes, say) is refused as soon as the sum passes this, not after the allocation that would kill the program.
constexpr std::int64_t kMaxMetadataMemory = std::int64_t{256} << 20;
constexpr std::int64_t kStringCost = static_cast<std::int64_t>(sizeof(std::string));

// The smallest bytes one element of each value type takes in the file (a string: its u64 length).
std::int64_t min_size(GgufType t) {
  switch (t) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::Bool: return 1;
    case GgufType::U16:
    case GgufType::I16: return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32: return 4;
    case GgufType::String:
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64: return 8;
    case GgufType::Array: return 12;  // an element type and a count
  }
  return 1;
}

bool known(std::uint32_t t) { return t <= static_cast<std::uint32_t>(GgufType::F64); }

// A cursor over the file's bytes: every read is checked against the end first.
class Cursor {
 public:
  Cursor(const std::uint8_t* data, std::size_t size, const std::string& name) : p_(data), size_(size), name_(name) {}
  std::int64_t at() const { return static_cast<std::int64_t>(at_); }
  std::int64_t left() const { return static_cast<std::int64_t>(size_ - at_); }
  std::int64_t budget_left() const { return kMaxMetadataMemory - spent_; }
  // Charges `bytes` of memory to the key/values' budget; an error once it is spent.
  Result<void> charge(std::int64_t bytes, std::string_view what, std::int64_t offset) {
    if (bytes > kMaxMetadataMemory - spent_) {
      return error(ErrorKind::TooLarge,
                   std::string(what) + " would take the key/values over " + with_commas(kMaxMetadataMemory >> 20) +
                       " MiB in memory",
                   offset);
    }
    spent_ += bytes;
    return {};
  }

  std::unexpected<Error> error(ErrorKind kind, std::string reason, std::int64_t offset = -1) const {
    return fail(kind, std::move(reason), name_, offset < 0 ? at() : offset);
  }
  std::unexpected<Error> truncated(std::string_view what, std::int64_t need) const {
    return error(ErrorKind::Truncated, "the file ends inside " + std::string(what) + ": " + with_commas(need) +
                                           " bytes needed, " + with_commas(left()) + " left");
  }

  template <class T>
  Result<T> read(std::string_view what) {
    if (left() < static_cast<std::int64_t>(sizeof(T))) return truncated(what, sizeof(T));
    T v;
    std::memcpy(&v, p_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  // A u64 length and that many bytes; `max` bounds the length before anything is copied.
  Result<std::string> string(std::string_view what, std::uint64_t max) {
    const std::int64_t start = at();
    auto n = read<std::uint64_t>(what);
    if (!n) return std::unexpected(n.error());
    if (*n > max) {
      return error(
          ErrorKind::TooLarge,
          std::string(what) + " is " +
              with_commas(static_cast<long long>(std::min<std::uint64_t>(*n, static_cast<std::uint64_t>(kMaxInt64)))) +
              " bytes long, over the " + with_commas(static_cast<long long>(max)) + " allowed",
          start);
    }
    if (static_cast<std::uint64_t>(left()) < *n) {
      return error(ErrorKind::Truncated,
                   std::string(what) + " is " + with_commas(static_cast<long long>(*n)) + " bytes long, but only " +
                       with_commas(left()) + " bytes are left in the file",
                   start);
    }
    std::string s(reinterpret_cast<const char*>(p_ + at_), static_cast<std::size_t>(*n));
    at_ += static_cast<std::size_t>(*n);
    return s;
  }

 private:
  const std::uint8_t* p_;
  std::size_t size_;
  std::size_t at_ = 0;
  const std::string& name_;
  std::int64_t spent_ = 0;
};

// One element of a scalar type into `v`.
Result<void> read_element(Cursor& c, GgufType t, GgufValue& v, std::string_view what) {
  if (t != GgufType::String) ATTN_TRY(c.charge(8, what, c.at()));
  const auto put_int = [&](auto r) -> Result<void> {
    if (!r) return std::unexpected(r.error());
    v.integers.push_back(static_cast<std::int64_t>(*r));
    return {};
  };
  switch (t) {
    case GgufType::U8: return put_int(c.read<std::uint8_t>(what));
    case GgufType::I8: return put_int(c.read<std::int8_t>(what));
    case GgufType::U16: return put_int(c.read<std::uint16_t>(what));
    case GgufType::I16: return put_int(c.read<std::int16_t>(what));
    case GgufType::U32: return put_int(c.read<std::uint32_t>(what));
    case GgufType::I32: return put_int(c.read<std::int32_t>(what));
    case GgufType::I64: return put_int(c.read<std::int64_t>(what));
    case GgufType::U64: {
      const std::int64_t at = c.at();
      auto r = c.read<std::uint64_t>(what);
      if (!r) return std::unexpected(r.error());
      if (*r > static_cast<std::uint64_t>(kMaxInt64)) {
        return c.error(ErrorKind::OutOfRange, std::string(what) + " is a u64 over 2^63 - 1", at);
      }
      v.integers.push_back(static_cast<std::int64_t>(*r));
      return {};
    }
    case GgufType::Bool: {
      const std::int64_t at = c.at();
      auto r = c.read<std::uint8_t>(what);
      if (!r) return std::unexpected(r.error());
      if (*r > 1)
        return c.error(ErrorKind::Malformed, std::string(what) + " is a bool of value " + std::to_string(*r), at);
      v.integers.push_back(*r);
      return {};
    }
    case GgufType::F32: {
      auto r = c.read<float>(what);
      if (!r) return std::unexpected(r.error());
      v.numbers.push_back(*r);
      return {};
    }
    case GgufType::F64: {
      auto r = c.read<double>(what);
      if (!r) return std::unexpected(r.error());
      v.numbers.push_back(*r);
      return {};
    }
    case GgufType::String: {
      const std::int64_t at = c.at();
      // Bounded by the budget before the bytes are copied: a string of gigabytes is refused, not allocated.
      auto r = c.string(what, static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.budget_left() - kStringCost)));
      if (!r) return std::unexpected(r.error());
      ATTN_TRY(c.charge(kStringCost + static_cast<std::int64_t>(r->size()), what, at));
      v.strings.push_back(std::move(*r));
      return {};
    }
    case GgufType::Array: break;
  }
  return c.error(ErrorKind::Malformed, std::string(what) + ": an array inside an array");
}

Result<GgufValue> read_value(Cursor& c, const std::string& key) {
  GgufValue v;
  v.offset = c.at();
  const std::string what = "the value of " + quote(key);
  auto type = c.read<std::uint32_t>(what);
  if (!type) return std::unexpected(type.error());
  if (!known(*type)) {
    return c.error(ErrorKind::Unsupported,
                   what + " has value type " + std::to_string(*type) + ", which GGUF does not define", v.offset);
  }
  v.type = static_cast<GgufType>(*type);
  if (v.type != GgufType::Array) {
    if (auto ok = read_element(c, v.type, v, what); !ok) return std::unexpected(ok.error());
    return v;
  }
  v.array = true;
  const std::int64_t element_at = c.at();
  auto element = c.read<std::uint32_t>(what);
  if (!element) return std::unexpected(element.error());
  if (!known(*element)) {
    return c.error(ErrorKind::Unsupported,
                   what + " is an array of value type " + std::to_string(*element) + ", which GGUF does not define",
                   element_at);
  }
  if (static_cast<GgufType>(*element) == GgufType::Array) {
    return c.error(ErrorKind::Unsupported, what + " is an array of arrays, which GGUF readers do not take", element_at);
  }
  v.type = static_cast<GgufType>(*element);
  const std::int64_t count_at = c.at();
  auto count = c.read<std::uint64_t>(what);
  if (!count) return std::unexpected(count.error());
  // Each element takes at least min_size bytes: a count the rest of the file cannot hold is refused before any
  // element is read or stored.
  if (*count > static_cast<std::uint64_t>(c.left() / min_size(v.type))) {
    return c.error(ErrorKind::Truncated,
                   what + " claims " +
                       with_commas(static_cast<long long>(
                           std::min<std::uint64_t>(*count, static_cast<std::uint64_t>(kMaxInt64)))) +
                       " elements of " + std::string(to_string(v.type)) + "; the " + with_commas(c.left()) +
                       " bytes left cannot hold them",
                   count_at);
  }
  const std::int64_t least = v.type == GgufType::String ? kStringCost : 8;
  if (*count > static_cast<std::uint64_t>(c.budget_left() / least)) {
    return c.error(ErrorKind::TooLarge,
                   what + " claims " + with_commas(static_cast<long long>(*count)) + " elements of " +
                       std::string(to_string(v.type)) + ", more than the key/values may take in memory (" +
                       with_commas(kMaxMetadataMemory >> 20) + " MiB)",
                   count_at);
  }
  const auto n = static_cast<std::size_t>(*count);
  if (v.type == GgufType::String) {
    v.strings.reserve(n);
  } else if (v.is_number()) {
    v.numbers.reserve(n);
  } else {
    v.integers.reserve(n);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (auto ok = read_element(c, v.type, v, what); !ok) return std::unexpected(ok.error());
  }
  return v;
}

struct Layout {
  std::uint32_t version = 0;
  std::int64_t alignment = 32;
  std::int64_t data_start = 0;
  std::vector<GgufTensor> tensors;
  std::vector<std::string> keys;
  std::map<std::string, GgufValue, std::less<>> values;
};

// The key/values, then the alignment they set.
Result<void> read_keys(Cursor& c, std::uint64_t key_count, Layout& out) {
  for (std::uint64_t i = 0; i < key_count; ++i) {
    const std::int64_t at = c.at();
    auto key = c.string("key " + std::to_string(i + 1), kMaxKey);
    if (!key) return std::unexpected(key.error());
    if (key->empty()) return c.error(ErrorKind::Malformed, "key " + std::to_string(i + 1) + " is empty", at);
    if (out.values.count(*key)) {
      return c.error(ErrorKind::Malformed, "the key " + quote(*key) + " appears twice", at);
    }
    auto value = read_value(c, *key);
    if (!value) return std::unexpected(value.error());
    out.keys.push_back(*key);
    out.values.emplace(std::move(*key), std::move(*value));
  }

  if (const auto it = out.values.find("general.alignment"); it != out.values.end()) {
    const GgufValue& a = it->second;
    if (a.array || a.type != GgufType::U32) {
      return c.error(ErrorKind::Malformed, "general.alignment must be a u32", a.offset);
    }
    const std::int64_t value = a.integers.front();
    if (value <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(value))) {
      return c.error(ErrorKind::OutOfRange,
                     "general.alignment is " + std::to_string(value) + "; it must be a power of two", a.offset);
    }
    out.alignment = value;
  }

  return {};
}

// Tensor info i (0-based): its name (unique: `names` holds those read, with their bytes), dimensions, type and
// offset, each checked.
Result<GgufTensor> read_tensor_info(Cursor& c, std::uint64_t i, std::int64_t alignment,
                                    const std::map<std::string, std::int64_t, std::less<>>& names) {
  GgufTensor t;
  t.info_offset = c.at();
  const std::string what = "tensor info " + std::to_string(i + 1);
  auto tname = c.string(what + "'s name", kMaxTensorName);
  if (!tname) return std::unexpected(tname.error());
  if (tname->empty()) return c.error(ErrorKind::Malformed, what + " has an empty name", t.info_offset);
  if (const auto seen = names.find(*tname); seen != names.end()) {
    return c.error(ErrorKind::Malformed,
                   "the tensor " + quote(*tname) + " appears twice (first at byte " + with_commas(seen->second) + ")",
                   t.info_offset);
  }
  t.name = std::move(*tname);
  const std::string of = "tensor " + quote(t.name);
  const std::int64_t dims_at = c.at();
  auto dims = c.read<std::uint32_t>(of + "'s dimension count");
  if (!dims) return std::unexpected(dims.error());
  if (*dims > kMaxDims) {
    return c.error(ErrorKind::Unsupported,
                   of + " has " + std::to_string(*dims) + " dimensions; ggml has at most " + std::to_string(kMaxDims),
                   dims_at);
  }
  std::int64_t elements = 1;
  bool overflow = false;
  for (std::uint32_t d = 0; d < *dims; ++d) {
    const std::int64_t at = c.at();
    auto n = c.read<std::uint64_t>(of + "'s dimensions");
    if (!n) return std::unexpected(n.error());
    if (*n > static_cast<std::uint64_t>(kMaxInt64)) {
      return c.error(ErrorKind::OutOfRange, of + " has a dimension over 2^63 - 1", at);
    }
    const auto v = static_cast<std::int64_t>(*n);
    t.ne.push_back(v);
    if (v != 0 && elements > kMaxInt64 / v) overflow = true;
    elements = overflow ? elements : elements * v;
  }
  if (overflow) return c.error(ErrorKind::OutOfRange, of + "'s element count overflows 64 bits", dims_at);
  const std::int64_t type_at = c.at();
  auto type = c.read<std::uint32_t>(of + "'s type");
  if (!type) return std::unexpected(type.error());
  const auto info = ggml_type_info(*type);
  if (!info) {
    return c.error(ErrorKind::Unsupported,
                   of + " has ggml type " + std::to_string(*type) + ", which ggml does not define", type_at);
  }
  if (info->block_elements <= 0 || info->block_bytes <= 0) {
    return c.error(ErrorKind::Unsupported,
                   of + " has type " + std::string(info->name) + ", which ggml no longer stores in files", type_at);
  }
  t.type = *type;
  const std::int64_t row = t.ne.empty() ? 1 : t.ne.front();
  if (row % info->block_elements != 0) {
    return c.error(ErrorKind::Malformed,
                   of + "'s rows hold " + with_commas(row) + " values, not a whole number of " +
                       std::string(info->name) + " blocks of " + std::to_string(info->block_elements),
                   dims_at);
  }
  const std::int64_t blocks = elements / info->block_elements;
  if (blocks > kMaxInt64 / info->block_bytes) {
    return c.error(ErrorKind::OutOfRange, of + "'s byte count overflows 64 bits", dims_at);
  }
  t.bytes = blocks * info->block_bytes;
  const std::int64_t offset_at = c.at();
  auto offset = c.read<std::uint64_t>(of + "'s offset");
  if (!offset) return std::unexpected(offset.error());
  if (*offset > static_cast<std::uint64_t>(kMaxInt64) || static_cast<std::int64_t>(*offset) % alignment != 0) {
    return c.error(ErrorKind::Malformed,
                   of + "'s offset " + std::to_string(*offset) + " is not a multiple of the alignment " +
                       std::to_string(alignment),
                   offset_at);
  }
  t.offset = static_cast<std::int64_t>(*offset);  // relative to the data section until it is known
  return t;
}

// Where the data section starts, every tensor inside it, none overlapping another; offsets made absolute.
Result<void> place_tensors(const Cursor& c, std::int64_t file_size, Layout& out) {
  // The data section starts at the next multiple of the alignment (an empty one may end the file there).
  const std::int64_t end_of_infos = c.at();
  out.data_start = (end_of_infos + out.alignment - 1) / out.alignment * out.alignment;
  if (!out.tensors.empty() && out.data_start > file_size) {
    return c.error(ErrorKind::Truncated,
                   "the file ends at byte " + with_commas(file_size) + ", before its data section (byte " +
                       with_commas(out.data_start) + ")",
                   file_size);
  }
  const std::int64_t data_size = std::max<std::int64_t>(0, file_size - out.data_start);
  // Every tensor inside the data section, and none overlapping another (in the order of their offsets).
  std::vector<const GgufTensor*> by_offset;
  for (const GgufTensor& t : out.tensors) {
    if (t.offset > data_size || t.bytes > data_size - t.offset) {
      return c.error(ErrorKind::Truncated,
                     "tensor " + quote(t.name) + " (" + with_commas(t.bytes) + " bytes of " + t.type_name() +
                         " at data offset " + with_commas(t.offset) +
                         ") ends past the file's end: its data section "
                         "holds " +
                         with_commas(data_size) + " bytes",
                     t.info_offset);
    }
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensor& a = *by_offset[i - 1];
    const GgufTensor& b = *by_offset[i];
    if (a.offset + a.bytes > b.offset && a.bytes > 0 && b.bytes > 0) {
      return c.error(ErrorKind::Malformed,
                     "tensors " + quote(a.name) + " and " + quote(b.name) + " overlap (data offsets " +
                         with_commas(a.offset) + " + " + with_commas(a.bytes) + " bytes and " + with_commas(b.offset) +
                         ")",
                     b.info_offset);
    }
  }
  for (GgufTensor& t : out.tensors) t.offset += out.data_start;
  return {};
}

Result<Layout> read_layout(const std::uint8_t* data, std::size_t size, const std::string& name) {
  Cursor c(data, size, name);
  Layout out;
  auto magic = c.read<std::uint32_t>("the magic number");
  if (!magic) return std::unexpected(magic.error());
  if (*magic != kMagic) {
    return c.error(ErrorKind::Malformed, "not a GGUF file: it does not start with \"GGUF\"", 0);
  }
  auto version = c.read<std::uint32_t>("the version");
  if (!version) return std::unexpected(version.error());
  if (*version == 1) {
    return c.error(ErrorKind::Unsupported,
                   "GGUF version 1 (2023, 32-bit counts) is not read; convert the model again with a current "
                   "llama.cpp",
                   4);
  }
  if (*version != 2 && *version != 3) {
    // A big-endian file has its version byte-swapped: 3 reads as 0x03000000.
    if (std::byteswap(*version) == 2 || std::byteswap(*version) == 3) {
      return c.error(ErrorKind::Unsupported, "a big-endian GGUF file; AttnScope reads little-endian GGUF", 4);
    }
    return c.error(ErrorKind::Unsupported,
                   "GGUF version " + std::to_string(*version) + "; AttnScope reads versions 2 and 3", 4);
  }
  out.version = *version;
  auto tensor_count = c.read<std::uint64_t>("the tensor count");
  if (!tensor_count) return std::unexpected(tensor_count.error());
  auto key_count = c.read<std::uint64_t>("the key/value count");
  if (!key_count) return std::unexpected(key_count.error());
  if (*tensor_count > kMaxTensors) {
    return c.error(ErrorKind::TooLarge,
                   "the header claims " +
                       with_commas(static_cast<long long>(
                           std::min<std::uint64_t>(*tensor_count, static_cast<std::uint64_t>(kMaxInt64)))) +
                       " tensors, over the " + with_commas(kMaxTensors) + " allowed",
                   8);
  }
  if (*key_count > kMaxKeys) {
    return c.error(ErrorKind::TooLarge,
                   "the header claims " +
                       with_commas(static_cast<long long>(
                           std::min<std::uint64_t>(*key_count, static_cast<std::uint64_t>(kMaxInt64)))) +
                       " keys, over the " + with_commas(kMaxKeys) + " allowed",
                   16);
  }

  ATTN_TRY(read_keys(c, *key_count, out));
  std::map<std::string, std::int64_t, std::less<>> names;
  for (std::uint64_t i = 0; i < *tensor_count; ++i) {
    auto t = read_tensor_info(c, i, out.alignment, names);
    if (!t) return std::unexpected(t.error());
    names.emplace(t->name, t->info_offset);
    out.tensors.push_back(std::move(*t));
  }
  ATTN_TRY(place_tensors(c, static_cast<std::int64_t>(size), out));
  return out;
}

}  // namespace

std::string_view to_string(GgufType type) {
  switch (type) {
    case GgufType::U8: return "u8";
    case GgufType::I8: return "i8";
    case GgufType::U16: return "u16";
    case GgufType::I16: return "i16";
    case GgufType::U32: return "u32";
    case GgufType::I32: return "i32";
    case GgufType::F32: return "f32";
    case GgufType::Bool: return "bool";
    case GgufType::String: return "string";
    case GgufType::Array: return "array";
    case GgufType::U64: return "u64";
    case GgufType::I64: return "i64";
    case GgufType::F64: return "f64";
  }
  return "unknown";
}

bool GgufValue::is_integer() const {
  return type != GgufType::F32 && type != GgufType::F64 && type != GgufType::String && type != GgufType::Array;
}
bool GgufValue::is_number() const { return type == GgufType::F32 || type == GgufType::F64; }
std::size_t GgufValue::size() const {
  if (type == GgufType::String) return strings.size();
  return is_number() ? numbers.size() : integers.size();
}

std::int64_t GgufTensor::elements() const {
  std::int64_t n = 1;
  for (const std::int64_t d : ne) n *= d;  // checked for overflow when read
  return n;
}
std::int64_t GgufTensor::rows() const { return ne.empty() || ne.front() == 0 ? 0 : elements() / ne.front(); }
std::vector<std::int64_t> GgufTensor::shape() const { return {ne.rbegin(), ne.rend()}; }
std::string GgufTensor::type_name() const { return ggml_type_name(type); }

struct GgufFile::Storage {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::vector<std::uint8_t> owned;                    // parse()
  std::shared_ptr<const detail::MappedFile> mapping;  // open()
};

Result<GgufFile> GgufFile::from_storage(std::shared_ptr<Storage> storage, std::string name) {
  Result<Layout> layout;
  try {
    layout = read_layout(storage->data, storage->size, name);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while reading the GGUF header", name);
  }
  // A header read while another process cut the file short reads zeros: that is the error, not what they parse to.
  if (storage->mapping) ATTN_TRY(storage->mapping->intact());
  if (!layout) return std::unexpected(layout.error());
  GgufFile out;
  out.name_ = std::move(name);
  out.version_ = layout->version;
  out.alignment_ = layout->alignment;
  out.data_start_ = layout->data_start;
  out.tensors_ = std::move(layout->tensors);
  out.keys_ = std::move(layout->keys);
  out.values_ = std::move(layout->values);
  for (std::size_t i = 0; i < out.tensors_.size(); ++i) out.index_.emplace(out.tensors_[i].name, i);
  out.storage_ = std::move(storage);
  return out;
}

Result<GgufFile> GgufFile::open(const std::filesystem::path& path) {
  std::string name = path.string();
  auto storage = std::make_shared<Storage>();
  auto mapping = detail::MappedFile::open(path, "a GGUF file");
  if (!mapping) return std::unexpected(std::move(mapping.error()));
  storage->mapping = std::move(*mapping);
  storage->size = storage->mapping->size();
  storage->data = storage->mapping->data();
  return from_storage(std::move(storage), std::move(name));
}

Result<GgufFile> GgufFile::parse(std::vector<std::uint8_t> bytes, std::string name) {
  auto storage = std::make_shared<Storage>();
  storage->owned = std::move(bytes);
  storage->data = storage->owned.data();
  storage->size = storage->owned.size();
  return from_storage(std::move(storage), std::move(name));
}

std::int64_t GgufFile::file_size() const { return storage_ ? static_cast<std::int64_t>(storage_->size) : 0; }

const GgufTensor* GgufFile::find(std::string_view tensor) const {
  const auto it = index_.find(tensor);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const GgufValue* GgufFile::value(std::string_view key) const {
  const auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

Error GgufFile::wrong_type(std::string_view key, const GgufValue& v, std::string_view wanted) const {
  return error(key, ErrorKind::Malformed,
               std::string(key) + " is " + (v.array ? "an array" : "a " + std::string(to_string(v.type))) + ", not " +
                   std::string(wanted));
}

Result<std::optional<std::int64_t>> GgufFile::integer(std::string_view key) const {
  const GgufValue* v = value(key);
  if (!v) return std::nullopt;
  if (v->array || !v->is_integer() || v->type == GgufType::Bool)
    return std::unexpected(wrong_type(key, *v, "an integer"));
  return v->integers.front();
}

Result<std::optional<double>> GgufFile::number(std::string_view key) const {
  const GgufValue* v = value(key);
  if (!v) return std::nullopt;
  if (!v->array && v->is_number()) return v->numbers.front();
  if (!v->array && v->is_integer() && v->type != GgufType::Bool) return static_cast<double>(v->integers.front());
  return std::unexpected(wrong_type(key, *v, "a number"));
}

Result<std::optional<std::string>> GgufFile::string(std::string_view key) const {
  const GgufValue* v = value(key);
  if (!v) return std::nullopt;
  if (v->array || v->type != GgufType::String) return std::unexpected(wrong_type(key, *v, "a string"));
  return v->strings.front();
}

Result<std::optional<bool>> GgufFile::boolean(std::string_view key) const {
  const GgufValue* v = value(key);
  if (!v) return std::nullopt;
  if (v->array || v->type != GgufType::Bool) return std::unexpected(wrong_type(key, *v, "a bool"));
  return v->integers.front() != 0;
}

std::span<const std::byte> GgufFile::bytes(const GgufTensor& tensor) const {
  if (!storage_ || tensor.offset < data_start_ || tensor.bytes < 0) return {};
  const auto size = static_cast<std::int64_t>(storage_->size);
  if (tensor.offset > size || tensor.bytes > size - tensor.offset) return {};  // not a tensor of this file
  return {reinterpret_cast<const std::byte*>(storage_->data) + tensor.offset, static_cast<std::size_t>(tensor.bytes)};
}

Result<std::vector<float>> GgufFile::to_float(const GgufTensor& tensor) const {
  const auto info = ggml_type_info(tensor.type);
  if (!info || !info->readable) {
    return std::unexpected(error(tensor, ErrorKind::Unsupported,
                                 "tensor " + quote(tensor.name) + " is " + tensor.type_name() +
                                     ", a type AttnScope does not dequantise (it reads F32, F16, BF16, Q4_0, Q4_1, "
                                     "Q5_0, Q5_1, Q8_0 and Q2_K to Q6_K)"));
  }
  std::vector<float> out;
  try {
    out.resize(static_cast<std::size_t>(tensor.elements()));
  } catch (const std::exception&) {
    return std::unexpected(error(
        tensor, ErrorKind::TooLarge,
        "not enough memory for the " + with_commas(tensor.elements()) + " values of tensor " + quote(tensor.name)));
  }
  if (!ggml_dequantize(static_cast<GgmlType>(tensor.type), bytes(tensor), out)) {
    return std::unexpected(
        error(tensor, ErrorKind::Mismatch, "tensor " + quote(tensor.name) + " is not a tensor of this file"));
  }
  if (auto ok = intact(); !ok) return std::unexpected(ok.error());
  return out;
}

std::shared_ptr<const void> GgufFile::keeper() const { return storage_; }

Result<void> GgufFile::intact() const {
  if (!storage_ || !storage_->mapping) return {};
  return storage_->mapping->intact();
}

Error GgufFile::error(const GgufTensor& tensor, ErrorKind kind, std::string reason) const {
  return Error{name_, tensor.offset, -1, std::move(reason), kind};
}

Error GgufFile::error(std::string_view key, ErrorKind kind, std::string reason) const {
  const GgufValue* v = value(key);
  return Error{name_, v ? v->offset : -1, -1, std::move(reason), kind};
}

bool is_gguf_name(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext == ".gguf";
}

}  // namespace attn::io
