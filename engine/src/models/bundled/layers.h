// The layers of the project's own demo models (seq2seq.cpp, classifier.cpp, captioner.cpp;
// tools/train/MODELS.md), in namespace attn::models::bundled: what they share and the transformer loader
// does not. config.json keys they read alike (on top of
// core/json_config.h's), a strict tensor reader whose shapes come from the config alone, small products,
// the torch GRU (gate order r, z, n) run over a sequence in both directions, the LSTM cell, the
// captioner's convolution layer, and loading a model folder. Not public API.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
#include "attn/io/safetensors.h"
#include "../../core/json_config.h"
#include "../../core/try.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace attn::models::bundled {

// The reserved ids of the vocabularies tools/train writes: 0 pads, 1 is an input vocabulary's unknown word,
// 1 and 2 are an output vocabulary's start and end.
inline constexpr int kUnknownId = 1;
inline constexpr int kStartId = 1;
inline constexpr int kEndId = 2;

// ---------------------------------------------------------------------------------------------------------
// config.json

// The demo models' keys on top of the typed reads every config shares; errors name the file and the line
// of the key.
class ConfigKeys : public detail::JsonKeys {
 public:
  using JsonKeys::JsonKeys;

  // `architectures` must be [expected] (the family check before anything else is read).
  Result<void> architecture(std::string_view expected) const;
  // A whole number in [lo, hi] that must be there ("... is missing").
  Result<int> whole(std::string_view key, std::int64_t lo = 1, std::int64_t hi = detail::kMaxConfigSize) const;
  // A list of strings, at least `min_size` long, without repeats; `required` names the entries the
  // first ids must hold (e.g. {"<pad>", "<unk>"}).
  Result<std::vector<std::string>> vocabulary(std::string_view key, std::initializer_list<std::string_view> required,
                                              std::size_t min_size) const;
};

// ---------------------------------------------------------------------------------------------------------
// Weights

// Reads named tensors whose shapes the config fixes, exactly (no squeezing of 1s): a missing tensor, a
// wrong rank or size, or a non-float dtype is an error naming the file, the tensor, both shapes and the
// tensor's byte offset. Counts the parameters read and remembers which tensors were used.
class TensorReader {
 public:
  explicit TensorReader(const io::SafeTensors& file) : file_(file) {}

  bool has(std::string_view name) const { return file_.find(name) != nullptr; }
  // The tensor as stored: [rows, cols] for rank 2, [n] (cols = n, one row) for rank 1.
  Result<Matrix> matrix(const std::string& name, Index rows, Index cols);
  Result<RowVector> vector(const std::string& name, Index n);
  // An nn.Linear weight [out, in], transposed to [in, out] so that x W^T is the product x * W_t.
  Result<Matrix> linear_t(const std::string& name, Index out, Index in);
  // A tensor of any rank >= 1 as stored, its first axis the rows and the others flattened into the columns
  // (an nn.Conv2d weight [out, in, kh, kw] as [out, in kh kw]).
  Result<Matrix> flattened(const std::string& name, const std::vector<std::int64_t>& shape);

  std::int64_t parameters() const { return parameters_; }
  // Tensors of the file nothing read (a model from another contract version, or a typo on either side).
  std::vector<std::string> unused() const;
  // The load-time warning about them: "2 tensors of the file not used by <model>: a, b" (at most 8
  // named), or nothing when every tensor was read.
  std::optional<std::string> unused_warning(std::string_view model) const;
  const std::string& file_name() const { return file_.name(); }
  // One warning per tensor read that holds NaN or infinite values (io::nonfinite_warning).
  const std::vector<std::string>& nonfinite() const { return nonfinite_; }

 private:
  Result<std::vector<float>> read(const std::string& name, const std::vector<std::int64_t>& shape);

  const io::SafeTensors& file_;
  std::vector<std::string> nonfinite_;
  std::set<std::string, std::less<>> used_;
  std::int64_t parameters_ = 0;
};

// "412 k", "1.3 M", "870": a parameter count as the descriptions show it.
std::string parameter_text(std::int64_t parameters);
// A model's description: "task · part · part · 412 k parameters" (without the task when it is empty).
std::string describe(const std::string& task, std::initializer_list<std::string> parts, std::int64_t parameters);

// ---------------------------------------------------------------------------------------------------------
// Small products

