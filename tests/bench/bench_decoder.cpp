// Today's decoders (issue 20, "Today's models") on random BF16 checkpoints of two real shapes, written as
// safetensors + config.json and loaded as a downloaded model is (weights memory-mapped in their BF16 form,
// widened per block as they are used):
//   SmolLM2-135M (llama: 30 layers, d 576, 9 heads, 3 key/value heads, head_dim 64, FFN 1536, vocab 49,152,
//   tied embeddings, rope_theta 1e5, rms_norm_eps 1e-5, 8,192 positions):
//     BM_SmolForward/L:512, L:2048   run_ids with every layer's maps (float32, the default), the last
//                                    position's logits (the default); the peer is torch_decoder_peer.py
//     BM_SmolGenerate/new:256        generate(): a 16-token prompt, then 256 greedy tokens with the cache,
//                                    every token's maps kept; tokens/s = 256 / the whole call (prompt included)
//     BM_SmolKeystroke/L:512         a token typed at the end of a 512-token text: run_ids on 513 ids with
//                                    RunOptions::previous = the run before (512 tokens reused, their maps
//                                    copied, one token computed); layer0_ms = the time to layer 0's maps
//                                    (the on_layer callback: the layer in view), the manual time = the whole call
//     BM_SmolFull/L:513              the same 513 ids with no previous run: what the keystroke would cost
//   TinyLlama-1.1B (llama: 22 layers, d 2048, 32 heads, 4 key/value heads, FFN 5632, vocab 32,000, untied):
//     BM_TinyLlamaOpen               TransformerModel::load of the 2.2 GB folder (file pages already cached)
//   --memory                         one process: the open with the file's pages dropped from the page cache
//                                    first, then one 512-token forward with every map; peak RSS (VmHWM)
//
//   bench_decoder [--threads=N] [google-benchmark flags]
//   bench_decoder --prepare [--threads=N]   # write the checkpoints (or check and reuse them) and print where
//   bench_decoder --memory [--threads=N]    # TinyLlama: cold open and peak memory of a 512-token forward
//
// The checkpoints are written once under $ATTN_BENCH_DIR (default /tmp/attnscope-bench) and reused while
// their config.json and every tensor's name, dtype and shape are what this file would write (the output says
// which). Weights are N(0, 0.02) (Hugging Face's initialisation; norms 1) rounded to bfloat16 (nearest, ties
// to even), drawn from fixed seeds, so the file is the same whoever writes it. torch_decoder_peer.py reads the
// SmolLM2 file, widened to float32 exactly as the engine widens it.
//
// SMOKE RUNS ONLY: ATTN_BENCH_DECODER_LAYERS=N gives both models N layers instead of 30 and 22 (their own
// folders, "-smoke-Nlayers"); every output says so. The shapes are the default.
//
// FLOPs (torch_decoder_peer.py counts the same): per layer 2 n d (H hd + 2 KV hd) for q, k, v, 2 n H hd d for
// the output, 2 n 3 d f for the gated MLP, 4 n^2 H hd for Q K^T and P V (the whole square, though both sides
// skip or mask the upper triangle), plus 2 d V for the last position's logits.
#include "attn/io/safetensors.h"
#include "attn/models/transformer.h"
#include "attn/on_demand_attention.h"
#include "attn/random.h"

#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <omp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using attn::Index;
using Clock = std::chrono::steady_clock;

struct Shape {
  std::string label;   // "SmolLM2-135M"
  std::string folder;  // under bench_dir()
  int layers, hidden, heads, kv_heads, head_dim, ffn, vocab, positions;
  bool tied;
  double rope_theta;
  int bos, eos;
  std::uint64_t seed;
};

// ATTN_BENCH_DECODER_LAYERS (smoke runs only): 0 when unset.
int smoke_layers() {
  const char* env = std::getenv("ATTN_BENCH_DECODER_LAYERS");
  if (env == nullptr || *env == '\0') return 0;
  int n = 0;
  if (!attn::bench::parse_thread_count(env, n)) {
    std::fprintf(stderr, "bench_decoder: ATTN_BENCH_DECODER_LAYERS=%s is not a positive integer\n", env);
    std::exit(2);
  }
  return n;
}

