// ggml_math.h against llama.cpp's own intermediate tensors (tests/data/ggml_tensors, written by
// tools/golden/llama_tensors.sh through node-llama-cpp's prebuilt CPU library): layer 0 of a prompt (a batch of
// tokens: tinyBLAS's order where head_dim is a multiple of 16) and of the token generated after it (one row:
// ggml_vec_dot_f16's order), for stories260k-Q8_0 (head_dim 8, a feed-forward width of 172: libm's expf on its last
// 12) and the SmolLM2-shaped Q6_K file (head_dim 64, llama's RoPE pairs); GPT-2's LayerNorm and table GELU from
// gpt2-random-F32. Every value must be llama.cpp's, bit for bit: given llama.cpp's inputs, the RMSNorm, LayerNorm,
// RoPE, SwiGLU, GELU and attention give its outputs exactly.
#include "attn/io/gguf.h"
#include "io/half.h"
#include "models/hf/decoder_impl.h"
#include "models/hf/ggml_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attn::models {
namespace {

namespace fs = std::filesystem;

// One tensor as llama_tensors.cpp writes it: ne[0..3] (ne[0] the fastest) and the values.
struct Tensor {
  std::int64_t ne[4] = {};
  std::vector<float> v;
  Index rows() const { return ne[1] * ne[2] * ne[3]; }
};

Tensor read(const fs::path& path) {
  Tensor t;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  in.read(reinterpret_cast<char*>(t.ne), sizeof t.ne);
  t.v.resize(static_cast<std::size_t>(t.ne[0] * t.rows()));
  in.read(reinterpret_cast<char*>(t.v.data()), static_cast<std::streamsize>(t.v.size() * sizeof(float)));
  EXPECT_TRUE(in.good()) << path;
  return t;
}

struct Case {
  std::string name;
  Index heads, kv_heads, head_dim;
  double rope_base;
};
const Case kCases[] = {{"stories260k-Q8_0", 8, 4, 8, 10000.0}, {"smollm2-random-llama-Q6_K", 4, 2, 64, 100000.0}};

fs::path dir(const Case& c, const char* part) { return fs::path(ATTN_TEST_DATA_DIR) / "ggml_tensors" / c.name / part; }

// Counts the values of `ours` that are not bit for bit those of `theirs`.
Index differing(const std::vector<float>& ours, const std::vector<float>& theirs) {
  EXPECT_EQ(ours.size(), theirs.size());
  Index n = 0;
  for (std::size_t i = 0; i < std::min(ours.size(), theirs.size()); ++i) n += ours[i] != theirs[i];
  return n;
}

TEST(GgmlMath, RmsNormAndSwigluAreLlamaCpps) {
  for (const Case& c : kCases) {
    for (const char* part : {"prompt", "step"}) {
      SCOPED_TRACE(c.name + " " + part);
      const Tensor x = read(dir(c, part) / "embd.f32"), norm = read(dir(c, part) / "norm-0.f32");
      const Index d = x.ne[0];
      std::vector<float> out(x.v.size()), ones(static_cast<std::size_t>(d), 1.0f);
      for (Index r = 0; r < x.rows(); ++r)
        ggml::rms_norm(x.v.data() + r * d, out.data() + r * d, ones.data(), d, 1e-5f);
      EXPECT_EQ(differing(out, norm.v), 0);
      const Tensor gate = read(dir(c, part) / "ffn_gate-0.f32"), up = read(dir(c, part) / "ffn_up-0.f32");
      const Tensor swiglu = read(dir(c, part) / "ffn_swiglu-0.f32");
      std::vector<float> g = gate.v;
      const Index f = gate.ne[0];
      for (Index r = 0; r < gate.rows(); ++r) ggml::swiglu(g.data() + r * f, up.v.data() + r * f, f);
      EXPECT_EQ(differing(g, swiglu.v), 0);
    }
  }
}

// GPT-2's norms (ggml_norm, then the weight's ggml_mul and the bias's ggml_add, each rounded: one fused
// multiply-add, as GCC would make of the C++ unless kept apart, moves 12 of 64 values by an ulp) and its ungated
// table GELU, on the prompt's 10 rows and the next token's one.
TEST(GgmlMath, LayerNormAndGeluAreLlamaCpps) {
  const fs::path data = fs::path(ATTN_TEST_DATA_DIR) / "ggml_tensors" / "gpt2-random-F32";
  auto file = io::GgufFile::open(fs::path(ATTN_TEST_DATA_DIR) / "gguf" / "gpt2-random-F32.gguf");
  ASSERT_TRUE(file.has_value()) << file.error().message();
  auto eps = file->number("gpt2.attention.layer_norm_epsilon");
  ASSERT_TRUE(eps && *eps);
  const auto vector = [&](const char* name) {
    const io::GgufTensor* t = file->find(name);
    EXPECT_NE(t, nullptr) << name;
    return t ? file->to_float(*t).value_or(std::vector<float>()) : std::vector<float>();
  };
  const std::vector<float> w = vector("blk.0.attn_norm.weight"), b = vector("blk.0.attn_norm.bias");
  for (const char* part : {"prompt", "step"}) {
    SCOPED_TRACE(part);
    const Tensor x = read(data / part / "inpL.f32"), norm = read(data / part / "norm-0.f32");
    const Tensor out_ref = read(data / part / "attn_norm-0.f32");
    const Index d = x.ne[0];
    ASSERT_EQ(static_cast<Index>(w.size()), d);
    std::vector<float> plain(x.v.size()), out(x.v.size()), ones(static_cast<std::size_t>(d), 1.0f),
        zeros(static_cast<std::size_t>(d), 0.0f);
    for (Index r = 0; r < x.rows(); ++r) {
      ggml::layer_norm(x.v.data() + r * d, plain.data() + r * d, ones.data(), zeros.data(), d,
                       static_cast<float>(**eps));
      ggml::layer_norm(x.v.data() + r * d, out.data() + r * d, w.data(), b.data(), d, static_cast<float>(**eps));
    }
    EXPECT_EQ(differing(plain, norm.v), 0);
    EXPECT_EQ(differing(out, out_ref.v), 0);
    const Tensor up = read(data / part / "ffn_up_b-0.f32"), gelu = read(data / part / "ffn_gelu-0.f32");
    std::vector<float> g = up.v;
    ggml::gelu(g.data(), static_cast<Index>(g.size()));
    EXPECT_EQ(differing(g, gelu.v), 0);
  }
}

// A Q4_K product of one row as llama.cpp's x86 build computes it on the rows it repacks eight at a time
// (ggml_gemv_q4_K_8x8_q8_K): the engine's product of llama.cpp's own input, bit for bit; in ggml's vec_dot order
// (rows it does not repack) some outputs are ulps away. The file has one layer, so the prompt's MLP too is of its
// last row alone (llama.cpp's inp_out_ids), a gemv like the generated token's.
TEST(GgmlMath, Q4KRowProductIsLlamaCppsRepackedGemv) {
  const fs::path dir = fs::path(ATTN_TEST_DATA_DIR) / "ggml_tensors" / "smollm2-random-Q4_K";
  auto file = io::GgufFile::open(fs::path(ATTN_TEST_DATA_DIR) / "gguf" / "smollm2-random-Q4_K.gguf");
  ASSERT_TRUE(file.has_value()) << file.error().message();
  const io::GgufTensor* t = file->find("blk.0.ffn_up.weight");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(static_cast<io::GgmlType>(t->type), io::GgmlType::Q4_K);
  StoredMatrix w;
  w.dtype = io::DType::GGML;
  w.ggml_type = t->type;
  w.data = file->bytes(*t).data();
  w.rows = t->rows();
  w.cols = t->ne[0];
  w.ggml_rounding = true;  // llama.cpp's arithmetic: the activations quantised to Q8_K
  for (const char* part : {"prompt", "step"}) {
    SCOPED_TRACE(part);
    const Tensor x = read(dir / part / "ffn_norm-0.f32"), y = read(dir / part / "ffn_up-0.f32");
    ASSERT_EQ(x.rows(), 1);
    ASSERT_EQ(x.ne[0], w.cols);
    std::vector<float> out(static_cast<std::size_t>(w.rows)), scratch;
    w.ggml_repacked = true;
    stored_linear(x.v.data(), 1, w.cols, w, out.data(), w.rows, scratch);
    EXPECT_EQ(differing(out, y.v), 0);
    w.ggml_repacked = false;
    stored_linear(x.v.data(), 1, w.cols, w, out.data(), w.rows, scratch);
    EXPECT_GT(differing(out, y.v), 0);
  }
}

TEST(GgmlMath, RopeIsLlamaCpps) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Tensor before = read(dir(c, "prompt") / "Qcur-0.f32"), after = read(dir(c, "prompt") / "Qcur-0#2.f32");
    const Index hd = c.head_dim, half = hd / 2, tokens = before.ne[1], heads = before.ne[0] / hd;
    std::vector<float> cos, sin;
    ggml::rope_tables(c.rope_base, 1.0f, {}, hd, 0, tokens, cos, sin);
    // llama.cpp rotates the file's pairs (2i, 2i + 1); the engine the same pairs as (i, i + hd / 2).
    std::vector<float> out(before.v.size()), head(static_cast<std::size_t>(hd));
    for (Index t = 0; t < tokens; ++t) {
      for (Index h = 0; h < heads; ++h) {
        const float* in = before.v.data() + (t * heads + h) * hd;
        for (Index i = 0; i < half; ++i) {
          head[static_cast<std::size_t>(i)] = in[2 * i];
          head[static_cast<std::size_t>(half + i)] = in[2 * i + 1];
        }
        ggml::rotate(head.data(), cos.data() + t * half, sin.data() + t * half, half);
        ggml::to_pairs(head.data(), out.data() + (t * heads + h) * hd, 1, hd);
      }
    }
    EXPECT_EQ(differing(out, after.v), 0);
  }
}

