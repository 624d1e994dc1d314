#include "layers.h"

#include <algorithm>
#include <cmath>

namespace attn::models::bundled {

using detail::quote;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------
// config.json

Result<void> ConfigKeys::architecture(std::string_view expected) const {
  const json* a = find("architectures");
  if (!a) return error(ErrorKind::Malformed, "architectures is missing; expected [" + quote(expected) + "]");
  if (!a->is_array() || a->empty() || !(*a)[0].is_string()) {
    return error(ErrorKind::Malformed, "architectures",
                 "architectures must be a list of class names, got " + a->dump());
  }
  if ((*a)[0].get<std::string>() != expected) {
    return error(ErrorKind::Unsupported, "architectures",
                 "architectures " + a->dump() + " is not [" + quote(expected) + "]");
  }
  return {};
}

Result<int> ConfigKeys::whole(std::string_view key, std::int64_t lo, std::int64_t hi) const {
  if (!find(key)) return error(ErrorKind::Malformed, std::string(key) + " is missing");
  return whole_or(key, 0, lo, hi);
}

Result<std::vector<std::string>> ConfigKeys::vocabulary(std::string_view key,
                                                        std::initializer_list<std::string_view> required,
                                                        std::size_t min_size) const {
  const json* value = find(key);
  if (!value) return error(ErrorKind::Malformed, std::string(key) + " is missing");
  if (!value->is_array()) {
    return error(ErrorKind::Malformed, key,
                 std::string(key) + " must be a list of strings, got a JSON " + std::string(value->type_name()));
  }
  if (value->empty()) return error(ErrorKind::OutOfRange, key, std::string(key) + " is empty");
  if (value->size() > static_cast<std::size_t>(detail::kMaxConfigSize)) {
    return error(ErrorKind::TooLarge, key,
                 std::string(key) + " has " + std::to_string(value->size()) + " entries; at most " +
                     std::to_string(detail::kMaxConfigSize) + " are supported");
  }
  std::vector<std::string> out;
  out.reserve(value->size());
  VocabMap seen;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const json& entry = (*value)[i];
    if (!entry.is_string()) {
      return error(ErrorKind::Malformed, key,
                   std::string(key) + "[" + std::to_string(i) + "] must be a string, got " + entry.dump());
    }
    std::string s = entry.get<std::string>();
    if (s.empty()) {
      return error(ErrorKind::Malformed, key, std::string(key) + "[" + std::to_string(i) + "] is an empty string");
    }
    const auto [it, inserted] = seen.emplace(s, static_cast<int>(i));
    if (!inserted) {
      return error(ErrorKind::Malformed, key,
                   std::string(key) + " holds " + entry.dump() + " twice (ids " + std::to_string(it->second) + " and " +
                       std::to_string(i) + ")");
    }
    out.push_back(std::move(s));
  }
  std::size_t id = 0;
  for (const std::string_view want : required) {
    if (id >= out.size() || out[id] != want) {
      return error(ErrorKind::Malformed, key,
                   std::string(key) + "[" + std::to_string(id) + "] must be " + quote(want) + ", got " +
                       (id < out.size() ? json(out[id]).dump() : std::string("nothing")));
    }
    ++id;
  }
  if (out.size() < min_size) {
    return error(ErrorKind::OutOfRange, key,
                 std::string(key) + " has " + std::to_string(out.size()) + " entries; it needs at least " +
                     std::to_string(min_size) + " (the special entries and one more)");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Weights

Result<std::vector<float>> TensorReader::read(const std::string& name, const std::vector<std::int64_t>& shape) {
  const io::TensorInfo* info = file_.find(name);
  if (!info) {
    return fail(ErrorKind::Mismatch, "missing tensor '" + name + "' (expected shape " + io::shape_text(shape) + ")",
                file_.name());
  }
  if (info->shape != shape) {
    return std::unexpected(file_.error(*info, ErrorKind::Mismatch,
                                       "tensor '" + name + "' has shape " + io::shape_text(info->shape) +
                                           ", the config implies " + io::shape_text(shape)));
  }
  auto values = file_.to_float(*info);
  if (!values) return std::unexpected(values.error());
  if (auto note = io::nonfinite_warning(file_, *info, *values)) nonfinite_.push_back(std::move(*note));
  used_.insert(name);
  parameters_ += info->elements();
  return values;
}

Result<Matrix> TensorReader::matrix(const std::string& name, Index rows, Index cols) {
  auto v = read(name, {rows, cols});
  if (!v) return std::unexpected(v.error());
  return Matrix(Eigen::Map<const Matrix>(v->data(), rows, cols));
}

Result<RowVector> TensorReader::vector(const std::string& name, Index n) {
  auto v = read(name, {n});
  if (!v) return std::unexpected(v.error());
  return RowVector(Eigen::Map<const RowVector>(v->data(), n));
}

Result<Matrix> TensorReader::linear_t(const std::string& name, Index out, Index in) {
  auto v = read(name, {out, in});
  if (!v) return std::unexpected(v.error());
  return Matrix(Eigen::Map<const Matrix>(v->data(), out, in).transpose());
}

Result<Matrix> TensorReader::flattened(const std::string& name, const std::vector<std::int64_t>& shape) {
  auto v = read(name, shape);
  if (!v) return std::unexpected(v.error());
  const Index rows = shape.empty() ? 1 : shape.front();
  const Index cols = rows > 0 ? static_cast<Index>(v->size()) / rows : 0;
  return Matrix(Eigen::Map<const Matrix>(v->data(), rows, cols));
}

std::vector<std::string> TensorReader::unused() const {
  std::vector<std::string> out;
  for (const auto& t : file_.tensors()) {
    if (!used_.count(t.name)) out.push_back(t.name);
  }
  return out;
}

std::optional<std::string> TensorReader::unused_warning(std::string_view model) const {
  const auto names = unused();
  if (names.empty()) return std::nullopt;
  std::string w = std::to_string(names.size()) + " tensor" + (names.size() == 1 ? "" : "s") +
                  " of the file not used by " + std::string(model) + ": ";
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) w += (i ? ", " : "") + names[i];
  if (names.size() > 8) w += ", ...";
  return w;
}

std::string parameter_text(std::int64_t parameters) {
  if (parameters >= 1'000'000) {
    const double tenths = std::round(static_cast<double>(parameters) / 1e5);
    const auto whole = static_cast<long long>(tenths) / 10, frac = static_cast<long long>(tenths) % 10;
    return std::to_string(whole) + (frac ? "." + std::to_string(frac) : std::string()) + " M";
  }
  if (parameters >= 1000) return std::to_string(std::llround(static_cast<double>(parameters) / 1e3)) + " k";
  return std::to_string(parameters);
}

std::string describe(const std::string& task, std::initializer_list<std::string> parts, std::int64_t parameters) {
  const std::string dot = " \xC2\xB7 ";
  std::string out = task;
  for (const auto& part : parts) out += (out.empty() ? "" : dot) + part;
  return out + (out.empty() ? "" : dot) + parameter_text(parameters) + " parameters";
}

// ---------------------------------------------------------------------------------------------------------
// Small products

void multiply(Eigen::Ref<Matrix> out, const MatrixCRef& a, const MatrixCRef& w, bool accumulate) {
  constexpr Index C = 64;  // 8 AVX packets: independent accumulators that stay in registers
  using Chunk = Eigen::Matrix<float, 1, C>;
  const Index B = a.rows(), K = a.cols(), N = w.cols();
  for (Index i = 0; i < B; ++i) {
    const auto ai = a.row(i);
    Index j = 0;
    for (; j + C <= N; j += C) {
      Chunk acc = accumulate ? Chunk(out.row(i).segment<C>(j)) : Chunk(Chunk::Zero());
      for (Index k = 0; k < K; ++k) acc.noalias() += ai(k) * w.row(k).segment<C>(j);
      out.row(i).segment<C>(j) = acc;
    }
    if (const Index rest = N - j; rest > 0) {
      Chunk acc;
      if (accumulate) {
        acc.head(rest) = out.row(i).segment(j, rest);
      } else {
        acc.head(rest).setZero();
      }
      for (Index k = 0; k < K; ++k) acc.head(rest).noalias() += ai(k) * w.row(k).segment(j, rest);
      out.row(i).segment(j, rest) = acc.head(rest);
    }
  }
}

void additive_scores(const MatrixCRef& query, const MatrixCRef& keys, const RowVector& v, Index rows, Matrix& tanh_rows,
                     Eigen::Ref<Matrix> out) {
  tanh_rows.resize(keys.rows(), keys.cols());
  for (Index b = 0; b < rows; ++b) {
    tanh_rows = (keys.rowwise() + query.row(b)).array().tanh().matrix();
    out.row(b) = tanh_rows.lazyProduct(v.transpose()).transpose();
  }
}

// ---------------------------------------------------------------------------------------------------------
// GRU

Result<GruWeights> read_gru_cell(TensorReader& r, const std::string& base, Index input, Index hidden) {
  GruWeights g;
  ATTN_ASSIGN(g.w_ih_t, r.linear_t(base + ".weight_ih", 3 * hidden, input));
  ATTN_ASSIGN(g.w_hh_t, r.linear_t(base + ".weight_hh", 3 * hidden, hidden));
  ATTN_ASSIGN(g.b_ih, r.vector(base + ".bias_ih", 3 * hidden));
  ATTN_ASSIGN(g.b_hh, r.vector(base + ".bias_hh", 3 * hidden));
  return g;
}

namespace {
Result<GruWeights> read_gru_direction(TensorReader& r, const std::string& base, const std::string& layer,
                                      const std::string& suffix, Index input, Index hidden) {
  GruWeights g;
  ATTN_ASSIGN(g.w_ih_t, r.linear_t(base + ".weight_ih" + layer + suffix, 3 * hidden, input));
  ATTN_ASSIGN(g.w_hh_t, r.linear_t(base + ".weight_hh" + layer + suffix, 3 * hidden, hidden));
  ATTN_ASSIGN(g.b_ih, r.vector(base + ".bias_ih" + layer + suffix, 3 * hidden));
  ATTN_ASSIGN(g.b_hh, r.vector(base + ".bias_hh" + layer + suffix, 3 * hidden));
  return g;
}
}  // namespace

Result<BiGruWeights> read_bigru(TensorReader& r, const std::string& base, Index input, Index hidden, int index) {
  // torch's state_dict names the layer (`_l0`); without it only when the file has no `_l0` name at all.
  const std::string layer = index > 0 ? "_l" + std::to_string(index)
                            : !r.has(base + ".weight_ih_l0") && r.has(base + ".weight_ih") ? ""
                                                                                           : "_l0";
  BiGruWeights w;
  ATTN_ASSIGN(w.forward, read_gru_direction(r, base, layer, "", input, hidden));
  ATTN_ASSIGN(w.backward, read_gru_direction(r, base, layer, "_reverse", input, hidden));
  return w;
}

void gru_gates(Eigen::Ref<Matrix> gi, const MatrixCRef& gh, const MatrixCRef& h, Eigen::Ref<Matrix> h_out) {
  const Index H = h.cols();
  // r and z: the sigmoid of both halves' sums, in place over gi's first 2H columns.
  gi.leftCols(2 * H).array() = (1.0f + (-(gi.leftCols(2 * H).array() + gh.leftCols(2 * H).array())).exp()).inverse();
  // n = tanh(gi_n + r * gh_n): the reset gate scales only the recurrent half (torch's GRU).
  gi.rightCols(H).array() = (gi.rightCols(H).array() + gi.leftCols(H).array() * gh.rightCols(H).array()).tanh();
  h_out.array() =
      (1.0f - gi.middleCols(H, H).array()) * gi.rightCols(H).array() + gi.middleCols(H, H).array() * h.array();
}

void bigru(const BiGruWeights& w, const MatrixCRef& x, Matrix& out, GruScratch& s, GruTape* tape) {
  const Index S = x.rows(), H = w.forward.hidden();
  out.resize(S, 2 * H);
  // The input halves of every step at once: one product per direction instead of one per step (as many
  // multiply-adds as the recurrence's, so no BLAS call either: see multiply()).
  s.gi_forward.resize(S, 3 * H);
  multiply(s.gi_forward, x, w.forward.w_ih_t);
  s.gi_forward.rowwise() += w.forward.b_ih;
  s.gi_backward.resize(S, 3 * H);
  multiply(s.gi_backward, x, w.backward.w_ih_t);
  s.gi_backward.rowwise() += w.backward.b_ih;
  s.gh.resize(1, 3 * H);
  s.h = Matrix::Zero(1, H);
  if (tape) {
    tape->recurrent_forward.resize(S, H);
    tape->recurrent_backward.resize(S, H);
  }
  for (Index j = 0; j < S; ++j) {
    multiply(s.gh, s.h, w.forward.w_hh_t);
    s.gh += w.forward.b_hh;
    if (tape) tape->recurrent_forward.row(j) = s.gh.rightCols(H);
    gru_gates(s.gi_forward.row(j), s.gh, s.h, s.h);
    out.row(j).head(H) = s.h;
  }
  s.h.setZero();
  for (Index j = S - 1; j >= 0; --j) {
    multiply(s.gh, s.h, w.backward.w_hh_t);
    s.gh += w.backward.b_hh;
    if (tape) tape->recurrent_backward.row(j) = s.gh.rightCols(H);
    gru_gates(s.gi_backward.row(j), s.gh, s.h, s.h);
    out.row(j).tail(H) = s.h;
  }
  if (tape) {
    // gru_gates left each step's gates in the input halves.
    tape->gates_forward = s.gi_forward;
    tape->gates_backward = s.gi_backward;
  }
}

namespace {

// One direction of bigru_backward(): `states` [S, H] is the direction's output, `order` +1 when it read
// the words first to last, -1 when last to first. Step j started from the state of the word read before
// it (zero for the first read). Adds each word's input gradient to d_x.
void gru_direction_backward(const GruWeights& w, const Matrix& gates, const Matrix& recurrent, const MatrixCRef& states,
                            const MatrixCRef& d_states, int order, Matrix& d_x) {
  const Index S = states.rows(), H = w.hidden();
  RowVector dh = RowVector::Zero(H), dgi(3 * H), dgh(3 * H), h_prev(H);
  for (Index k = 0; k < S; ++k) {
    // Steps in the reverse of the order they ran.
    const Index j = order > 0 ? S - 1 - k : k, before = j - order;
    if (before >= 0 && before < S) {
      h_prev = states.row(before);
    } else {
      h_prev.setZero();
    }
    dh += d_states.row(j);
    const auto r = gates.row(j).head(H).array(), z = gates.row(j).segment(H, H).array(),
               n = gates.row(j).tail(H).array();
    // h = (1 - z) n + z h_prev; n = tanh(gi_n + r gh_n); r, z = sigma(gi + gh).
    const Eigen::Array<float, 1, Eigen::Dynamic> dn = dh.array() * (1.0f - z) * (1.0f - n * n);
    dgi.head(H) = (dn * recurrent.row(j).array() * r * (1.0f - r)).matrix();
    dgi.segment(H, H) = (dh.array() * (h_prev.array() - n) * z * (1.0f - z)).matrix();
    dgi.tail(H) = dn.matrix();
    dgh.head(2 * H) = dgi.head(2 * H);
    dgh.tail(H) = (dn * r).matrix();
    d_x.row(j).noalias() += dgi * w.w_ih_t.transpose();
    dh = (dh.array() * z).matrix();
    dh.noalias() += dgh * w.w_hh_t.transpose();
  }
}

}  // namespace

void bigru_backward(const BiGruWeights& w, const GruTape& tape, const MatrixCRef& out, const MatrixCRef& d_out,
                    Matrix& d_x) {
  const Index H = w.forward.hidden();
  d_x = Matrix::Zero(out.rows(), w.forward.input());
  gru_direction_backward(w.forward, tape.gates_forward, tape.recurrent_forward, out.leftCols(H), d_out.leftCols(H), 1,
                         d_x);
  gru_direction_backward(w.backward, tape.gates_backward, tape.recurrent_backward, out.rightCols(H), d_out.rightCols(H),
                         -1, d_x);
}

// ---------------------------------------------------------------------------------------------------------
// LSTM

Result<std::vector<std::string>> read_labels(const ConfigKeys& k) {
  const json* value = k.find("labels");
  if (!value) return k.error(ErrorKind::Malformed, "labels is missing");
  if (!value->is_array()) {
    return k.error(ErrorKind::Malformed, "labels", "labels must be a list of class names, got " + value->dump());
  }
  if (value->size() < 2) {
    return k.error(ErrorKind::OutOfRange, "labels",
                   "labels holds " + std::to_string(value->size()) + " class" + (value->size() == 1 ? "" : "es") +
                       "; a classifier needs at least 2");
  }
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const json& l = (*value)[i];
    if (!l.is_string()) {
      return k.error(ErrorKind::Malformed, "labels",
                     "labels[" + std::to_string(i) + "] must be a string, got " + l.dump());
    }
    labels.push_back(l.get<std::string>());
  }
  return labels;
}