Shape smoke(Shape s) {
  if (const int n = smoke_layers(); n > 0) {
    s.layers = n;
    s.folder += "-smoke-" + std::to_string(n) + "layers";
  }
  return s;
}

// SmolLM2-135M's config.json (HuggingFaceTB/SmolLM2-135M) and TinyLlama-1.1B's (TinyLlama-1.1B-Chat-v1.0).
const Shape& smollm2() {
  static const Shape s =
      smoke({"SmolLM2-135M", "smollm2-135m-bf16", 30, 576, 9, 3, 64, 1536, 49152, 8192, true, 100000.0, 0, 0, 2026201});
  return s;
}
// The same weights (the same seed) with 32,768 positions, for the long inputs of issue 21 (SmolLM2's own config
// says 8,192; its RoPE is defined for any position).
const Shape& smollm2_long() {
  static const Shape s = [] {
    Shape l = smollm2();
    l.positions = 32768;
    l.folder += "-32k";
    return l;
  }();
  return s;
}
const Shape& tinyllama() {
  static const Shape s = smoke(
      {"TinyLlama-1.1B", "tinyllama-1.1b-bf16", 22, 2048, 32, 4, 64, 5632, 32000, 2048, false, 10000.0, 1, 2, 2026202});
  return s;
}

std::string shape_text(const Shape& s) {
  std::ostringstream o;
  o << s.label << " shape (" << s.layers << " layers, d " << s.hidden << ", " << s.heads << " heads, " << s.kv_heads
    << " key/value heads, head_dim " << s.head_dim << ", FFN " << s.ffn << ", vocab " << s.vocab << ", "
    << (s.tied ? "tied" : "untied") << "), random BF16 weights";
  if (smoke_layers() > 0) o << " [SMOKE: ATTN_BENCH_DECODER_LAYERS=" << smoke_layers() << ", not the issue's shape]";
  return o.str();
}

fs::path bench_dir() {
  if (const char* env = std::getenv("ATTN_BENCH_DIR"); env && *env) return env;
  return fs::temp_directory_path() / "attnscope-bench";
}

std::string config_json(const Shape& s) {
  std::ostringstream o;
  o << "{\"model_type\": \"llama\", \"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": " << s.hidden
    << ", \"intermediate_size\": " << s.ffn << ",\n \"num_hidden_layers\": " << s.layers
    << ", \"num_attention_heads\": " << s.heads << ", \"num_key_value_heads\": " << s.kv_heads
    << ", \"head_dim\": " << s.head_dim << ",\n \"max_position_embeddings\": " << s.positions
    << ", \"vocab_size\": " << s.vocab << ", \"rms_norm_eps\": 1e-05, \"rope_theta\": " << s.rope_theta
    << ",\n \"tie_word_embeddings\": " << (s.tied ? "true" : "false")
    << ", \"hidden_act\": \"silu\", \"attention_bias\": false, \"mlp_bias\": false, \"bos_token_id\": " << s.bos
    << ", \"eos_token_id\": " << s.eos << ", \"torch_dtype\": \"bfloat16\"}\n";
  return o.str();
}

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  bool norm;  // ones, else N(0, 0.02)
};

// Hugging Face's LlamaForCausalLM names and nn.Linear shapes [out, in].
std::vector<TensorSpec> tensors_of(const Shape& s) {
  const std::int64_t d = s.hidden, q = std::int64_t{s.heads} * s.head_dim, kv = std::int64_t{s.kv_heads} * s.head_dim;
  std::vector<TensorSpec> t{{"model.embed_tokens.weight", {s.vocab, d}, false}};
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "self_attn.q_proj.weight", {q, d}, false});
    t.push_back({p + "self_attn.k_proj.weight", {kv, d}, false});
    t.push_back({p + "self_attn.v_proj.weight", {kv, d}, false});
    t.push_back({p + "self_attn.o_proj.weight", {d, q}, false});
    t.push_back({p + "mlp.gate_proj.weight", {s.ffn, d}, false});
    t.push_back({p + "mlp.up_proj.weight", {s.ffn, d}, false});
    t.push_back({p + "mlp.down_proj.weight", {d, s.ffn}, false});
    t.push_back({p + "input_layernorm.weight", {d}, true});
    t.push_back({p + "post_attention_layernorm.weight", {d}, true});
  }
  t.push_back({"model.norm.weight", {d}, true});
  if (!s.tied) t.push_back({"lm_head.weight", {s.vocab, d}, false});
  return t;
}

