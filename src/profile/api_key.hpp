// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether the engine will ask for an API key, and whether gpulaunch holds one it may use: every way
// the engine's row says it takes one (catalog/engines' ApiKeyFacts: the key flag in each spelling,
// "=" or a separate value, a key file, the environment, a config file), read from the argv and the
// profile's [env] and [secrets]. Only a key in [secrets] is usable: `run` reads it from the unit's
// credentials directory, so it is never part of the unit's text.

#include <optional>
#include <string>
#include <vector>

#include "catalog/engines.hpp"
#include "profile/profile.hpp"

namespace gl {

struct ApiKeyUse {
  bool keyed = false;  // the engine guards its generation API with a key
  // Where the key comes from, for messages: "--api-key in the engine's command line".
  std::string where;
  // The [secrets] entry that holds the key, when that is the key's only source: `run` reads it
  // from $CREDENTIALS_DIRECTORY for the probe.
  std::optional<std::string> credential;
  // Where the engine reads the key from the environment: the variable `run` sets to the
  // credential's value for the engine (empty: the engine reads the credential's file itself).
  std::string variable;

  // Whether a probe or metrics read can carry the key the engine wants.
  bool usable() const { return !keyed || credential.has_value(); }
};

ApiKeyUse find_api_key(const ApiKeyFacts& facts, const std::vector<std::string>& argv,
                       const Profile& profile);

}  // namespace gl
