// Crash-safe file output: every file the tools write goes through here, so a reader (or a rerun
// after a crash, SIGKILL or power loss) finds the old file or the new one, never part of one.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace nasa {

// Writes `path` whole or not at all: `fill` writes the content into the temporary file it is
// given (in the same directory), which is then synced to disk and renamed over `path`, and the
// directory entry is synced. On any error the temporary is removed and the error rethrown;
// `path` is then untouched.
void write_atomic(const std::filesystem::path& path,
                  const std::function<void(const std::filesystem::path& tmp)>& fill);

// write_atomic of `content`.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Appends `line` and a newline to a log in one write(2) of an O_APPEND file, then syncs it: a
// crash leaves the log with or without the line, never with half of it.
void append_line_durable(const std::filesystem::path& path, std::string_view line);

// Whether `name` is a temporary of write_atomic ("<file>.tmp.<pid>").
bool is_atomic_temporary(const std::filesystem::path& name);

// Removes the temporaries a killed writer left under `dir` (recursively); returns how many.
size_t remove_stale_temporaries(const std::filesystem::path& dir);

// How the tools name a file they wrote (on stderr): "wrote PATH", or for a directory of files
// "wrote DIR/ (HOLDING)", e.g. the files in it.
std::string wrote_message(const std::filesystem::path& path, std::string_view holding = {});

}  // namespace nasa
