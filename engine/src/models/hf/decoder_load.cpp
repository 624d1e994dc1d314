// Loading a decoder checkpoint: every projection kept as stored (decoder_impl.h), norms and biases widened.
#include "decoder_impl.h"
#include "ggml_products.h"

#include "attn/io/ggml_types.h"
#include "tensor_reader.h"
#include "transformer_impl.h"
#include "../../core/try.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace attn::models {

namespace {

using attn::detail::TensorReader;

// Quantised blocks: their scales read (io::ggml_count_nonfinite), shared between the threads by rows.
void count_nonfinite_blocks(const StoredMatrix& w, std::int64_t& nan, std::int64_t& inf) {
  const auto row = static_cast<std::size_t>(io::ggml_bytes(w.ggml_type, w.cols).value_or(0));
  const auto* base = static_cast<const std::byte*>(w.data);
#pragma omp parallel for reduction(+ : nan, inf) schedule(static) if (w.rows * w.cols >= (1 << 20))
  for (Index r = 0; r < w.rows; ++r) {
    io::ggml_count_nonfinite(static_cast<io::GgmlType>(w.ggml_type), {base + static_cast<std::size_t>(r) * row, row},
                             nan, inf);
  }
}

// Scans a 16-bit or 32-bit float tensor in place for NaN and infinity (exponent bits all ones).
void count_nonfinite(const StoredMatrix& w, std::int64_t& nan, std::int64_t& inf) {
  const std::int64_t n = w.rows * w.cols;
  nan = inf = 0;
  if (w.dtype == io::DType::GGML) {
    count_nonfinite_blocks(w, nan, inf);
    return;
  }
  if (w.dtype == io::DType::F32) {
    const auto* p = static_cast<const std::uint32_t*>(w.data);
#pragma omp parallel for reduction(+ : nan, inf) schedule(static) if (n >= (1 << 20))
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint32_t b = p[i];
      if ((b & 0x7F800000u) == 0x7F800000u) ((b & 0x007FFFFFu) ? nan : inf) += 1;
    }
    return;
  }
  const bool bf16 = w.dtype == io::DType::BF16;
  const std::uint16_t exponent = bf16 ? 0x7F80 : 0x7C00, mantissa = bf16 ? 0x007F : 0x03FF;
  const auto* p = static_cast<const std::uint16_t*>(w.data);
  std::int64_t any = 0;
  // Shared between the threads: a 1.1 B-parameter checkpoint is 2.2 GB to read once.
#pragma omp parallel for reduction(+ : any) schedule(static) if (n >= (1 << 20))
  for (std::int64_t i = 0; i < n; ++i) any += (p[i] & exponent) == exponent;
  if (any == 0) return;
  for (std::int64_t i = 0; i < n; ++i) {
    if ((p[i] & exponent) == exponent) ((p[i] & mantissa) ? nan : inf) += 1;
  }
}

// A GGUF file's llama query or key rows (DecoderSettings::ggml_rope_pairs): llama.cpp's converter stored each head's
// row j * half + i (the "rotate half" layout, j in {0, 1}) as its row 2i + j (adjacent RoPE pairs, for ggml's kernel).
// The matrix's row m is the stored row this gives for it (StoredMatrix::file_rows).
std::vector<Index> rope_pair_rows(Index rows, Index heads) {
  std::vector<Index> order(static_cast<std::size_t>(rows));
  const Index head_dim = rows / heads, half = head_dim / 2;
  for (Index h = 0; h < heads; ++h) {
    for (Index i = 0; i < half; ++i) {
      for (Index j = 0; j < 2; ++j)
        order[static_cast<std::size_t>(h * head_dim + j * half + i)] = h * head_dim + 2 * i + j;
    }
  }
  return order;
}

class DecoderLoader {
 public:
  DecoderLoader(TransformerModel::Impl& m, TensorReader& r) : m_(m), c_(m.config), r_(r) {}

