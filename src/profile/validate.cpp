// SPDX-License-Identifier: Apache-2.0
#include "profile/validate.hpp"

#include "profile/cross_rules.hpp"
#include "profile/schema_check.hpp"
#include "profile/section_readers.hpp"
#include "profile/value_readers.hpp"
#include "util/try.hpp"

namespace gl {

// Three passes: the structure against the key table, each section into its Profile fields, then
// the rules that span sections. Each pass sees only what the one before it has checked.
Result<Profile> validate_profile(const MergedProfile& merged) {
  // A missing key is reported against the profile's own file.
  const ValueReader reader(merged.table, Location{merged.file});
  GL_TRY_VOID(check_against_schema(reader));
  Profile profile;
  profile.name = merged.name;
  profile.sources = merged.sources;
  GL_TRY_VOID(read_sections(reader, profile));
  GL_TRY_VOID(check_cross_rules(reader, profile));
  return profile;
}

Result<Profile> load_profile(const ProfileSource& source, std::string_view name_or_path) {
  GL_TRY(auto merged, load_merged(source, name_or_path));
  return validate_profile(merged);
}

}  // namespace gl
