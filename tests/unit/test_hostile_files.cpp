// Files strangers send (issue "Hostile files"): paths that are not files (a FIFO without a writer, /dev/zero,
// a folder) given to every reader, and JSON nested hundreds of thousands of levels deep in every JSON reader.
// Each reader must refuse at once, by name and kind: no hang in open(), no endless read, no stack overflow.
// The hang cases run in a forked child under alarm(): a reader that blocks is killed and the test fails, instead
// of the whole suite hanging.
#include "attn/glimpse/settings.h"
#include "attn/io/attention_dump.h"
#include "attn/io/read_file.h"
#include "attn/io/safetensors.h"
#include "session/session.h"
#include "attn/lab/lab.h"
#include "attn/models/captioner.h"
#include "attn/models/classifier.h"
#include "attn/models/config.h"
#include "attn/models/seq2seq.h"
#include "attn/models/transformer.h"
#include "attn/text/tokenizer.h"
#include "attn/vision/image.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <random>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace attn {
// Named, not anonymous: the unity builds compile several test files as one.
namespace hostile_files_tests {

namespace fs = std::filesystem;

using test::TempDir;

void write(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

void make_fifo(const fs::path& path) { ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno); }

// A safetensors file: the 8-byte little-endian header length, the header, the data.
std::string safetensors(const std::string& header, const std::string& data = {}) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

// `depth` nested arrays around `inner`.
std::string nested(int depth, const std::string& inner = "0") {
  return std::string(static_cast<std::size_t>(depth), '[') + inner + std::string(static_cast<std::size_t>(depth), ']');
}

constexpr int kDeep = 300'000;  // far past any stack's worth of recursion

// Runs `check` in a forked child that must finish within `seconds`; the child's failures come back as its exit
// status (gtest's assertions do not cross the fork, so `check` returns what went wrong, empty when all is well).
void within(int seconds, const std::function<std::string()>& check) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(static_cast<unsigned>(seconds));
    const std::string problem = check();
    if (!problem.empty()) {
      std::fprintf(stderr, "%s\n", problem.c_str());
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) << "still blocked after " << seconds << " s";
  ASSERT_TRUE(WIFEXITED(status)) << "the reader died of signal " << WTERMSIG(status);
  ASSERT_EQ(WEXITSTATUS(status), 0) << "see the reason printed above";
}

// Empty when `r` failed with `kind` and a message that contains `text`; else what happened.
template <class R>
std::string refused(const R& r, ErrorKind kind, const std::string& text) {
  if (r) return "accepted";
  if (r.error().kind != kind) return "kind " + std::string(to_string(r.error().kind)) + ": " + r.error().message();
  if (r.error().message().find(text) == std::string::npos) return "message: " + r.error().message();
  return {};
}

// ---------------------------------------------------------------------------------------------------------
// Not files

TEST(NotAFile, EveryReaderRefusesAFifoAtOnceAndByName) {
  TempDir dir;
  const fs::path fifo = dir / "pipe";
  make_fifo(fifo);
  const std::string fifo_text = "pipe: is a FIFO (named pipe), not ";
  within(20, [&] { return refused(io::read_file(fifo, 1 << 20), ErrorKind::Io, fifo_text + "a text file"); });
  within(20, [&] { return refused(io::SafeTensors::open(fifo), ErrorKind::Io, fifo_text + "a safetensors file"); });
  within(20, [&] { return refused(io::read_attention_dump(fifo), ErrorKind::Io, fifo_text); });
  within(20, [&] { return refused(ui::load_session(fifo), ErrorKind::Io, fifo_text + "a session file"); });
  within(20, [&] { return refused(load_image(fifo), ErrorKind::Io, "pipe: is not a regular file"); });
  within(20, [&] { return refused(text::load_tokenizer_json(fifo), ErrorKind::Io, fifo_text + "a tokenizer file"); });
  within(20, [&] { return refused(text::load_wordpiece(fifo), ErrorKind::Io, fifo_text + "a tokenizer file"); });
}