  // An nn.Linear weight [out, in], kept as stored.
  Result<StoredMatrix> matrix(const std::string& name, Index out, Index in) {
    const auto found = r_.stored(name, {out, in});
    if (!found) return std::unexpected(found.error());
    StoredMatrix w;
    w.rows = out;
    w.cols = in;
    if (r_.checking()) return w;
    const io::TensorInfo& info = *found->info;
    const auto bytes = found->file->bytes(info);
    w.dtype = info.dtype;
    w.ggml_type = info.ggml_type;
    w.ggml_rounding = c_.decoder.ggml_arithmetic;
    w.ggml_repacked = w.ggml_rounding;
    w.ggml_amx = w.ggml_rounding && c_.decoder.ggml_amx && ggml::ggml_amx_holds(info.dtype, info.ggml_type, out, in);
    const bool aligned = reinterpret_cast<std::uintptr_t>(bytes.data()) % io::dtype_size(info.dtype) == 0;
    if (info.dtype == io::DType::F64 || !aligned) {
      auto values = found->file->to_float(info);
      if (!values) return std::unexpected(values.error());
      w.dtype = io::DType::F32;
      w.owned = std::move(*values);
      w.data = w.owned.data();
    } else {
      w.data = bytes.data();
    }
    if (c_.decoder.ggml_rope_pairs && (name.ends_with("q_proj.weight") || name.ends_with("k_proj.weight"))) {
      w.file_rows = rope_pair_rows(out, name.ends_with("q_proj.weight") ? c_.heads : c_.decoder.kv_heads);
    }
    std::int64_t nan = 0, inf = 0;
    count_nonfinite(w, nan, inf);
    if (auto note = io::nonfinite_warning(*found->file, info, nan, inf, out * in)) r_.add_nonfinite(std::move(*note));
    return w;
  }
  // A vector, widened; `gemma` adds 1 (Gemma's RMSNorm scales by 1 + w).
  Result<RowVector> vector(const std::string& name, Index n, bool gemma = false) {
    auto v = r_.vector(name, n);
    if (!v) return std::unexpected(v.error());
    if (gemma && !r_.checking()) v->array() += 1.0f;
    return v;
  }
  Result<RowVector> bias(const std::string& name, Index n, bool present) {
    if (!present) return RowVector();
    return vector(name, n);
  }