// Rows of keys or values [tokens][kv_heads][hd] -> one kv head's rows, rounded to F16 as the cache holds them.
std::vector<float> cached(const std::vector<Tensor>& parts, Index g, Index kv, Index hd) {
  std::vector<float> out;
  for (const Tensor& t : parts) {
    for (Index r = 0; r < t.ne[2]; ++r) {
      for (Index i = 0; i < hd; ++i) out.push_back(t.v[static_cast<std::size_t>((r * kv + g) * hd + i)]);
    }
  }
  io::round_to_half(out.data(), static_cast<std::int64_t>(out.size()));
  return out;
}

TEST(GgmlMath, AttentionIsLlamaCpps) {
  for (const Case& c : kCases) {
    for (const char* part : {"prompt", "step"}) {
      SCOPED_TRACE(c.name + " " + part);
      const bool step = std::string(part) == "step";
      const Index H = c.heads, KV = c.kv_heads, hd = c.head_dim;
      std::vector<Tensor> keys{read(dir(c, "prompt") / "Kcur-0#2.f32")},
          values{read(dir(c, "prompt") / "Vcur-0#1.f32")};
      if (step) {
        keys.push_back(read(dir(c, part) / "Kcur-0#2.f32"));
        values.push_back(read(dir(c, part) / "Vcur-0#1.f32"));
      }
      Tensor q = read(dir(c, part) / "Qcur-0#2.f32");
      io::round_to_half(q.v.data(), static_cast<std::int64_t>(q.v.size()));
      const Tensor soft = read(dir(c, part) / "kq_soft_max-0.f32"), kqv = read(dir(c, part) / "kqv-0.f32");
      const Index rows = q.ne[2], p0 = step ? keys[0].ne[2] : 0, kv_cols = soft.ne[0];
      const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
      Index weights_off = 0, outputs_off = 0;
      std::vector<float> p(static_cast<std::size_t>(p0 + rows)), out(static_cast<std::size_t>(hd)),
          scratch(static_cast<std::size_t>(64 * hd));
      for (Index h = 0; h < H; ++h) {
        const Index g = h / (H / KV);
        const std::vector<float> k = cached(keys, g, KV, hd), v = cached(values, g, KV, hd);
        const ggml::AttentionRow a{k.data(), v.data(), hd, scale, rows};
        for (Index i = 0; i < rows; ++i) {
          const Index row = p0 + i;
          ggml::attention_row(a, q.v.data() + (i * H + h) * hd, 0, row, p.data(), out.data(), scratch.data());
          for (Index j = 0; j <= row; ++j)
            weights_off +=
                p[static_cast<std::size_t>(j)] != soft.v[static_cast<std::size_t>((h * rows + i) * kv_cols + j)];
          for (Index d = 0; d < hd; ++d)
            outputs_off += out[static_cast<std::size_t>(d)] != kqv.v[static_cast<std::size_t>((h * rows + i) * hd + d)];
        }
      }
      EXPECT_EQ(weights_off, 0) << "attention weights not llama.cpp's";
      EXPECT_EQ(outputs_off, 0) << "heads' outputs not llama.cpp's";
    }
  }
}

// Without the F16 order of the sums the weights are not llama.cpp's: the test can fail.
TEST(GgmlMath, TheOrderOfTheSumsMatters) {
  const Case& c = kCases[1];
  Tensor q = read(dir(c, "prompt") / "Qcur-0#2.f32");
  io::round_to_half(q.v.data(), static_cast<std::int64_t>(q.v.size()));
  const std::vector<float> k = cached({read(dir(c, "prompt") / "Kcur-0#2.f32")}, 0, c.kv_heads, c.head_dim);
  Index differ = 0;
  for (Index t = 0; t < q.ne[2]; ++t) {
    for (Index j = 0; j <= t; ++j) {
      const float* a = q.v.data() + t * c.heads * c.head_dim;
      differ += ggml::dot_lanes(a, k.data() + j * c.head_dim, c.head_dim) !=
                ggml::vec_dot_f16(a, k.data() + j * c.head_dim, c.head_dim);
    }
  }
  EXPECT_GT(differ, 0);
}

}  // namespace
}  // namespace attn::models