TEST(NotAFile, AModelFolderWhoseFilesAreFifosIsRefusedByName) {
  // The BERT fixture with each of its files in turn replaced by a FIFO, then the GPT-2 fixture's vocab.json and
  // merges.txt, then a shard named by a sharded index.
  const fs::path fixtures = fs::path(ATTN_TEST_DATA_DIR) / "transformers";
  struct Case {
    std::string model, file;
  };
  for (const Case& c : {Case{"bert", "config.json"}, Case{"bert", "model.safetensors"}, Case{"bert", "vocab.txt"},
                        Case{"bert", "tokenizer_config.json"}, Case{"gpt2", "vocab.json"}, Case{"gpt2", "merges.txt"},
                        Case{"gpt2", "shard.safetensors"}}) {
    SCOPED_TRACE(c.model + "/" + c.file);
    TempDir dir;
    const fs::path folder = dir / "model";
    fs::copy(fixtures / c.model, folder, fs::copy_options::recursive);
    if (c.file == "shard.safetensors") {
      fs::rename(folder / "model.safetensors", folder / "real.safetensors");
      write(folder / "model.safetensors.index.json",
            R"({"weight_map": {"a": "real.safetensors", "b": "shard.safetensors"}})");
    } else {
      fs::remove(folder / c.file);
    }
    make_fifo(folder / c.file);
    const std::string expect = c.file + ": is a FIFO (named pipe), not ";
    const bool tokenizer_file = c.file != "config.json" && !c.file.ends_with(".safetensors");
    within(20, [&] {
      // The model loads without a tokenizer that cannot be read (a warning says why); the tokenizer alone says it.
      return tokenizer_file ? refused(text::load_tokenizer_dir(folder), ErrorKind::Io, expect)
                            : refused(models::TransformerModel::load(folder), ErrorKind::Io, expect);
    });
  }
}

TEST(NotAFile, DevZeroIsRefusedNotReadWithoutEnd) {
  within(20, [&] {
    return refused(io::read_file("/dev/zero", 1 << 20), ErrorKind::Io,
                   "/dev/zero: is a character device, not a text file");
  });
  within(20, [&] { return refused(ui::load_session("/dev/zero"), ErrorKind::Io, "character device"); });
  within(20, [&] { return refused(text::load_tokenizer_json("/dev/zero"), ErrorKind::Io, "character device"); });
}

TEST(NotAFile, AFolderIsNamedAsOne) {
  TempDir dir;
  const fs::path folder = dir / "folder";
  fs::create_directories(folder);
  EXPECT_EQ(refused(io::read_file(folder, 1 << 20), ErrorKind::Io, "folder: is a directory, not a text file"), "");
  EXPECT_EQ(refused(ui::load_session(folder), ErrorKind::Io, "is a directory, not a session file"), "");
}

TEST(ReadFile, RefusesAFileOverItsLimitBeforeReadingIt) {
  TempDir dir;
  write(dir / "big.txt", std::string(1000, 'x'));
  EXPECT_EQ(refused(io::read_file(dir / "big.txt", 999), ErrorKind::TooLarge,
                    "big.txt: is 1000 bytes; a text file is at most 999 bytes"),
            "");
  const auto exact = io::read_file(dir / "big.txt", 1000);
  ASSERT_TRUE(exact) << exact.error().message();
  EXPECT_EQ(*exact, std::string(1000, 'x'));
  write(dir / "empty.txt", "");
  const auto empty = io::read_file(dir / "empty.txt", 10);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(refused(io::read_file(dir / "missing.txt", 10), ErrorKind::Io, "missing.txt: no such file"), "");
}

// ---------------------------------------------------------------------------------------------------------
// JSON nested deeper than any reader allows: refused before the parser recurses, with the byte

