// SPDX-License-Identifier: Apache-2.0
#include "util/json_file.hpp"

#include "util/atomic_file.hpp"

namespace gl {

template <class Json>
Result<Json> parse_bounded_json(std::string_view text, std::string_view what) {
  // nlohmann's parser keeps its own stack (no recursion while parsing); the callback discards
  // anything deeper than the limit as it arrives, so the value built stays shallow and the
  // recursive code that later walks it (dump, comparisons, drift) cannot overflow the stack.
  bool too_deep = false;
  auto depth_check = [&too_deep](int depth, typename Json::parse_event_t event, Json&) {
    using Event = typename Json::parse_event_t;
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth) {
      too_deep = true;
      return false;
    }
    return !too_deep;
  };
  Json value = Json::parse(text, depth_check, /*allow_exceptions=*/false);
  if (too_deep)
    return failf("Failed to read {}: nested deeper than {} levels", what, kMaxJsonDepth);
  if (value.is_discarded()) return failf("Failed to read {}: not valid JSON", what);
  return value;
}

template Result<nlohmann::json> parse_bounded_json<nlohmann::json>(std::string_view,
                                                                   std::string_view);
template Result<nlohmann::ordered_json> parse_bounded_json<nlohmann::ordered_json>(
    std::string_view, std::string_view);

Result<std::string> read_json_text(const std::filesystem::path& path) {
  return read_file(path, kMaxJsonFileBytes);
}

}  // namespace gl