void softmax_into(const RowVector& logits, std::vector<float>& out) {
  const float mx = logits.maxCoeff();
  const Eigen::ArrayXf e = (logits.array() - mx).exp().transpose();
  const float sum = e.sum();
  out.resize(static_cast<std::size_t>(logits.size()));
  for (Index i = 0; i < logits.size(); ++i) out[static_cast<std::size_t>(i)] = e(i) / sum;
}

Result<LstmWeights> read_lstm_cell(TensorReader& r, const std::string& base, Index input, Index hidden) {
  LstmWeights w;
  ATTN_ASSIGN(w.w_ih_t, r.linear_t(base + ".weight_ih", 4 * hidden, input));
  ATTN_ASSIGN(w.w_hh_t, r.linear_t(base + ".weight_hh", 4 * hidden, hidden));
  RowVector bias_hh;
  ATTN_ASSIGN(w.b, r.vector(base + ".bias_ih", 4 * hidden));
  ATTN_ASSIGN(bias_hh, r.vector(base + ".bias_hh", 4 * hidden));
  w.b += bias_hh;
  return w;
}

void lstm_gates(const MatrixCRef& gates, Eigen::Ref<Matrix> c, Eigen::Ref<Matrix> h) {
  const Index H = h.cols();
  const auto sigmoid = [](const auto& v) { return (1.0f + (-v).exp()).inverse(); };
  c.array() = sigmoid(gates.middleCols(H, H).array()) * c.array() +
              sigmoid(gates.leftCols(H).array()) * gates.middleCols(2 * H, H).array().tanh();
  h.array() = sigmoid(gates.rightCols(H).array()) * c.array().tanh();
}