// out = a w (accumulate: out += a w) for a [B, K] and w [K, N], B a handful of rows (a beam, one GRU step).
// Not a BLAS call: at these sizes OpenBLAS hands a GEMV of more than 9,216 elements to its OpenMP threads,
// and on a busy two-core machine waking and spinning them made a greedy decode take 1 s instead of 1 ms.
// Eigen's own small-product path (out.noalias() = a.lazyProduct(w), never a BLAS call either) is no
// substitute: it keeps one accumulator per output packet, so it waits on the FMA latency. Measured with
// bench_seq2seq --threads=2 on date-bahdanau (medians of 12 runs): a beam-5 decode took 3.2 ms with it
// against 1.9 ms with this, a greedy one 1.0 ms against 0.55 ms. Here each row is computed 64 columns at
// a time in eight independent accumulators.
// `out` must not overlap `a` or `w`.
void multiply(Eigen::Ref<Matrix> out, const MatrixCRef& a, const MatrixCRef& w, bool accumulate = false);

// The additive (MLP) score over precomputed key projections: out(b, j) = v . tanh(query_b + keys_j) for
// the first `rows` rows of query [.., a] and keys [L, a] (Bahdanau's additive and Luong's concat score,
// Show, Attend and Tell's attention). `tanh_rows` is scratch [L, a].
void additive_scores(const MatrixCRef& query, const MatrixCRef& keys, const RowVector& v, Index rows, Matrix& tanh_rows,
                     Eigen::Ref<Matrix> out);

// ---------------------------------------------------------------------------------------------------------
// GRU (torch nn.GRU / nn.GRUCell, gates r, z, n)

// One direction of nn.GRU or an nn.GRUCell, transposed for row-vector products.
struct GruWeights {
  Matrix w_ih_t;         // [in, 3H]
  Matrix w_hh_t;         // [H, 3H]
  RowVector b_ih, b_hh;  // [3H]
  Index hidden() const { return w_hh_t.rows(); }
  Index input() const { return w_ih_t.rows(); }
};
struct BiGruWeights {
  GruWeights forward, backward;
};

// `<base>.weight_ih`, `.weight_hh`, `.bias_ih`, `.bias_hh` (an nn.GRUCell).
Result<GruWeights> read_gru_cell(TensorReader& r, const std::string& base, Index input, Index hidden);
// A one-layer bidirectional nn.GRU: `<base>.weight_ih_l0` ... and `..._l0_reverse`. MODELS.md writes the
// names without the layer suffix (`weight_ih`, `weight_ih_reverse`); those are accepted too.
// Layer `index` > 0 of a stacked one: `_l<index>` (its input is the layer below's [fwd ; bwd], 2 x hidden).
Result<BiGruWeights> read_bigru(TensorReader& r, const std::string& base, Index input, Index hidden, int index = 0);

// h' = (1 - z) * n + z * h for a batch of rows, from the input half gi = x W_ih^T + b_ih [B, 3H] and
// the recurrent half gh = h W_hh^T + b_hh [B, 3H] (r = sigma(gi_r + gh_r), z likewise,
// n = tanh(gi_n + r * gh_n)). gi is overwritten (it holds the gates afterwards: no scratch needed in the
// per-step loop); `h_out` may alias `h`.
void gru_gates(Eigen::Ref<Matrix> gi, const MatrixCRef& gh, const MatrixCRef& h, Eigen::Ref<Matrix> h_out);

// Buffers for bigru(), reused across calls.
struct GruScratch {
  Matrix gi_forward, gi_backward, gh, h;
};
// What bigru_backward() needs of a forward pass besides its output (whose rows are the states each step
// started from): every step's gates r, z, n [S, 3H] and the recurrent half of n, h W_hn^T + b_hn [S, H],
// per direction, row j for word j.
struct GruTape {
  Matrix gates_forward, gates_backward;
  Matrix recurrent_forward, recurrent_backward;
};
// The bidirectional GRU over the rows of x [S, in] from zero states: out [S, 2H], row j =
// [forward_j ; backward_j], as nn.GRU(bidirectional=True, batch_first=True) returns it. With a tape, it
// also keeps what the backward pass needs (the output is the same either way).
void bigru(const BiGruWeights& w, const MatrixCRef& x, Matrix& out, GruScratch& scratch, GruTape* tape = nullptr);
// The backward pass of bigru(): d_x [S, in] = d(out)/d(x)^T d_out, from the forward's out [S, 2H] and tape
// and the gradient d_out [S, 2H] of a scalar with respect to out (backpropagation through time, both
// directions).
void bigru_backward(const BiGruWeights& w, const GruTape& tape, const MatrixCRef& out, const MatrixCRef& d_out,
                    Matrix& d_x);

// ---------------------------------------------------------------------------------------------------------
// LSTM (torch nn.LSTMCell, gates i, f, g, o)

