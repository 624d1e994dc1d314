#include "atomic_write.h"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <string_view>
#include <system_error>

#if defined(_WIN32)
#include <io.h>
#include <process.h>
#else
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#endif

namespace attn::detail {

namespace fs = std::filesystem;

namespace {

long process_id() {
#if defined(_WIN32)
  return static_cast<long>(_getpid());
#else
  return static_cast<long>(getpid());
#endif
}

// The data on the disk, not only in the kernel's cache: without it a power cut after the rename can leave
// the new name pointing at an empty file.
bool sync_file(std::FILE* file) {
#if defined(_WIN32)
  return _commit(_fileno(file)) == 0;
#else
  return fsync(fileno(file)) == 0;
#endif
}

// The rename itself on the disk (POSIX keeps it in the folder's entry). Best effort: some file systems
// refuse to sync a folder, and the file is complete either way.
void sync_folder(const fs::path& folder) {
#if !defined(_WIN32)
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
#else
  (void)folder;
#endif
}

// Temporary files are ".<name>.tmp-<pid>-<n>". One is left behind only when its writer died mid-write (a
// kill, a crash, a power cut); the next write of the same file removes those whose process is gone. Files
// of live processes (another instance saving the same file) are theirs to finish.
void remove_stale_temporaries(const fs::path& path) {
#if !defined(_WIN32)
  const std::string prefix = "." + path.filename().string() + ".tmp-";
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (!file.starts_with(prefix)) continue;
    const std::string_view rest = std::string_view(file).substr(prefix.size());
    long pid = 0;
    const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (parsed != std::errc() || end == rest.data() || *end != '-' || pid <= 0) continue;
    if (pid == process_id() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove(it->path(), ignored);
  }
#else
  (void)path;
#endif
}

}  // namespace

Result<void> write_file_atomically(const fs::path& path, const std::string& name,
                                   const std::function<bool(std::FILE*)>& write) {
  remove_stale_temporaries(path);
  // A name no other writer picks: the process and a counter of this process's writes (threads included).
  static std::atomic<unsigned> counter{0};
  fs::path temp = path;
  temp.replace_filename("." + path.filename().string() + ".tmp-" + std::to_string(process_id()) + "-" +
                        std::to_string(counter++));
  {
    using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
    errno = 0;
    File file(std::fopen(temp.c_str(), "wb"), &std::fclose);
    if (!file) {
      return fail(ErrorKind::Io, "cannot write the file: " + std::string(std::strerror(errno ? errno : EIO)), name);
    }
    errno = 0;
    const bool written = write(file.get()) && std::fflush(file.get()) == 0 && sync_file(file.get());
    const int error = errno;
    if (std::fclose(file.release()) != 0 || !written) {
      const int e = error ? error : (errno ? errno : EIO);
      std::error_code ignored;
      fs::remove(temp, ignored);
      return fail(ErrorKind::Io, "cannot write the file: " + std::string(std::strerror(e)), name);
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return fail(ErrorKind::Io, "cannot write the file: " + ec.message(), name);
  }
  sync_folder(path.parent_path());
  return {};
}

Result<void> write_file_atomically(const fs::path& path, const std::string& name, std::span<const std::uint8_t> bytes) {
  return write_file_atomically(path, name, [bytes](std::FILE* file) {
    return std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  });
}

}  // namespace attn::detail
