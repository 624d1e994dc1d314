// The thread count every benchmark here takes: --threads=N or --threads N (removed from argv before
// Google Benchmark parses it), else the ATTN_THREADS environment variable, else 2 (the target machine's
// cores). The runners pass the same count to the peers.
#pragma once

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace attn::bench {

struct Threads {
  int count = 2;
  std::string source = "default";  // "--threads", "ATTN_THREADS" or "default"
};

inline bool parse_thread_count(std::string_view text, int& out) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 1) return false;
  out = v;
  return true;
}

// nullopt after printing why (as `program: ...`) when a value is not a positive integer.
inline std::optional<Threads> take_threads(int& argc, char** argv, const char* program) {
  Threads t;
  if (const char* env = std::getenv("ATTN_THREADS"); env != nullptr && *env != '\0') {
    if (!parse_thread_count(env, t.count)) {
      std::fprintf(stderr, "%s: ATTN_THREADS=%s is not a positive integer\n", program, env);
      return std::nullopt;
    }
    t.source = "ATTN_THREADS";
  }
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::string_view value;
    bool is_threads = false;
    if (arg.starts_with("--threads=")) {
      value = arg.substr(std::strlen("--threads="));
      is_threads = true;
    } else if (arg == "--threads" && i + 1 < argc) {
      value = argv[++i];
      is_threads = true;
    }
    if (is_threads) {
      if (!parse_thread_count(value, t.count)) {
        std::fprintf(stderr, "%s: --threads needs a positive integer, got '%.*s'\n", program,
                     static_cast<int>(value.size()), value.data());
        return std::nullopt;
      }
      t.source = "--threads";
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return t;
}

}  // namespace attn::bench