TEST(DeepJson, SafetensorsHeaderNestedInDataOffsetsOrShape) {
  for (const std::string field : {"data_offsets", "shape"}) {
    const std::string header = R"({"x": {"dtype": "F32", ")" + field + R"(": )" + nested(kDeep) + "}}";
    within(60, [&] {
      const std::string bytes = safetensors(header);
      auto r = io::SafeTensors::parse(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), "deep.safetensors");
      if (auto problem = refused(r, ErrorKind::TooLarge, "nested deeper than 64 levels"); !problem.empty()) {
        return problem;
      }
      // The bracket that opens level 65: two objects, then the 63rd array (8 bytes of length come first).
      const auto at = static_cast<std::int64_t>(8 + header.find('[') + 62);
      if (r.error().offset != at) return "offset " + std::to_string(r.error().offset) + ", not " + std::to_string(at);
      return std::string();
    });
  }
}

TEST(DeepJson, EveryJsonReaderRefusesIt) {
  const std::string deep = nested(kDeep);
  const std::string object = R"({"key": )" + deep + "}";
  const std::string expect = "JSON nested deeper than 64 levels";
  within(60, [&] {
    const auto r = models::parse_config(object, "config.json");
    if (auto problem = refused(r, ErrorKind::TooLarge, expect); !problem.empty()) return problem;
    // The bracket that opens level 65: the object, then the 64th array.
    const auto at = static_cast<std::int64_t>(object.find('[') + 63);
    return r.error().offset == at ? std::string() : "offset " + std::to_string(r.error().offset);
  });
  within(60, [&] { return refused(models::Seq2SeqConfig::parse(object, "s2s.json"), ErrorKind::TooLarge, expect); });
  within(60, [&] { return refused(models::CaptionerConfig::parse(object, "cap.json"), ErrorKind::TooLarge, expect); });
  within(60, [&] { return refused(models::ClassifierConfig::parse(object, "cls.json"), ErrorKind::TooLarge, expect); });
  within(60,
         [&] { return refused(text::parse_tokenizer_json(object, "tokenizer.json"), ErrorKind::TooLarge, expect); });
  within(60, [&] {
    return refused(text::parse_byte_level_bpe(object, "#version: 0.2\n", "vocab.json", "merges.txt", {}),
                   ErrorKind::TooLarge, expect);
  });
  within(60, [&] { return refused(ui::read_session(object, "deep.attnscope.json"), ErrorKind::TooLarge, "deeper"); });
  within(60, [&] { return refused(lab::lab_request_from_json(object, "lab.json"), ErrorKind::TooLarge, expect); });
  within(60, [&] {
    return refused(glimpse::glimpse_settings_from_json(object, "glimpse.json"), ErrorKind::TooLarge, expect);
  });
}

TEST(DeepJson, ShardIndexAndDumpMetadataRefuseIt) {
  TempDir dir;
  const fs::path folder = dir / "model";
  fs::create_directories(folder);
  write(folder / "config.json", R"({"model_type": "gpt2"})");
  write(folder / "model.safetensors.index.json", R"({"weight_map": )" + nested(kDeep) + "}");
  within(60, [&] {
    auto model = models::TransformerModel::load(folder);
    if (model) return std::string("accepted");
    const std::string message = model.error().message();
    // Whatever the loader checks first, it must not be the stack that gives way; if the index is read, it says why.
    if (message.find("model.safetensors.index.json") != std::string::npos &&
        message.find("nested deeper than 64 levels") == std::string::npos) {
      return "the index refused for another reason: " + message;
    }
    return std::string();
  });
  // A dump whose "tokens" metadata (a JSON string inside the header) nests deep.
  std::string deep_string = nested(kDeep);
  const std::string header =
      R"({"__metadata__": {"format": "attnscope.attn", "version": "1", "tokens": ")" + deep_string + R"("}})";
  write(dir / "deep.attn.safetensors", safetensors(header));
  within(60, [&] {
    return refused(io::read_attention_dump(dir / "deep.attn.safetensors"), ErrorKind::TooLarge,
                   "deep.attn.safetensors");
  });
}

