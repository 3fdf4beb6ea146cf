// Crash-safe file output (nasa/files.h): temporary file, fsync, rename, fsync of the directory.
#include "nasa/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

namespace nasa {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& p, const char* what) {
  throw std::runtime_error(
      fmt::format("cannot {} '{}': {}", what, p.string(), std::strerror(errno)));
}

// fsync of a file or directory by path.
void sync_path(const fs::path& p, bool dir) {
  const int fd = ::open(p.c_str(), (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) fail(p, "open for sync");
  if (::fsync(fd) != 0 && !(dir && (errno == EINVAL || errno == EROFS))) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail(p, "sync");
  }
  ::close(fd);
}

fs::path parent_or_dot(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

}  // namespace

void write_atomic(const fs::path& path, const std::function<void(const fs::path& tmp)>& fill) {
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  try {
    fill(tmp);
    sync_path(tmp, false);
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
      throw std::runtime_error(fmt::format("cannot rename '{}' over '{}': {}", tmp.string(),
                                           path.string(), ec.message()));
    }
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  // The rename is durable only once the directory is.
  sync_path(parent_or_dot(path), true);
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  write_atomic(path, [&](const fs::path& tmp) {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) fail(tmp, "create (does the directory exist and is it writable?)");
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.close();
    if (!f) fail(tmp, "write (disk full?)");
  });
}

void append_line_durable(const fs::path& path, std::string_view line) {
  std::string buf(line);
  buf += '\n';
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "open for append");
  const ssize_t n = ::write(fd, buf.data(), buf.size());
  const int e = errno;
  const bool synced = n == static_cast<ssize_t>(buf.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) {
    errno = n >= 0 && n != static_cast<ssize_t>(buf.size()) ? ENOSPC : e;
    fail(path, "append to");
  }
}

bool is_atomic_temporary(const fs::path& name) {
  const std::string n = name.filename().string();
  const size_t at = n.rfind(".tmp.");
  return at != std::string::npos && at > 0 && at + 5 < n.size() &&
         n.find_first_not_of("0123456789", at + 5) == std::string::npos;
}

size_t remove_stale_temporaries(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec) && is_atomic_temporary(it->path()) && fs::remove(it->path(), ec)) {
      ++n;
    }
  }
  return n;
}

std::string wrote_message(const fs::path& path, std::string_view holding) {
  return holding.empty() ? fmt::format("wrote {}", path.string())
                         : fmt::format("wrote {}/ ({})", path.string(), holding);
}

}  // namespace nasa
