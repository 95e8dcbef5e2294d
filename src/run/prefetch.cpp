// SPDX-License-Identifier: Apache-2.0
#include "run/prefetch.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include <fmt/core.h>

namespace gl {

PrefetchPlan plan_prefetch(PrefetchIo& io, const PrefetchOptions& options) {
  PrefetchPlan plan;
  const auto& files = io.files();
  plan.problems = io.skipped();
  plan.margin = options.memory_margin;
  if (auto available = io.memory_available())
    plan.budget = *available > options.memory_margin ? *available - options.memory_margin : 0;
  for (size_t i = 0; i < files.size(); ++i) {
    uint64_t resident = 0;
    if (auto counted = io.resident_bytes(i))
      resident = std::min(*counted, files[i].size);
    else
      plan.problems.push_back(counted.error().message);
    plan.bytes_resident += resident;
    if (resident == files[i].size) {
      plan.resident.push_back(i);
      continue;
    }
    if (plan.stopped_at) continue;
    const uint64_t missing = files[i].size - resident;
    if (plan.budget && plan.bytes_to_read + missing > *plan.budget) {
      plan.stopped_at = i;
      continue;
    }
    plan.bytes_to_read += missing;
    plan.read.push_back(i);
  }
  return plan;
}

PrefetchResult run_prefetch(PrefetchIo& io, const PrefetchPlan& plan,
                            const PrefetchOptions& options,
                            const std::function<void(const PrefetchProgress&)>& on_progress) {
  PrefetchResult result;
  result.plan = plan;
  result.problems = plan.problems;
  const auto& files = io.files();
  struct Piece {
    size_t slot;  // into plan.read
    uint64_t offset;
    uint64_t length;
  };
  std::vector<Piece> pieces;
  std::vector<size_t> pieces_left(plan.read.size(), 0);
  for (size_t slot = 0; slot < plan.read.size(); ++slot) {
    const uint64_t size = files[plan.read[slot]].size;
    result.progress.bytes_total += size;
    for (uint64_t offset = 0; offset < size; offset += kPrefetchPiece) {
      pieces.push_back({slot, offset, std::min(kPrefetchPiece, size - offset)});
      ++pieces_left[slot];
    }
  }
  result.progress.files_total = plan.read.size();
  // An empty file to read (not resident, size 0) cannot occur: size 0 is always resident.
  std::vector<bool> failed(plan.read.size(), false);
  std::mutex mutex;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t at = next++; at < pieces.size(); at = next++) {
      const Piece& piece = pieces[at];
      {
        std::lock_guard lock(mutex);
        if (failed[piece.slot]) continue;
      }
      auto read = io.read_range(plan.read[piece.slot], piece.offset, piece.length);
      std::lock_guard lock(mutex);
      if (!read) {
        if (!failed[piece.slot]) result.problems.push_back(read.error().message);
        failed[piece.slot] = true;
        continue;
      }
      result.progress.bytes_done += piece.length;
      if (--pieces_left[piece.slot] == 0) ++result.progress.files_done;
      if (on_progress) on_progress(result.progress);
    }
  };
  const size_t threads =
      std::clamp<size_t>(std::min<size_t>(options.threads, pieces.size()), 1, kPrefetchMaxThreads);
  std::vector<std::jthread> pool;
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  pool.clear();  // joins
  return result;
}

std::optional<std::string> prefetch_stop_reason(const PrefetchIo& io, const PrefetchPlan& plan) {
  if (!plan.stopped_at) return std::nullopt;
  const auto& files = io.files();
  uint64_t left = 0;
  size_t count = 0;
  for (size_t i = *plan.stopped_at; i < files.size(); ++i)
    if (std::find(plan.resident.begin(), plan.resident.end(), i) == plan.resident.end()) {
      left += files[i].size;
      ++count;
    }
  return fmt::format(
      "stopped before '{}' ({}): it would not fit the free memory (MemAvailable, or the cgroup's "
      "room where smaller, less a {} margin: {}, {} of it for the files before); {} file(s), {}, "
      "left unread",
      files[*plan.stopped_at].shown, format_bytes(files[*plan.stopped_at].size),
      format_bytes(plan.margin), format_bytes(plan.budget.value_or(0)),
      format_bytes(plan.bytes_to_read), count, format_bytes(left));
}

std::string prefetch_summary(const PrefetchResult& result, double seconds) {
  const PrefetchProgress& done = result.progress;
  std::string line = fmt::format(
      "read {} of {} file(s) ({}) in {:.1f} s ({}/s); {} file(s) already in the page cache",
      done.files_done, done.files_total, format_bytes(done.bytes_done), seconds,
      format_bytes(seconds > 0 ? static_cast<uint64_t>(done.bytes_done / seconds) : 0),
      result.plan.resident.size());
  return line;
}

}  // namespace gl
