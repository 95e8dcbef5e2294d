#pragma once
// The fingerprint of a profile on a node, from the node's facts (src/facts/).

#include "caches/fingerprint.hpp"
#include "facts/facts.hpp"
#include "profile/profile.hpp"

namespace gl {

// The toolkit is the profile's pinned one; unpinned, the one found on the unit's PATH. Unknown
// facts stay "" (and learning one later counts as a change).
FingerprintInputs fingerprint_inputs(const Profile& profile, const Facts& facts);

}  // namespace gl