// float32 -> bfloat16, round to nearest with ties to even (torch's .to(torch.bfloat16)); NaN stays NaN.
std::uint16_t to_bf16(float f) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

// Why the folder is not this shape's checkpoint ("" when it is): config.json as written, model.safetensors a
// valid file (SafeTensors::open checks the header against the file's length) with exactly these tensors.
std::string stale_reason(const Shape& s, const fs::path& dir) {
  if (!fs::exists(dir / "model.safetensors") || !fs::exists(dir / "config.json")) return "absent";
  if (read_text(dir / "config.json") != config_json(s)) return "config.json differs";
  auto file = attn::io::SafeTensors::open(dir / "model.safetensors");
  if (!file) return file.error().message();
  const auto specs = tensors_of(s);
  if (file->tensors().size() != specs.size()) return "another tensor count";
  for (const auto& spec : specs) {
    const auto* info = file->find(spec.name);
    if (info == nullptr) return "no tensor " + spec.name;
    if (info->dtype != attn::io::DType::BF16 || info->shape != spec.shape)
      return spec.name + " is not BF16 of its shape";
  }
  return "";
}

// The checkpoint folder of `s`, written unless a valid one is there; says on `out` which and how long it took
// (stderr while benchmarking: stdout may be Google Benchmark's JSON).
fs::path prepare(const Shape& s, std::FILE* out = stderr) {
  const fs::path dir = bench_dir() / s.folder;
  const std::string reason = stale_reason(s, dir);
  if (reason.empty()) {
    std::fprintf(out, "%s checkpoint: reused %s (%.1f MB)\n", s.label.c_str(), dir.c_str(),
                 static_cast<double>(fs::file_size(dir / "model.safetensors")) / 1e6);
    std::fflush(out);
    return dir;
  }
  const auto start = Clock::now();
  fs::create_directories(dir);
  fs::remove(dir / "config.json");  // written last: a folder with it holds a whole checkpoint
  const auto specs = tensors_of(s);
  std::vector<std::vector<std::uint16_t>> data(specs.size());
  std::vector<attn::io::TensorData> tensors;
  for (std::size_t t = 0; t < specs.size(); ++t) {
    std::int64_t count = 1;
    for (auto v : specs[t].shape) count *= v;
    auto& values = data[t];
    values.resize(static_cast<std::size_t>(count));
    // Chunks of 2^20 values, each from its own stream: the same bytes whatever the thread count.
    constexpr std::int64_t kChunk = std::int64_t{1} << 20;
    const std::int64_t chunks = (count + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t c = 0; c < chunks; ++c) {
      attn::SplitMix64 rng(
          attn::mix_seed(s.seed, (static_cast<std::uint64_t>(t) << 32) | static_cast<std::uint64_t>(c)));
      const std::int64_t end = std::min(count, (c + 1) * kChunk);
      for (std::int64_t i = c * kChunk; i < end; ++i) {
        values[static_cast<std::size_t>(i)] = to_bf16(specs[t].norm ? 1.0f : 0.02f * rng.normal());
      }
    }
    tensors.push_back({specs[t].name, attn::io::DType::BF16, specs[t].shape, std::as_bytes(std::span(values))});
  }
  if (auto ok = attn::io::write_safetensors(dir / "model.safetensors", tensors, {{"format", "pt"}}); !ok) {
    std::fprintf(stderr, "bench_decoder: %s\n", ok.error().message().c_str());
    std::exit(1);
  }
  std::ofstream(dir / "config.json", std::ios::binary) << config_json(s);
  std::fprintf(out, "%s checkpoint: wrote %s (%.1f MB; before: %s) in %.1f s\n", s.label.c_str(), dir.c_str(),
               static_cast<double>(fs::file_size(dir / "model.safetensors")) / 1e6, reason.c_str(),
               std::chrono::duration<double>(Clock::now() - start).count());
  std::fflush(out);
  return dir;
}