TEST(DeepJson, DepthUpToTheLimitStillParses) {
  // 64 levels are accepted, 65 refused, and brackets inside strings do not count.
  const std::string ok = R"({"vocab": ")" + std::string(1000, '[') + R"(", "deep": )" + nested(63) + "}";
  const auto accepted = lab::lab_request_from_json(ok, "ok.json");
  EXPECT_TRUE(accepted || accepted.error().kind != ErrorKind::TooLarge) << accepted.error().message();
  const std::string too_deep = R"({"deep": )" + nested(64) + "}";
  const auto r = lab::lab_request_from_json(too_deep, "deep.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(r.error().offset, static_cast<std::int64_t>(too_deep.find('[') + 63));
}

// ---------------------------------------------------------------------------------------------------------
// Checkpoints are checked against their config from the header, before any tensor data is read

// The peak resident memory of this process since reset_peak_rss(), in MiB (Linux: /proc/self/status VmHWM,
// reset by writing 5 to /proc/self/clear_refs).
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }
long peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

TEST(HeaderFirst, ASparse4GiBCheckpointMissingATensorIsRefusedWithoutReadingIt) {
  // GPT-2 with n_embd 1024 and 2^20 tokens: wte.weight is 4 GiB of F32, present (the file is sparse: no
  // disk is used), and wpe.weight is missing. The loader used to convert wte (12 GB, 12 s) before finding
  // that out; the check from the header refuses at once.
  TempDir dir;
  const fs::path folder = dir / "model";
  fs::create_directories(folder);
  write(folder / "config.json",
        R"({"model_type": "gpt2", "n_embd": 1024, "n_head": 16, "n_layer": 1, "vocab_size": 1048576,
            "n_positions": 32})");
  const std::int64_t bytes = std::int64_t{1} << 32;
  std::string header = R"({"wte.weight": {"dtype": "F32", "shape": [1048576, 1024], "data_offsets": [0, )" +
                       std::to_string(bytes) + "]}}";
  header += std::string((8 - header.size() % 8) % 8, ' ');
  write(folder / "model.safetensors", safetensors(header));
  std::error_code ec;
  fs::resize_file(folder / "model.safetensors", 8 + header.size() + static_cast<std::uintmax_t>(bytes), ec);
  if (ec) GTEST_SKIP() << "this file system cannot hold a sparse 4 GiB file: " << ec.message();
  within(30, [&]() -> std::string {
    reset_peak_rss();
    const long before = peak_rss_mib();
    const std::string problem =
        refused(models::TransformerModel::load(folder), ErrorKind::Mismatch, "missing tensor 'wpe.weight'");
    if (!problem.empty()) return problem;
    const long grew = peak_rss_mib() - before;
    if (before < 0 || grew > 64) return "peak memory grew by " + std::to_string(grew) + " MiB";
    return {};
  });
}

TEST(HeaderFirst, AnIntegerTensorIsRefusedByNameFromTheHeader) {
  // The BERT fixture with the last layer's two layer-norm weights stored as I32 (same bytes, another dtype).
  TempDir dir;
  const fs::path folder = dir / "model";
  fs::create_directories(folder);
  const fs::path fixture = fs::path(ATTN_TEST_DATA_DIR) / "transformers" / "bert";
  for (const char* name : {"config.json", "vocab.txt", "tokenizer_config.json"})
    fs::copy(fixture / name, folder / name);
  const auto file = io::SafeTensors::open(fixture / "model.safetensors");
  ASSERT_TRUE(file) << file.error().message();
  std::vector<io::TensorData> tensors;
  for (const auto& t : file->tensors()) {
    const bool last_norm = t.name.ends_with("LayerNorm.weight") && t.name.find("layer.1.") != std::string::npos;
    tensors.push_back({t.name, last_norm ? io::DType::I32 : t.dtype, t.shape, file->bytes(t)});
  }
  ASSERT_TRUE(io::write_safetensors(folder / "model.safetensors", tensors));
  const auto model = models::TransformerModel::load(folder);
  EXPECT_EQ(refused(model, ErrorKind::Unsupported, "is I32; only F32, F16, BF16 and F64 convert to float32"), "");
}

