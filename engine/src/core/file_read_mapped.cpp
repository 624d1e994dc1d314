#include "file_read_mapped.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

namespace attn::detail {

namespace {

// One registered mapping. state: 0 free, 1 being written, 2 live (begin, end valid). All lock-free.
struct Slot {
  std::atomic<int> state{0};
  std::atomic<std::uintptr_t> begin{0}, end{0};
  std::atomic<int> changed{0};
};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::uintptr_t>::is_always_lock_free,
              "the SIGBUS handler reads the registry: its words must be lock-free");

// Constant-initialised (no constructor runs at start-up), so the handler may read it at any time.
Slot g_slots[kMaxMappedFiles];
struct sigaction g_previous {};  // written once, before the handler is installed
std::uintptr_t g_page = 4096;    // likewise

// Maps zeros over the page of `address` when it lies in a registered mapping; false when it does not.
bool absorb(std::uintptr_t address) {
  for (Slot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) != 2) continue;
    const std::uintptr_t begin = slot.begin.load(std::memory_order_relaxed);
    const std::uintptr_t end = slot.end.load(std::memory_order_relaxed);
    if (address < begin || address >= end) continue;
    const std::uintptr_t page = address & ~(g_page - 1);
    // The system call itself (no library wrapper, no allocation): replaces the faulting page of the file mapping
    // with a private page of zeros, read-only like the mapping.
    // Every argument a long: syscall() is variadic, and the kernel reads whole registers.
    const long done = ::syscall(SYS_mmap, static_cast<long>(page), static_cast<long>(g_page), long{PROT_READ},
                                long{MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED}, -1L, 0L);
    if (done == -1) return false;
    slot.changed.store(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const int saved = errno;
  if (info && info->si_code > 0 && absorb(reinterpret_cast<std::uintptr_t>(info->si_addr))) {
    errno = saved;
    return;  // the faulting read runs again, on zeros
  }
  // Not ours: the handler that was there before, else the default action (a fault re-raises it on return; a
  // SIGBUS sent by kill() is raised again).
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(signal, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(signal);
  } else {
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(SIGBUS, &fallback, nullptr);
    if (!info || info->si_code <= 0) ::raise(SIGBUS);
  }
  errno = saved;
}

std::once_flag g_installed;

void install_handler() {
  std::call_once(g_installed, [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page = static_cast<std::uintptr_t>(page);
    ::sigaction(SIGBUS, nullptr, &g_previous);
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, nullptr);
  });
}

int claim_slot(const void* begin, std::size_t size) {
  for (int i = 0; i < kMaxMappedFiles; ++i) {
    Slot& slot = g_slots[i];
    int expected = 0;
    if (!slot.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
    slot.begin.store(reinterpret_cast<std::uintptr_t>(begin), std::memory_order_relaxed);
    slot.end.store(reinterpret_cast<std::uintptr_t>(begin) + size, std::memory_order_relaxed);
    slot.changed.store(0, std::memory_order_relaxed);
    slot.state.store(2, std::memory_order_release);
    return i;
  }
  return -1;
}

void release_slot(int i) {
  Slot& slot = g_slots[i];
  slot.state.store(1, std::memory_order_release);
  slot.begin.store(0, std::memory_order_relaxed);
  slot.end.store(0, std::memory_order_relaxed);
  slot.state.store(0, std::memory_order_release);
}

std::string mmap_error_text(int e) { return std::strerror(e ? e : EIO); }

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path, std::string_view noun) {
  auto file = open_regular_file(path, noun);
  if (!file) return std::unexpected(std::move(file.error()));
  return map(std::move(*file), path.string());
}

Result<std::shared_ptr<const MappedFile>> MappedFile::map(RegularFile file, std::string name) {
  std::shared_ptr<MappedFile> out(new MappedFile());
  out->name_ = std::move(name);
  out->size_ = static_cast<std::size_t>(file.size());
  out->file_ = std::move(file);
  if (out->size_ == 0) return out;
  install_handler();
  void* p = ::mmap(nullptr, out->size_, PROT_READ, MAP_PRIVATE, out->file_.fd(), 0);
  if (p == MAP_FAILED)
    return fail(ErrorKind::Io, "cannot map the file into memory: " + mmap_error_text(errno), out->name_);
  out->slot_ = claim_slot(p, out->size_);
  if (out->slot_ >= 0) {
    out->mapping_ = p;
    out->data_ = static_cast<const std::uint8_t*>(p);
    return out;
  }
  // The registry is full: the file is read into memory (pread, so that a file cut short is an error, not a fault).
  ::munmap(p, out->size_);
  try {
    out->owned_.reset(new std::uint8_t[out->size_]);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge,
                "not enough memory to read the file's " + with_commas(static_cast<long long>(out->size_)) + " bytes",
                out->name_);
  }
  std::size_t done = 0;
  while (done < out->size_) {
    const ssize_t n = ::pread(out->file_.fd(), out->owned_.get() + done, out->size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return fail(ErrorKind::Io,
                  "changed on disk while open: it ended at byte " + with_commas(static_cast<long long>(done)) +
                      ", was " + with_commas(static_cast<long long>(out->size_)) + " bytes; reopen it",
                  out->name_);
    }
    done += static_cast<std::size_t>(n);
  }
  out->data_ = out->owned_.get();
  return out;
}

MappedFile::~MappedFile() {
  if (slot_ >= 0) release_slot(slot_);
  if (mapping_) ::munmap(mapping_, size_);
}

bool MappedFile::faulted() const { return slot_ >= 0 && g_slots[slot_].changed.load(std::memory_order_relaxed) != 0; }

Result<void> MappedFile::intact() const {
  if (slot_ < 0) return {};  // read into memory: what was read stays as it was
  struct stat now {};
  const bool stat_ok = ::fstat(file_.fd(), &now) == 0;
  const bool same_size = stat_ok && static_cast<std::size_t>(now.st_size) == size_;
  if (!faulted() && same_size) return {};
  const std::string is = stat_ok ? with_commas(static_cast<long long>(now.st_size)) + " bytes" : "unreadable";
  return fail(ErrorKind::Io,
              "changed on disk while open: it is now " + is + ", was " + with_commas(static_cast<long long>(size_)) +
                  " bytes; reopen it",
              name_);
}

int registered_mappings() {
  int n = 0;
  for (const Slot& slot : g_slots) n += slot.state.load(std::memory_order_acquire) == 2 ? 1 : 0;
  return n;
}

}  // namespace attn::detail