// An nn.LSTMCell (`<base>.weight_ih`, `.weight_hh`, `.bias_ih`, `.bias_hh`), transposed for row-vector
// products, its two biases summed.
struct LstmWeights {
  Matrix w_ih_t;  // [in, 4H]
  Matrix w_hh_t;  // [H, 4H]
  RowVector b;    // bias_ih + bias_hh [4H]
  Index hidden() const { return w_hh_t.rows(); }
};
Result<LstmWeights> read_lstm_cell(TensorReader& r, const std::string& base, Index input, Index hidden);

// c' = f * c + i * g, h' = o * tanh(c') for a batch of rows, from the pre-activations
// gates = x W_ih^T + b_ih + h W_hh^T + b_hh [B, 4H] (i = sigma, f = sigma, g = tanh, o = sigma of their
// quarters). `c` and `h` [B, H] are updated in place.
void lstm_gates(const MatrixCRef& gates, Eigen::Ref<Matrix> c, Eigen::Ref<Matrix> h);

// ---------------------------------------------------------------------------------------------------------
// Convolution (the captioner's encoder)

// Buffers for conv3x3_relu_pool(), reused across layers and calls.
struct ConvScratch {
  Matrix columns;  // im2col [9 C_in, side^2]
  Matrix conv;     // the convolution [C_out, side^2]
};
// One encoder layer: a 3x3 convolution (stride 1, zero padding 1, as nn.Conv2d(kernel_size=3, padding=1)),
// ReLU, then 2x2 max pooling with stride 2 (an even `side`). `planes` [C_in, side^2], each row one
// side x side plane in row-major order, becomes [C_out, (side / 2)^2]. `weight` is the torch weight
// [C_out, C_in, 3, 3] as [C_out, 9 C_in] (TensorReader::flattened), `bias` [C_out].
// The convolution is im2col and one multiply() (no BLAS call). Measured with bench_caption on caption-soft's
// encoder (128 x 128 input, channels 8, 16, 32, 128): 2.1 ms, against 6.6 ms for a direct 9-tap kernel
// vectorised along the rows of a plane (BM_EncoderDirect). OpenBLAS's sgemm does the products 2.8x faster
// on one thread (1.0 ms for the encoder), but with two threads on this busy two-core machine its OpenMP
// team made the encoder 2.4 ms at best and 66 ms at a median.
void conv3x3_relu_pool(const Matrix& weight, const Vector& bias, Index side, Matrix& planes, ConvScratch& scratch);

// ---------------------------------------------------------------------------------------------------------
// Vocabularies and model folders

// config.json's "labels": a list of at least 2 class names (the classifiers' and the entailment model's).
Result<std::vector<std::string>> read_labels(const ConfigKeys& k);

// The softmax of a row of logits, as the probabilities a run reports.
void softmax_into(const RowVector& logits, std::vector<float>& out);

// Vocabulary entry -> id (the vocabularies are small: a few hundred entries at most).
using VocabMap = std::unordered_map<std::string, int>;
VocabMap index_vocabulary(const std::vector<std::string>& vocab);

// Model::from_parts of a demo model: `build()` gives a Result<std::unique_ptr<Model::Impl>> and `wrap` the
// model around it (a lambda of the model's, whose constructor is private); running out of memory is an
// error naming the weights' file.
template <class Model, class Build, class Wrap>
Result<std::shared_ptr<const Model>> build_model(const io::SafeTensors& weights, Build&& build, Wrap&& wrap) {
  try {
    auto impl = build();
    if (!impl) return std::unexpected(impl.error());
    return std::shared_ptr<const Model>(wrap(std::move(*impl)));
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while loading the model", weights.name());
  }
}

// Model::load of a demo model: `folder` must hold config.json (read by Config::parse) and
// model.safetensors (handed to Model::from_parts). Every error names the file; running out of memory or
// any other exception is an error too.
template <class Model, class Config>
Result<std::shared_ptr<const Model>> load_folder(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  try {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
      return fail(ErrorKind::Io,
                  fs::exists(folder, ec) ? "expected a model folder (config.json + model.safetensors), got a file"
                                         : "no such folder",
                  folder.string());
    }
    const fs::path config_path = folder / "config.json";
    auto text = detail::read_config_text(config_path);
    if (!text) return std::unexpected(text.error());
    auto config = Config::parse(*text, config_path.string());
    if (!config) return std::unexpected(config.error());
    auto weights = io::SafeTensors::open(folder / "model.safetensors");
    if (!weights) return std::unexpected(weights.error());
    return Model::from_parts(std::move(*config), *weights);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while loading the model", folder.string());
  } catch (const std::exception& e) {
    return fail(ErrorKind::Malformed, std::string("cannot load the model: ") + e.what(), folder.string());
  }
}

}  // namespace attn::models::bundled