TEST(HeaderFirst, AHugePhotoForViTIsResampledWithoutItsFullSizeFloatImage) {
  // 10,000 x 10,000 grey pixels in a 100 KB PNG: as floats 1.2 GB (1.5 GB in the glimpse tab, 3.1 GB through
  // ViT's preprocessing before). Resampled while decoding, only the 8-bit decode (100 MB, one channel) is made.
  const fs::path file = fs::path(ATTN_TEST_DATA_DIR) / "bad" / "images" / "huge-10000x10000.png";
  within(120, [&]() -> std::string {
    reset_peak_rss();
    const long before = peak_rss_mib();
    const ImageSize sizes[] = {{.fit = ImageSize::Fit::Exact, .width = 224, .height = 224},
                               {.fit = ImageSize::Fit::Within, .max_side = 1024}};
    const auto images = load_image_sizes(file, sizes);
    if (!images) return images.error().message();
    if ((*images)[0].width != 224 || (*images)[1].width != 1024 || (*images)[1].height != 1024) return "wrong sizes";
    const long grew = peak_rss_mib() - before;
    if (before < 0 || grew > 400) return "peak memory grew by " + std::to_string(grew) + " MiB";
    return {};
  });
}

// ---------------------------------------------------------------------------------------------------------
// A tokenizer that cannot be read says why, with its file and line, when text is run

