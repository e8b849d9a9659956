// Opening the files the runtime reads, with the checks that keep a hostile
// path from hanging or exhausting the host.
#ifndef WSC_RUNTIME_LIB_FILEIO_H
#define WSC_RUNTIME_LIB_FILEIO_H

#include "wsc/runtime/Status.h"

#include <string>

#include <sys/stat.h>

namespace wsc::runtime::detail {

/// The descriptor that /dev/stdin (0), /dev/stdout (1), /dev/stderr (2),
/// /dev/fd/N or /proc/self/fd/N names, or -1 for any other path.
int namedDescriptor(const std::string &path);

/// Opens `path` for reading. A regular file is opened; standard input or an
/// open descriptor named /dev/stdin, /dev/fd/N or /proc/self/fd/N is taken
/// as it is (duplicated, never reopened), and may be a pipe. Directories,
/// devices, sockets and named FIFOs are refused before anything opens them
/// (opening a FIFO waits for a writer; /dev/zero never ends):
/// "PATH: is a directory, not a regular file". On success `fd` is the
/// caller's to close and `st` is its fstat.
Status openForReading(const std::string &path, int &fd, struct stat &st);

/// Reads `fd` (opened by openForReading, `st` its fstat) to its end, at
/// most `maxBytes`: more is an error naming `path`. Closes `fd`.
Expected<std::string> readWhole(const std::string &path, int fd, const struct stat &st,
                                uint64_t maxBytes);

} // namespace wsc::runtime::detail

#endif
