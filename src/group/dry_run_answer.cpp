// SPDX-License-Identifier: Apache-2.0
#include "group/dry_run_answer.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>

#include "util/try.hpp"

namespace gl {
namespace {

constexpr std::string_view kProfileKey = "profile";
constexpr std::string_view kUnitKey = "unit";
constexpr std::string_view kPathKey = "path";
constexpr std::string_view kActionKey = "action";
constexpr std::string_view kUnitChangedKey = "unit_changed";
constexpr std::string_view kDiffKey = "diff";
constexpr std::string_view kCheckKey = "check";
constexpr std::string_view kErrorsKey = "errors";
constexpr std::string_view kWarningsKey = "warnings";
constexpr std::string_view kRefuseKey = "refuse";

constexpr std::array kActions{UnitAction::none, UnitAction::start, UnitAction::restart};

template <typename T>
Result<T> member(const nlohmann::ordered_json& object, std::string_view key,
                 std::string_view where = "") {
  const std::string name(key);
  const auto found = object.find(name);
  const std::string spelled = where.empty() ? name : fmt::format("{}.{}", where, key);
  if (found == object.end()) return failf("the dry run's answer has no '{}'", spelled);
  try {
    return found->template get<T>();
  } catch (const nlohmann::json::exception&) {
    return failf("the dry run's answer has a '{}' of the wrong type", spelled);
  }
}

}  // namespace

std::string_view unit_action_name(UnitAction action) {
  switch (action) {
    case UnitAction::none:
      return "none";
    case UnitAction::start:
      return "start";
    case UnitAction::restart:
      return "restart";
  }
  return "start";
}

nlohmann::ordered_json dry_run_json(const DryRunAnswer& answer) {
  return nlohmann::ordered_json{{kProfileKey, answer.profile},
                                {kUnitKey, answer.unit},
                                {kPathKey, answer.path},
                                {kActionKey, unit_action_name(answer.action)},
                                {kUnitChangedKey, answer.unit_changed},
                                {kDiffKey, answer.diff},
                                {kCheckKey,
                                 {{kErrorsKey, answer.check_errors},
                                  {kWarningsKey, answer.check_warnings},
                                  {kRefuseKey, answer.refuse}}}};
}

Result<DryRunAnswer> read_dry_run_answer(const nlohmann::ordered_json& json) {
  if (!json.is_object()) return failf("the dry run's answer is not a JSON object");
  DryRunAnswer answer;
  GL_TRY(answer.profile, member<std::string>(json, kProfileKey));
  GL_TRY(answer.unit, member<std::string>(json, kUnitKey));
  GL_TRY(answer.path, member<std::string>(json, kPathKey));
  GL_TRY(const std::string action, member<std::string>(json, kActionKey));
  const auto known = std::ranges::find(kActions, action, unit_action_name);
  if (known == kActions.end())
    return failf("the dry run's answer has an unknown '{}' '{}'", kActionKey, action);
  answer.action = *known;
  GL_TRY(answer.unit_changed, member<bool>(json, kUnitChangedKey));
  GL_TRY(answer.diff, member<std::string>(json, kDiffKey));
  GL_TRY(const nlohmann::ordered_json check, member<nlohmann::ordered_json>(json, kCheckKey));
  GL_TRY(answer.check_errors, member<long long>(check, kErrorsKey, kCheckKey));
  GL_TRY(answer.check_warnings, member<long long>(check, kWarningsKey, kCheckKey));
  GL_TRY(answer.refuse, member<bool>(check, kRefuseKey, kCheckKey));
  return answer;
}

}  // namespace gl