std::shared_ptr<const attn::models::TransformerModel> load_or_exit(const fs::path& dir) {
  auto loaded = attn::models::TransformerModel::load(dir);
  if (!loaded) {
    std::fprintf(stderr, "bench_decoder: %s\n", loaded.error().message().c_str());
    std::exit(1);
  }
  return *loaded;
}

// The SmolLM2 model, written or checked once per process.
std::shared_ptr<const attn::models::TransformerModel> smol_model() {
  static const auto m = load_or_exit(prepare(smollm2()));
  return m;
}

// The ids both sides run (torch_decoder_peer.py has the same formula): token i is (7919 i + 13) mod vocab.
std::vector<int> ids_of(Index n, int vocab) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<int>((7919 * i + 13) % vocab);
  return ids;
}

double forward_flops(const Shape& s, double n) {
  const double d = s.hidden, q = double(s.heads) * s.head_dim, kv = double(s.kv_heads) * s.head_dim, f = s.ffn;
  const double layer = 2.0 * n * d * (q + 2.0 * kv) + 2.0 * n * q * d + 2.0 * n * 3.0 * d * f + 4.0 * n * n * q;
  return s.layers * layer + 2.0 * d * s.vocab;
}

// Every layer's maps [heads, n, n] with rows that are distributions and nothing above the diagonal; "" or why not.
std::string check_maps(const attn::models::TransformerRun& run, const Shape& s, Index n) {
  if (static_cast<int>(run.attention.layers.size()) != s.layers) return "the run did not capture one stack per layer";
  for (const auto& layer : run.attention.layers) {
    if (layer.maps.heads() != s.heads || layer.maps.rows() != n || layer.maps.cols() != n)
      return "a layer's maps have the wrong shape";
  }
  for (std::size_t l = 0; l < run.attention.layers.size();
       l += std::max<std::size_t>(1, run.attention.layers.size() / 3)) {
    for (int h = 0; h < s.heads; h += 4) {
      const attn::Matrix a = run.attention.layers[l].maps.head(h);
      if (!a.allFinite() || ((a.rowwise().sum().array() - 1.0f).abs() > 1e-3f).any())
        return "a head's rows are not distributions";
      if (a.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() != 0)
        return "a map has weight on future tokens";
    }
  }
  return "";
}