  Result<void> run(const std::function<Result<void>(int layer)>& layer_done) {
    const DecoderSettings& s = c_.decoder;
    auto& w = *m_.lm_weights;
    const Index d = c_.hidden, hd = s.head_dim, q_out = c_.heads * hd, kv_out = s.kv_heads * hd;
    const Index f = c_.intermediate;
    // Gemma's norms scale by 1 + w: the 1 added here unless the file already holds it (a GGUF file).
    const bool g = s.gemma, plus_one = g && !s.norms_hold_one;
    // Gemma 3's multimodal checkpoints put the text model under language_model.
    const std::string root = r_.has("language_model.model.embed_tokens.weight") ? "language_model." : "";
    const std::string prefix = root + "model.";
    ATTN_ASSIGN(w.embed, matrix(prefix + "embed_tokens.weight", c_.vocab_size, d));
    for (int i = 0; i < c_.layers; ++i) {
      DecoderLayerWeights L;
      const std::string p = prefix + "layers." + std::to_string(i) + ".";
      const std::string a = p + "self_attn.";
      if (s.fused || s.gpt2) {
        ATTN_ASSIGN(L.q, matrix(a + "qkv_proj.weight", q_out + 2 * kv_out, d));
        ATTN_ASSIGN(L.q_bias, bias(a + "qkv_proj.bias", q_out + 2 * kv_out, s.gpt2));
      } else {
        ATTN_ASSIGN(L.q, matrix(a + "q_proj.weight", q_out, d));
        ATTN_ASSIGN(L.k, matrix(a + "k_proj.weight", kv_out, d));
        ATTN_ASSIGN(L.v, matrix(a + "v_proj.weight", kv_out, d));
        ATTN_ASSIGN(L.q_bias, bias(a + "q_proj.bias", q_out, s.qkv_bias));
        ATTN_ASSIGN(L.k_bias, bias(a + "k_proj.bias", kv_out, s.qkv_bias));
        ATTN_ASSIGN(L.v_bias, bias(a + "v_proj.bias", kv_out, s.qkv_bias));
      }
      ATTN_ASSIGN(L.o, matrix(a + "o_proj.weight", d, q_out));
      ATTN_ASSIGN(L.o_bias, bias(a + "o_proj.bias", d, s.o_bias));
      if (s.qk_norm) {
        ATTN_ASSIGN(L.q_norm, vector(a + "q_norm.weight", hd, plus_one));
        ATTN_ASSIGN(L.k_norm, vector(a + "k_norm.weight", hd, plus_one));
      }
      const std::string mlp = p + "mlp.";
      if (s.fused) {
        ATTN_ASSIGN(L.gate, matrix(mlp + "gate_up_proj.weight", 2 * f, d));
      } else if (s.gpt2) {
        ATTN_ASSIGN(L.up, matrix(mlp + "up_proj.weight", f, d));
        ATTN_ASSIGN(L.up_bias, bias(mlp + "up_proj.bias", f, s.mlp_bias));
      } else {
        ATTN_ASSIGN(L.gate, matrix(mlp + "gate_proj.weight", f, d));
        ATTN_ASSIGN(L.up, matrix(mlp + "up_proj.weight", f, d));
        ATTN_ASSIGN(L.gate_bias, bias(mlp + "gate_proj.bias", f, s.mlp_bias));
        ATTN_ASSIGN(L.up_bias, bias(mlp + "up_proj.bias", f, s.mlp_bias));
      }
      ATTN_ASSIGN(L.down, matrix(mlp + "down_proj.weight", d, f));
      ATTN_ASSIGN(L.down_bias, bias(mlp + "down_proj.bias", d, s.mlp_bias));
      ATTN_ASSIGN(L.input_norm, vector(p + "input_layernorm.weight", d, plus_one));
      ATTN_ASSIGN(L.post_attention_norm, vector(p + "post_attention_layernorm.weight", d, plus_one));
      ATTN_ASSIGN(L.input_norm_bias, bias(p + "input_layernorm.bias", d, s.gpt2));
      ATTN_ASSIGN(L.post_attention_norm_bias, bias(p + "post_attention_layernorm.bias", d, s.gpt2));
      if (g) {
        ATTN_ASSIGN(L.pre_ffn_norm, vector(p + "pre_feedforward_layernorm.weight", d, plus_one));
        ATTN_ASSIGN(L.post_ffn_norm, vector(p + "post_feedforward_layernorm.weight", d, plus_one));
      }
      w.layers.push_back(std::move(L));
      ATTN_TRY(layer_done(i));
    }
    ATTN_ASSIGN(w.final_norm, vector(prefix + "norm.weight", d, plus_one));
    ATTN_ASSIGN(w.final_norm_bias, bias(prefix + "norm.bias", d, s.gpt2));
    if (s.gpt2) ATTN_ASSIGN(w.positions, matrix(prefix + "embed_positions.weight", c_.max_positions, d));
    if (!s.tied) {
      ATTN_ASSIGN(w.lm_head, matrix(root + "lm_head.weight", c_.vocab_size, d));
    } else if (r_.has(root + "lm_head.weight")) {
      r_.mark_used(root + "lm_head.weight");  // a tied checkpoint that also saved the copy
    }
    return {};
  }

 private:
  TransformerModel::Impl& m_;
  const TransformerConfig& c_;
  TensorReader& r_;
};

}  // namespace

Result<void> load_decoder(TransformerModel::Impl& m, attn::detail::TensorReader& r,
                          const std::function<Result<void>(int layer)>& layer_done) {
  if (!m.lm_weights) m.lm_weights = std::make_unique<DecoderWeights>();  // the checking pass has no files
  m.lm_weights->layers.reserve(static_cast<std::size_t>(m.config.layers));
  m.has_head = true;
  return DecoderLoader(m, r).run(layer_done);
}

}  // namespace attn::models
