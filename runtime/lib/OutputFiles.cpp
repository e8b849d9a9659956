// Output files staged and committed together (OutputFiles.h).
#include "wsc/runtime/OutputFiles.h"

#include "FileIO.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wsc::runtime {

namespace detail {

int namedDescriptor(const std::string &path) {
  if (path == "/dev/stdin")
    return 0;
  if (path == "/dev/stdout")
    return 1;
  if (path == "/dev/stderr")
    return 2;
  for (const char *prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    size_t n = std::strlen(prefix);
    if (path.compare(0, n, prefix) != 0 || path.size() == n || path.size() > n + 9)
      continue;
    int fd = 0;
    for (size_t i = n; i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9')
        return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

} // namespace detail

namespace {

Status cannotWrite(const std::string &path, const std::string &why) {
  return Status::failure(fmt::format("{}: cannot write: {}", path, why));
}

/// Writes all of `bytes` to `fd`; errno is set on failure.
bool writeAll(int fd, const std::string &bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    p += n;
    left -= size_t(n);
  }
  return true;
}

/// Where a chain of symbolic links starting at `path` ends (the last link's
/// target need not exist); false after 40 links.
bool followLinks(std::string path, std::string &out) {
  for (int depth = 0; depth < 40; ++depth) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      out = path;
      return true;
    }
    std::vector<char> buf(PATH_MAX + 1);
    ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size() - 1);
    if (n < 0)
      return false;
    std::string link(buf.data(), size_t(n));
    if (link.empty() || link[0] != '/') {
      size_t slash = path.rfind('/');
      link = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + link;
    }
    path = link;
  }
  errno = ELOOP;
  return false;
}

} // namespace

OutputFiles::~OutputFiles() { discard(); }

void OutputFiles::discard() {
  for (Entry &e : entries_) {
    if (!e.temp.empty())
      ::unlink(e.temp.c_str());
    if (e.fd >= 0)
      ::close(e.fd);
  }
  entries_.clear();
}

Status OutputFiles::stage(const std::string &path, const std::string &bytes) {
  Status s = [&]() -> Status {
    Entry e;
    e.path = path;
    // Write through: an open descriptor, a device, a FIFO (whose open must
    // not wait for a reader: without one it is an error now).
    int named = detail::namedDescriptor(path);
    struct stat st;
    bool exists = named >= 0 ? ::fstat(named, &st) == 0 : ::stat(path.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
      return cannotWrite(path, "is a directory");
    if (exists && S_ISSOCK(st.st_mode))
      return cannotWrite(path, "is a socket");
    if (named >= 0 || (exists && !S_ISREG(st.st_mode))) {
      e.fd = named >= 0 ? ::fcntl(named, F_DUPFD_CLOEXEC, 0)
                        : ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
      if (e.fd < 0)
        return cannotWrite(path, errno == ENXIO && exists && S_ISFIFO(st.st_mode)
                                     ? "a FIFO that no process reads"
                                     : std::strerror(errno));
      ::fcntl(e.fd, F_SETFL, ::fcntl(e.fd, F_GETFL) & ~O_NONBLOCK);
      e.bytes = bytes;
      entries_.push_back(std::move(e));
      return Status::success();
    }
    // A regular file (or none yet), through its symbolic links: a temporary
    // file next to the final target, renamed onto it on commit.
    if (!followLinks(path, e.target))
      return cannotWrite(path, std::strerror(errno));
    for (unsigned k = 0;; ++k) {
      e.temp = fmt::format("{}.tmp{}.{}", e.target, ::getpid(), k);
      int fd = ::open(e.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0 && errno == EEXIST && k < 100)
        continue;
      if (fd < 0) {
        int err = errno;
        e.temp.clear();
        return cannotWrite(path, std::strerror(err));
      }
      // Kept in the list at once, so that a failure below removes it.
      entries_.push_back(e);
      bool ok = writeAll(fd, bytes);
      int err = errno;
      if (::close(fd) != 0 && ok)
        ok = false, err = errno;
      if (!ok)
        return cannotWrite(path, std::strerror(err));
      return Status::success();
    }
  }();
  if (!s)
    discard();
  return s;
}

Status OutputFiles::commit() {
  // Write-through outputs first: they cannot be undone, but if one fails,
  // no file has been renamed into place yet.
  for (Entry &e : entries_) {
    if (e.fd < 0)
      continue;
    bool ok = writeAll(e.fd, e.bytes);
    int err = errno;
    if (::close(e.fd) != 0 && ok)
      ok = false, err = errno;
    e.fd = -1;
    if (!ok) {
      Status s = cannotWrite(e.path, std::strerror(err));
      discard();
      return s;
    }
  }
  for (Entry &e : entries_) {
    if (e.temp.empty())
      continue;
    if (::rename(e.temp.c_str(), e.target.c_str()) != 0) {
      Status s = cannotWrite(e.path, std::strerror(errno));
      discard();
      return s;
    }
    e.temp.clear();
  }
  entries_.clear();
  return Status::success();
}

} // namespace wsc::runtime