void BM_SmolForward(benchmark::State& state) {
  const Index n = state.range(0);
  attn::models::TransformerRunner runner(smol_model());
  const auto ids = ids_of(n, smollm2().vocab);
  {
    auto run = runner.run_ids(ids);
    if (!run) return state.SkipWithError(run.error().message().c_str());
    if (const auto why = check_maps(*run, smollm2(), n); !why.empty()) return state.SkipWithError(why.c_str());
  }
  for (auto _ : state) {
    auto run = runner.run_ids(ids);
    benchmark::DoNotOptimize(run);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(forward_flops(smollm2(), static_cast<double>(n)) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SmolForward)->ArgName("L")->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int kPrompt = 16;

void BM_SmolGenerate(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  attn::models::TransformerRunner runner(smol_model());
  const auto prompt = ids_of(kPrompt, smollm2().vocab);
  attn::models::GenerateOptions g;
  g.max_new_tokens = steps;
  g.stop_at_eos = false;  // random weights may well pick the EOS id; the peer does not stop either
  {
    auto run = runner.generate(prompt, g);
    if (!run) return state.SkipWithError(run.error().message().c_str());
    if (static_cast<int>(run->ids.size()) != kPrompt + steps) return state.SkipWithError("generation stopped early");
    if (const auto why = check_maps(*run, smollm2(), kPrompt + steps); !why.empty())
      return state.SkipWithError(why.c_str());
    // For run_decoder_vs_torch.sh: do both sides choose the same greedy tokens?
    std::ofstream ids(bench_dir() / smollm2().folder / "greedy_ids_engine.txt");
    for (int i = kPrompt; i < kPrompt + steps; ++i)
      ids << run->ids[static_cast<std::size_t>(i)] << (i + 1 < kPrompt + steps ? ' ' : '\n');
  }
  for (auto _ : state) {
    auto run = runner.generate(prompt, g);
    benchmark::DoNotOptimize(run);
  }
  state.counters["tokens/s"] = benchmark::Counter(steps, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SmolGenerate)->ArgName("new")->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

// One run_ids timed by hand: the whole call (not the freeing of the run it replaces) and the time to the first
// on_layer callback, when layer 0's maps are final.
struct Timed {
  attn::Result<attn::models::TransformerRun> run;
  double seconds = 0, layer0_seconds = 0;
};
Timed timed_run(attn::models::TransformerRunner& runner, const std::vector<int>& ids,
                const attn::models::TransformerRun* previous) {
  attn::models::RunOptions o;
  o.previous = previous;
  Clock::time_point layer0{};
  o.on_layer = [&](const attn::LayeredTrace& so_far) {
    if (so_far.layers.size() == 1) layer0 = Clock::now();
    return true;
  };
  const auto start = Clock::now();
  Timed t{runner.run_ids(ids, {}, o)};
  const auto end = Clock::now();
  t.seconds = std::chrono::duration<double>(end - start).count();
  t.layer0_seconds = std::chrono::duration<double>(layer0 - start).count();
  return t;
}

// The keystroke: 512 tokens run, then 513 with previous = that run; each later iteration types another last
// token over the run before it (513 ids whose first 512 match its ids), which again reuses exactly 512 tokens
// and copies their maps: the same work, without re-running the 512 tokens between samples.
void BM_SmolKeystroke(benchmark::State& state) {
  const Index n = state.range(0);
  const Shape& s = smollm2();
  attn::models::TransformerRunner runner(smol_model());
  const auto text = ids_of(n, s.vocab);
  std::vector<std::vector<int>> typed(2, text);
  typed[0].push_back(101);
  typed[1].push_back(202);
  auto base = runner.run_ids(text);
  if (!base) return state.SkipWithError(base.error().message().c_str());
  auto first = timed_run(runner, typed[0], &*base);
  if (!first.run) return state.SkipWithError(first.run.error().message().c_str());
  if (first.run->reused_tokens != n) return state.SkipWithError("the keystroke did not reuse the 512 tokens");
  if (const auto why = check_maps(*first.run, s, n + 1); !why.empty()) return state.SkipWithError(why.c_str());
  // The incremental maps against a run of the same 513 ids from nothing (another runner: an empty cache).
  double diff = 0;
  {
    attn::models::TransformerRunner fresh(smol_model());
    auto full = fresh.run_ids(typed[0]);
    if (!full) return state.SkipWithError(full.error().message().c_str());
    for (std::size_t l = 0; l < full->attention.layers.size(); ++l) {
      for (int h = 0; h < s.heads; ++h) {
        diff = std::max<double>(diff,
                                (full->attention.layers[l].maps.head(h) - first.run->attention.layers[l].maps.head(h))
                                    .cwiseAbs()
                                    .maxCoeff());
      }
    }
  }
  if (diff > 1e-4) return state.SkipWithError("the incremental maps differ from the full run's by more than 1e-4");
  attn::models::TransformerRun last = std::move(*first.run);
  double layer0 = 0;
  std::size_t k = 1;
  for (auto _ : state) {
    auto t = timed_run(runner, typed[k++ % 2], &last);
    if (!t.run || t.run->reused_tokens != n) {
      state.SkipWithError("a keystroke did not reuse the 512 tokens");
      break;
    }
    state.SetIterationTime(t.seconds);
    layer0 += t.layer0_seconds;
    last = std::move(*t.run);
  }
  state.counters["layer0_ms"] = benchmark::Counter(layer0 * 1e3, benchmark::Counter::kAvgIterations);
  state.counters["reused"] = static_cast<double>(n);
  // The very first keystroke after the 512-token run (one sample, outside the timed iterations).
  state.counters["first_ms"] = first.seconds * 1e3;
  state.counters["first_layer0_ms"] = first.layer0_seconds * 1e3;
  state.counters["max_diff_vs_full"] = diff;
}
BENCHMARK(BM_SmolKeystroke)->ArgName("L")->Arg(512)->Unit(benchmark::kMillisecond)->UseManualTime();

// The same 513 ids with no previous run: every token computed.
void BM_SmolFull(benchmark::State& state) {
  const Index n = state.range(0);
  attn::models::TransformerRunner runner(smol_model());
  auto ids = ids_of(n - 1, smollm2().vocab);
  ids.push_back(101);
  double layer0 = 0;
  for (auto _ : state) {
    auto t = timed_run(runner, ids, nullptr);
    if (!t.run || t.run->reused_tokens != 0) {
      state.SkipWithError("the full run failed or reused tokens");
      break;
    }
    state.SetIterationTime(t.seconds);
    layer0 += t.layer0_seconds;
  }
  state.counters["layer0_ms"] = benchmark::Counter(layer0 * 1e3, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_SmolFull)->ArgName("L")->Arg(513)->Unit(benchmark::kMillisecond)->UseManualTime();

// Opening the TinyLlama folder: TransformerModel::load (config, mapping, every tensor's name and shape checked,
// every weight scanned in place for NaN and infinity), with the file's pages in the page cache (the folder was
// just written or checked); --memory times it with them dropped first.
void BM_TinyLlamaOpen(benchmark::State& state) {
  static const fs::path dir = prepare(tinyllama());
  for (auto _ : state) {
    const auto start = Clock::now();
    auto loaded = attn::models::TransformerModel::load(dir);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    if (!loaded) {
      state.SkipWithError(loaded.error().message().c_str());
      break;
    }
  }
}
BENCHMARK(BM_TinyLlamaOpen)->Unit(benchmark::kMillisecond)->UseManualTime();

long status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + std::strlen(key), nullptr, 10);
  }
  return -1;
}
double mb(long kib) { return static_cast<double>(kib) * 1024.0 / 1e6; }

// Asks the kernel to drop the file's cached pages (written back first; only clean pages can go) and returns the
// share of its pages still resident afterwards (mincore), or -1 when it cannot tell.
double drop_cached_pages(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  struct stat st {};
  double resident = -1;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> in((static_cast<std::size_t>(st.st_size) + page - 1) / page);
      if (::mincore(p, static_cast<std::size_t>(st.st_size), in.data()) == 0) {
        std::size_t count = 0;
        for (unsigned char c : in) count += c & 1u;
        resident = static_cast<double>(count) / static_cast<double>(in.size());
      }
      ::munmap(p, static_cast<std::size_t>(st.st_size));
    }
  }
  ::close(fd);
  return resident;
}

