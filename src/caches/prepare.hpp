#pragma once
// What `up` and `run` do to the caches before each start, and what `cache clear` does on demand.
// Library code: every removal is returned (and handed to `on_removal` as it happens, so a caller
// can log before a later step fails); nothing is printed.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "caches/fingerprint.hpp"
#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

struct Removal {
  std::string what;  // absolute path
  std::string why;
  std::uint64_t bytes = 0;
};

struct PrepareReport {
  std::string fingerprint;              // stamped in the root now
  std::optional<std::string> previous;  // what the stamp said before, if there was one
  std::string change;                   // why the caches were stale; "" when they were not
  std::vector<Removal> removals;
  std::vector<std::string> kept;        // "triton: keys its entries on toolkit and arch", ...
  std::vector<std::string> held_locks;  // lock files a live process holds, left in place
};

using RemovalSink = std::function<void(const Removal&)>;

// At each start: creates the cache root if missing; removes what an interrupted clear left;
// when the fingerprint differs from the stamp (or there is none) clears every non-empty cache
// that does not key itself, with the stamp removed first and the new one written last, so a
// crash in between leaves no stamp and the next start clears again; removes lock files no
// process holds. An unchanged fingerprint clears nothing.
Result<PrepareReport> prepare_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                     const RemovalSink& on_removal = {});

// Empties the named caches (all when `names` is empty), whatever the fingerprint. The stamp is
// put back as it was: an emptied cache is valid under any fingerprint.
Result<std::vector<Removal>> clear_caches(const LaunchPlan& plan,
                                          const std::vector<std::string>& names,
                                          const RemovalSink& on_removal = {});

}  // namespace gl
