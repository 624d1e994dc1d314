// The transformer loaders' view of a checkpoint: one or more safetensors files (the shards of an index) seen
// as one name space, with a checking mode that validates every request against the headers alone. Internal
// to engine/models.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
#include "attn/io/safetensors.h"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace attn::detail {

// One or more safetensors files seen as one name space; remembers which tensors were read.
// A checking reader validates every request against the headers alone (present, shape as the config
// implies, a float dtype) and returns empty values: the loader runs once that way before any tensor
// byte is read, so a checkpoint whose header already disagrees with its config is refused without
// touching (or paging in) gigabytes of data.
class TensorReader {
 public:
  TensorReader(std::vector<const io::SafeTensors*> shards, bool checking)
      : shards_(std::move(shards)), checking_(checking) {}
  bool checking() const { return checking_; }

  struct Found {
    const io::SafeTensors* file = nullptr;
    const io::TensorInfo* info = nullptr;
  };
  Found find(std::string_view name) const {
    for (const auto* s : shards_) {
      if (const auto* t = s->find(name)) return {s, t};
    }
    return {};
  }
  bool has(std::string_view name) const { return find(name).info != nullptr; }
  std::string file_name() const { return shards_.empty() ? std::string() : shards_.front()->name(); }

  // The tensor as floats, its shape checked against `shape` (leading 1s of the file's shape are allowed
  // to be absent from `shape`, as [1, 1, d] class tokens and [1, n, d] position tables have them).
  Result<std::vector<float>> read(const std::string& name, std::vector<std::int64_t> shape) {
    const Found f = find(name);
    if (!f.info) return fail(ErrorKind::Mismatch, "missing tensor '" + name + "'", file_name());
    std::vector<std::int64_t> have = f.info->shape;
    while (have.size() > shape.size() && have.front() == 1) have.erase(have.begin());
    if (have != shape) {
      return std::unexpected(f.file->error(*f.info, ErrorKind::Mismatch,
                                           "tensor '" + name + "' has shape " + io::shape_text(f.info->shape) +
                                               ", the config implies " + io::shape_text(shape)));
    }
    if (checking_) {
      if (auto ok = f.file->require_float(*f.info); !ok) return std::unexpected(ok.error());
      used_.insert(name);
      return std::vector<float>();
    }
    auto values = f.file->to_float(*f.info);
    if (!values) return std::unexpected(values.error());
    if (auto note = io::nonfinite_warning(*f.file, *f.info, *values)) nonfinite_.push_back(std::move(*note));
    used_.insert(name);
    parameters_ += f.info->elements();
    return values;
  }
  // The tensor as stored, shape checked as read() does, nothing converted: its file and header entry.
  // Counted as used and as parameters; the checking pass also requires a float dtype.
  Result<Found> stored(const std::string& name, std::vector<std::int64_t> shape) {
    const Found f = find(name);
    if (!f.info) return fail(ErrorKind::Mismatch, "missing tensor '" + name + "'", file_name());
    if (f.info->shape != shape) {
      return std::unexpected(f.file->error(*f.info, ErrorKind::Mismatch,
                                           "tensor '" + name + "' has shape " + io::shape_text(f.info->shape) +
                                               ", the config implies " + io::shape_text(shape)));
    }
    if (auto ok = f.file->require_float(*f.info); !ok) return std::unexpected(ok.error());
    used_.insert(name);
    if (!checking_) parameters_ += f.info->elements();
    return f;
  }
  void add_nonfinite(std::string note) { nonfinite_.push_back(std::move(note)); }
  Result<Matrix> matrix(const std::string& name, Index rows, Index cols) {
    auto v = read(name, {rows, cols});
    if (!v) return std::unexpected(v.error());
    if (checking_) return Matrix();
    return Matrix(Eigen::Map<const Matrix>(v->data(), rows, cols));
  }
  // A [out, in] nn.Linear weight as [in, out].
  Result<Matrix> linear_t(const std::string& name, Index out, Index in) {
    auto v = read(name, {out, in});
    if (!v) return std::unexpected(v.error());
    if (checking_) return Matrix();
    return Matrix(Eigen::Map<const Matrix>(v->data(), out, in).transpose());
  }
  Result<RowVector> vector(const std::string& name, Index n) {
    auto v = read(name, {n});
    if (!v) return std::unexpected(v.error());
    if (checking_) return RowVector();
    return RowVector(Eigen::Map<const RowVector>(v->data(), n));
  }
  // A layer norm under either naming: `.weight`/`.bias` or the old `.gamma`/`.beta`.
  Result<void> layer_norm(const std::string& base, Index n, RowVector& gamma, RowVector& beta) {
    const std::string g = has(base + ".gamma") && !has(base + ".weight") ? base + ".gamma" : base + ".weight";
    const std::string b = has(base + ".beta") && !has(base + ".bias") ? base + ".beta" : base + ".bias";
    auto gv = vector(g, n);
    if (!gv) return std::unexpected(gv.error());
    auto bv = vector(b, n);
    if (!bv) return std::unexpected(bv.error());
    gamma = std::move(*gv);
    beta = std::move(*bv);
    return {};
  }
  void mark_used(const std::string& name) { used_.insert(name); }
  void uncount(std::int64_t elements) { parameters_ -= elements; }

  std::vector<std::string> unused(const std::vector<std::string>& ignorable_fragments) const {
    std::vector<std::string> out;
    for (const auto* s : shards_) {
      for (const auto& t : s->tensors()) {
        if (used_.count(t.name)) continue;
        bool ignore = false;
        for (const auto& frag : ignorable_fragments) ignore = ignore || t.name.find(frag) != std::string::npos;
        if (!ignore) out.push_back(t.name);
      }
    }
    return out;
  }
  std::int64_t parameters() const { return parameters_; }
  // One warning per tensor that holds NaN or infinite values.
  const std::vector<std::string>& nonfinite() const { return nonfinite_; }

 private:
  std::vector<const io::SafeTensors*> shards_;
  bool checking_ = false;
  std::vector<std::string> nonfinite_;
  std::set<std::string, std::less<>> used_;
  std::int64_t parameters_ = 0;
};

}  // namespace attn::detail