// ---------------------------------------------------------------------------------------------------------
// Convolution

namespace {

// im2col of a 3x3 convolution with zero padding 1: row (ci, ky, kx) of `columns` is plane ci shifted by
// (ky - 1, kx - 1), zero outside.
void im2col3x3(const Matrix& planes, Index side, Matrix& columns) {
  const Index C = planes.rows();
  columns.resize(9 * C, side * side);
  for (Index ci = 0; ci < C; ++ci) {
    const float* src = planes.row(ci).data();
    for (Index ky = 0; ky < 3; ++ky) {
      for (Index kx = 0; kx < 3; ++kx) {
        float* dst = columns.row(ci * 9 + ky * 3 + kx).data();
        const Index dx = kx - 1;
        // out[x] = in[x + dx] where 0 <= x + dx < side.
        const Index x0 = std::max<Index>(0, -dx), x1 = std::min(side, side - dx);
        for (Index y = 0; y < side; ++y) {
          float* out = dst + y * side;
          const Index sy = y + ky - 1;
          if (sy < 0 || sy >= side) {
            std::fill(out, out + side, 0.0f);
            continue;
          }
          const float* in = src + sy * side;
          std::fill(out, out + x0, 0.0f);
          std::copy(in + x0 + dx, in + x1 + dx, out + x0);
          std::fill(out + x1, out + side, 0.0f);
        }
      }
    }
  }
}

}  // namespace

