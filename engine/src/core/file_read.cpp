#include "file_read.h"

#include "attn/io/read_file.h"
#include "atomic_write.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::detail {

namespace {

std::string errno_text(int e) { return std::strerror(e ? e : EIO); }

// What a path that is not a regular file is, for the message.
std::string not_a_file(mode_t mode, std::string_view noun) {
  if (S_ISDIR(mode)) return "is a directory, not " + std::string(noun);
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not " + std::string(noun);
  if (S_ISCHR(mode)) return "is a character device, not " + std::string(noun);
  if (S_ISBLK(mode)) return "is a block device, not " + std::string(noun);
  if (S_ISSOCK(mode)) return "is a socket, not " + std::string(noun);
  return "is not a regular file";
}

}  // namespace

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    other.fd_ = -1;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<RegularFile> open_regular_file(const std::filesystem::path& path, std::string_view noun) {
  const std::string name = path.string();
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) return fail(ErrorKind::Io, "no such file", name);
    return fail(ErrorKind::Io, "cannot open the file: " + errno_text(e), name);
  }
  if (!S_ISREG(before.st_mode)) return fail(ErrorKind::Io, not_a_file(before.st_mode, noun), name);
  // O_NONBLOCK: were the path swapped for a FIFO between stat() and open(), open() still returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return fail(ErrorKind::Io, "no such file", name);
    return fail(ErrorKind::Io, "cannot open the file: " + errno_text(e), name);
  }
  RegularFile file(fd, 0);
  struct stat opened {};
  if (::fstat(fd, &opened) != 0) return fail(ErrorKind::Io, "cannot read the file: " + errno_text(errno), name);
  if (!S_ISREG(opened.st_mode)) return fail(ErrorKind::Io, not_a_file(opened.st_mode, noun), name);
  // Regular files ignore O_NONBLOCK for reads; cleared all the same, so that reads behave as they always do.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return RegularFile(file.release(), static_cast<std::int64_t>(opened.st_size));
}

Result<std::string> read_regular_file(const std::filesystem::path& path, std::int64_t max_bytes,
                                      std::string_view noun) {
  auto file = open_regular_file(path, noun);
  if (!file) return std::unexpected(std::move(file.error()));
  const std::string name = path.string();
  const auto too_large = [&](std::int64_t size) {
    return fail(ErrorKind::TooLarge,
                "is " + std::to_string(size) + " bytes; " + std::string(noun) + " is at most " +
                    std::to_string(max_bytes) + " bytes",
                name);
  };
  if (file->size() > max_bytes) return too_large(file->size());
  // One byte past the size at open: a file that grew since is read on, to the limit and one byte past it.
  const auto limit = static_cast<std::size_t>(max_bytes) + 1;
  std::string text;
  try {
    text.resize(static_cast<std::size_t>(file->size()) + 1);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "not enough memory to read " + std::to_string(file->size()) + " bytes", name);
  }
  std::size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (got >= limit) return too_large(static_cast<std::int64_t>(got));
      text.resize(std::min(limit, 2 * got));
    }
    const ::ssize_t n = ::read(file->fd(), text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorKind::Io, "cannot read the file: " + errno_text(errno), name);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace attn::detail

namespace attn::io {

Result<std::string> read_file(const std::filesystem::path& path, std::int64_t max_bytes, std::string_view noun) {
  return detail::read_regular_file(path, max_bytes, noun);
}

Result<void> write_file(const std::filesystem::path& path, std::span<const std::uint8_t> bytes) {
  return detail::write_file_atomically(path, path.string(), bytes);
}

}  // namespace attn::io
