// The safetensors container (Hugging Face): an 8-byte little-endian header length N, N bytes of UTF-8
// JSON {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {string: string}}, then the
// tensor bytes. The reader memory-maps the file and validates it exactly as the reference
// implementation (huggingface/safetensors, safetensors/src/tensor.rs) does:
//   - N <= 100,000,000 and 8 + N <= file length;
//   - the header is UTF-8 JSON, an object; unknown dtypes, duplicate names and malformed entries refused;
//   - offsets, sorted by begin, are contiguous from 0 with no gap and no overlap;
//   - each tensor's byte length = element count (product of shape, checked for overflow) x dtype size;
//   - the last end + 8 + N = the file length.
// Rank-0 tensors (shape []) hold one element; tensors with a 0 in their shape hold none and are allowed.
// Every error names the file, the tensor (when there is one) and the byte offset.
#pragma once

#include "attn/core.h"
#include "attn/error.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {

// The reference implementation's dtypes. Only F32, F16, BF16 and F64 convert to float32. GGML is not one of them
// (no header names it): a tensor from_views() holds as ggml's blocks, of the type TensorInfo::ggml_type says, which
// to_float(), matrix() and vector() dequantise as ggml does (io/ggml_types.h).
enum class DType { BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, F8_E4M3, F8_E5M2, GGML };
std::string_view to_string(DType dtype);
std::size_t dtype_size(DType dtype);
// Little-endian `bytes` of a float dtype (F32, F16, BF16, F64) to float32, bit-exact for F16 and BF16;
// false, leaving `out` alone, for other dtypes or when the sizes disagree.
bool convert_to_float(DType dtype, std::span<const std::byte> bytes, std::span<float> out);

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::int64_t begin = 0;  // byte offsets relative to the start of the data section
  std::int64_t end = 0;
  std::uint32_t ggml_type = 0;  // dtype GGML: ggml's type number (io/ggml_types.h's GgmlType)
  std::int64_t elements() const;
};

// "[3, 4]": a shape as the engine's error messages write it.
std::string shape_text(const std::vector<std::int64_t>& shape);

class SafeTensors {
 public:
  // Maps the file read-only. The mapping lives as long as any copy of this object (or of keeper()). A file truncated
  // by another process while it is mapped does not crash the reader (reading past its new end would raise SIGBUS):
  // the pages it lost read as zeros, and intact() then refuses what was read (core/file_read_mapped.h).
  static Result<SafeTensors> open(const std::filesystem::path& path);
  // The same validation over bytes in memory (tests, fuzzing); `name` stands for the file in errors.
  static Result<SafeTensors> parse(std::vector<std::uint8_t> bytes, std::string name);
  // A tensor held elsewhere in memory, for from_views: `info`'s name, dtype and shape, and its `begin` the byte of
  // the tensor in the file it came from (errors name it); `bytes` its element count x dtype size.
  struct View {
    TensorInfo info;
    std::span<const std::byte> bytes;
  };
  // Tensors of another container (a GGUF file's, as stored or converted) seen through this class: the loaders read
  // them as they read a checkpoint's. `keeper` keeps every view's bytes alive, `intact` answers intact(), `name`
  // stands for the file in errors. Names must be unique and each view's length its shape's.
  static Result<SafeTensors> from_views(std::string name, std::vector<View> views, std::shared_ptr<const void> keeper,
                                        std::function<Result<void>()> intact);

  const std::string& name() const { return name_; }                    // the path as given, for messages
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in data order
  const TensorInfo* find(std::string_view tensor) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::int64_t data_start() const { return data_start_; }  // 8 + N: file offset of the data section

  // The tensor's raw little-endian bytes.
  std::span<const std::byte> bytes(const TensorInfo& tensor) const;
  // What keeps those bytes alive (the mapping, or the bytes given to parse): a view of them that outlives
  // this object holds it.
  std::shared_ptr<const void> keeper() const { return storage_; }
  // Whether the tensor converts to float32 (F32, F16, BF16, F64, ggml blocks that ggml_dequantize reads), from the
  // header alone; the error names the tensor and its dtype.
  Result<void> require_float(const TensorInfo& tensor) const;
  // The tensor converted to float32 (as require_float says); other dtypes are an error naming the tensor.
  Result<std::vector<float>> to_float(const TensorInfo& tensor) const;
  // The named tensor as a [rows, cols] matrix (a rank-1 tensor is [1, n]); the shape must match exactly,
  // else the error names the tensor, both shapes and the tensor's file offset.
  Result<Matrix> matrix(std::string_view tensor, Index rows, Index cols) const;
  Result<Vector> vector(std::string_view tensor, Index n) const;
  // Whether the file is unchanged since open(): an Io error naming it ("changed on disk while open: it is now N bytes,
  // was M; reopen it") when another process truncated or resized it; always fine for parse(). to_float(), matrix() and
  // vector() check it after reading; whoever reads bytes() or keeper()'s memory later checks it after each read.
  Result<void> intact() const;
  // An Error about `tensor` with the file name and the tensor's file offset filled in.
  Error error(const TensorInfo& tensor, ErrorKind kind, std::string reason) const;

 private:
  // The tensor's bytes widened into out (its element count): converted or dequantised; false when they disagree.
  bool widen(const TensorInfo& tensor, std::span<float> out) const;
  struct Storage;
  std::shared_ptr<const Storage> storage_;
  std::string name_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  std::int64_t data_start_ = 0;
};

// The load-time warning for a tensor whose float32 `values` hold NaN or infinite values, naming the file,
// the tensor and how many: "model.safetensors: tensor "w" holds 3 non-finite values (2 NaN, 1 infinite) of
// 768 ...". Such weights load (the user may want to look), but nothing computed from them is drawn as if it
// were fine. nullopt when every value is finite.
std::optional<std::string> nonfinite_warning(const SafeTensors& file, const TensorInfo& tensor,
                                             std::span<const float> values);
// The same from counts already made (a tensor scanned in place, never widened as a whole).
std::optional<std::string> nonfinite_warning(const SafeTensors& file, const TensorInfo& tensor, std::int64_t nan,
                                             std::int64_t inf, std::int64_t total);

// A tensor to write: `data` holds element count x dtype size little-endian bytes.
struct TensorData {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> data;
};
// A float32 tensor viewing `values` (which must outlive the write).
TensorData f32_tensor(std::string name, std::vector<std::int64_t> shape, std::span<const float> values);

// Serialises in the reference layout: tensors sorted as the reference's serialize sorts them (largest
// dtype alignment first, then by name), header padded with spaces to a multiple of 8 bytes.
Result<std::vector<std::uint8_t>> serialize_safetensors(const std::vector<TensorData>& tensors,
                                                        const std::map<std::string, std::string>& metadata);
// Writes atomically (temporary file in the same folder, then rename).
Result<void> write_safetensors(const std::filesystem::path& path, const std::vector<TensorData>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

}  // namespace attn::io
