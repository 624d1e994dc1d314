#include "atomic_write.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>

namespace attn::detail {

namespace fs = std::filesystem;

Result<void> write_file_atomically(const fs::path& path, const std::string& name,
                                   const std::function<bool(std::FILE*)>& write) {
  // A name no other writer (thread or process) picks: thread, clock and a counter.
  static std::atomic<unsigned> counter{0};
  const auto unique = std::hash<std::thread::id>{}(std::this_thread::get_id()) ^
                      static_cast<std::size_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  fs::path temp = path;
  temp.replace_filename("." + path.filename().string() + ".tmp-" + std::to_string(unique % 1000000007u) + "-" +
                        std::to_string(counter++));
  {
    using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
    errno = 0;
    File file(std::fopen(temp.c_str(), "wb"), &std::fclose);
    if (!file) return fail("cannot write the file: " + std::string(std::strerror(errno ? errno : EIO)), name);
    errno = 0;
    const bool written = write(file.get()) && std::fflush(file.get()) == 0;
    const int error = errno;
    if (std::fclose(file.release()) != 0 || !written) {
      const int e = error ? error : (errno ? errno : EIO);
      std::error_code ignored;
      fs::remove(temp, ignored);
      return fail("cannot write the file: " + std::string(std::strerror(e)), name);
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return fail("cannot write the file: " + ec.message(), name);
  }
  return {};
}

Result<void> write_file_atomically(const fs::path& path, const std::string& name,
                                   std::span<const std::uint8_t> bytes) {
  return write_file_atomically(path, name, [bytes](std::FILE* file) {
    return std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  });
}

}  // namespace attn::detail
