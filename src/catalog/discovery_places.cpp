// SPDX-License-Identifier: Apache-2.0
#include "catalog/discovery_places.hpp"

#include <array>

namespace gl {

std::span<const DiscoveryPlace> venv_places() {
  static constexpr std::array kPlaces{
      DiscoveryPlace{"/opt/gpulaunch/venvs", "gpulaunch's README, profiles/ and Ansible role"},
      DiscoveryPlace{"/opt/*/venvs", "a tool's or a team's own venvs (/opt/<team>/venvs/<name>)"},
      DiscoveryPlace{"/opt/venvs", "a common home for several venvs"},
      DiscoveryPlace{"/opt", "a venv of its own beside other software (/opt/venv)"},
      DiscoveryPlace{"/opt/*", "a venv inside a package's own /opt directory (/opt/<team>/venv)"},
      DiscoveryPlace{"/srv/venvs", "site data (FHS 3.0 section 3.17)"},
      DiscoveryPlace{"/srv", "site data (FHS 3.0 section 3.17), a venv of its own (/srv/<name>)"},
  };
  return kPlaces;
}

std::span<const DiscoveryPlace> model_places() {
  static constexpr std::array kPlaces{
      DiscoveryPlace{"/opt/gpulaunch/models", "gpulaunch's README"},
      DiscoveryPlace{"/models", "a common mount point for a model volume"},
      DiscoveryPlace{"/data/models", "a common mount point for a model volume"},
      DiscoveryPlace{"/opt/models", "a common home for downloaded models"},
      DiscoveryPlace{"/opt/*/models",
                     "a tool's or a team's own models (/opt/<team>/models/<name>)"},
      DiscoveryPlace{"/srv/models", "site data (FHS 3.0 section 3.17)"},
      DiscoveryPlace{"/srv", "site data (FHS 3.0 section 3.17), a model of its own (/srv/<name>)"},
      DiscoveryPlace{"/data", "a data volume's root (/data/<name>)"},
  };
  return kPlaces;
}

}  // namespace gl
