// SPDX-License-Identifier: Apache-2.0
#pragma once
// Weight prefetch: a model's weight files read into the page cache before the engine reads them
// (`gpulaunch warm`, and `run` before each start with model.prefetch = true). The decisions live
// here, over PrefetchIo (the syscalls, run/prefetch_io.cpp): which files are already resident
// (skipped), how many fit the memory actually free (the rest are left, and the result says so),
// and reading the rest in fixed-size pieces on a bounded number of threads.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/byte_size.hpp"  // format_bytes, for progress lines
#include "util/error.hpp"

namespace gl {

// One weight file, as the user knows it (the model's path and the file's name) and its size.
struct WeightFile {
  std::string shown;
  uint64_t size = 0;
};

// The side effects: the files were found and opened by whoever made this (run/prefetch_io's
// open_model_weights); `file` indexes them.
class PrefetchIo {
 public:
  virtual ~PrefetchIo() = default;
  virtual const std::vector<WeightFile>& files() const = 0;
  // Weight files found but not opened, each a line saying why (a link out of the model).
  virtual const std::vector<std::string>& skipped() const = 0;
  // Bytes of the file already in the page cache (mmap + mincore).
  virtual Result<uint64_t> resident_bytes(size_t file) = 0;
  // Reads [offset, offset + length) of the file (it lands in the page cache); called from
  // several threads at once.
  virtual Result<void> read_range(size_t file, uint64_t offset, uint64_t length) = 0;
  // What the kernel says could be used without swapping (MemAvailable), or the own cgroup's
  // room under its memory limit where smaller; nullopt where neither says.
  virtual std::optional<uint64_t> memory_available() = 0;
};

// The engine starts on top of the cache: its Python, torch and CUDA context need host memory
// too, so a prefetch leaves this much of MemAvailable unused.
inline constexpr uint64_t kPrefetchMemoryMargin = 2ULL << 30;
// One piece of work for a thread: large files are split so that several threads share them.
inline constexpr uint64_t kPrefetchPiece = 64ULL << 20;
inline constexpr unsigned kPrefetchDefaultThreads = 8;
inline constexpr unsigned kPrefetchMaxThreads = 64;
// While `run` prefetches, each progress pushes the start timeout this far ahead: a read that
// stops moving for two minutes is left to the start timeout.
inline constexpr long long kPrefetchExtendUsec = 120'000'000LL;

struct PrefetchOptions {
  unsigned threads = kPrefetchDefaultThreads;
  uint64_t memory_margin = kPrefetchMemoryMargin;
};

// What the files' state and the free memory decide, before anything is read.
struct PrefetchPlan {
  std::vector<size_t> read;      // in the model's order
  std::vector<size_t> resident;  // already wholly in the page cache: skipped
  uint64_t bytes_to_read = 0;    // of the files to read, what is not resident yet
  uint64_t bytes_resident = 0;   // of all files
  // The first file that would not fit the budget; it and every later file are left.
  std::optional<size_t> stopped_at;
  std::optional<uint64_t> budget;  // MemAvailable minus the margin, where known
  uint64_t margin = 0;
  std::vector<std::string> problems;
};

// Files wholly resident are skipped; the others are taken in order while their non-resident
// bytes fit MemAvailable minus the margin. A file whose residency cannot be read counts as not
// resident. Without MemAvailable nothing bounds the plan.
PrefetchPlan plan_prefetch(PrefetchIo& io, const PrefetchOptions& options);

struct PrefetchProgress {
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;  // of the files being read, all of each
  size_t files_done = 0;
  size_t files_total = 0;
};

struct PrefetchResult {
  PrefetchPlan plan;
  PrefetchProgress progress;
  std::vector<std::string> problems;  // the plan's, then each file that could not be read
};

// Reads the plan's files on min(options.threads, pieces) threads. `on_progress` is called after
// each piece (from the reading threads, one at a time). A piece that fails leaves the rest of
// its file unread and is a problem, never an error: a prefetch only ever helps.
PrefetchResult run_prefetch(PrefetchIo& io, const PrefetchPlan& plan,
                            const PrefetchOptions& options,
                            const std::function<void(const PrefetchProgress&)>& on_progress);

// Why the plan left files unread: the file it stopped at, its size and the budget; nullopt
// when it stopped nowhere.
std::optional<std::string> prefetch_stop_reason(const PrefetchIo& io, const PrefetchPlan& plan);

// The one-line summary `warm` prints and `run` writes to the journal.
std::string prefetch_summary(const PrefetchResult& result, double seconds);

}  // namespace gl