// ---- long inputs (issue 21): attention kept on demand ----

std::shared_ptr<const attn::models::TransformerModel> smol_long_model() {
  static const auto m = load_or_exit(prepare(smollm2_long()));
  return m;
}

// Causal FLOPs of a forward that skips the future: the square's attention term halved.
double causal_flops(const Shape& s, double n) {
  return forward_flops(s, n) - 2.0 * n * n * static_cast<double>(s.heads * s.head_dim) * s.layers;
}

// The last long run, kept for the whole-map benchmarks of the same length (a 32,768-token forward is minutes).
struct LongRun {
  Index n = 0;
  std::shared_ptr<const attn::models::TransformerRun> run;
};
LongRun& long_run() {
  static LongRun r;
  return r;
}

std::shared_ptr<const attn::models::TransformerRun> run_long(Index n, std::string& why) {
  attn::models::TransformerRunner runner(smol_long_model());
  attn::models::RunOptions o;
  o.keep = attn::models::RunOptions::Keep::OnDemand;
  auto run = runner.run_ids(ids_of(n, smollm2_long().vocab), {}, o);
  if (!run) {
    why = run.error().message();
    return nullptr;
  }
  if (static_cast<int>(run->on_demand.size()) != smollm2_long().layers || !run->attention.layers.empty() ||
      run->on_demand.front().tokens() != n) {
    why = "the run kept maps, or not every layer on demand";
    return nullptr;
  }
  return std::make_shared<const attn::models::TransformerRun>(std::move(*run));
}