void conv3x3_relu_pool(const Matrix& weight, const Vector& bias, Index side, Matrix& planes, ConvScratch& s) {
  im2col3x3(planes, side, s.columns);
  s.conv.resize(weight.rows(), side * side);
  multiply(s.conv, weight, s.columns);
  // ReLU then the pooling's maximum is the maximum then ReLU: applied once per pooled cell, with the bias.
  const Index C = s.conv.rows(), half = side / 2;
  planes.resize(C, half * half);
  for (Index ch = 0; ch < C; ++ch) {
    const float* in = s.conv.row(ch).data();
    float* out = planes.row(ch).data();
    const float b = bias(ch);
    for (Index y = 0; y < half; ++y) {
      const float* r0 = in + (2 * y) * side;
      const float* r1 = r0 + side;
      for (Index x = 0; x < half; ++x) {
        const float m = std::max(std::max(r0[2 * x], r0[2 * x + 1]), std::max(r1[2 * x], r1[2 * x + 1]));
        out[y * half + x] = std::max(m + b, 0.0f);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Vocabularies

VocabMap index_vocabulary(const std::vector<std::string>& vocab) {
  VocabMap m;
  m.reserve(vocab.size());
  for (std::size_t i = 0; i < vocab.size(); ++i) m.emplace(vocab[i], static_cast<int>(i));
  return m;
}

}  // namespace attn::models::bundled
