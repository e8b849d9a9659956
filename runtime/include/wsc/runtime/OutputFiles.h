// Writing a tool's output files all at once, or not at all.
#ifndef WSC_RUNTIME_OUTPUTFILES_H
#define WSC_RUNTIME_OUTPUTFILES_H

#include "wsc/runtime/Status.h"

#include <string>
#include <vector>

namespace wsc::runtime {

/// The files a run writes, staged first and committed together, so that a
/// failure leaves none of them behind. By what the path names:
///  * a regular file, or nothing yet: written to a temporary file next to
///    it when staged, renamed into place on commit (atomic);
///  * a symbolic link: followed; its final target is treated as here (a
///    regular target is replaced atomically and the link kept, never
///    replaced by a plain file);
///  * a device or a FIFO, and /dev/stdout, /dev/stderr, /dev/fd/N and
///    /proc/self/fd/N: written through (opened when staged, so that a FIFO
///    without a reader is an error then, written on commit);
///  * a directory or a socket: an error.
/// Errors name the path: "PATH: cannot write: REASON".
class OutputFiles {
public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles &) = delete;
  OutputFiles &operator=(const OutputFiles &) = delete;
  /// Discards whatever is staged and not committed.
  ~OutputFiles();

  /// Stages `bytes` for `path`; an error discards everything staged.
  Status stage(const std::string &path, const std::string &bytes);
  /// Writes the write-through outputs, then renames the others into place.
  /// A failed write leaves no renamed file; a rename fails only if the
  /// file system changed under the run.
  Status commit();
  /// Removes the temporary files and closes what is open.
  void discard();

private:
  struct Entry {
    std::string path; ///< as given, for messages
    std::string target; ///< regular: where the temporary file goes on commit
    std::string temp;   ///< regular: the temporary file
    int fd = -1;        ///< write-through: the open descriptor
    std::string bytes;  ///< write-through: what to write on commit
  };
  std::vector<Entry> entries_;
};

} // namespace wsc::runtime

#endif
