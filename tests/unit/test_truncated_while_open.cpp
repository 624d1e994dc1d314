// Memory-mapped files truncated by another process while they are open (core/file_read_mapped.h): reading a page of
// the mapping past the file's new end raised SIGBUS and killed the program. A decoder's weights stay mapped for as
// long as the model is open, and so does a dump. Each test truncates a real file mid-use (a small checkpoint of
// tests/data, a dump written here and one of the fuzz seeds), reads on, and expects the refusal naming the file
// and both sizes, not a crash.
#include "attn/io/attention_dump.h"
#include "attn/io/safetensors.h"
#include "attn/models/transformer.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace attn {
namespace truncated_while_open_tests {

namespace fs = std::filesystem;
using test::TempDir;

const fs::path kData = fs::path(ATTN_TEST_DATA_DIR);

std::string changed(const fs::path& path, std::uintmax_t was) {
  return "changed on disk while open: it is now " + with_commas(static_cast<long long>(fs::file_size(path))) +
         " bytes, was " + with_commas(static_cast<long long>(was)) + " bytes; reopen it";
}

void cut(const fs::path& path, std::int64_t size) { ASSERT_EQ(::truncate(path.c_str(), size), 0) << path; }

TEST(SafetensorsTruncatedWhileOpen, ReadingOnIsRefusedNotAFault) {
  TempDir dir;
  const fs::path file = dir / "model.safetensors";
  fs::copy_file(kData / "decoders" / "llama" / "model.safetensors", file);
  const auto was = fs::file_size(file);
  ASSERT_GT(was, 16u * 4096u);  // pages of data past the cut, which would fault
  auto st = io::SafeTensors::open(file);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_TRUE(st->intact());
  cut(file, st->data_start() + 8);
  const io::TensorInfo& last = st->tensors().back();
  const auto values = st->to_float(last);  // its pages are gone: each read maps zeros instead of SIGBUS
  ASSERT_FALSE(values);
  EXPECT_EQ(values.error().kind, ErrorKind::Io);
  EXPECT_EQ(values.error().file, file.string());
  EXPECT_EQ(values.error().reason, changed(file, was));
  EXPECT_FALSE(st->intact());
}

TEST(SafetensorsTruncatedWhileOpen, ASizeChangeAloneIsSeen) {
  TempDir dir;
  const fs::path file = dir / "model.safetensors";
  fs::copy_file(kData / "decoders" / "llama" / "model.safetensors", file);
  const auto was = fs::file_size(file);
  auto st = io::SafeTensors::open(file);
  ASSERT_TRUE(st) << st.error().message();
  cut(file, static_cast<std::int64_t>(was) - 4);  // the last page stays: nothing faults, the size tells
  const auto ok = st->intact();
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().reason, changed(file, was));
}

// The decoder's weights are read from the mapping at every forward: a run after the cut is refused, the runner
// stays usable (it refuses again), and generation likewise.
TEST(DecoderTruncatedWhileOpen, RunAndGenerateAreRefused) {
  TempDir dir;
  for (const char* name : {"config.json", "model.safetensors"}) {
    fs::copy_file(kData / "decoders" / "llama" / name, dir / name);
  }
  const fs::path weights = dir / "model.safetensors";
  const auto was = fs::file_size(weights);
  auto model = models::TransformerModel::load(dir.path());
  ASSERT_TRUE(model) << model.error().message();
  models::TransformerRunner runner(*model);
  const std::vector<int> ids{1, 5, 9, 3};
  ASSERT_TRUE(runner.run_ids(ids));
  cut(weights, 4096);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto run = runner.run_ids(ids);
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().kind, ErrorKind::Io);
    EXPECT_EQ(run.error().file, weights.string());
    EXPECT_EQ(run.error().reason, changed(weights, was));
  }
  models::GenerateOptions g;
  g.max_new_tokens = 4;
  auto generated = runner.generate(ids, g);
  ASSERT_FALSE(generated);
  EXPECT_EQ(generated.error().reason, changed(weights, was));
}

// A version-1 dump's maps are views of the mapping: read after the cut they are zeros, and intact() refuses them.
TEST(DumpTruncatedWhileOpen, VersionOneMapsReadZerosAndAreRefused) {
  TempDir dir;
  const fs::path file = dir / "maps.attn.safetensors";
  const Index n = 96;  // 2 heads x 96 x 96 floats: 72 kB, many pages
  LayeredTrace trace;
  for (Index i = 0; i < n; ++i) trace.tokens.push_back("t" + std::to_string(i));
  HeadStack maps(2, n, n);
  for (int h = 0; h < 2; ++h) {
    for (Index r = 0; r < n; ++r) maps.f32(h)[r * n + r] = 1.0f;
  }
  trace.layers.push_back({Stage::Encoder, 0, std::move(maps)});
  ASSERT_TRUE(io::write_attention_dump(file, trace));
  const auto was = fs::file_size(file);
  auto dump = io::read_attention_dump(file);
  ASSERT_TRUE(dump) << dump.error().message();
  EXPECT_TRUE(dump->intact());
  cut(file, 64);
  std::vector<float> row(static_cast<std::size_t>(n), -1.0f);
  dump->trace.layers.front().maps.read_row(1, n - 1, row.data());  // the last head's last row: past the cut
  EXPECT_EQ(row.back(), 0.0f);
  const auto ok = dump->intact();
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().file, file.string());
  EXPECT_EQ(ok.error().reason, changed(file, was));
}

// A version-2 dump's heads are read from the mapping when shown: verify() (what a view asks before drawing a head)
// says the file changed.
TEST(DumpTruncatedWhileOpen, VersionTwoHeadsAreRefused) {
  TempDir dir;
  const fs::path file = dir / "story.attn.safetensors";
  fs::copy_file(fs::path(ATTN_SOURCE_DIR) / "tests/fuzz/corpus/attention_dump_v2/story-5-tokens.attn.safetensors",
                file);
  const auto was = fs::file_size(file);
  auto dump = io::read_attention_dump(file);
  ASSERT_TRUE(dump) << dump.error().message();
  ASSERT_FALSE(dump->on_demand.empty());
  ASSERT_TRUE(dump->on_demand.back().verify(0));
  cut(file, 4096);
  const OnDemandLayer& last = dump->on_demand.back();
  const auto ok = last.verify(last.heads() - 1);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().file, file.string());
  EXPECT_EQ(ok.error().reason, changed(file, was));
  // A head checked before the cut is refused too: every verify asks.
  EXPECT_FALSE(dump->on_demand.back().verify(0));
}

// A SIGBUS that is not a read of a registered mapping goes where it went before the handler was installed: the default
// action, which kills the process (or a sanitizer's handler, which reports it and exits).
TEST(SafetensorsTruncatedWhileOpenDeathTest, OtherFaultsKeepTheirDefaultAction) {
  TempDir dir;
  fs::copy_file(kData / "decoders" / "llama" / "model.safetensors", dir / "model.safetensors");
  ASSERT_TRUE(io::SafeTensors::open(dir / "model.safetensors"));  // the handler is installed by now
  EXPECT_DEATH(::raise(SIGBUS), "");
}

}  // namespace truncated_while_open_tests
}  // namespace attn
