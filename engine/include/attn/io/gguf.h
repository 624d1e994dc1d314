// The GGUF container (ggml's, the files llama.cpp, Ollama and LM Studio keep models in): a little-endian header
// "GGUF", version (2 or 3), tensor count and key/value count (u64 each), the key/values (a string key, a u32 value
// type, the value; arrays are an element type, a u64 count and the elements), the tensor infos (name, u32 dimension
// count, u64 dimensions with the row length first, u32 ggml type, u64 offset into the data section), padding to
// `general.alignment` (32 when absent), then the data section. Strings are a u64 length and that many bytes.
//
// The reader memory-maps the file (core/file_read_mapped.h: a file truncated while open reads zeros and is then
// refused, never a crash) and checks everything against the file's size before using it, as the safetensors reader
// does: every count against the bytes left (so an absurd count is refused before anything is allocated for it),
// every string and array inside the file, keys and tensor names unique and not empty, names under ggml's 64 bytes,
// at most 4 dimensions none negative and their product without overflow, the row length a whole number of the type's
// blocks, known value types, no nested arrays, an alignment that is a power of two, every tensor's offset aligned
// and its bytes inside the data section, no two tensors overlapping. A ggml type number ggml never assigned is
// refused by number; a type ggml has that the engine does not dequantise (IQ2_XXS, ...) is read and named, and
// refused when a model asks for that tensor's values. Every error names the file, the byte and the reason.
#pragma once

#include "attn/error.h"
#include "attn/io/ggml_types.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {

// The value types of GGUF's key/values (gguf.h enum gguf_type).
enum class GgufType : std::uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
// "u32", "string", "array", ...: as messages name them.
std::string_view to_string(GgufType type);

// One key's value. Integers and booleans are kept in `integers`, floats in `numbers`, strings in `strings`: one
// element for a scalar, the elements for an array (`array` true, `type` then the element type).
struct GgufValue {
  GgufType type = GgufType::U32;
  bool array = false;
  std::int64_t offset = 0;  // of the value's type field in the file
  std::vector<std::int64_t> integers;
  std::vector<double> numbers;
  std::vector<std::string> strings;
  bool is_integer() const;  // an integer or bool type
  bool is_number() const;   // F32 or F64
  std::size_t size() const;
};

struct GgufTensor {
  std::string name;
  std::uint32_t type = 0;                   // the ggml type number (ggml_types.h)
  std::vector<std::int64_t> ne;             // ggml's order: ne[0] is the row length
  std::int64_t offset = 0;                  // file offset of the tensor's data
  std::int64_t bytes = 0;                   // its length
  std::int64_t info_offset = 0;             // file offset of its tensor info, for messages
  std::int64_t elements() const;            // the product of ne (1 for no dimensions)
  std::int64_t rows() const;                // elements() / ne[0]
  std::vector<std::int64_t> shape() const;  // outermost first, as PyTorch and safetensors write it
  std::string type_name() const;            // "Q4_K"
};

class GgufFile {
 public:
  // Maps the file read-only; the mapping lives as long as any copy of this object (or of keeper()).
  static Result<GgufFile> open(const std::filesystem::path& path);
  // The same checks over bytes in memory (tests, fuzzing); `name` stands for the file in errors.
  static Result<GgufFile> parse(std::vector<std::uint8_t> bytes, std::string name);

  const std::string& name() const { return name_; }
  std::uint32_t version() const { return version_; }
  std::int64_t alignment() const { return alignment_; }
  std::int64_t data_start() const { return data_start_; }
  std::int64_t file_size() const;
  const std::vector<GgufTensor>& tensors() const { return tensors_; }  // in the order of the file's infos
  const GgufTensor* find(std::string_view tensor) const;
  // Keys in the file's order, and a lookup.
  const std::vector<std::string>& keys() const { return keys_; }
  const GgufValue* value(std::string_view key) const;

  // Typed reads of a key: nullopt when absent; an error naming the file, the key and its byte when present with
  // another type (any integer type reads as an integer, F32 and F64 as a number, an integer also as a number).
  Result<std::optional<std::int64_t>> integer(std::string_view key) const;
  Result<std::optional<double>> number(std::string_view key) const;
  Result<std::optional<std::string>> string(std::string_view key) const;
  Result<std::optional<bool>> boolean(std::string_view key) const;

  // The tensor's bytes as stored (blocks for a quantised type).
  std::span<const std::byte> bytes(const GgufTensor& tensor) const;
  // The tensor's values as float32, dequantised as ggml does; an error naming the tensor and its type when the
  // engine does not read that type.
  Result<std::vector<float>> to_float(const GgufTensor& tensor) const;
  // What keeps the bytes alive: a view of them that outlives this object holds it.
  std::shared_ptr<const void> keeper() const;
  // Whether the file is unchanged since open() (see SafeTensors::intact); always fine for parse().
  Result<void> intact() const;
  // An Error about `tensor`, with the file and the tensor's data offset filled in.
  Error error(const GgufTensor& tensor, ErrorKind kind, std::string reason) const;
  // An Error about `key`, with the file and the key's value offset filled in.
  Error error(std::string_view key, ErrorKind kind, std::string reason) const;

 private:
  struct Storage;
  // The header read from `storage` and checked; the object holding it.
  static Result<GgufFile> from_storage(std::shared_ptr<Storage> storage, std::string name);
  // "key is a string, not an integer", at the key's byte.
  Error wrong_type(std::string_view key, const GgufValue& v, std::string_view wanted) const;
  std::shared_ptr<const Storage> storage_;
  std::string name_;
  std::uint32_t version_ = 0;
  std::int64_t alignment_ = 32;
  std::int64_t data_start_ = 0;
  std::vector<GgufTensor> tensors_;
  std::vector<std::string> keys_;
  std::map<std::string, GgufValue, std::less<>> values_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

// Whether the path names a GGUF file by its extension (".gguf", any case).
bool is_gguf_name(const std::filesystem::path& path);

}  // namespace attn::io