// The forward of a long input keeping no map: every layer's queries, keys and row statistics (any map recomputed
// from them later), each head's statistics streamed. One iteration: 16,384 tokens take minutes.
void BM_SmolLongForward(benchmark::State& state) {
  const Index n = state.range(0);
  std::string why;
  for (auto _ : state) {
    auto run = run_long(n, why);
    if (!run) return state.SkipWithError(why.c_str());
    long_run() = {n, run};
  }
  std::size_t bytes = 0;
  for (const auto& l : long_run().run->on_demand) bytes += l.bytes();
  state.counters["on_demand_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["GFLOP/s"] = benchmark::Counter(causal_flops(smollm2_long(), static_cast<double>(n)) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
// 512 to 2,048: against BM_SmolForward's maps at the same lengths, where Keep::Auto's threshold lies.
BENCHMARK(BM_SmolLongForward)
    ->ArgName("L")
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Arg(8192)
    ->Arg(16384)
    ->Arg(32768)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

// One head's whole map at the level that fits a 1,024-pixel view (cells of factor x factor weights, max-pooled):
// the quick preview (exact rows at a stride) and the exact map. Uses the last long forward when it has this length
// (run BM_SmolLongForward first), else runs one. GFLOP/s counts the score product of the visible half (2 n^2 hd / 2)
// and the exponentials as nothing.
void whole_map(benchmark::State& state, bool preview) {
  const Index n = state.range(0);
  if (long_run().n != n) {
    std::string why;
    auto run = run_long(n, why);
    if (!run) return state.SkipWithError(why.c_str());
    long_run() = {n, run};
  }
  const attn::OnDemandLayer& layer = long_run().run->on_demand[static_cast<std::size_t>(smollm2_long().layers / 2)];
  Index factor = 1;
  while (n / factor > 1024) factor *= 2;
  const Index side = (n + factor - 1) / factor;
  std::vector<float> out(static_cast<std::size_t>(side * side));
  int head = 0;
  for (auto _ : state) {
    const auto pooling = attn::OnDemandLayer::Pooling::Max;
    if (preview) {
      layer.preview(head, factor, pooling, 0, side, 0, side, out.data(), side);
    } else {
      layer.pooled(head, factor, pooling, 0, side, 0, side, out.data(), side);
    }
    benchmark::DoNotOptimize(out.data());
    head = (head + 1) % layer.heads();
  }
  state.counters["factor"] = static_cast<double>(factor);
  const double rows = preview ? static_cast<double>(side) : static_cast<double>(n);
  state.counters["GFLOP/s"] = benchmark::Counter(
      rows * static_cast<double>(n) * static_cast<double>(layer.head_dim()) * 1e-9 * (preview ? 2.0 : 1.0),
      benchmark::Counter::kIsIterationInvariantRate);
}
void BM_SmolLongPreview(benchmark::State& state) { whole_map(state, true); }
void BM_SmolLongWholeMap(benchmark::State& state) { whole_map(state, false); }
BENCHMARK(BM_SmolLongPreview)->ArgName("L")->Arg(32768)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SmolLongWholeMap)->ArgName("L")->Arg(32768)->Unit(benchmark::kMillisecond)->UseRealTime();

// TinyLlama in one process: the folder prepared by a child process (writing it holds 2.2 GB, which must not
// count here), the open timed with the file's pages dropped from the page cache, then one 512-token forward with
// every map (float32, the default). Peak resident memory (VmHWM) counts the mapped weights' pages the run touched
// (RssFile) as well as the process's own (RssAnon).
int memory_run(int threads) {
  const Shape& s = tinyllama();
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child == 0) {
    prepare(s, stdout);
    std::fflush(stdout);
    ::_exit(0);
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_decoder: could not prepare the %s checkpoint\n", s.label.c_str());
    return 1;
  }
  const fs::path dir = bench_dir() / s.folder;
  const double resident = drop_cached_pages(dir / "model.safetensors");
  auto start = Clock::now();
  auto m = load_or_exit(dir);
  const double open_s = std::chrono::duration<double>(Clock::now() - start).count();
  const long after_load = status_kib("VmHWM:");
  attn::models::TransformerRunner runner(m);
  const Index n = 512;
  start = Clock::now();
  auto run = runner.run_ids(ids_of(n, s.vocab));
  const double run_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (!run) {
    std::fprintf(stderr, "bench_decoder: %s\n", run.error().message().c_str());
    return 1;
  }
  if (const auto why = check_maps(*run, s, n); !why.empty()) {
    std::fprintf(stderr, "bench_decoder: %s\n", why.c_str());
    return 1;
  }
  std::size_t maps = 0;
  for (const auto& l : run->attention.layers) maps += l.maps.bytes();
  const long peak = status_kib("VmHWM:");
  std::printf("memory: %s, %d threads\n", shape_text(s).c_str(), threads);
  std::printf("  file:                     %.1f MB, %s\n",
              static_cast<double>(fs::file_size(dir / "model.safetensors")) / 1e6,
              resident < 0 ? "could not tell how much of it was cached"
                           : ("pages dropped from the page cache first, " +
                              std::to_string(static_cast<int>(resident * 100 + 0.5)) + "% still resident")
                                 .c_str());
  std::printf("  open (load):              %.2f s   target < 5 s: %s\n", open_s, open_s < 5.0 ? "MET" : "NOT MET");
  std::printf("  512-token forward:        %.2f s (one run, every map in float32)\n", run_s);
  std::printf("  maps captured:            %.1f MB (%zu layers)\n", static_cast<double>(maps) / 1e6,
              run->attention.layers.size());
  std::printf("  peak resident after open: %.1f MB\n", mb(after_load));
  std::printf(
      "  peak resident after run:  %.1f MB (VmHWM); now %.1f MB file-backed (mapped weights), %.1f MB anonymous\n",
      mb(peak), mb(status_kib("RssFile:")), mb(status_kib("RssAnon:")));
  std::printf("  target:                   < 4000 MB: %s\n", mb(peak) < 4000 ? "MET" : "NOT MET");
  return 0;
}

