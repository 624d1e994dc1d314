// "No 100 GB malloc from a 2 KB file": every input of tests/data/bad is loaded while this program records the
// largest single allocation, which must stay below 64 MiB, and each refusal must come with its listed kind.
//
// The record is taken at malloc itself (and calloc, realloc and the aligned allocators), which this program
// interposes: operator new reaches it through libstdc++, Eigen's matrices and OpenCV's buffers call it
// directly, so no allocation path is missed. The request is recorded before it is attempted, so a
// refused 100 GB request (a std::bad_alloc the loader turns into an error) is still seen. Its own program
// because it replaces the allocator for the whole process; not built with the sanitizers, which bring theirs.
#include "bad_corpus.h"
#include "test_util.h"

#include "attn/analysis/attention_analysis.h"
#include "attn/audio/audio.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
}

namespace {

std::atomic<std::size_t> g_largest{0};

// Keeps the compiler from eliding an allocation whose memory it can see is never observed.
void keep(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

void record(std::size_t bytes) {
  std::size_t seen = g_largest.load(std::memory_order_relaxed);
  while (bytes > seen && !g_largest.compare_exchange_weak(seen, bytes, std::memory_order_relaxed)) {}
}

}  // namespace

extern "C" {

void* malloc(std::size_t size) {
  record(size);
  return __libc_malloc(size);
}

void* calloc(std::size_t count, std::size_t size) {
  std::size_t bytes = 0;
  record(__builtin_mul_overflow(count, size, &bytes) ? SIZE_MAX : bytes);
  return __libc_calloc(count, size);
}

void* realloc(void* p, std::size_t size) {
  record(size);
  return __libc_realloc(p, size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  record(size);
  void* p = __libc_memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void* aligned_alloc(std::size_t alignment, std::size_t size) {
  record(size);
  return __libc_memalign(alignment, size);
}

void* memalign(std::size_t alignment, std::size_t size) {
  record(size);
  return __libc_memalign(alignment, size);
}

}  // extern "C"

namespace attn {
namespace {

constexpr std::size_t kLimit = std::size_t{64} << 20;

// The recorder sees what it must: a 100 MB vector and an Eigen matrix of 80 MB (Eigen calls malloc itself).
TEST(AllocLimits, RecorderSeesLargeRequests) {
  g_largest = 0;
  {
    std::vector<char> big(100'000'000);
    keep(big.data());
    big[12345] = 1;
    EXPECT_EQ(big[12345], 1);
  }
  EXPECT_GE(g_largest.load(), 100'000'000u);
  g_largest = 0;
  {
    Matrix m(4000, 5000);
    keep(m.data());
    m(1, 2) = 3.0f;
    EXPECT_EQ(m(1, 2), 3.0f);
  }
  EXPECT_GE(g_largest.load(), 80'000'000u);
}

TEST(AllocLimits, NoHostileInputAllocatesMoreThan64MiB) {
  const auto inputs = test::read_bad_manifest();
  ASSERT_GT(inputs.size(), 60u);
  for (const auto& input : inputs) {
    SCOPED_TRACE(input.path + ": " + input.what);
    // A valid photo read as ViT reads it may take its 8-bit decode (at most 3 bytes a pixel), never its float
    // image (12 bytes a pixel).
    std::size_t limit = kLimit;
    if (input.loader == "image-224") {
      const auto info = probe_image(test::kBadDir / input.path);
      ASSERT_TRUE(info) << info.error().message();
      limit = std::max(kLimit, std::size_t(info->width) * std::size_t(info->height) * 3 + (std::size_t{1} << 20));
    }
    g_largest = 0;
    const test::LoadOutcome outcome = test::run_loader(input);
    const std::size_t largest = g_largest.load();
    ASSERT_TRUE(outcome.ran);
    EXPECT_LT(largest, limit) << input.path << " made a single allocation of " << largest << " bytes";
    if (input.expect != "ok" && input.expect != "warning") {
      ASSERT_TRUE(outcome.error) << input.path << " loaded";
      EXPECT_EQ(to_string(outcome.error->kind), input.expect) << outcome.error->message();
    }
  }
}

// "A 1 GiB dump of one 16,384-token map takes 6.2 GB": a dump's maps are views of the mapped file, and
// what is drawn and counted from them is read row by row. Opening a 2,048-token dump (16 MiB of weights),
// drawing its map at 256 x 256, its statistics and its (refused or computed) rollout allocate nothing near
// the map's size.
TEST(AllocLimits, BigDumpsAreReadWhereTheyLie) {
  test::TempDir dir;
  const std::filesystem::path path = dir / "long.attn.safetensors";
  constexpr Index n = 2048;
  {
    LayeredTrace trace;
    for (Index i = 0; i < n; ++i) trace.tokens.push_back("t" + std::to_string(i));
    HeadStack maps(1, n, n);
    for (Index i = 0; i < n; ++i) maps.f32(0)[i * n + (i * 7) % n] = 1.0f;
    trace.layers.push_back({Stage::Encoder, 0, std::move(maps)});
    ASSERT_TRUE(io::write_attention_dump(path, trace).has_value());
  }
  g_largest = 0;
  {
    const auto dump = io::read_attention_dump(path);
    ASSERT_TRUE(dump.has_value()) << dump.error().message();
    EXPECT_TRUE(dump->warnings.empty());
    const auto map = dump->trace.map(Stage::Encoder, 0, 0, 256);
    ASSERT_TRUE(map && map->pooled);
    EXPECT_EQ(map->weights.maxCoeff(), 1.0f);  // max pooling keeps every single sharp weight
    const auto stats = analysis::head_statistics(dump->trace, {});
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_NEAR(stats[0].entropy, 0.0f, 1e-6f);
  }
  const std::size_t map_bytes = std::size_t(n) * std::size_t(n) * sizeof(float);
  EXPECT_LT(g_largest.load(), map_bytes / 16) << "a single allocation of " << g_largest.load() << " bytes";
}

// "--generate 12000 allocates 23 GB of maps up front": a generation's maps grow as its tokens arrive. Asked for the
// whole context of stories260k (508 new tokens, maps of 8 x 512 x 512 floats a layer: 8 MiB each) and stopped after
// 3, it never holds maps for more than the prompt and the first 64 tokens.
TEST(AllocLimits, GenerationGrowsItsMapsAsTokensArrive) {
  auto model =
      models::TransformerModel::load(std::filesystem::path(ATTN_SOURCE_DIR) / "resources" / "models" / "stories260k");
  ASSERT_TRUE(model) << model.error().message();
  models::TransformerRunner runner(*model);
  models::GenerateOptions g;
  g.max_new_tokens = 508;
  g.on_token = [](int position, int, float) { return position < 6; };
  g_largest = 0;
  auto run = runner.generate({1, 403, 407, 261}, g);
  const std::size_t largest = g_largest.load();
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->ids.size(), 7u);
  const std::size_t full_maps = std::size_t{8} * 512 * 512 * sizeof(float);
  EXPECT_LT(largest, full_maps / 8) << "a single allocation of " << largest << " bytes";
}

// A speech model's input of ten minutes (the longest a file is read): its log-mel frames are the one large
// allocation (60,000 x 80 floats, 19 MB); the FFT works through them in blocks (whole, its buffers were 123 and
// 246 MB).
TEST(AllocLimits, TenMinutesOfAudioAreTransformedInBlocks) {
  const std::vector<float> samples(std::size_t(audio::kMaxSeconds * audio::kSampleRate), 0.25f);
  g_largest = 0;
  const Matrix frames = audio::log_mel(samples);
  ASSERT_EQ(frames.rows(), Index((samples.size() - 400) / 160 + 1));
  const std::size_t output = std::size_t(frames.size()) * sizeof(float);
  EXPECT_LT(g_largest.load(), output + (std::size_t{8} << 20)) << "a single allocation of " << g_largest.load();
}

}  // namespace
}  // namespace attn