TEST(TokenizerError, RunTextNamesTheFileTheLineAndTheReason) {
  TempDir dir;
  const fs::path folder = dir / "model";
  fs::copy(fs::path(ATTN_TEST_DATA_DIR) / "transformers" / "bert", folder, fs::copy_options::recursive);
  std::ifstream in(folder / "vocab.txt", std::ios::binary);
  std::string vocab((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  write(folder / "vocab.txt", vocab + "[UNK]\n");  // a token listed twice: the vocabulary is ambiguous
  const auto model = models::TransformerModel::load(folder);
  ASSERT_TRUE(model) << model.error().message();  // ids can still be run
  models::TransformerRunner runner(*model);
  const auto run = runner.run_text("hello world");
  ASSERT_FALSE(run);
  EXPECT_TRUE(run.error().file.ends_with("vocab.txt")) << run.error().message();
  EXPECT_GT(run.error().line, 0) << run.error().message();
  EXPECT_NE(run.error().reason.find("tokenizer cannot be read"), std::string::npos) << run.error().message();
  EXPECT_NE(run.error().reason.find("[UNK]"), std::string::npos) << run.error().message();
}

TEST(TokenizerError, TokenizerConfigAndShardIndexNameTheByteAndRefuseNamesOutsideTheFolder) {
  const std::string config = "{\n  \"model_max_length\": 512,\n  \"do_lower_case\": \"yes\"\n}\n";
  const auto c = text::parse_tokenizer_config(config, "tokenizer_config.json");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::Malformed);
  EXPECT_EQ(c.error().offset, static_cast<std::int64_t>(config.find("\"do_lower_case\"")));
  EXPECT_EQ(c.error().line, 3);
  EXPECT_NE(c.error().reason.find("do_lower_case must be true or false"), std::string::npos) << c.error().reason;
  const auto ok = text::parse_tokenizer_config(R"({"do_lower_case": false, "add_prefix_space": true})", "t.json");
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_FALSE(ok->wordpiece.lower_case);
  EXPECT_TRUE(ok->bpe.add_prefix_space);

  for (const char* bad : {"../x.safetensors", "", "..", "a/b.safetensors", R"(a\\b.safetensors)"}) {
    SCOPED_TRACE(bad);
    const std::string index = std::string(R"({"weight_map": {"w": ")") + bad + R"("}})";
    EXPECT_EQ(refused(models::parse_safetensors_index(index, "index.json"), ErrorKind::Malformed,
                      "weight_map names a file outside the folder"),
              "");
  }
  const auto files = models::parse_safetensors_index(
      R"({"weight_map": {"a": "2.safetensors", "b": "1.safetensors", "c": "2.safetensors"}})", "index.json");
  ASSERT_TRUE(files) << files.error().message();
  EXPECT_EQ(*files, (std::vector<std::string>{"1.safetensors", "2.safetensors"}));
}

// ---------------------------------------------------------------------------------------------------------
// Error lines stay lines

TEST(ErrorLine, AMegabyteReasonIsCutAtACharacterWithWhatWasLeftOut) {
  // "é" is two bytes: a cut at an odd byte would split one.
  const Error e{"model.safetensors", 8, -1, "tensor \"" + std::string(1, 'x') + std::string(1 << 20, '\xc3') + "\"",
                ErrorKind::Malformed};
  std::string reason = "tensor \"x";
  for (int i = 0; i < (1 << 19); ++i) reason += "\xc3\xa9";
  const Error long_name{"model.safetensors", 8, -1, reason + "\" is missing", ErrorKind::Mismatch};
  const std::string line = long_name.message();
  EXPECT_LT(line.size(), Error::kMaxReasonBytes + 100);
  EXPECT_TRUE(line.starts_with("model.safetensors: byte 8: tensor \"x\xc3\xa9")) << line.substr(0, 60);
  EXPECT_TRUE(line.ends_with(" more bytes)")) << line.substr(line.size() - 40);
  // Whole characters only: every \xc3 is followed by its \xa9 before the ellipsis.
  const std::size_t ellipsis = line.find("\u2026");
  ASSERT_NE(ellipsis, std::string::npos);
  EXPECT_NE(static_cast<unsigned char>(line[ellipsis - 1]), 0xc3u);
  EXPECT_EQ(e.message().find('\n'), std::string::npos);
  // A list is summarised where it is made: a dump of layers 1 to 2,000 (no layer 0).
  std::string header = R"({"__metadata__": {"format": "attnscope.attn", "version": "1", "tokens": "[\"a\", \"b\"]"})";
  std::string data;
  for (int layer = 1; layer <= 2000; ++layer) {
    const auto begin = std::to_string(data.size());
    data += std::string("\x00\x00\x80\x3e", 4) + std::string("\x00\x00\x80\x3e", 4) +
            std::string("\x00\x00\x80\x3e", 4) + std::string("\x00\x00\x80\x3e", 4);  // 0.25 four times
    header += R"(, "attn.encoder.)" + std::to_string(layer) + R"(": {"dtype": "F32", "shape": [1, 2, 2], )" +
              R"("data_offsets": [)" + begin + ", " + std::to_string(data.size()) + "]}";
  }
  const std::string bytes = safetensors(header + "}", data);
  const auto dump = io::parse_attention_dump(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), "layers.attn");
  ASSERT_FALSE(dump);
  EXPECT_NE(dump.error().reason.find("(found 2,000 layers: 1 to 2,000)"), std::string::npos) << dump.error().reason;
  EXPECT_LT(dump.error().message().size(), 200u);
  // A reason within the limit is left whole.
  const Error short_one{"a", -1, -1, std::string(Error::kMaxReasonBytes, 'r'), ErrorKind::Io};
  EXPECT_EQ(short_one.message(), "a: " + std::string(Error::kMaxReasonBytes, 'r'));
}

}  // namespace hostile_files_tests
}  // namespace attn