// Cancelling a long forward half way (a newer keystroke, the window closed): the time from setting
// RunOptions::cancel to run_ids returning "cancelled", at several moments of the run (allocations, a layer's
// attention blocks, its linear maps; at 32,768 tokens also 15 and 40 s in, in the second and fourth layers, after
// every buffer has grown). The budget: 200 ms. One iteration cancels five runs (seven at 32,768).
void BM_SmolLongCancel(benchmark::State& state) {
  const Index n = state.range(0);
  const auto ids = ids_of(n, smollm2_long().vocab);
  const auto model = smol_long_model();
  std::vector<double> latencies;
  for (auto _ : state) {
    std::vector<int> moments{200, 700, 1500, 2600, 4100};
    if (n >= 32768) moments.insert(moments.end(), {15000, 40000});
    for (const int at_ms : moments) {
      std::atomic<bool> cancel{false};
      attn::models::RunOptions o;
      o.keep = attn::models::RunOptions::Keep::OnDemand;
      o.cancel = &cancel;
      std::chrono::steady_clock::time_point returned;
      bool cancelled = false;
      std::thread forward([&] {
        attn::models::TransformerRunner runner(model);
        auto run = runner.run_ids(ids, {}, o);
        returned = std::chrono::steady_clock::now();
        cancelled = !run && run.error().kind == attn::ErrorKind::Cancelled;
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(at_ms));
      const auto set = std::chrono::steady_clock::now();
      cancel.store(true);
      forward.join();
      if (!cancelled) return state.SkipWithError("the run ended before it was cancelled: make L longer");
      latencies.push_back(std::chrono::duration<double, std::milli>(returned - set).count());
    }
  }
  double worst = 0, sum = 0;
  for (const double ms : latencies) {
    worst = std::max(worst, ms);
    sum += ms;
  }
  state.counters["cancel_max_ms"] = worst;
  state.counters["cancel_mean_ms"] = sum / static_cast<double>(std::max<std::size_t>(1, latencies.size()));
}
BENCHMARK(BM_SmolLongCancel)
    ->ArgName("L")
    ->Arg(8192)
    ->Arg(32768)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_decoder");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--memory") return memory_run(threads->count);
    if (arg == "--prepare") {
      std::printf("%s\n%s\n", shape_text(smollm2()).c_str(), shape_text(tinyllama()).c_str());
      const fs::path smol = prepare(smollm2(), stdout);
      prepare(tinyllama(), stdout);
      std::printf("smollm2 folder: %s\n", smol.c_str());  // read by run_decoder_vs_torch.sh
      return 0;
    }
  }
  benchmark::AddCustomContext("attn_threads", std::to_string(threads->count));
  benchmark::AddCustomContext("attn_threads_source", threads->source);
  benchmark::AddCustomContext("smollm2", shape_text(smollm2()));
  benchmark::AddCustomContext("tinyllama", shape_text(tinyllama()));
  benchmark::AddCustomContext("decoder_layers_override", std::to_string(smoke_layers()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
